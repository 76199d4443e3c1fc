/* The creation broker's request table (linux/broker_table.c) and its gate
 * (linux/broker_admit.c), driven for real (test_broker_table.c checks the filter and
 * the parse without a caller): for every row of the table, a forked child
 * installs the production filter and makes the row's call; this process is its
 * broker (linux_broker_serve) and answers it. Each row is run allowed and refused: a
 * missing guard target, a name on the way to a deep one, a hook in a git directory,
 * a bad fd, a bad pointer, an over-long path, a name that changes in the caller's
 * memory while the call is judged; and each check the table names (procfs, link's
 * source, RENAME_EXCHANGE) once on its rows. The arguments are placed by the row's
 * layout, so a row added to the table is driven here too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/broker_emul_int.h"
#include "tests/unit/unit.h"

/* --------------------------------------------- the emulation, on a forked caller */

static char dir[PATH_MAX];
static char long_path[PATH_MAX + 64];

/* What one trapped call is made with. */
struct args {
	int dfd, fd;
	const char *path, *old;
	uint64_t path_addr; /* when set: instead of path (a bad pointer) */
	int flags;
	socklen_t salen;
	unsigned mode;	/* chmod's (0: the row's default) */
	long long size; /* truncate's */
};

static void place(const struct broker_row *row, const struct args *in, uint64_t a[6],
		  struct sockaddr_un *sa)
{
	const struct broker_layout *l = &row->a;
	uint64_t path = in->path_addr ? in->path_addr : (uint64_t)(uintptr_t)in->path;

	memset(a, 0, 6 * sizeof(a[0]));
	if (l->dfd != BROKER_NO)
		a[l->dfd] = (uint64_t)(int64_t)in->dfd;
	if (l->odfd != BROKER_NO)
		a[l->odfd] = (uint64_t)(int64_t)AT_FDCWD;
	if (l->path != BROKER_NO)
		a[l->path] = path;
	if (l->old != BROKER_NO)
		a[l->old] = (uintptr_t)in->old;
	if (l->target != BROKER_NO)
		a[l->target] = (uintptr_t) "target";
	if (l->flags != BROKER_NO)
		a[l->flags] = (uint64_t)in->flags;
	if (l->mode != BROKER_NO)
		a[l->mode] = in->mode			  ? in->mode
			     : row->op == BROKER_OP_MKNOD ? (S_IFIFO | 0644)
							  : 0755;
	if (l->size != BROKER_NO)
		a[l->size] = (uint64_t)in->size;
	if (l->xname != BROKER_NO) { /* user.halo = "1" */
		a[l->xname] = (uintptr_t) "user.halo";
		a[l->value] = (uintptr_t) "1";
		a[l->vsize] = 1;
	}
	if (l->fd != BROKER_NO)
		a[l->fd] = (uint64_t)in->fd;
	if (l->addr != BROKER_NO) {
		sa->sun_family = AF_UNIX;
		snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", in->path);
		a[l->addr] = in->path_addr ? in->path_addr : (uintptr_t)sa;
		a[l->len] = in->salen ? in->salen : sizeof(*sa);
	}
}

/* The race: a thread of the caller flips the name between an allowed one and the
 * pinned one while the calls are made (same length, so each read sees one or the
 * other, or a mix, never a name that was not judged). */
static char race_name[] = "okay-x";
static atomic_bool racing;

static void *flipper(void *arg)
{
	(void)arg;
	for (unsigned i = 0; atomic_load(&racing); i++)
		memcpy(race_name, (i & 1) ? "pinned" : "okay-x", 6);
	return NULL;
}

/* As after a shared spawn (linux/init.c): the caller hands its listener over and
 * goes on without init's word. */
static bool handover_first;

/* The caller: the filter, then the call (times times; undoing each success when
 * racing), the last result written to out. */
static void __attribute__((noreturn))
caller(const struct broker_row *row, const uint64_t a[6], int sock, int out, int times)
{
	long res[2] = {0, 0};
	pthread_t t;

	umask(022);
	if (chdir(dir) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(3);
	linux_broker_install_or_die(sock, !handover_first, -1);
	if (times > 1) {
		atomic_store(&racing, true);
		pthread_create(&t, NULL, flipper, NULL);
	}
	for (int i = 0; i < times; i++) {
		errno = 0;
		res[0] = syscall(row->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		res[1] = errno;
		if (times > 1 && res[0] >= 0) {
			if (row->op == BROKER_OP_OPEN_CREATE)
				close((int)res[0]);
			(void)unlinkat(AT_FDCWD, "okay-x", 0);
			(void)unlinkat(AT_FDCWD, "okay-x", AT_REMOVEDIR);
		}
	}
	if (times > 1) {
		atomic_store(&racing, false);
		pthread_join(t, NULL);
	}
	if (write(out, res, sizeof(res)) != sizeof(res))
		_exit(4);
	_exit(0);
}

static struct linux_broker broker;

/* The broker for this test: a missing guard target dir/pinned, a deep one
 * dir/deep/.config/autostart (its way from dir missing), the git rules on. */
static void broker_up(void)
{
	static char p1[PATH_MAX + 32], p2[PATH_MAX + 32];
	static char *missing[2];
	struct linux_scan s;

	memset(&s, 0, sizeof(s));
	snprintf(p1, sizeof(p1), "%s/pinned", dir);
	snprintf(p2, sizeof(p2), "%s/deep/.config/autostart", dir);
	static char p3[PATH_MAX + 32], p4[PATH_MAX + 32];
	static char *prefixes[2];

	missing[0] = p1;
	missing[1] = p2;
	s.missing.v = missing;
	s.missing.n = 2;
	/* the home set's prefix rows: in dir, and beneath a way missing at launch */
	snprintf(p3, sizeof(p3), "%s/.zcompdump", dir);
	snprintf(p4, sizeof(p4), "%s/pdeep/.cache/p10k-dump-", dir);
	prefixes[0] = p3;
	prefixes[1] = p4;
	s.home_prefix.v = prefixes;
	s.home_prefix.n = 2;
	ck_assert(linux_broker_pins_or_die(&broker, &s, true, true, -1));
	s.missing_deep = s.missing; /* both the home set's: the directories the rules hold in */
	linux_broker_home_scope(&broker, &s);
}

/* Run the row's call in a forked caller, answer it here; the caller's rc, or
 * -errno. */
static long drive(const struct broker_row *row, const struct args *in, int times)
{
	uint64_t a[6];
	struct sockaddr_un sa;
	int sv[2], res[2];
	long out[2] = {-1, EIO};
	int status;
	pid_t p;

	memset(&sa, 0, sizeof(sa));
	place(row, in, a, &sa);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
	p = fork();
	ck_assert_int_ge(p, 0);
	if (p == 0) {
		close(sv[0]);
		close(res[0]);
		caller(row, a, sv[1], res[1], times);
	}
	close(sv[1]);
	close(res[1]);
	/* As init: the word that a worker answers, then the listener (after a shared
	 * spawn: the listener alone, the caller waiting for no word). */
	if (!handover_first)
		ck_assert_int_eq(linux_broker_ack(sv[0]), 0);
	ck_assert_msg(linux_broker_receive(&broker, sv[0]), "%s: no listener", row->name);
	umask(0); /* as init's: the caller's umask is applied per call */
	for (int i = 0; i < 20000; i++) {
		struct pollfd pf = {broker.listener, POLLIN, 0};
		if (poll(&pf, 1, 100) > 0 && (pf.revents & POLLIN))
			linux_broker_serve(&broker);
		else if (pf.revents & (POLLHUP | POLLERR))
			break;
	}
	ck_assert_int_eq(waitpid(p, &status, 0), p);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: caller status %d",
		      row->name, status);
	ck_assert_int_eq(read(res[0], out, sizeof(out)), sizeof(out));
	close(res[0]);
	close(broker.listener);
	broker.listener = -1;
	return out[0] < 0 ? -out[1] : out[0];
}

static bool exists(const char *name)
{
	struct stat st;
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

static void make_file(const char *name)
{
	char p[PATH_MAX + 16];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void make_dir(const char *name)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ck_assert(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void remove_any(const char *name)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (unlink(p) < 0)
		(void)rmdir(p);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/halo-broker-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	chmod(dir, 0755);
	make_dir("repo");
	make_dir("repo/objects");
	make_dir("repo/refs");
	make_dir("repo/hooks");
	make_file("repo/HEAD");
	make_file("repo/config");
	make_dir("deep");
	make_dir("pdeep");
	make_dir("plain");
	make_file("old"); /* beside the pins, there before the run */
	usleep(20000);	  /* file times are coarse: a tick or two */
	memset(long_path, 'a', sizeof(long_path) - 1);
	broker_up();
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* The default arguments for a row making `name` in dir: open for writing with
 * O_CREAT|O_EXCL, a link or rename of the file "plain/src" (made by the test, as the
 * host, during the run: in a directory that holds no kept entry). */
static struct args named(const struct broker_row *row, const char *name)
{
	struct args in = {.dfd = AT_FDCWD, .fd = -1, .path = name, .old = "plain/src"};

	if (row->a.flags != BROKER_NO && row->op == BROKER_OP_OPEN_CREATE)
		in.flags = O_CREAT | O_WRONLY | O_EXCL;
	if (row->a.fd != BROKER_NO)
		in.fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (row->a.old != BROKER_NO)
		make_file("plain/src");
	return in;
}

static void done(struct args *in)
{
	if (in->fd >= 0)
		close(in->fd);
}

#define ROW (&broker_rows[_i])

/* The row's call making `name` answers want, and nothing is there after. */
static void refused(const struct broker_row *row, struct args *in, const char *name, long want)
{
	long rc;

	in->path = name;
	rc = drive(row, in, 1);
	ck_assert_msg(rc == want, "%s %s: %ld, not %ld", row->name, name, rc, want);
	ck_assert_msg(!exists(name), "%s made %s", row->name, name);
}

START_TEST(row_allowed)
{
	struct args in = named(ROW, "made");
	long rc;

	if (ROW->op == BROKER_OP_META)
		return;			   /* changes a file in place: check_in_place */
	if (ROW->op == BROKER_OP_UNLINK) { /* removed, as the kernel would */
		make_file("plain/made");
		in.path = "plain/made";
		ck_assert_int_eq(drive(ROW, &in, 1), 0);
		ck_assert(!exists("plain/made"));
		return;
	}
	rc = drive(ROW, &in, 1);

	ck_assert_msg(rc >= 0, "%s: %s", ROW->name, strerror((int)-rc));
	ck_assert_msg(exists("made"), "%s made nothing", ROW->name);
	if (ROW->op == BROKER_OP_RENAME)
		ck_assert(!exists("plain/src"));
	done(&in);
}
END_TEST

START_TEST(row_refuses_guard_target)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	struct args in = named(ROW, "pinned");

	refused(ROW, &in, "pinned", -EACCES);
	refused(ROW, &in, "PINNED", -EACCES); /* as on a case-insensitive file system */
	done(&in);
}
END_TEST

/* Under a missing home set entry: the entry itself is refused; a name on its way
 * only when made by symlink, link or rename (what is moved there could hold it). */
START_TEST(row_refuses_under_deep_pin)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	if (ROW->op == BROKER_OP_UNLINK)
		return; /* makes no name: what a pin keeps is made by none (row_allowed) */
	struct args in = named(ROW, "deep/.config");
	bool moves = ROW->op == BROKER_OP_SYMLINK || ROW->op == BROKER_OP_LINK ||
		     ROW->op == BROKER_OP_RENAME;
	long rc = drive(ROW, &in, 1);

	if (moves)
		ck_assert_msg(rc == -EACCES, "%s: %ld", ROW->name, rc);
	else
		ck_assert_msg(rc >= 0, "%s: %ld", ROW->name, rc);
	ck_assert(exists("deep/.config") != moves);
	remove_any("deep/.config");
	make_dir("deep/.config");
	if (ROW->a.old != BROKER_NO)
		make_file("plain/src");
	refused(ROW, &in, "deep/.config/autostart", -EACCES);
	done(&in);
}
END_TEST

/* A prefix row (policy_home_prefixes): every name it starts is refused, case folded,
 * beneath a way made after launch too; a name that merely holds it is made. */
START_TEST(row_refuses_prefix)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	if (ROW->op == BROKER_OP_UNLINK)
		return; /* makes no name (a prefix match the host made: check_host_fresh) */
	struct args in = named(ROW, "x");

	refused(ROW, &in, ".zcompdump-host-5.9", -EACCES);
	refused(ROW, &in, ".ZCOMPDUMP-X", -EACCES);
	refused(ROW, &in, ".zcompdumpling", -EACCES);
	make_dir("pdeep/.cache");
	refused(ROW, &in, "pdeep/.cache/p10k-dump-u.zsh", -EACCES);
	refused(ROW, &in, "pdeep/.cache/P10K-DUMP-", -EACCES);
	in.path = "x.zcompdump";
	ck_assert_msg(drive(ROW, &in, 1) >= 0 && exists("x.zcompdump"), "%s", ROW->name);
	done(&in);
}
END_TEST

START_TEST(row_refuses_git_hook)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	struct args in = named(ROW, "x");

	if (ROW->op == BROKER_OP_UNLINK) { /* a removal is no git directory's concern */
		make_file("repo/hooks/pre-commit");
		in.path = "repo/hooks/pre-commit";
		ck_assert_int_eq(drive(ROW, &in, 1), 0);
		ck_assert(!exists("repo/hooks/pre-commit"));
		return;
	}
	refused(ROW, &in, "repo/hooks/pre-commit", -EACCES);
	ck_assert_uint_ge(atomic_load(&broker.notes->git_refused), 1);
	done(&in);
}
END_TEST

/* A directory fd that is not open: EBADF, as the kernel says; rows without a
 * directory fd get a bad socket (bind) or nothing to test. */
START_TEST(row_refuses_bad_fd)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	struct args in = named(ROW, "made");

	if (ROW->a.dfd == BROKER_NO && ROW->a.fd == BROKER_NO) {
		done(&in);
		return; /* no fd argument in this call */
	}
	if (ROW->a.dfd != BROKER_NO)
		in.dfd = 999;
	if (in.fd >= 0) {
		close(in.fd);
		in.fd = 999;
	}
	refused(ROW, &in, "made", -EBADF);
	in.fd = -1;
}
END_TEST

START_TEST(row_refuses_bad_pointer)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	struct args in = named(ROW, "made");

	in.path_addr = 8; /* the zero page: never mapped */
	ck_assert_int_eq(drive(ROW, &in, 1), -EFAULT);
	in.path_addr = (uint64_t)-4096;
	ck_assert_int_eq(drive(ROW, &in, 1), -EFAULT);
	ck_assert(!exists("made"));
	done(&in);
}
END_TEST

/* A path longer than PATH_MAX: ENAMETOOLONG; bind's address longer than a
 * sockaddr_un: EINVAL (the kernel's answers). */
START_TEST(row_refuses_long_path)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	struct args in = named(ROW, long_path);
	bool sock = ROW->a.addr != BROKER_NO;

	in.salen = sizeof(struct sockaddr_un) + 8;
	ck_assert_int_eq(drive(ROW, &in, 1), sock ? -EINVAL : -ENAMETOOLONG);
	done(&in);
}
END_TEST

/* The name changes in the caller's memory while calls are judged: the pinned name is
 * never made (what is checked is the copy that is acted on). Rows that make a fresh
 * name each time; a link or rename needs a new source per call. */
START_TEST(row_race_keeps_the_name_judged)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	struct args in = named(ROW, race_name);

	if (ROW->a.old != BROKER_NO || ROW->a.addr != BROKER_NO) {
		done(&in);
		return;
	}
	drive(ROW, &in, 200);
	ck_assert_msg(!exists("pinned"), "%s: the pinned name was made in a race", ROW->name);
	done(&in);
}
END_TEST

/* ------------------------------------------------- the checks the table names */

/* PROCFS: another process's /proc entry is never opened by init for the caller. */
START_TEST(check_procfs_others)
{
	for (size_t i = 0; i < broker_n_rows; i++) {
		const struct broker_row *r = &broker_rows[i];
		char p[64];

		if (!(r->checks & BROKER_CHECK_PROCFS))
			continue;
		struct args in = named(r, p);
		snprintf(p, sizeof(p), "/proc/%d/fd/0", (int)getpid());
		in.flags = O_WRONLY;
		ck_assert_msg(drive(r, &in, 1) == -EACCES, "%s", r->name);
	}
}
END_TEST

/* SOURCE: a second name for a git directory's config. */
START_TEST(check_link_source)
{
	for (size_t i = 0; i < broker_n_rows; i++) {
		const struct broker_row *r = &broker_rows[i];

		if (!(r->checks & BROKER_CHECK_SOURCE))
			continue;
		struct args in = named(r, "config-copy");
		in.old = "repo/config";
		ck_assert_msg(drive(r, &in, 1) == -EACCES, "%s", r->name);
		ck_assert(!exists("config-copy"));
	}
}
END_TEST

/* EXCHANGE: a git config is never swapped with another file. */
START_TEST(check_exchange)
{
	size_t n = 0;

	for (size_t i = 0; i < broker_n_rows; i++) {
		const struct broker_row *r = &broker_rows[i];

		if (!(r->checks & BROKER_CHECK_EXCHANGE) || r->a.flags == BROKER_NO)
			continue;
		struct args in = named(r, "other");
		make_file("other");
		in.old = "repo/config";
		in.flags = RENAME_EXCHANGE;
		ck_assert_msg(drive(r, &in, 1) == -EACCES, "%s", r->name);
		n++;
	}
	ck_assert_uint_ge(n, 1);
}
END_TEST

/* The hand-over of a shared spawn: the caller goes on without the word, and its
 * calls are answered all the same (a caller that waited for the word would wait for
 * good: the case's timeout). */
START_TEST(check_handover_without_word)
{
	const struct broker_row *r = NULL;

	for (size_t i = 0; i < broker_n_rows && !r; i++)
		if (broker_rows[i].op == BROKER_OP_OPEN_CREATE)
			r = &broker_rows[i];
	ck_assert_ptr_nonnull(r);
	handover_first = true;
	struct args in = named(r, "made");
	long rc = drive(r, &in, 1);
	ck_assert_msg(rc >= 0 && exists("made"), "%s: %ld", r->name, rc);
	refused(r, &in, "pinned", -EACCES);
	handover_first = false;
	done(&in);
}
END_TEST

/* (review 28) A missing entry the host makes during the run: every name beneath it
 * is refused as the entry is (pipx made ~/.local/bin; the command's git in it). */
START_TEST(row_refuses_beneath_made_pin)
{
	if (ROW->op == BROKER_OP_META)
		return; /* changes a file in place: check_in_place */
	struct args in = named(ROW, "x");

	make_dir("pinned");
	refused(ROW, &in, "pinned/evil", -EACCES);
	make_dir("PINNED");
	make_dir("PINNED/sub");
	refused(ROW, &in, "PINNED/sub/evil", -EACCES);
	make_dir(".zcompdump-dir"); /* a prefix row's match, made by the host */
	refused(ROW, &in, ".zcompdump-dir/evil", -EACCES);
	done(&in);
}
END_TEST

static const struct broker_row *row_of(enum broker_op op)
{
	for (size_t i = 0; i < broker_n_rows; i++)
		if (broker_rows[i].op == op)
			return &broker_rows[i];
	return NULL;
}

/* (review 28) A file the host makes beside a kept entry during the run (sed -i's temp
 * file, renamed over .bashrc later) is neither written, nor linked, nor moved by the
 * command; one there before the run is, and so is the command's own. */
START_TEST(check_host_fresh)
{
	const struct broker_row *op = row_of(BROKER_OP_OPEN_CREATE), *ln = row_of(BROKER_OP_LINK),
				*mv = row_of(BROKER_OP_RENAME);
	struct args in = {.dfd = AT_FDCWD, .fd = -1, .path = "sedXYZ", .flags = O_WRONLY};

	ck_assert(op && ln && mv);
	make_file("sedXYZ");
	ck_assert_int_eq(drive(op, &in, 1), -EACCES);
	in.flags = O_WRONLY | O_CREAT;
	ck_assert_int_eq(drive(op, &in, 1), -EACCES);
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "alias", .old = "sedXYZ"};
	ck_assert_int_eq(drive(ln, &in, 1), -EACCES);
	ck_assert(!exists("alias"));
	in.path = "mine";
	ck_assert_int_eq(drive(mv, &in, 1), -EACCES);
	ck_assert(exists("sedXYZ") && !exists("mine"));
	/* there before the run: written; the command's own: written, moved, linked */
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "old", .flags = O_WRONLY};
	ck_assert_int_ge(drive(op, &in, 1), 0);
	in.path = "own";
	in.flags = O_WRONLY | O_CREAT | O_EXCL;
	ck_assert_int_ge(drive(op, &in, 1), 0);
	in.flags = O_WRONLY;
	ck_assert_int_ge(drive(op, &in, 1), 0);
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "own2", .old = "own"};
	ck_assert_int_eq(drive(ln, &in, 1), 0);
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "own3", .old = "own2"};
	ck_assert_int_eq(drive(mv, &in, 1), 0);
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "own3", .flags = O_WRONLY};
	ck_assert_int_ge(drive(op, &in, 1), 0);
	/* (review 29) Nor removed (a file of the command's in its place would be what the
	 * host renames over the entry), nor renamed onto; the command's own is removed. */
	const struct broker_row *rm = row_of(BROKER_OP_UNLINK);
	ck_assert(rm);
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "sedXYZ"};
	ck_assert_int_eq(drive(rm, &in, 1), -EACCES);
	ck_assert(exists("sedXYZ"));
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "sedXYZ", .old = "own3"};
	ck_assert_int_eq(drive(mv, &in, 1), -EACCES);
	ck_assert(exists("own3"));
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "own3"};
	ck_assert_int_eq(drive(rm, &in, 1), 0);
	/* (review 29) An inode number given again is another file: the command's removed
	 * file's number taken by the host's next one (ext4 does so) is not the command's. */
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "own4", .flags = O_WRONLY | O_CREAT};
	ck_assert_int_ge(drive(op, &in, 1), 0);
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "own4"};
	ck_assert_int_eq(drive(rm, &in, 1), 0);
	make_file("sedR");
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "sedR", .flags = O_WRONLY};
	ck_assert_int_eq(drive(op, &in, 1), -EACCES);
}
END_TEST

static const struct broker_row *row_named(const char *name)
{
	for (size_t i = 0; i < broker_n_rows; i++)
		if (strcmp(broker_rows[i].name, name) == 0)
			return &broker_rows[i];
	return NULL;
}

static mode_t mode_of(const char *name)
{
	char p[PATH_MAX + 16];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ck_assert_int_eq(stat(p, &st), 0);
	return st.st_mode & 07777;
}

/* (review 29) truncate(2), and a chmod giving group or others write, change a file in
 * place as a write-open would: not the host's temp file beside a kept entry, nor what
 * the host made where a pin is; a file there before the run, or the command's own, is
 * changed. A chmod without those bits is not the broker's (the kernel's answer). */
START_TEST(check_in_place)
{
	static const char *const chmods[] = {"fchmodat", "fchmodat2", "chmod"};
	const struct broker_row *tr = row_named("truncate"), *fc = row_named("fchmod");
	struct args in = {.dfd = AT_FDCWD, .fd = -1, .path = "sedT", .size = 2};
	char p[PATH_MAX + 16];
	struct stat st;

	ck_assert(tr && fc);
	make_file("sedT");
	chmod(strcat(strcpy(p, dir), "/sedT"), 0644);
	ck_assert_int_eq(drive(tr, &in, 1), -EACCES);
	in.path = "old";
	ck_assert_int_eq(drive(tr, &in, 1), 0);
	for (size_t i = 0; i < 3; i++) {
		const struct broker_row *r = row_named(chmods[i]);
		if (!r)
			continue; /* (chmod: x86_64's) */
		in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "sedT", .mode = 0666};
		long rc = drive(r, &in, 1);
		if (rc == -ENOSYS && strcmp(r->name, "fchmodat2") == 0)
			continue; /* a kernel before 6.6 */
		ck_assert_msg(rc == -EACCES, "%s: %ld", r->name, rc);
		ck_assert_uint_eq(mode_of("sedT"), 0644);
		in.mode = 0755; /* not the broker's: the kernel changes it */
		ck_assert_int_eq(drive(r, &in, 1), 0);
		ck_assert_uint_eq(mode_of("sedT"), 0755);
		chmod(p, 0644);
		in.path = "old";
		in.mode = 0666;
		ck_assert_int_eq(drive(r, &in, 1), 0);
		ck_assert_uint_eq(mode_of("old"), 0666);
		make_dir("pinned"); /* made by the host where a pin is */
		in.path = "pinned";
		in.mode = 0777;
		ck_assert_int_eq(drive(r, &in, 1), -EACCES);
	}
	/* an ACL is a chmod by other means (review 31): any attribute set is judged so */
	const struct broker_row *sx = row_named("setxattr");
	ck_assert(sx);
	in = (struct args){.dfd = AT_FDCWD, .fd = -1, .path = "sedT"};
	ck_assert_int_eq(drive(sx, &in, 1), -EACCES);
	in.path = "old";
	ck_assert_int_eq(drive(sx, &in, 1), 0);
	ck_assert_int_eq(getxattr(strcat(strcpy(p, dir), "/old"), "user.halo", NULL, 0), 1);
	strcat(strcpy(p, dir), "/sedT");
	in = (struct args){.dfd = AT_FDCWD, .path = "x", .mode = 0666};
	in.fd = open(p, O_RDONLY | O_CLOEXEC); /* the caller's own descriptor of it */
	ck_assert_int_ge(in.fd, 0);
	ck_assert_int_eq(drive(fc, &in, 1), -EACCES);
	ck_assert_uint_eq(mode_of("sedT"), 0644);
	close(in.fd);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 0); /* made empty by make_file: untouched */
}
END_TEST

/* Every case of "rows" runs once per row of the table. */
static const TTest *const *row_cases(size_t *n)
{
	static const TTest *cases[10];

	cases[0] = row_allowed;
	cases[1] = row_refuses_guard_target;
	cases[2] = row_refuses_under_deep_pin;
	cases[3] = row_refuses_git_hook;
	cases[4] = row_refuses_bad_fd;
	cases[5] = row_refuses_bad_pointer;
	cases[6] = row_refuses_long_path;
	cases[7] = row_race_keeps_the_name_judged;
	cases[8] = row_refuses_prefix;
	cases[9] = row_refuses_beneath_made_pin;
	*n = sizeof(cases) / sizeof(cases[0]);
	return cases;
}

static Suite *broker_suite(void)
{
	Suite *s = suite_create("broker");
	TCase *tr = tcase_create("rows"), *tc = tcase_create("checks");
	const TTest *const *cases;
	size_t n_cases;

	tcase_add_checked_fixture(tr, setup, teardown);
	tcase_set_timeout(tr, 60);
	cases = row_cases(&n_cases);
	for (size_t i = 0; i < n_cases; i++)
		tcase_add_loop_test(tr, cases[i], 0, (int)broker_n_rows);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, check_procfs_others);
	tcase_add_test(tc, check_link_source);
	tcase_add_test(tc, check_exchange);
	tcase_add_test(tc, check_handover_without_word);
	tcase_add_test(tc, check_host_fresh);
	tcase_add_test(tc, check_in_place);
	suite_add_tcase(s, tr);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(broker_suite)
