/* One-off flags (--allow HOST[:PORT], --writable DIR, --env NAME[=VALUE], --host-port
 * PORT, --mode MODE), as bubblewrap and srt users expect: one more layer over every
 * file, made of the lists the layers below hold plus the flags' entries, so that it
 * adds where a file layer would replace (--mode sets sandbox.mode, as a file would).
 * Through policy_layer it is reported like any later file
 * ("command line: loosens egress.allowedDomains (adds 'x.example')"), under a managed
 * policy it is refused the same way, and policy_finalize validates its entries with
 * the same rules as the files'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"

bool policy_oneoff_any(const struct policy_oneoff *o)
{
	return o && (o->n_allow || o->n_writable || o->n_env || o->n_host_ports || o->mode);
}

/* `base`'s list (copied) with `add` appended, each once. */
static int grown(struct policy_list *out, const struct policy_list *base, const char *const *add,
		 size_t n)
{
	if (policy_list_copy(out, base) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!policy_list_contains(out, add[i]) && policy_list_push(out, add[i]) < 0)
			return -ENOMEM;
	out->set = true;
	return 0;
}

/* "4873": a port as egress.hostPorts takes it; anything else is the flag's error. */
static int port_of(const char *s, uint16_t *port)
{
	char *end;
	long v;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 5)
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

static int env_entries(struct halo_policy *u, const struct halo_policy *base,
		       const struct policy_oneoff *o)
{
	const char **names = calloc(o->n_env + 1, sizeof(*names));
	size_t n = 0;
	int rc = 0;

	if (!names)
		return -ENOMEM;
	u->env_set = calloc(o->n_env + 1, sizeof(*u->env_set));
	if (!u->env_set) {
		free(names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < o->n_env && rc == 0; i++) {
		const char *eq = strchr(o->env[i], '=');
		struct policy_kv *kv = &u->env_set[u->n_env_set];
		if (!eq) {
			names[n++] = o->env[i];
			continue;
		}
		kv->key = strndup(o->env[i], (size_t)(eq - o->env[i]));
		kv->value = strdup(eq + 1);
		u->n_env_set++;
		u->env_set_set = true;
		if (!kv->key || !kv->value)
			rc = -ENOMEM;
	}
	if (rc == 0 && n)
		rc = grown(&u->env_pass, &base->env_pass, names, n);
	free(names);
	return rc;
}

/* The upper layer for `base`: 0, -ENOMEM, or -EINVAL (d told) when a port was
 * malformed; the rest is built all the same, so that validation judges it too. */
static int build(const struct halo_policy *base, const struct policy_oneoff *o,
		 struct halo_policy *u, struct policy_diags *d)
{
	int rc = 0, bad = 0;

	if (o->n_allow)
		rc = grown(&u->allowed_domains, &base->allowed_domains, o->allow, o->n_allow);
	if (rc == 0 && o->n_writable)
		rc = grown(&u->writable_roots, &base->writable_roots, o->writable, o->n_writable);
	if (rc == 0 && o->n_env)
		rc = env_entries(u, base, o);
	if (rc == 0 && o->mode && policy_mode_parse(o->mode, &u->mode) < 0) {
		policy_diag(d, true, "command line", 0, NULL,
			    "--mode '%.40s': one of read-only, workspace-write, off", o->mode);
		bad = -EINVAL;
	}
	if (rc == 0 && o->n_host_ports) {
		if ((rc = policy_ports_copy(&u->host_ports, &base->host_ports)) == 0)
			u->host_ports.set = true;
		for (size_t i = 0; rc == 0 && i < o->n_host_ports; i++) {
			uint16_t port;
			bool had = false;
			if (port_of(o->host_ports[i], &port) < 0) {
				policy_diag(
				    d, true, "command line", 0, NULL,
				    "--host-port '%.40s': a port is a number from 1 to 65535",
				    o->host_ports[i]);
				bad = -EINVAL;
				continue;
			}
			for (size_t k = 0; k < u->host_ports.n && !had; k++)
				had = u->host_ports.items[k] == port;
			if (!had)
				rc = policy_ports_push(&u->host_ports, port);
		}
	}
	return rc < 0 ? rc : bad;
}

/* Empty values and NAME= forms with no name are refused here, where the flag is
 * still known; every other rule is validation's. */
static int check_flags(const struct policy_oneoff *o, struct policy_diags *d)
{
	const struct {
		const char *flag;
		const char *const *v;
		size_t n;
	} flags[] = {{"--allow", o->allow, o->n_allow},
		     {"--writable", o->writable, o->n_writable},
		     {"--env", o->env, o->n_env},
		     {"--mode", &o->mode, o->mode ? 1 : 0}};
	int rc = 0;

	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t i = 0; i < flags[f].n; i++)
			if (!flags[f].v[i][0] || flags[f].v[i][0] == '=') {
				policy_diag(d, true, "command line", 0, NULL, "%s: needs a %s",
					    flags[f].flag, f == 2 ? "variable name" : "value");
				rc = -EINVAL;
			}
	return rc;
}

/* "command line (--allow x.example, --writable /w)": the layer in the policy's
 * source (--dry-run's "policy:" line), so that each one-off shows in the plan. */
static char *layer_name(const struct policy_oneoff *o)
{
	const struct {
		const char *flag;
		const char *const *v;
		size_t n;
	} flags[] = {{"--allow", o->allow, o->n_allow},
		     {"--writable", o->writable, o->n_writable},
		     {"--env", o->env, o->n_env},
		     {"--host-port", o->host_ports, o->n_host_ports},
		     {"--mode", &o->mode, o->mode ? 1 : 0}};
	size_t len = sizeof("command line ()");
	char *s;

	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t i = 0; i < flags[f].n; i++)
			len += strlen(flags[f].flag) + strnlen(flags[f].v[i], 200) + 3;
	if (!(s = malloc(len)))
		return NULL;
	strcpy(s, "command line (");
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t i = 0; i < flags[f].n; i++) {
			const char *v = flags[f].v[i];
			/* NAME=VALUE: the name only, a value may be a secret */
			size_t vn = f == 2 && strchr(v, '=') ? (size_t)(strchr(v, '=') - v)
							     : strnlen(v, 200);
			snprintf(s + strlen(s), len - strlen(s), "%s%s %.*s",
				 s[strlen(s) - 1] == '(' ? "" : ", ", flags[f].flag, (int)vn, v);
		}
	strcat(s, ")");
	return s;
}

int policy_layer_oneoff(struct halo_policy *base, const struct policy_oneoff *o,
			struct policy_diags *d)
{
	struct halo_policy *u;
	char *name;
	int rc, built;

	if (!policy_oneoff_any(o))
		return 0;
	if ((rc = check_flags(o, d)) < 0)
		return rc;
	if (!(u = policy_new()) || !(name = layer_name(o))) {
		policy_free(u);
		return -ENOMEM;
	}
	built = build(base, o, u, d);
	/* Messages say "command line: ..."; the source names every flag. */
	rc = built == -ENOMEM ? built : policy_layer(base, u, "command line", d);
	policy_free(u);
	if (rc == 0 && base->source) {
		size_t n = strlen(base->source), k = strlen("command line");
		char *s = NULL;
		if (n >= k && strcmp(base->source + n - k, "command line") == 0 &&
		    asprintf(&s, "%.*s%s", (int)(n - k), base->source, name) > 0) {
			free(base->source);
			base->source = s;
		}
	}
	free(name);
	return rc < 0 ? rc : built;
}
