/* linux/cpus.c: where a process last ran (field 39 of /proc/PID/stat, after a name
 * that may hold spaces and parentheses), a thread kept off one CPU, and init's
 * placement on another CPU than the supervisor's with the caller's set given back. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_int.h"
#include "linux/linux.h"
#include "tests/unit/unit.h"

static int other_cpu(const cpu_set_t *set, int not )
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (c != not &&CPU_ISSET(c, set))
			return c;
	return -1;
}

/* A child pinned to CPU cpu, named name, that says it ran there and then waits. */
static pid_t pinned_child(int cpu, const char *name)
{
	int p[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			_exit(1);
		prctl(PR_SET_NAME, name);
		(void)!write(p[1], "r", 1);
		pause();
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

START_TEST(cpu_of_reads_field_39_past_any_name)
{
	const char *names[] = {"plain", "a) b (c", ") ) )", "x 1 2 3 4 5"};
	cpu_set_t set;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		/* the last allowed CPU: not field 39's neighbours' values by chance */
		int cpu = -1;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpu = c;
		pid_t pid = pinned_child(cpu, names[i]);
		ck_assert_msg(linux_cpu_of(pid) == cpu, "name '%s': cpu %d, want %d", names[i],
			      linux_cpu_of(pid), cpu);
		end_child(pid);
	}
}
END_TEST

START_TEST(cpu_of_a_missing_process)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(linux_cpu_of(pid), -1);
	ck_assert_int_eq(linux_cpu_of(-5), -1);
}
END_TEST

static void *idle_thread(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, gettid(), __ATOMIC_RELEASE);
	pause();
	return NULL;
}

START_TEST(thread_kept_off_one_cpu)
{
	cpu_set_t set, got;
	pid_t tid = 0;
	pthread_t t;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	if (CPU_COUNT(&set) < 2)
		UNIT_SKIP("thread kept off one CPU", "one CPU here");
	int off = other_cpu(&set, -1);
	ck_assert_int_eq(pthread_create(&t, NULL, idle_thread, &tid), 0);
	while (__atomic_load_n(&tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	linux_thread_keep_off(tid, off);
	ck_assert_int_eq(sched_getaffinity(tid, sizeof(got), &got), 0);
	ck_assert(!CPU_ISSET(off, &got));
	ck_assert_int_eq(CPU_COUNT(&got), CPU_COUNT(&set) - 1);
	/* out of range or unknown: left alone */
	linux_thread_keep_off(tid, -1);
	linux_thread_keep_off(tid, CPU_SETSIZE);
	ck_assert_int_eq(sched_getaffinity(tid, sizeof(got), &got), 0);
	ck_assert_int_eq(CPU_COUNT(&got), CPU_COUNT(&set) - 1);
	pthread_cancel(t); /* pause() is a cancellation point */
	pthread_join(t, NULL);
}
END_TEST

START_TEST(a_lone_cpu_is_never_taken_away)
{
	pid_t pid = fork();
	int ws;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* the first CPU this process may use (review 26: not CPU 0 in every cpuset) */
		cpu_set_t one, got;
		int c = sched_getaffinity(0, sizeof(got), &got) == 0 ? other_cpu(&got, -1) : -1;
		if (c < 0)
			_exit(2);
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			_exit(2);
		linux_thread_keep_off(getpid(), c);
		if (sched_getaffinity(0, sizeof(got), &got) < 0)
			_exit(3);
		_exit(CPU_COUNT(&got) == 1 && CPU_ISSET(c, &got) ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFEXITED(ws));
	ck_assert_int_eq(WEXITSTATUS(ws), 0);
}
END_TEST

/* launch.c's order: note, clone (a fork here), place, "go"; the child restores. */
START_TEST(init_placed_elsewhere_then_given_the_whole_set)
{
	cpu_set_t set;
	int go[2], back[2];
	char c;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	if (CPU_COUNT(&set) < 2)
		UNIT_SKIP("init placed on another CPU", "one CPU here: never moved");
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(back), 0);
	launch_cpus_note();
	/* held to one CPU from here on (Check runs each test in a process of its own):
	 * the one the placement moves init away from */
	int here = sched_getcpu();
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(here, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		cpu_set_t got;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		if (sched_getaffinity(0, sizeof(got), &got) < 0)
			_exit(1);
		char placed = (char)(CPU_COUNT(&got) == 1 && !CPU_ISSET(here, &got));
		launch_cpus_restore();
		if (sched_getaffinity(0, sizeof(got), &got) < 0)
			_exit(1);
		char whole = (char)CPU_EQUAL(&got, &set);
		(void)!write(back[1], &placed, 1);
		(void)!write(back[1], &whole, 1);
		_exit(0);
	}
	launch_cpus_place(pid);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	char placed = 0, whole = 0;
	ck_assert_int_eq(read(back[0], &placed, 1), 1);
	ck_assert_int_eq(read(back[0], &whole, 1), 1);
	waitpid(pid, NULL, 0);
	ck_assert_msg(placed, "init was not on one other CPU before its go");
	ck_assert_msg(whole, "init did not get the caller's set back");
}
END_TEST

static Suite *cpus_suite(void)
{
	Suite *s = suite_create("cpus");
	TCase *tc = tcase_create("cpus");

	tcase_add_test(tc, cpu_of_reads_field_39_past_any_name);
	tcase_add_test(tc, cpu_of_a_missing_process);
	tcase_add_test(tc, thread_kept_off_one_cpu);
	tcase_add_test(tc, a_lone_cpu_is_never_taken_away);
	tcase_add_test(tc, init_placed_elsewhere_then_given_the_whole_set);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(cpus_suite)
