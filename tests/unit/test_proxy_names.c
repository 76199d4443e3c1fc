/* limits.wildcardNames and limits.wildcardNamesPerMinute (issue 33, proxy/namebudget.c):
 * names a wildcard rule allows reach the host's resolver only within the run's
 * budget; past it they are refused before any lookup (403 naming the limit and the
 * count, one audit record each), names resolved before and exact hosts cost nothing,
 * and --events carries one "limit" record per limit. A counting resolver stands in
 * for the host's: it sees every lookup the proxy makes. */
#include <stdatomic.h>

#include "tests/unit/proxy_fixture.h"

static atomic_int lookups;

/* Any name under wild.test is 127.0.0.1; the fixture's names as before. */
static int counting_lookup(const char *name, struct proxy_addr *out, size_t max, size_t *n)
{
	size_t len = strlen(name);

	atomic_fetch_add(&lookups, 1);
	if (len > 10 && strcmp(name + len - 10, ".wild.test") == 0 && max > 0) {
		memset(out, 0, sizeof(*out));
		out->family = AF_INET;
		inet_pton(AF_INET, "127.0.0.1", out->addr);
		*n = 1;
		return 0;
	}
	return fx_lookup(name, out, max, n);
}

#define POLICY_WILD(limits)                                                                        \
	"egress:\n"                                                                                \
	"  default: deny\n"                                                                        \
	"  allowedDomains: [origin.test, '*.wild.test']\n"                                         \
	"  allowPrivate: [127.0.0.0/8]\n"                                                          \
	"limits: " limits "\n"

static FILE *events;

static void with_events(struct proxy_options *o)
{
	events = tmpfile();
	ck_assert_ptr_nonnull(events);
	o->events_fd = fileno(events);
	ck_assert_int_gt(o->events_fd, 2);
}

/* CONNECT NAME:port; the status, and the X-Halo-Deny value in deny (when any). */
static int via(struct fx_proxy *f, const char *name, int port, char *deny, size_t cap)
{
	char target[200], head[2048], *p;
	int fd, st;

	snprintf(target, sizeof(target), "%s:%d", name, port);
	fd = cli_connect_via(f, target, head, sizeof(head));
	st = status_of(head);
	close(fd);
	deny[0] = '\0';
	if ((p = strstr(head, "X-Halo-Deny: ")))
		snprintf(deny, cap, "%.*s", (int)strcspn(p + 13, "\r\n"), p + 13);
	return st;
}

static int limit_events(const char *key)
{
	char *all = fx_slurp(events), *save = NULL;
	int n = 0;

	for (char *l = strtok_r(all, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(l);

		ck_assert_ptr_nonnull(o);
		if (js(o, "type") && strcmp(js(o, "type"), "limit") == 0 &&
		    strcmp(js(o, "limit"), key) == 0) {
			ck_assert_ptr_nonnull(strstr(js(o, "evidence"), "lookup refused: "));
			n++;
		}
		cJSON_Delete(o);
	}
	free(all);
	return n;
}

START_TEST(per_run_budget)
{
	struct fx_proxy f;
	struct origin o;
	char deny[512], name[64];

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_WILD("{wildcardNames: 3}"), with_events);
	proxy_resolver_set_lookup(counting_lookup);
	atomic_store(&lookups, 0);
	for (int i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "d%d.wild.test", i);
		ck_assert_int_eq(via(&f, name, o.port, deny, sizeof(deny)), 200);
	}
	ck_assert_int_eq(atomic_load(&lookups), 3);
	for (int i = 4; i <= 6; i++) {
		char want[256];

		snprintf(name, sizeof(name), "d%d.wild.test", i);
		ck_assert_int_eq(via(&f, name, o.port, deny, sizeof(deny)), 403);
		snprintf(want, sizeof(want),
			 "%s (limits.wildcardNames (3 names resolved under wildcard rules; %d "
			 "refused))",
			 name, i - 3);
		ck_assert_str_eq(deny, want);
	}
	ck_assert_int_eq(atomic_load(&lookups), 3); /* refused before any lookup */
	/* A name resolved before, and an exact host, cost nothing. */
	ck_assert_int_eq(via(&f, "d2.wild.test", o.port, deny, sizeof(deny)), 200);
	ck_assert_int_eq(via(&f, "origin.test", o.port, deny, sizeof(deny)), 200);
	ck_assert_int_eq(via(&f, "D2.Wild.Test.", o.port, deny, sizeof(deny)), 200);
	fx_stop(&f);
	origin_stop(&o);
	ck_assert_int_eq(limit_events("wildcardNames"), 1);
	ck_assert_int_eq(limit_events("wildcardNamesPerMinute"), 0);
	fclose(events);
}
END_TEST

START_TEST(per_minute_budget)
{
	struct fx_proxy f;
	struct origin o;
	char deny[512];
	cJSON *recs[16];
	int n, denied = 0;

	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_WILD("{wildcardNamesPerMinute: 2}"), with_events);
	proxy_resolver_set_lookup(counting_lookup);
	atomic_store(&lookups, 0);
	ck_assert_int_eq(via(&f, "a.wild.test", o.port, deny, sizeof(deny)), 200);
	ck_assert_int_eq(via(&f, "b.wild.test", o.port, deny, sizeof(deny)), 200);
	ck_assert_int_eq(via(&f, "c.wild.test", o.port, deny, sizeof(deny)), 403);
	ck_assert_str_eq(deny, "c.wild.test (limits.wildcardNamesPerMinute (2 new names resolved "
			       "under wildcard rules; 1 refused))");
	ck_assert_int_eq(via(&f, "e.wild.test", o.port, deny, sizeof(deny)), 403);
	ck_assert_int_eq(via(&f, "a.wild.test", o.port, deny, sizeof(deny)), 200);
	ck_assert_int_eq(atomic_load(&lookups), 3); /* a, b, and a again (not cached) */
	fx_stop(&f);
	origin_stop(&o);
	n = fx_audit(&f, recs, 16);
	for (int i = 0; i < n; i++)
		denied += strstr(js(recs[i], "rule"), "limits.wildcardNamesPerMinute") != NULL;
	ck_assert_int_eq(denied, 2);
	fx_free_recs(recs, n);
	ck_assert_int_eq(limit_events("wildcardNamesPerMinute"), 1);
	fclose(events);
}
END_TEST

/* Unset: the defaults (256 per run, 64 a minute): the 65th new name in a minute is
 * refused. */
START_TEST(defaults)
{
	struct fx_proxy f;
	struct origin o;
	char deny[512], name[64];

	ck_assert_int_eq(POLICY_WILDCARD_NAMES_DEFAULT, 256);
	ck_assert_int_eq(POLICY_WILDCARD_NAMES_PER_MINUTE_DEFAULT, 64);
	origin_start(&o, ORIGIN_ECHO);
	fx_start(&f, _i, POLICY_WILD("{}"), NULL);
	proxy_resolver_set_lookup(counting_lookup);
	for (int i = 1; i <= 64; i++) {
		snprintf(name, sizeof(name), "n%d.wild.test", i);
		ck_assert_int_eq(via(&f, name, o.port, deny, sizeof(deny)), 200);
	}
	ck_assert_int_eq(via(&f, "n65.wild.test", o.port, deny, sizeof(deny)), 403);
	ck_assert_ptr_nonnull(strstr(deny, "limits.wildcardNamesPerMinute (64 new names"));
	fx_stop(&f);
	origin_stop(&o);
}
END_TEST

static Suite *names_suite(void)
{
	Suite *s = suite_create("proxy-names");
	TCase *tc = tcase_create("budget");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, per_run_budget, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, per_minute_budget, FIRST_BACKEND, END_BACKEND);
	tcase_add_loop_test(tc, defaults, FIRST_BACKEND, END_BACKEND);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(names_suite)
