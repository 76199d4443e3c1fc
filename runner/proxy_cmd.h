/* `halo-run proxy` (runner/proxy_cmd.c): the proxy engine alone, no sandbox. The pure
 * parts (listen addresses, LISTEN_FDS, the client token) are here for the unit tests. */
#ifndef HALO_RUNNER_PROXY_CMD_H
#define HALO_RUNNER_PROXY_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "policy/policy.h"

#define RUNNER_PROXY_TOKEN_MAX	128 /* fits a Proxy-Authorization field with a user name */
#define RUNNER_PROXY_MAX_LISTEN 16
#define RUNNER_UNIX_PATH_MAX	108 /* sun_path, the NUL included */

struct runner_listen_addr {
	bool is_unix;
	int family; /* AF_INET, AF_INET6 (TCP) */
	uint8_t addr[16];
	unsigned port; /* 0: any free port (said in the "listening on" line) */
	char path[RUNNER_UNIX_PATH_MAX];
	bool loopback; /* 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104; a unix socket is not */
};

/* --listen/--socks SPEC: "unix:/ABS/PATH", "ADDR:PORT" (IPv4 dotted quad, canonical),
 * "[V6]:PORT", "localhost:PORT" (127.0.0.1) or a bare "PORT" (127.0.0.1). 0, or
 * -EINVAL with e naming what is wrong. */
int runner_listen_parse(const char *spec, struct runner_listen_addr *out, struct halo_err *e);
/* Is this address (family, 4 or 16 bytes) loopback? */
bool runner_addr_loopback(int family, const uint8_t *addr);
/* "127.0.0.1:3128", "[::1]:0", "unix:/run/x.sock" */
void runner_listen_text(const struct runner_listen_addr *a, char *out, size_t n);

/* sd_listen_fds(3) semantics: LISTEN_PID must be self and LISTEN_FDS a count in
 * 1..max (fds 3..3+n-1); *n 0 when the variables are absent or name another
 * process. -EINVAL with e set for garbage (a systemd that set them meant us). */
int runner_listen_fds_parse(const char *pid_s, const char *fds_s, pid_t self, int max, int *n,
			    struct halo_err *e);
/* LISTEN_FDNAMES (colon separated; NULL: none): does fd number i carry SOCKS5 (its
 * name "socks" or "socks5"; anything else is HTTP)? */
bool runner_listen_fd_is_socks(const char *names, int i);

/* The client token: the bytes of a --token-file (one trailing newline dropped) or of
 * an environment value. 1..RUNNER_PROXY_TOKEN_MAX visible ASCII bytes. 0, or -EINVAL
 * with e set (never quoting the token). */
int runner_token_check(const char *raw, size_t len, char *out, size_t n, struct halo_err *e);
int runner_token_read(const char *file, const char *env_name, char *out, size_t n,
		      struct halo_err *e);

/* Sockets (proxy_listen.c). A listening, non-blocking, close-on-exec fd, or -errno
 * with e set. A unix socket path is made 0600 whatever the umask; a file that is not a
 * socket is never replaced, a socket is replaced only when nobody answers on it. */
int runner_listen_open(const struct runner_listen_addr *a, struct halo_err *e);
/* The listener's address as bound ("127.0.0.1:41234"); for an inherited fd also
 * whether it is loopback or a unix socket. -ENOTSOCK/-EINVAL with e for an fd that is
 * not a listening stream socket. */
int runner_listen_describe(int fd, char *out, size_t n, bool *local, struct halo_err *e);

int runner_cmd_proxy(int argc, char **argv);

#endif
