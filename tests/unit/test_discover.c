/* Discovery: $HALO_POLICY, then /etc/halo, then ~/.config/halo, then the embedded
 * default; never a file inside the workspace. The file system is a fake list. */
#include <errno.h>

#include "tests/unit/policy_test.h"

static const char *const *present; /* NULL-terminated list of existing files */

static bool fake_exists(const char *path)
{
	for (const char *const *p = present; p && *p; p++)
		if (strcmp(*p, path) == 0)
			return true;
	return false;
}

struct dcase {
	const char *name;
	const char *env;
	const char *workspace;
	const char *files[6];
	int rc;
	const char *chosen;  /* "" = embedded default */
	const char *message; /* substring of an error (rc < 0) or a warning, or NULL */
};

#define ETC_Y  "/etc/halo/policy.yaml"
#define ETC_J  "/etc/halo/policy.json"
#define HOME_Y "/home/alice/.config/halo/policy.yaml"
#define HOME_J "/home/alice/.config/halo/policy.json"
#define WS     "/home/alice/proj"

static const struct dcase cases[] = {
    {"nothing: embedded", NULL, WS, {NULL}, 0, "", NULL},
    {"etc yaml", NULL, WS, {ETC_Y, HOME_Y}, 0, ETC_Y, NULL},
    {"etc json", NULL, WS, {ETC_J, HOME_Y}, 0, ETC_J, NULL},
    {"etc both",
     NULL,
     WS,
     {ETC_J, ETC_Y},
     0,
     ETC_Y,
     "/etc/halo/policy.json: ignored, /etc/halo/policy.yaml is used"},
    {"home yaml", NULL, WS, {HOME_Y, HOME_J}, 0, HOME_Y, HOME_J ": ignored, " HOME_Y " is used"},
    {"home json", NULL, WS, {HOME_J}, 0, HOME_J, NULL},
    {"env first",
     "/srv/policies/ci.yaml",
     WS,
     {"/srv/policies/ci.yaml", ETC_Y},
     0,
     "/srv/policies/ci.yaml",
     NULL},
    {"env empty is unset", "", WS, {ETC_Y}, 0, ETC_Y, NULL},
    {"env missing",
     "/srv/none.yaml",
     WS,
     {ETC_Y},
     -ENOENT,
     "",
     "$HALO_POLICY=/srv/none.yaml: no such file"},
    {"env relative",
     "policy.yaml",
     WS,
     {"policy.yaml"},
     -EINVAL,
     "",
     "$HALO_POLICY=policy.yaml: must be an absolute path"},
    {"env in workspace",
     WS "/.halo.yaml",
     WS,
     {WS "/.halo.yaml"},
     -EPERM,
     "",
     "$HALO_POLICY=/home/alice/proj/.halo.yaml: is inside the workspace /home/alice/proj; a "
     "repository must not choose its own policy"},
    {"env in workspace via dotdot",
     "/srv/../home/alice/proj/p.yaml",
     WS,
     {"/srv/../home/alice/proj/p.yaml"},
     -EPERM,
     "",
     "is inside the workspace"},
    {"env in workspace other case",
     "/HOME/alice/Proj/p.yaml",
     WS,
     {"/HOME/alice/Proj/p.yaml"},
     -EPERM,
     "",
     "is inside the workspace"},
    {"env in workspace trailing slash",
     WS "/p.yaml",
     WS "/",
     {WS "/p.yaml"},
     -EPERM,
     "",
     "is inside the workspace"},
    {"env next to workspace",
     "/home/alice/project2/p.yaml",
     WS,
     {"/home/alice/project2/p.yaml"},
     0,
     "/home/alice/project2/p.yaml",
     NULL},
    {"home config inside workspace",
     NULL,
     "/home/alice",
     {HOME_Y},
     0,
     "",
     HOME_Y ": skipped, it is inside the workspace /home/alice (a repository must not loosen "
	    "its own sandbox)"},
    {"workspace is home, etc used", NULL, "/home/alice", {HOME_Y, ETC_Y}, 0, ETC_Y, NULL},
    {"workspace is /etc",
     NULL,
     "/etc",
     {ETC_Y, HOME_J},
     0,
     HOME_J,
     ETC_Y ": skipped, it is inside the workspace /etc"},
    {"workspace is /", NULL, "/", {ETC_Y, HOME_Y}, 0, "", "skipped, it is inside the workspace"},
    {"no workspace", NULL, NULL, {HOME_Y}, 0, HOME_Y, NULL},
};

START_TEST(discovery_table)
{
	const struct dcase *c = &cases[_i];
	struct policy_diags d = {0};
	struct policy_discover_in in = {c->env, "/home/alice", c->workspace, fake_exists};
	char out[256] = "junk";
	int rc;

	present = c->files;
	rc = policy_discover(&in, out, sizeof(out), &d);
	ck_assert_msg(rc == c->rc, "[%s] rc %d, want %d:%s", c->name, rc, c->rc, pt_dump(&d));
	ck_assert_msg(strcmp(out, c->chosen) == 0, "[%s] chose '%s', want '%s'", c->name, out,
		      c->chosen);
	if (c->message && c->rc < 0)
		ck_assert_msg(pt_err(&d, c->message), "[%s] want error '%s':%s", c->name,
			      c->message, pt_dump(&d));
	else if (c->message)
		ck_assert_msg(pt_warn(&d, c->message), "[%s] want warning '%s':%s", c->name,
			      c->message, pt_dump(&d));
	else
		ck_assert_msg(d.n_errors + d.n_warnings == 0, "[%s] unexpected:%s", c->name,
			      pt_dump(&d));
	policy_diags_free(&d);
}
END_TEST

START_TEST(no_home)
{
	static const char *const files[] = {HOME_Y, NULL};
	struct policy_diags d = {0};
	struct policy_discover_in in = {NULL, NULL, WS, fake_exists};
	char out[64];

	present = files;
	ck_assert_int_eq(policy_discover(&in, out, sizeof(out), &d), 0);
	ck_assert_str_eq(out, "");
	policy_diags_free(&d);
}
END_TEST

START_TEST(output_too_small)
{
	static const char *const files[] = {ETC_Y, NULL};
	struct policy_diags d = {0};
	struct policy_discover_in in = {NULL, "/home/alice", WS, fake_exists};
	char out[8];

	present = files;
	ck_assert_int_eq(policy_discover(&in, out, sizeof(out), &d), -ENAMETOOLONG);
	ck_assert_str_eq(out, "");
	ck_assert(pt_err(&d, "/etc/halo/policy.yaml: path too long"));
	policy_diags_free(&d);
}
END_TEST

static Suite *discover_suite(void)
{
	Suite *s = suite_create("policy_discover");
	TCase *t = tcase_create("discover");

	tcase_add_loop_test(t, discovery_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(t, no_home);
	tcase_add_test(t, output_too_small);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(discover_suite)
