/* Wrappers: programs that run another program. One row each says which of its options
 * take a value (so the value is not mistaken for the command) and what else stands
 * before the command (assignments, a duration). Tables, not guesses, and each row must
 * be complete: an option missing here is read as a flag, so its value is taken for the
 * program and the real command becomes an argument (`doas -a style curl ...` hid curl
 * that way until -a was listed). */
#ifndef HALO_HOOK_WRAP_INT_H
#define HALO_HOOK_WRAP_INT_H

enum {
	W_ASSIGNS = 1,	     /* NAME=VALUE words may come before the command */
	W_XARGS = 2,	     /* more arguments come from stdin unless -I/-i/--replace */
	W_SPLIT_S = 4,	     /* env -S TEXT / --split-string=TEXT: TEXT is a command line */
	W_PROXY = 8,	     /* routes every connection through a configured proxy */
	W_JOIN = 16,	     /* the rest is joined into one shell command (watch) */
	W_DASH_C = 32,	     /* -c TEXT is a shell command (su, runuser, script) */
	W_DIGITS = 64,	     /* -NUMBER is a flag (nice -10) */
	W_PERMUTE = 128,     /* options may follow operands (su USER -c TEXT) */
	W_POS_C = 256,	     /* after the operands, -c TEXT / --command TEXT (flock) */
	W_SHELL_STDIN = 512, /* without a command it runs a shell that reads stdin */
	W_U_ARGV = 1024,     /* with -u USER the operands are the command (runuser) */
	W_NO_CMD = 2048,     /* its operands are files, never a command (script) */
	W_SHELL_OPT = 4096,  /* -s/-i/--shell/--login: the command runs through a shell */
	W_OPTS_AFTER = 8192, /* flags may follow the operands (setarch ARCH -R CMD) */
};

struct wrapper {
	const char *name;
	const char *vals;	      /* short options taking a value */
	const char *const *long_vals; /* long options taking a value */
	unsigned positionals;	      /* words between the options and the command */
	unsigned flags;
};

/* The row of the wrapper called name (wrap_table.c), or NULL. */
const struct wrapper *hook_wrapper_find(const char *name);
/* The long options of wrapper name that take two values (bwrap --bind SRC DEST), or
 * NULL. */
const char *const *hook_wrapper_two_vals(const char *name);

#endif
