/* The session's control protocol (linux/session_proto.c): a table of payloads, good
 * and hostile (unknown verbs and keys, keys in the wrong verb, duplicates, missing
 * keys, bad numbers, signals outside the forwarded set, environment entries without a
 * name, a missing final NUL), frame lengths, session names, a round trip through the
 * builder, and the descriptor-carrying reader over a real socketpair. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/session_proto.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* A payload literal: the strings with their NULs (sizeof keeps the last one). */
#define P(s) s, sizeof(s)

static const struct {
	const char *in;
	size_t len;
	int rc;
	const char *why; /* a piece of the reason, for refusals */
} rows[] = {
    {P("hello\0v\0"
       "2\0name\0s1\0policy\0"
       "0123456789abcdef0123456789abcdef\0options\0x\0"
       "workspace\0/w"),
     0, NULL},
    {P("hello\0v\0"
       "2\0name\0s1\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w\0"
       "prot\0"
       "2049:81000000deadbeef:/w/.env\0prot\0-:-:/w/.env.gone"),
     -EINVAL, "unknown key 'prot'"}, /* version 2: the supervisor walks itself */
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w\0"
       "prot\0/w/.env"),
     -EINVAL, "'prot'"},
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w\0"
       "prot\0"
       "1:2:rel"),
     -EINVAL, "'prot'"},
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w\0"
       "prot\0"
       "1:-2:/x"),
     -EINVAL, "'prot'"},
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w\0"
       "prot\0"
       "1:ABC:/x"),
     -EINVAL, "'prot'"},
    {P("run\0arg\0x\0prot\0"
       "1:2:/x"),
     -EINVAL, "unknown key"},
    {P("ok"), 0, NULL},
    {P("stop"), 0, NULL},
    {P("info"), 0, NULL},
    {P("info\0workspace\0/w\0calls\0"
       "2\0idle\0"
       "0\0pid\0"
       "77"),
     0, NULL},
    {P("refused\0why\0because"), 0, NULL},
    {P("run\0arg\0sh\0arg\0-c\0arg\0\0env\0A=1\0env\0B="), 0, NULL}, /* an empty arg is fine */
    {P("run\0id\0"
       "5\0arg\0true"),
     0, NULL},
    {P("run\0arg\0true\0wall\0"
       "900"),
     0, NULL}, /* the call's wall-clock limit, for the session's events */
    {P("run\0arg\0true\0wall\0-5"), -EINVAL, "wall"},
    {P("run\0arg\0true\0wall\0"
       "99999999999999"),
     -EINVAL, "wall"},
    {P("run\0arg\0true\0wall\0"
       "1\0wall\0"
       "2"),
     -EINVAL, "twice"},
    {P("exit\0status\0"
       "0\0wall\0"
       "1"),
     -EINVAL, "does not belong"},
    {P("signal\0sig\0"
       "15"),
     0, NULL},
    {P("kill\0id\0"
       "9"),
     0, NULL},
    {P("exit\0id\0"
       "1\0status\0"
       "65535"),
     0, NULL},
    {P("failed\0id\0"
       "1\0kind\0exec\0err\0"
       "2\0msg\0cmd"),
     0, NULL},
    {P("failed\0kind\0setup\0msg\0"), 0, NULL},
    /* hostile */
    {"", 0, -EINVAL, "NUL"},
    {"ok", 2, -EINVAL, "NUL"}, /* no final NUL */
    {P("hello!"), -EINVAL, "unknown verb"},
    {P("OK"), -EINVAL, "unknown verb"},
    {P("ok\0why"), -EINVAL, "no value"},
    {P("ok\0why\0x"), -EINVAL, "does not belong"},
    {P("run\0argv\0x"), -EINVAL, "unknown key"},
    {P("run"), -EINVAL, "missing key 'arg'"},
    {P("run\0env\0A=1"), -EINVAL, "missing key 'arg'"},
    {P("run\0arg\0x\0env\0=1"), -EINVAL, "env"},
    {P("run\0arg\0x\0env\0NOEQUALS"), -EINVAL, "env"},
    {P("run\0arg\0x\0id\0"
       "0"),
     -EINVAL, "id"},
    {P("run\0arg\0x\0id\0-1"), -EINVAL, "id"},
    {P("run\0arg\0x\0id\0+1"), -EINVAL, "id"},
    {P("run\0arg\0x\0id\0"
       "01"),
     -EINVAL, "id"},
    {P("run\0arg\0x\0id\0"
       "1 "),
     -EINVAL, "id"},
    {P("run\0arg\0x\0id\0"
       "99999999999999999999"),
     -EINVAL, "id"},
    {P("run\0arg\0x\0id\0"
       "1\0id\0"
       "2"),
     -EINVAL, "twice"},
    {P("signal\0sig\0"
       "9"),
     -EINVAL, "sig"}, /* SIGKILL is not forwarded */
    {P("signal\0sig\0"
       "19"),
     -EINVAL, "sig"}, /* nor SIGSTOP */
    {P("signal\0sig\0"
       "0"),
     -EINVAL, "sig"},
    {P("signal\0sig\0"
       "65"),
     -EINVAL, "sig"},
    {P("signal"), -EINVAL, "missing key 'sig'"},
    {P("exit\0status\0"
       "65536"),
     -EINVAL, "status"},
    {P("exit\0id\0"
       "1"),
     -EINVAL, "missing key 'status'"},
    {P("failed\0kind\0other"), -EINVAL, "kind"},
    {P("failed\0kind\0exec\0err\0"
       "4096"),
     -EINVAL, "err"},
    {P("refused\0why\0"), -EINVAL, "why"},
    {P("hello\0v\0"
       "1\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w"),
     -EINVAL, "'v'"}, /* version 1 (a call that walked itself) */
    {P("hello\0v\0"
       "3\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w"),
     -EINVAL, "'v'"},
    {P("hello\0v\0"
       "2\0name\0../x\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w"),
     -EINVAL, "'name'"},
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123456789ABCDEF\0options\0x\0workspace\0/w"),
     -EINVAL, "'policy'"},
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123\0options\0x\0workspace\0/w"),
     -EINVAL, "'policy'"},
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0rel"),
     -EINVAL, "'workspace'"},
    {P("hello\0v\0"
       "2\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x"),
     -EINVAL, "missing key 'workspace'"},
    {P("hello\0name\0s\0policy\0"
       "0123456789abcdef\0options\0x\0workspace\0/w"),
     -EINVAL, "missing key 'v'"},
    {P("stop\0id\0"
       "1"),
     -EINVAL, "does not belong"},
    {P("info\0pid\0"
       "0"),
     -EINVAL, "pid"},
    {P("info\0pid\0"
       "99999999"),
     -EINVAL, "pid"},
};

START_TEST(parse_table)
{
	struct session_msg m;
	char why[128] = "";
	int rc = session_msg_parse(rows[_i].in, rows[_i].len, &m, why, sizeof(why));

	ck_assert_msg(rc == rows[_i].rc, "row %d: rc %d (%s)", _i, rc, why);
	if (rows[_i].why)
		ck_assert_msg(strstr(why, rows[_i].why), "row %d: why '%s'", _i, why);
	if (rc == 0) {
		ck_assert(m.arg && m.env);
		ck_assert_ptr_null(m.arg[m.n_arg]);
		ck_assert_ptr_null(m.env[m.n_env]);
	}
	session_msg_free(&m);
}
END_TEST

/* Every strict prefix of a good payload is refused (-EINVAL with a reason, the message
 * left empty) or parses as a shorter message: one that ends at a NUL, with the full
 * message's verb, no key the full one lacks, and every value it holds equal to the
 * full one's (lists as leading parts of the full lists). Never a read past its end
 * (run under ASan in make asan-unit). */
static void same_str(const char *part, const char *full, size_t n)
{
	if (part)
		ck_assert_msg(full && strcmp(part, full) == 0, "prefix %zu: '%s'", n, part);
}

static void same_list(char **part, size_t np, char **full, size_t nf, size_t n)
{
	ck_assert_msg(np <= nf, "prefix %zu: %zu entries, the whole has %zu", n, np, nf);
	for (size_t i = 0; i < np; i++)
		same_str(part[i], full[i], n);
}

static void shorter_message(const struct session_msg *m, const struct session_msg *full, size_t n)
{
	const long long *pn[] = {&m->id,    &m->sig,  &m->status, &m->err,
				 &m->calls, &m->idle, &m->pid,	  &m->wall};
	const long long *fn[] = {&full->id,    &full->sig,  &full->status, &full->err,
				 &full->calls, &full->idle, &full->pid,	   &full->wall};

	ck_assert_int_eq(m->verb, full->verb);
	ck_assert_msg((m->have & ~full->have) == 0, "prefix %zu: keys %#x of %#x", n, m->have,
		      full->have);
	same_str(m->version, full->version, n);
	same_str(m->name, full->name, n);
	same_str(m->policy, full->policy, n);
	same_str(m->options, full->options, n);
	same_str(m->workspace, full->workspace, n);
	same_str(m->why, full->why, n);
	same_str(m->msg, full->msg, n);
	same_list(m->arg, m->n_arg, full->arg, full->n_arg, n);
	same_list(m->env, m->n_env, full->env, full->n_env, n);
	for (size_t k = 0; k < sizeof(pn) / sizeof(pn[0]); k++)
		ck_assert_msg(*pn[k] == 0 || *pn[k] == *fn[k], "prefix %zu: number %zu", n, k);
	if (session_msg_has(m, SESSION_K_KIND))
		ck_assert_int_eq(m->kind, full->kind);
}

START_TEST(parse_prefixes)
{
	size_t shorter = 0, refused = 0;

	for (int r = 0; r < ROWS(rows); r++) {
		struct session_msg full;
		char why[128] = "";

		if (rows[r].rc != 0)
			continue;
		ck_assert_int_eq(
		    session_msg_parse(rows[r].in, rows[r].len, &full, why, sizeof(why)), 0);
		for (size_t n = 0; n < rows[r].len; n++) {
			char *copy = malloc(n ? n : 1);
			struct session_msg m;
			int rc;

			ck_assert_ptr_nonnull(copy);
			memcpy(copy, rows[r].in, n);
			why[0] = '\0';
			rc = session_msg_parse(copy, n, &m, why, sizeof(why));
			if (rc != 0) {
				ck_assert_int_eq(rc, -EINVAL);
				ck_assert_msg(why[0] != '\0', "row %d prefix %zu: no reason", r, n);
				ck_assert(m.have == 0 && !m.arg && !m.env && !m.owned);
				refused++;
			} else {
				ck_assert(n > 0 && copy[n - 1] == '\0');
				shorter_message(&m, &full, n);
				session_msg_free(&m);
				shorter++;
			}
			free(copy);
		}
		session_msg_free(&full);
	}
	/* Both kinds occur: "run\0arg\0sh\0" is a shorter run, "hello\0" lacks keys. */
	ck_assert_uint_gt(shorter, 0);
	ck_assert_uint_gt(refused, 0);
}
END_TEST

START_TEST(values)
{
	struct session_msg m;
	char why[128];
	static const char run[] = "run\0arg\0sh\0arg\0-c\0env\0A=1\0id\0"
				  "42";

	ck_assert_int_eq(session_msg_parse(run, sizeof(run), &m, why, sizeof(why)), 0);
	ck_assert_int_eq(m.verb, SESSION_RUN);
	ck_assert_uint_eq(m.n_arg, 2);
	ck_assert_str_eq(m.arg[0], "sh");
	ck_assert_str_eq(m.arg[1], "-c");
	ck_assert_uint_eq(m.n_env, 1);
	ck_assert_str_eq(m.env[0], "A=1");
	ck_assert_int_eq(m.id, 42);
	ck_assert(session_msg_has(&m, SESSION_K_ID));
	ck_assert(!session_msg_has(&m, SESSION_K_SIG));
	session_msg_free(&m);
}
END_TEST

START_TEST(frame_lengths)
{
	size_t fl = 0;
	const unsigned char two[] = {2, 0, 0, 0, 'o', 'k'};
	const unsigned char zero[] = {0, 0, 0, 0};
	const unsigned char big[] = {1, 0, 0x10, 0}; /* 1 MiB + 1 */
	const unsigned char max[] = {0, 0, 0x10, 0}; /* 1 MiB */

	ck_assert_int_eq(session_frame_len(two, 3, &fl), 0);
	ck_assert_int_eq(session_frame_len(two, 5, &fl), 0);
	ck_assert_int_eq(session_frame_len(two, 6, &fl), 1);
	ck_assert_uint_eq(fl, 6);
	ck_assert_int_eq(session_frame_len(zero, 4, &fl), -EMSGSIZE);
	ck_assert_int_eq(session_frame_len(big, 4, &fl), -EMSGSIZE);
	ck_assert_int_eq(session_frame_len(max, 4, &fl), 0);
}
END_TEST

START_TEST(names)
{
	static const char *good[] = {"a", "s1", "my.session_2-x", "A"};
	static const char *bad[] = {
	    "",	   ".",
	    "..",  ".hidden",
	    "-x",  "a/b",
	    "a b", "a\n",
	    "é",   "x12345678901234567890123456789012345678901234567890123456789012345"};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(session_name_ok(good[i]), "%s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!session_name_ok(bad[i]), "%s", bad[i]);
}
END_TEST

/* The builder's frames parse back to what went in; over-long frames are refused. */
START_TEST(round_trip)
{
	struct session_buf b = {0};
	struct session_msg m;
	size_t fl;
	char why[128];

	session_buf_begin(&b, SESSION_FAILED);
	session_buf_put(&b, SESSION_K_KIND, "exec");
	session_buf_put_int(&b, SESSION_K_ERR, ENOENT);
	session_buf_put(&b, SESSION_K_MSG, "nosuch");
	ck_assert_int_eq(session_buf_end(&b), 0);
	ck_assert_int_eq(session_frame_len((unsigned char *)b.p, b.len, &fl), 1);
	ck_assert_uint_eq(fl, b.len);
	ck_assert_int_eq(session_msg_parse(b.p + 4, b.len - 4, &m, why, sizeof(why)), 0);
	ck_assert_int_eq(m.kind, SESSION_FAIL_EXEC);
	ck_assert_int_eq(m.err, ENOENT);
	ck_assert_str_eq(m.msg, "nosuch");
	session_msg_free(&m);

	char *huge = malloc(SESSION_FRAME_MAX);
	memset(huge, 'x', SESSION_FRAME_MAX - 1);
	huge[SESSION_FRAME_MAX - 1] = '\0';
	session_buf_begin(&b, SESSION_RUN);
	session_buf_put(&b, SESSION_K_ARG, huge);
	ck_assert_int_eq(session_buf_end(&b), -E2BIG);
	free(huge);
	session_buf_free(&b);
}
END_TEST

/* Over a socketpair: a frame cut in pieces, the descriptors that ride on it, and
 * more descriptors than a frame may carry. */
START_TEST(conn_reader)
{
	int sv[2], fds[4], got[SESSION_MAX_FDS];
	struct session_buf b = {0};
	struct session_conn c;
	struct session_msg m;
	char why[128];
	int rc;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (int i = 0; i < 4; i++)
		fds[i] = open("/dev/null", O_RDONLY);
	session_conn_init(&c, sv[0]);
	session_buf_begin(&b, SESSION_RUN);
	session_buf_put(&b, SESSION_K_ARG, "true");
	ck_assert_int_eq(session_buf_end(&b), 0);
	ck_assert_int_eq(session_send(sv[1], &b, fds, 3, 1000), 0);
	ck_assert_int_eq(session_conn_read(&c), 1);
	ck_assert_int_eq(session_conn_next(&c, &m, why, sizeof(why)), 1);
	ck_assert_str_eq(m.arg[0], "true");
	session_msg_free(&m);
	ck_assert_uint_eq(session_conn_take_fds(&c, got), 3);
	for (int i = 0; i < 3; i++)
		close(got[i]);
	/* A frame in two writes: nothing until it is whole. */
	ck_assert_int_eq(write(sv[1], b.p, 5), 5);
	ck_assert_int_eq(session_conn_read(&c), 1);
	ck_assert_int_eq(session_conn_next(&c, &m, why, sizeof(why)), 0);
	ck_assert_int_eq(write(sv[1], b.p + 5, b.len - 5), (ssize_t)(b.len - 5));
	ck_assert_int_eq(session_conn_read(&c), 1);
	ck_assert_int_eq(session_conn_next(&c, &m, why, sizeof(why)), 1);
	session_msg_free(&m);
	/* Four descriptors: one too many, the peer is refused. */
	ck_assert_int_eq(session_send(sv[1], &b, fds, 3, 1000), 0);
	{
		union {
			char buf[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} u;
		struct iovec iov = {b.p, b.len};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf)};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * 4);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * 4);
		ck_assert_int_gt(sendmsg(sv[1], &mh, 0), 0);
	}
	do
		rc = session_conn_read(&c);
	while (rc == 1);
	ck_assert_int_eq(rc, -EPROTO);
	/* A hostile length. */
	session_conn_release(&c);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	session_conn_init(&c, sv[0]);
	ck_assert_int_eq(write(sv[1], "\xff\xff\xff\x7f", 4), 4);
	ck_assert_int_eq(session_conn_read(&c), 1);
	ck_assert_int_lt(session_conn_next(&c, &m, why, sizeof(why)), 0);
	/* End of stream. */
	close(sv[1]);
	ck_assert_int_eq(session_conn_read(&c), -EPIPE);
	session_conn_release(&c);
	session_buf_free(&b);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}
END_TEST

static Suite *session_proto_suite(void)
{
	Suite *s = suite_create("session_proto");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, parse_table, 0, ROWS(rows));
	tcase_add_test(tc, parse_prefixes);
	tcase_add_test(tc, values);
	tcase_add_test(tc, frame_lengths);
	tcase_add_test(tc, names);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, conn_reader);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(session_proto_suite)
