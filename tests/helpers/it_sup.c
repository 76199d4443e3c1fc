/* it_sup — probes for the supervision integration tests (t_run, t_limits, t_tty).
 * Each subcommand tries one thing and prints one line: "ok" or the errno's name, or a
 * count followed by the errno that stopped it, so the shell tests can compare exactly.
 *
 *   it_sup ptrace PID        PTRACE_ATTACH
 *   it_sup vmread PID        process_vm_readv of one byte
 *   it_sup openmem PID       open /proc/PID/mem for reading
 *   it_sup tiocsti [hi]      TIOCSTI on fd 0 ("hi": the request with bit 32 set)
 *   it_sup alloc MB          malloc and touch MB megabytes
 *   it_sup forkmany N        fork up to N sleeping children: "forked K ERRNO"
 *   it_sup openmany N        open /dev/null up to N times: "opened K ERRNO"
 *   it_sup fds               the open descriptors, space-separated
 *   it_sup segv              dereference NULL (a real SIGSEGV, not kill)
 *   it_sup sigwait FILE      append the name of each forwarded signal to FILE once
 *                            FILE.ready exists; exit 7 after all seven (30 s bound)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int say(const char *what, int err)
{
	printf("%s\n", err ? strerrorname_np(err) : what);
	return 0;
}

static int cmd_ptrace(int argc, char **argv)
{
	pid_t pid = argc > 2 ? atoi(argv[2]) : 1;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
		return say(NULL, errno);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return say("ok", 0);
}

static int cmd_vmread(int argc, char **argv)
{
	pid_t pid = argc > 2 ? atoi(argv[2]) : 1;
	char buf[1];
	/* The permission check comes before the address is looked at: EFAULT would
	 * mean the read was allowed. */
	struct iovec local = {buf, 1}, remote = {(void *)0x10000, 1};

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0)
		return say(NULL, errno);
	return say("ok", 0);
}

static int cmd_openmem(int argc, char **argv)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/mem", argc > 2 ? argv[2] : "1");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return say(NULL, errno);
	close(fd);
	return say("ok", 0);
}

static int cmd_tiocsti(int argc, char **argv)
{
	unsigned long req = TIOCSTI;
	char c = '\n';

	/* ioctl's request is an unsigned int in the kernel: a filter that compares all
	 * 64 bits would miss the same request with a high bit set. */
	if (argc > 2 && strcmp(argv[2], "hi") == 0)
		req |= 1UL << 32;
	if (syscall(SYS_ioctl, 0, req, &c) < 0)
		return say(NULL, errno);
	return say("ok", 0);
}

static int cmd_alloc(int argc, char **argv)
{
	size_t mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	char *p = malloc(mb << 20);

	if (!p)
		return say(NULL, errno ? errno : ENOMEM);
	for (size_t i = 0; i < mb << 20; i += 4096)
		p[i] = 1;
	free(p);
	return say("ok", 0);
}

static int cmd_forkmany(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 10, k, err = 0;
	pid_t *kids = calloc((size_t)n, sizeof(pid_t));

	if (!kids)
		return 2;
	for (k = 0; k < n; k++) {
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			sleep(30);
			_exit(0);
		}
		kids[k] = p;
	}
	for (int i = 0; i < k; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < k; i++)
		waitpid(kids[i], NULL, 0);
	printf("forked %d %s\n", k, err ? strerrorname_np(err) : "none");
	free(kids);
	return 0;
}

static int cmd_openmany(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 10, k, err = 0;

	for (k = 0; k < n; k++)
		if (open("/dev/null", O_RDONLY) < 0) {
			err = errno;
			break;
		}
	printf("opened %d %s\n", k, err ? strerrorname_np(err) : "none");
	return 0;
}

static int cmd_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self, first = 1;

	if (!d)
		return say(NULL, errno);
	self = dirfd(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != self) {
			printf("%s%s", first ? "" : " ", de->d_name);
			first = 0;
		}
	printf("\n");
	closedir(d);
	return 0;
}

static int cmd_sigwait(int argc, char **argv)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT, SIGWINCH};
	struct timespec bound = {30, 0};
	char ready[4096];
	sigset_t set;
	unsigned seen = 0;
	FILE *out;

	if (argc < 3)
		return 2;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	out = fopen(argv[2], "a");
	if (!out)
		return 2;
	setvbuf(out, NULL, _IONBF, 0);
	snprintf(ready, sizeof(ready), "%s.ready", argv[2]);
	fclose(fopen(ready, "w"));
	while (seen != (1U << (sizeof(sigs) / sizeof(sigs[0]))) - 1) {
		int s = sigtimedwait(&set, NULL, &bound);
		if (s < 0)
			return errno == EAGAIN ? 3 : 2;
		fprintf(out, "%s\n", sigabbrev_np(s));
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			if (sigs[i] == s)
				seen |= 1U << i;
	}
	return 7;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} table[] = {
	    {"ptrace", cmd_ptrace},	{"vmread", cmd_vmread},	  {"openmem", cmd_openmem},
	    {"tiocsti", cmd_tiocsti},	{"alloc", cmd_alloc},	  {"forkmany", cmd_forkmany},
	    {"openmany", cmd_openmany}, {"sigwait", cmd_sigwait},
	};

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: it_sup ptrace|vmread|openmem|tiocsti|alloc|forkmany|"
				"openmany|fds|segv|sigwait ...\n");
		return 2;
	}
	if (strcmp(argv[1], "fds") == 0)
		return cmd_fds();
	if (strcmp(argv[1], "segv") == 0)
		return *(volatile int *)(uintptr_t)(argc - 2); /* argc is 2: address 0 */
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(argv[1], table[i].name) == 0)
			return table[i].fn(argc, argv);
	fprintf(stderr, "it_sup: unknown probe %s\n", argv[1]);
	return 2;
}
