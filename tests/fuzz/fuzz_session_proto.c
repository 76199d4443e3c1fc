/* libFuzzer target for the session's control protocol (linux/session_proto.c): any
 * bytes, as a frame header and as a payload. A payload that parses has every string
 * inside it, NULL-terminated lists of the counted length, environment entries with a
 * name, a signal from the forwarded set; rebuilt with the builder (verb, lists and
 * the numbers), it parses again to the same message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linux/session_proto.h"
#include "exit/exit.h"
#include "tests/fuzz/fuzz_check.h"

static bool inside(const char *p, const char *buf, size_t n)
{
	return p >= buf && p < buf + n && strlen(p) < (size_t)(buf + n - p);
}

static void rebuild_and_compare(const struct session_msg *m)
{
	struct session_buf b = {0};
	struct session_msg again;
	char why[128];

	session_buf_begin(&b, m->verb);
	for (size_t i = 0; i < m->n_arg; i++)
		session_buf_put(&b, SESSION_K_ARG, m->arg[i]);
	for (size_t i = 0; i < m->n_env; i++)
		session_buf_put(&b, SESSION_K_ENV, m->env[i]);
	if (session_msg_has(m, SESSION_K_ID))
		session_buf_put_int(&b, SESSION_K_ID, m->id);
	if (session_msg_has(m, SESSION_K_SIG))
		session_buf_put_int(&b, SESSION_K_SIG, m->sig);
	if (session_msg_has(m, SESSION_K_STATUS))
		session_buf_put_int(&b, SESSION_K_STATUS, m->status);
	if (session_buf_end(&b) == 0 && m->verb != SESSION_HELLO && m->verb != SESSION_REFUSED &&
	    m->verb != SESSION_FAILED) {
		int rc = session_msg_parse(b.p + 4, b.len - 4, &again, why, sizeof(why));
		CHECK(rc == 0);
		CHECK(again.verb == m->verb && again.n_arg == m->n_arg && again.n_env == m->n_env);
		for (size_t i = 0; i < m->n_arg; i++)
			CHECK(strcmp(again.arg[i], m->arg[i]) == 0);
		CHECK(again.id == m->id && again.sig == m->sig && again.status == m->status);
		session_msg_free(&again);
	}
	session_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int fwd[] = {HALO_FORWARDED_SIGNALS};
	char *buf = malloc(size ? size : 1);
	struct session_msg m;
	char why[128];
	size_t fl;
	int rc;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	rc = session_frame_len(data, size, &fl);
	CHECK(rc <= 0 || (fl >= 5 && fl <= size && fl <= SESSION_FRAME_MAX + 4));
	if (session_msg_parse(buf, size, &m, why, sizeof(why)) == 0) {
		CHECK(m.verb < SESSION_N_VERBS);
		CHECK(m.arg && !m.arg[m.n_arg] && m.env && !m.env[m.n_env]);
		CHECK(m.n_arg <= SESSION_LIST_MAX && m.n_env <= SESSION_LIST_MAX);
		for (size_t i = 0; i < m.n_arg; i++)
			CHECK(inside(m.arg[i], buf, size));
		for (size_t i = 0; i < m.n_env; i++)
			CHECK(inside(m.env[i], buf, size) && strchr(m.env[i], '=') > m.env[i]);
		if (m.name)
			CHECK(inside(m.name, buf, size) && session_name_ok(m.name));
		if (m.workspace)
			CHECK(m.workspace[0] == '/');
		if (session_msg_has(&m, SESSION_K_SIG)) {
			bool known = false;
			for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
				known = known || fwd[i] == m.sig;
			CHECK(known);
		}
		CHECK(m.verb != SESSION_RUN || m.n_arg >= 1);
		rebuild_and_compare(&m);
		session_msg_free(&m);
	} else
		CHECK(why[0] != '\0');
	free(buf);
	return 0;
}
