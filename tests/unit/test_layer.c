/* Layering: what unions, what replaces, and a warning for every loosening. */
#include <errno.h>

#include "tests/unit/policy_test.h"

static struct halo_policy *parse(const char *name, const char *yaml)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_msg(policy_parse_buffer(name, yaml, strlen(yaml), 'y', &p, &d) == 0, "%s%s", yaml,
		      pt_dump(&d));
	policy_diags_free(&d);
	return p;
}

/* Layer `upper` (named up.yaml) on `base`; returns the merged policy, with the
 * diagnostics in d. */
static struct halo_policy *layer(const char *base, const char *upper, struct policy_diags *d)
{
	struct halo_policy *b = parse("base.yaml", base), *u = parse("up.yaml", upper);

	ck_assert_int_eq(policy_layer(b, u, "up.yaml", d), 0);
	policy_free(u);
	return b;
}

static void assert_list(const struct policy_list *l, size_t n, const char *const *want)
{
	ck_assert_msg(l->n == n, "want %zu items, got %zu", n, l->n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(l->items[i], want[i]);
}

START_TEST(deny_lists_and_protected_paths_union)
{
	struct policy_diags d = {0};
	struct halo_policy *p = layer("egress: {deniedDomains: [a.example, b.example]}\n"
				      "sandbox: {protectedPaths: [~/.ssh, .env*]}\n",
				      "egress: {deniedDomains: [c.example, a.example]}\n"
				      "sandbox: {protectedPaths: [~/.aws, ~/.ssh]}\n",
				      &d);

	assert_list(&p->denied_domains, 3,
		    (const char *const[]){"a.example", "b.example", "c.example"});
	assert_list(&p->protected_paths, 3, (const char *const[]){"~/.ssh", ".env*", "~/.aws"});
	ck_assert_msg(d.n_warnings == 0, "%s", pt_dump(&d));
	policy_free(p);
	/* An empty upper list cannot drop anything. */
	p = layer("egress: {deniedDomains: [a.example]}\n", "egress: {deniedDomains: []}\n", &d);
	assert_list(&p->denied_domains, 1, (const char *const[]){"a.example"});
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(allow_lists_replace)
{
	struct policy_diags d = {0};
	struct halo_policy *p = layer("egress:\n  allowedDomains: [a.example, b.example]\n"
				      "  presets: [vcs]\n  allowPrivate: [10.0.0.0/8]\n"
				      "sandbox: {writableRoots: [/opt/a, /opt/b]}\n"
				      "env: {pass: [A, B]}\n",
				      "egress:\n  allowedDomains: [b.example]\n  presets: []\n"
				      "sandbox: {writableRoots: [/opt/b]}\nenv: {pass: [B]}\n",
				      &d);

	assert_list(&p->allowed_domains, 1, (const char *const[]){"b.example"});
	ck_assert_uint_eq(p->presets.n, 0);
	assert_list(&p->allow_private, 1, (const char *const[]){"10.0.0.0/8"}); /* not set above */
	assert_list(&p->writable_roots, 1, (const char *const[]){"/opt/b"});
	assert_list(&p->env_pass, 1, (const char *const[]){"B"});
	ck_assert_msg(d.n_warnings == 0, "narrowing is not loosening:%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(host_ports_replace)
{
	struct policy_diags d = {0};
	struct halo_policy *p =
	    layer("egress: {hostPorts: [4873, 5432]}\n", "egress: {hostPorts: [8080]}\n", &d);

	ck_assert_uint_eq(p->host_ports.n, 1);
	ck_assert_uint_eq(p->host_ports.items[0], 8080);
	ck_assert(pt_warn(&d, "up.yaml: loosens egress.hostPorts (adds 8080)"));
	policy_free(p);
	policy_diags_free(&d);
	/* unset in the upper layer: kept */
	p = layer("egress: {hostPorts: [4873]}\n", "egress: {deniedDomains: [x.example]}\n", &d);
	ck_assert_uint_eq(p->host_ports.n, 1);
	ck_assert_uint_eq(p->host_ports.items[0], 4873);
	policy_free(p);
	/* [] empties it */
	p = layer("egress: {hostPorts: [4873]}\n", "egress: {hostPorts: []}\n", &d);
	ck_assert_uint_eq(p->host_ports.n, 0);
	ck_assert(p->host_ports.set);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(scalars_and_limits_replace_when_set)
{
	struct policy_diags d = {0};
	struct halo_policy *p = layer("sandbox: {mode: workspace-write, guardPersistence: false}\n"
				      "gateway: a.example\n"
				      "limits: {cpuSeconds: 60, memoryMB: 4096}\n"
				      "env: {set: {A: \"1\", B: \"2\"}}\n",
				      "sandbox: {mode: read-only}\ngateway: b.example\n"
				      "limits: {memoryMB: 1024, processes: 10}\n"
				      "env: {set: {B: \"3\", C: \"4\"}}\n",
				      &d);

	ck_assert_int_eq(p->mode, POLICY_MODE_READ_ONLY);
	ck_assert_int_eq(p->guard_persistence, 0); /* unset above: kept */
	ck_assert_str_eq(p->gateway, "b.example");
	ck_assert_int_eq(p->limits.cpu_seconds, 60);
	ck_assert_int_eq(p->limits.memory_mb, 1024);
	ck_assert_int_eq(p->limits.processes, 10);
	ck_assert_uint_eq(p->n_env_set, 3);
	ck_assert_str_eq(p->env_set[0].value, "1");
	ck_assert_str_eq(p->env_set[1].key, "B");
	ck_assert_str_eq(p->env_set[1].value, "3");
	ck_assert_str_eq(p->env_set[2].key, "C");
	ck_assert_str_eq(p->source, "base.yaml, up.yaml");
	ck_assert_msg(d.n_warnings == 0, "%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

struct loose {
	const char *base, *upper, *warning; /* warning NULL: no warning at all */
};

static const struct loose loosenings[] = {
    {"egress: {default: deny}\n", "egress: {default: allow}\n",
     "up.yaml: loosens egress.default (deny → allow)"},
    {"egress: {allowedDomains: [a.example], deniedDomains: [x.example]}\n",
     "egress: {allowedDomains: []}\n", "up.yaml: loosens egress.default (deny → allow)"},
    {"egress: {allowedDomains: [a.example]}\n",
     "egress: {allowedDomains: [a.example, b.example]}\n",
     "up.yaml: loosens egress.allowedDomains (adds 'b.example')"},
    {"egress: {}\n", "egress: {presets: [vcs]}\n", "up.yaml: loosens egress.presets (adds 'vcs')"},
    {"egress: {allowPrivate: [10.1.0.0/16]}\n", "egress: {allowPrivate: [10.0.0.0/8]}\n",
     "up.yaml: loosens egress.allowPrivate (adds '10.0.0.0/8')"},
    {"sandbox: {mode: read-only}\n", "sandbox: {mode: workspace-write}\n",
     "up.yaml: loosens sandbox.mode (read-only → workspace-write)"},
    {"sandbox: {mode: read-only}\n", "sandbox: {mode: off}\n",
     "up.yaml: loosens sandbox.mode (read-only → off)"},
    {"egress: {}\n", "sandbox: {mode: off}\n",
     "up.yaml: loosens sandbox.mode (workspace-write → off)"},
    {"sandbox: {mode: read-only}\n", "permissions: {sandbox: workspace-write}\n",
     "loosens sandbox.mode (read-only → workspace-write)"},
    {"sandbox: {failIfUnavailable: true}\n", "sandbox: {failIfUnavailable: false}\n",
     "up.yaml: loosens sandbox.failIfUnavailable (true → false)"},
    {"egress: {}\n", "sandbox: {failIfUnavailable: false}\n",
     "loosens sandbox.failIfUnavailable (true → false)"},
    {"egress: {}\n", "sandbox: {guardPersistence: false}\n",
     "up.yaml: loosens sandbox.guardPersistence (true → false)"},
    {"egress: {}\n", "sandbox: {caches: host}\n",
     "up.yaml: loosens sandbox.caches (isolated → host (the host's own caches become writable))"},
    {"sandbox: {caches: off}\n", "sandbox: {caches: host}\n", "loosens sandbox.caches (off → host"},
    {"sandbox: {writableRoots: [/opt/a]}\n", "sandbox: {writableRoots: [/opt/a, /opt/b]}\n",
     "up.yaml: loosens sandbox.writableRoots (adds '/opt/b')"},
    {"limits: {memoryMB: 1024}\n", "limits: {memoryMB: 4096}\n",
     "up.yaml: loosens limits.memoryMB (1024 → 4096)"},
    {"limits: {wallSeconds: 60}\n", "limits: {wallSeconds: 61}\n",
     "loosens limits.wallSeconds (60 → 61)"},
    /* a session that lives longer keeps its sandbox (and what runs there) longer */
    {"limits: {sessionIdleSeconds: 600}\n", "limits: {sessionIdleSeconds: 3600}\n",
     "loosens limits.sessionIdleSeconds (600 → 3600)"},
    {"limits: {connections: 64}\n", "limits: {connections: 4096}\n",
     "up.yaml: loosens limits.connections (64 → 4096)"},
    {"limits: {wildcardNames: 10, wildcardNamesPerMinute: 5}\n",
     "limits: {wildcardNamesPerMinute: 50}\n",
     "up.yaml: loosens limits.wildcardNamesPerMinute (5 → 50)"},
    {"env: {pass: [GOPATH]}\n", "env: {pass: [GOPATH, AWS_SECRET_ACCESS_KEY]}\n",
     "up.yaml: loosens env.pass (adds 'AWS_SECRET_ACCESS_KEY')"},
    /* each host port added opens a host service, whatever the egress default */
    {"egress: {hostPorts: [4873]}\n", "egress: {hostPorts: [4873, 5432]}\n",
     "up.yaml: loosens egress.hostPorts (adds 5432)"},
    {"egress: {}\n", "egress: {hostPorts: [4873]}\n",
     "up.yaml: loosens egress.hostPorts (adds 4873)"},
    /* each host socket opened is a host service reachable inside */
    {"egress: {}\n", "sandbox: {unixSockets: [~/.ssh/agent.sock]}\n",
     "up.yaml: loosens sandbox.unixSockets (adds '~/.ssh/agent.sock')"},
    {"sandbox: {unixSockets: [/run/a.sock]}\n",
     "sandbox: {unixSockets: [/run/a.sock, /var/run/docker.sock]}\n",
     "up.yaml: loosens sandbox.unixSockets (adds '/var/run/docker.sock')"},
    {"egress: {default: allow}\n", "egress: {hostPorts: [4873]}\n",
     "up.yaml: loosens egress.hostPorts (adds 4873)"},
    /* tightening, or no change: no warning */
    {"egress: {hostPorts: [4873, 5432]}\n", "egress: {hostPorts: [5432]}\n", NULL},
    {"egress: {hostPorts: [4873]}\n", "egress: {hostPorts: []}\n", NULL},
    {"egress: {hostPorts: [4873]}\n", "limits: {memoryMB: 100}\n", NULL},
    {"egress: {default: allow}\n", "egress: {default: deny}\n", NULL},
    {"egress: {deniedDomains: [x.example]}\n", "egress: {allowedDomains: [a.example]}\n", NULL},
    {"sandbox: {mode: workspace-write}\n", "sandbox: {mode: read-only}\n", NULL},
    {"sandbox: {failIfUnavailable: false}\n", "sandbox: {failIfUnavailable: true}\n", NULL},
    {"limits: {memoryMB: 4096}\n", "limits: {memoryMB: 1024}\n", NULL},
    {"egress: {}\n", "limits: {memoryMB: 99999}\n", NULL},
    {"sandbox: {writableRoots: [/opt/a, /opt/b]}\n", "sandbox: {writableRoots: [/opt/b]}\n", NULL},
    {"egress: {allowedDomains: [a.example]}\n", "gateway: a.example\n", NULL},
    {"egress: {}\n", "egress: {}\n", NULL},
    {"sandbox: {caches: host}\n", "sandbox: {caches: isolated}\n", NULL},
    {"egress: {}\n", "sandbox: {caches: off}\n", NULL},
};

START_TEST(loosening_warnings)
{
	const struct loose *c = &loosenings[_i];
	struct policy_diags d = {0};
	struct halo_policy *p = layer(c->base, c->upper, &d);

	if (c->warning)
		ck_assert_msg(pt_warn(&d, c->warning), "[%s + %s] want '%s' in:%s", c->base,
			      c->upper, c->warning, pt_dump(&d));
	else
		ck_assert_msg(d.n_warnings == 0, "[%s + %s] unexpected:%s", c->base, c->upper,
			      pt_dump(&d));
	ck_assert_uint_eq(d.n_errors, 0);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(one_warning_per_loosening)
{
	struct policy_diags d = {0};
	struct halo_policy *p = layer("egress: {allowedDomains: [a.example]}\n",
				      "egress: {allowedDomains: [b.example, c.example]}\n", &d);

	ck_assert_uint_eq(d.n_warnings, 2);
	ck_assert_str_eq(d.warnings[0],
			 "up.yaml: loosens egress.allowedDomains (adds 'b.example')");
	ck_assert_str_eq(d.warnings[1],
			 "up.yaml: loosens egress.allowedDomains (adds 'c.example')");
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(legacy_mode_follows_layer)
{
	struct policy_diags d = {0};
	struct halo_policy *p =
	    layer("permissions: {sandbox: read-only}\n", "sandbox: {mode: read-only}\n", &d);

	ck_assert_ptr_null(p->legacy_permissions_sandbox);
	ck_assert_int_eq(policy_finalize(p, &pt_ctx, &d), 0);
	policy_free(p);
	p = layer("permissions: {sandbox: workspace-write}\n", "sandbox: {mode: read-only}\n", &d);
	ck_assert_int_eq(policy_finalize(p, &pt_ctx, &d), 0); /* no stale disagreement */
	ck_assert_int_eq(p->mode, POLICY_MODE_READ_ONLY);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(load_layers_files)
{
	const char *paths[] = {PT_DATA "team-base.yaml", PT_DATA "project-loose.json"};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_msg(policy_load(paths, 2, &pt_ctx, &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_int_eq(p->mode, POLICY_MODE_WORKSPACE_WRITE);
	assert_list(&p->protected_paths, 2, (const char *const[]){"~/.ssh", "~/.aws"});
	assert_list(&p->denied_domains, 2, (const char *const[]){"pastebin.com", "transfer.sh"});
	assert_list(&p->allowed_domains, 2,
		    (const char *const[]){"registry.npmjs.org", "pypi.org"});
	ck_assert_int_eq(p->limits.memory_mb, 8192);
	ck_assert_int_eq(p->fail_if_unavailable, 0);
	ck_assert_str_eq(p->source, PT_DATA "team-base.yaml, " PT_DATA "project-loose.json");
	ck_assert_uint_eq(d.n_warnings, 5);
	ck_assert(pt_warn(&d, PT_DATA "project-loose.json: loosens sandbox.mode (read-only → "
				      "workspace-write)"));
	ck_assert(pt_warn(&d, "project-loose.json: loosens sandbox.writableRoots (adds "
			      "'/opt/cache')"));
	ck_assert(pt_warn(&d, "project-loose.json: loosens sandbox.failIfUnavailable (true → "
			      "false)"));
	ck_assert(pt_warn(&d, "project-loose.json: loosens egress.allowedDomains (adds "
			      "'pypi.org')"));
	ck_assert(pt_warn(&d, "project-loose.json: loosens limits.memoryMB (1024 → 8192)"));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(layered_result_is_validated)
{
	const char *paths[] = {PT_DATA "team-base.yaml", PT_DATA "off.yaml"};
	struct policy_diags d = {0};
	struct halo_policy *p = (void *)1;

	/* Mode off on top of a base with rules: the merged policy is contradictory. */
	ck_assert_int_eq(policy_load(paths, 2, &pt_ctx, &p, &d), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert(pt_warn(&d, "off.yaml: loosens sandbox.mode (read-only → off)"));
	ck_assert_msg(pt_err(&d, PT_DATA "team-base.yaml, " PT_DATA
					 "off.yaml: egress.allowedDomains: not allowed with "
					 "sandbox.mode off"),
		      "%s", pt_dump(&d));
	policy_diags_free(&d);
}
END_TEST

static Suite *layer_suite(void)
{
	Suite *s = suite_create("policy_layer");
	TCase *t = tcase_create("layer");

	tcase_add_test(t, deny_lists_and_protected_paths_union);
	tcase_add_test(t, allow_lists_replace);
	tcase_add_test(t, host_ports_replace);
	tcase_add_test(t, scalars_and_limits_replace_when_set);
	tcase_add_loop_test(t, loosening_warnings, 0,
			    (int)(sizeof(loosenings) / sizeof(loosenings[0])));
	tcase_add_test(t, one_warning_per_loosening);
	tcase_add_test(t, legacy_mode_follows_layer);
	tcase_add_test(t, load_layers_files);
	tcase_add_test(t, layered_result_is_validated);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(layer_suite)
