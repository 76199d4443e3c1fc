/* The wrappers' table (see wrap_int.h): one row per program that runs another. */
#include <stddef.h>
#include <string.h>

#include "hook/wrap_int.h"

static const char *const sudo_long[] = {
    "--user", "--group", "--close-from", "--chdir",	      "--host", "--prompt",
    "--role", "--type",	 "--other-user", "--command-timeout", NULL};
static const char *const env_long[] = {"--unset", "--chdir", "--split-string", NULL};
static const char *const timeout_long[] = {"--kill-after", "--signal", NULL};
static const char *const nice_long[] = {"--adjustment", NULL};
static const char *const time_long[] = {"--format", "--output", NULL};
static const char *const stdbuf_long[] = {"--input", "--output", "--error", NULL};
static const char *const xargs_long[] = {"--max-args",	"--max-procs", "--max-chars",
					 "--delimiter", "--arg-file",  "--process-slot-var",
					 NULL};
static const char *const watch_long[] = {"--interval", "--differences", NULL};
static const char *const su_long[] = {
    "--command", "--session-command",	    "--group", "--supp-group", "--shell",
    "--user",	 "--whitelist-environment", NULL};
static const char *const flock_long[] = {"--timeout", "--wait", "--conflict-exit-code", NULL};
static const char *const script_long[] = {"--command", "--log-io",	 "--log-in",
					  "--log-out", "--log-timing",	 "--logging-format",
					  "--echo",    "--output-limit", NULL};
static const char *const strace_long[] = {
    "--output", "--trace",	  "--signal",  "--abbrev",     "--verbose", "--raw",
    "--read",	"--write",	  "--inject",  "--fault",      "--attach",  "--user",
    "--env",	"--string-limit", "--columns", "--trace-path", NULL};
static const char *const ltrace_long[] = {"--output", "--library", "--indent", "--align", NULL};
static const char *const unshare_long[] = {
    "--map-user",    "--map-group", "--map-users", "--map-groups",
    "--propagation", "--setgroups", "--root",	   "--wd",
    "--setuid",	     "--setgid",    NULL};
static const char *const nsenter_long[] = {"--target", "--setuid", "--setgid", NULL};
static const char *const chrt_long[] = {"--sched-runtime", "--sched-period", "--sched-deadline",
					NULL};
static const char *const ionice_long[] = {"--class", "--classdata", "--pid",
					  "--pgid",  "--uid",	    NULL};
static const char *const setpriv_long[] = {"--reuid",
					   "--regid",
					   "--ruid",
					   "--euid",
					   "--rgid",
					   "--egid",
					   "--groups",
					   "--inh-caps",
					   "--ambient-caps",
					   "--bounding-set",
					   "--securebits",
					   "--pdeathsig",
					   "--selinux-label",
					   "--apparmor-profile",
					   "--landlock-access",
					   "--landlock-rule",
					   "--seccomp-filter",
					   NULL};
static const char *const chroot_long[] = {"--userspec", "--groups", NULL};
static const char *const dbus_long[] = {"--config-file", "--dbus-daemon", NULL};
static const char *const systemd_run_long[] = {"--unit",
					       "--property",
					       "--description",
					       "--slice",
					       "--setenv",
					       "--host",
					       "--machine",
					       "--uid",
					       "--gid",
					       "--nice",
					       "--working-directory",
					       "--service-type",
					       "--on-active",
					       "--on-boot",
					       "--on-startup",
					       "--on-unit-active",
					       "--on-unit-inactive",
					       "--on-calendar",
					       "--on-clock-change",
					       "--timer-property",
					       "--path-property",
					       "--socket-property",
					       "--expand-environment",
					       "--json",
					       NULL};
static const char *const ssh_agent_long[] = {NULL};
static const char *const pkexec_long[] = {"--user", NULL};
/* bwrap: options with one value, and (below) those with two (--bind SRC DEST). */
static const char *const bwrap_long[] = {"--args",	  "--argv0",
					 "--userns",	  "--userns2",
					 "--pidns",	  "--uid",
					 "--gid",	  "--hostname",
					 "--chdir",	  "--unsetenv",
					 "--lock-file",	  "--sync-fd",
					 "--remount-ro",  "--exec-label",
					 "--file-label",  "--proc",
					 "--dev",	  "--tmpfs",
					 "--mqueue",	  "--dir",
					 "--seccomp",	  "--add-seccomp-fd",
					 "--block-fd",	  "--userns-block-fd",
					 "--info-fd",	  "--json-status-fd",
					 "--cap-add",	  "--cap-drop",
					 "--perms",	  "--size",
					 "--overlay-src", "--tmp-overlay",
					 "--ro-overlay",  NULL};
static const char *const bwrap_long2[] = {
    "--setenv",	      "--bind",		"--bind-try",	 "--dev-bind",
    "--dev-bind-try", "--ro-bind",	"--ro-bind-try", "--file",
    "--bind-data",    "--ro-bind-data", "--symlink",	 "--chmod",
    "--bind-fd",      "--ro-bind-fd",	"--overlay",	 NULL};
static const char *const valgrind_long[] = {NULL}; /* its options are --opt=value */
static const char *const fakeroot_long[] = {"--lib", "--faked", NULL};
static const char *const proot_long[] = {"--rootfs", "--bind",		 "--mount",   "--cwd",
					 "--qemu",   "--kernel-release", "--verbose", NULL};
static const char *const numactl_long[] = {
    "--interleave", "--membind",	"--cpunodebind",	 "--physcpubind",
    "--preferred",  "--preferred-many", "--weighted-interleave", NULL};
static const char *const inhibit_long[] = {"--what", "--who", "--why", "--mode", NULL};
static const char *const prlimit_long[] = {"--pid", "--output", NULL};
static const char *const xvfb_long[] = {
    "--error-file", "--auth-file", "--server-num", "--xauth-protocol", "--server-args",
    "--wait",	    NULL};
static const char *const at_long[] = {NULL};
static const char *const none[] = {NULL};

/* Runners whose long options may take two values. */
static const struct {
	const char *name;
	const char *const *opts;
} two_vals[] = {{"bwrap", bwrap_long2}};

/* One row per program runner: which options take a value, how many operands stand
 * before the command, and what else is special. find and parallel have their own
 * grammar below. */
static const struct wrapper wrappers[] = {
    {"sudo", "CDghpRrTtUu", sudo_long, 0, W_ASSIGNS | W_SHELL_STDIN | W_SHELL_OPT},
    {"doas", "uCa", none, 0, W_SHELL_STDIN | W_SHELL_OPT},
    {"env", "uCS", env_long, 0, W_ASSIGNS | W_SPLIT_S},
    {"timeout", "ks", timeout_long, 1, 0},
    {"nice", "n", nice_long, 0, W_DIGITS},
    {"ionice", "cnpPu", ionice_long, 0, 0},
    {"nohup", "", none, 0, 0},
    {"setsid", "", none, 0, 0},
    {"command", "", none, 0, 0},
    {"builtin", "", none, 0, 0},
    {"exec", "a", none, 0, 0},
    {"xargs", "EILnPsda", xargs_long, 0, W_XARGS},
    {"time", "fo", time_long, 0, 0},
    {"stdbuf", "ioe", stdbuf_long, 0, 0},
    {"sshpass", "pfdP", none, 0, 0},
    {"unbuffer", "", none, 0, 0},
    {"chronic", "", none, 0, 0},
    {"nocache", "", none, 0, 0},
    {"caffeinate", "tw", none, 0, 0},
    {"busybox", "", none, 0, 0},
    {"chrt", "TPD", chrt_long, 1, 0},
    {"proxychains", "f", none, 0, W_PROXY},
    {"proxychains4", "f", none, 0, W_PROXY},
    {"torsocks", "uPa", none, 0, W_PROXY},
    {"torify", "", none, 0, W_PROXY},
    {"tsocks", "", none, 0, W_PROXY},
    {"watch", "n", watch_long, 0, W_JOIN},
    {"su", "gGsw", su_long, 0, W_DASH_C | W_PERMUTE | W_SHELL_STDIN},
    {"runuser", "gGsuw", su_long, 0, W_DASH_C | W_PERMUTE | W_SHELL_STDIN | W_U_ARGV},
    {"flock", "wE", flock_long, 1, W_POS_C},
    {"script", "BIOTEom", script_long, 0, W_DASH_C | W_PERMUTE | W_SHELL_STDIN | W_NO_CMD},
    {"strace", "abeEIoOpPsSuXU", strace_long, 0, 0},
    {"ltrace", "aADeFlnopsuwx", ltrace_long, 0, 0},
    {"taskset", "", none, 1, 0},
    {"unshare", "RwSG", unshare_long, 0, 0},
    {"nsenter", "tSG", nsenter_long, 0, 0},
    {"chroot", "", chroot_long, 1, W_SHELL_STDIN},
    {"setpriv", "", setpriv_long, 0, 0},
    {"dbus-run-session", "", dbus_long, 0, 0},
    {"systemd-run", "pEuHM", systemd_run_long, 0, 0},
    {"firejail", "", none, 0, 0}, /* its options are --opt=value */
    {"bwrap", "", bwrap_long, 0, 0},
    {"ssh-agent", "aEPtO", ssh_agent_long, 0, 0},
    {"pkexec", "", pkexec_long, 0, 0},
    {"catchsegv", "", none, 0, 0},
    {"valgrind", "", valgrind_long, 0, 0},
    {"toybox", "", none, 0, 0},
    {"fakeroot", "lfsi", fakeroot_long, 0, 0},
    {"proot", "rbmwqkRS", proot_long, 0, 0},
    {"numactl", "imNCpPw", numactl_long, 0, 0},
    {"cgexec", "g", none, 0, 0},
    {"systemd-inhibit", "", inhibit_long, 0, 0},
    {"keyctl", "", none, 2, 0}, /* keyctl session NAME CMD */
    {"setarch", "", none, 1, W_OPTS_AFTER},
    {"linux32", "", none, 0, 0},
    {"linux64", "", none, 0, 0},
    {"i386", "", none, 0, 0},
    {"x86_64", "", none, 0, 0},
    {"prlimit", "po", prlimit_long, 0, 0},
    {"rlwrap", "bCDefgHlMOPqsStwz", none, 0, 0},
    {"xvfb-run", "efnpsw", xvfb_long, 0, 0},
    {"entr", "", none, 0, W_SHELL_OPT}, /* entr -s TEXT */
    /* at and batch read the commands they schedule from stdin (or -f FILE) */
    {"at", "qftT", at_long, 0, W_NO_CMD | W_SHELL_STDIN},
    {"batch", "qftT", at_long, 0, W_NO_CMD | W_SHELL_STDIN},
};

const struct wrapper *hook_wrapper_find(const char *name)
{
	for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
		if (strcmp(wrappers[k].name, name) == 0)
			return &wrappers[k];
	return NULL;
}

const char *const *hook_wrapper_two_vals(const char *name)
{
	for (size_t k = 0; k < sizeof(two_vals) / sizeof(two_vals[0]); k++)
		if (strcmp(two_vals[k].name, name) == 0)
			return two_vals[k].opts;
	return NULL;
}
