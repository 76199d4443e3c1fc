/* A child that shares its parent's memory until its exec, as posix_spawn's does: no
 * copy of the parent's page tables at the fork, none torn down at the exec, no
 * copy-on-write faults after (a few hundred microseconds a launch, and a session's
 * call, on a 2-vCPU VM). The parent waits until the child has exec'd or exited
 * (CLONE_VFORK), so nothing else runs on that memory meanwhile but the parent's other
 * threads. The child has a stack of its own, its own descriptor table, signal
 * dispositions and limits (no CLONE_FILES, CLONE_SIGHAND, CLONE_THREAD): what the
 * launch recipe changes is the child's alone, but for environ, which execvp reads PATH
 * from and which is put back here. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "linux/launch_int.h"

extern char **environ;

pid_t launch_spawn_shared(int (*fn)(void *), void *arg)
{
#if defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer cannot follow a child on a stack it did not make (it reports
	 * the child's first noreturn call as an overflow of that stack): its build forks,
	 * and the caller waits for the exec as the fork's caller would. */
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	return pid;
#else
	/* As large as a main thread's (execvp puts a script's argv on it); only the pages
	 * touched are made, once: the child is done with it when clone returns. A guard
	 * page below it. */
	static char *stack;
	const size_t guard = 4096, size = 8 << 20;
	char **env = environ;
	pid_t pid;
	int err;

	if (!stack) {
		char *s = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);

		if (s == MAP_FAILED)
			return -1;
		if (mprotect(s, guard, PROT_NONE) < 0) {
			err = errno;
			munmap(s, size);
			errno = err;
			return -1;
		}
		stack = s;
	}
	pid = clone(fn, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
	err = errno;
	environ = env;
	errno = err;
	return pid;
#endif
}
