/* Internal to hook/: the network-program table's row shapes and helpers that net.c
 * (the table) and net_proto.c (git, socat, environment, inline code) share. */
#ifndef HALO_HOOK_NET_INT_H
#define HALO_HOOK_NET_INT_H

#include "hook/hook_int.h"

enum kind {
	K_URLS,
	K_HTTPIE,
	K_HOSTS,
	K_NC,
	K_SSH,
	K_SCP,
	K_RSYNC,
	K_GIT,
	K_SOCAT,
	K_DIG,
	K_OPTS,
	K_PKG
};

enum {
	O_VAL = 1,
	O_HOST = 2,
	O_FILE = 4,
	O_CMD = 8,
	O_SSHOPT = 16,
	O_LIST = 32,
	O_RESOLVE = 64,
	O_CONNECT_TO = 128,
	O_GITCONF = 256,
	O_WGET_E = 512,
	O_LISTEN = 1024,
	O_UNIX = 2048,
	O_HTTPIE_PROXY = 4096
};

struct opt {
	const char *name; /* "-x", "--proxy", or a one-dash word such as "-connect" */
	unsigned flags;
};

struct prog {
	const char *const *names;
	enum kind kind;
	const struct opt *opts;
	const char *vals; /* other short options that take a value */
};

struct seen {
	const struct hook_word *pos[HOOK_MAX_WORDS];
	size_t n;
	bool listen, unix_sock, replace;
};

extern const char *const hook_n_git[];

size_t hook_strip_user(const char *t, size_t start, size_t end);
size_t hook_past_bracket(const char *t, size_t i);
void hook_url_at(struct hook_judge *j, const char *what, const struct hook_word *w, size_t off);
void hook_host_list(struct hook_judge *j, const char *what, const struct hook_word *w, size_t off);
const struct opt *hook_find_opt(const struct opt *opts, const char *a, size_t n);
void hook_walk(struct hook_judge *j, const struct prog *p, const struct hook_word *argv,
	       size_t from, size_t argc, struct seen *s);
void hook_git_config_pair(struct hook_judge *j, const struct hook_word *w, size_t off);
void hook_check_git(struct hook_judge *j, const struct hook_word *argv, size_t argc);
void hook_socat_address(struct hook_judge *j, const struct hook_word *w);

#define V  O_VAL
#define VH (O_VAL | O_HOST)

#endif
