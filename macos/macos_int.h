/* Internal to macos/: the text builder shared by the profile sections, and the
 * launcher's shared state. */
#ifndef HALO_MACOS_INT_H
#define HALO_MACOS_INT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "macos/macos.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#if defined(HALO_SANDBOX_EXEC_OVERRIDE) && defined(__APPLE__)
#error "HALO_SANDBOX_EXEC_OVERRIDE is for the portable test build only, never a macOS release"
#endif

/* A growing text with a parameter list. Errors are sticky: after the first one every
 * call is a no-op, and the builder reports it once at the end. */
struct sbpl {
	char *s;
	size_t len, cap;
	struct macos_param *params;
	size_t n_params, cap_params;
	int err;       /* 0, -ENOMEM, -EINVAL, -ENAMETOOLONG */
	char why[512]; /* for -EINVAL */
};

void sbpl_add(struct sbpl *b, const char *s);
void sbpl_addf(struct sbpl *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbpl_fail(struct sbpl *b, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Define (or find) the parameter holding `value` among those named PREFIX_n; returns
 * its key (owned by b) or NULL after an error. `what` names the path in messages. */
const char *sbpl_param(struct sbpl *b, const char *prefix, const char *value, const char *what);

/* "(FILTER (param \"KEY\"))" */
void sbpl_param_filter(struct sbpl *b, const char *filter, const char *key);

/* A regex filter built by fn (macos_glob_regex / macos_path_regex) as (regex #"...") */
void sbpl_regex(struct sbpl *b, int (*fn)(const char *, char *, size_t), const char *src,
		const char *what);

/* Case-fold an ASCII regex source written in lower case: each letter outside a class
 * becomes [xX]... in the order [Xx]. */
int macos_regex_fold(const char *src, char *out, size_t n);

/* The spellings of one path as the profile names it: resolved and /private-mapped
 * first, then as given when that differs. Returns how many (1 or 2), or -errno. */
int macos_spellings(int (*resolve)(const char *, char *, size_t), const char *path,
		    char out[2][PATH_MAX]);

/* ---------------------------------------------------------------- launcher */

/* Records on the report pipe, from the forked child (SETUP) and from the trampoline
 * (STARTED, then EXEC if the command could not be executed). */
enum { MACOS_REPORT_STARTED = 1, MACOS_REPORT_EXEC = 2, MACOS_REPORT_SETUP = 3 };
struct macos_report {
	int kind;
	int err;
	char msg[256];
};

/* One run, shared by launch.c (start) and supervise.c (the rest). */
struct macos_sandbox {
	const struct macos_launch *l;
	pid_t child;
	int report_r, report_w;	  /* records from the child and the trampoline */
	int capture_r, capture_w; /* sandbox-exec's own stderr */
	int listen_fd;		  /* the proxy's, until the runner takes it */
	unsigned port;
	char tmpdir[PATH_MAX]; /* this run's TMPDIR ("" when none was made) */
	char **envp;
	char **argv;  /* sandbox-exec's argv (NULL in mode off) */
	char **dargs; /* the "-D KEY=VALUE" words argv points at */
	size_t n_dargs;
	struct macos_profile prof;
	bool signals;	 /* handlers installed */
	bool tty_handed; /* the terminal's foreground is the command's group */
	bool timed_out;
};

/* Give the terminal (fd 0) to process group `pgrp`, ignoring SIGTTOU meanwhile. */
void macos_tty_give(pid_t pgrp);

/* Wait for the command: the handler's status if it reaped it, else waitpid. */
int macos_reap(struct macos_sandbox *sb);

/* Release everything (the terminal, handlers, fds, TMPDIR, memory) and free sb. */
void macos_sandbox_free(struct macos_sandbox *sb);

/* Signals forwarded to the command. */
extern const int macos_forwarded_signals[];
extern const size_t macos_n_forwarded_signals;

/* Process-wide supervision state (one sandbox at a time): the self-pipes written from
 * the SIGCHLD and forwarding handlers. */
int macos_signals_install(void);
void macos_signals_restore(void);
void macos_signals_set_child(pid_t child);
void macos_signals_child_reset(void);
int macos_signals_exit_fd(void);
int macos_signals_fwd_fd(void);
/* The child's wait status once reaped by the handler: true and *ws set, else false. */
bool macos_signals_reaped(int *ws);

/* Per-run TMPDIR: made 0700 under base; removed without ever following a symlink. */
int macos_tmpdir_make(const char *base, char *out, size_t n, struct halo_err *e);
void macos_tmpdir_remove(const char *dir);

/* The proxy's listener on 127.0.0.1:0 (non-blocking, CLOEXEC) and its port; the
 * secret as MACOS_SECRET_HEX hex digits from /dev/urandom. */
int macos_listen_loopback(int *fd, unsigned *port, struct halo_err *e);
int macos_secret_new(char *out, size_t n, struct halo_err *e);

/* Close every fd above 2 except those in keep[] (n of them). */
void macos_close_fds_except(const int *keep, size_t n);

/* Write a report record (child side; best effort). */
void macos_report(int fd, int kind, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
