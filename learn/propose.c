/* From a learn record to the minimal additions: exact names unless a preset holds
 * two learned names or more (then the preset), "*.x" only with --wildcards,
 * host:port when the command used no default port (80, 443) of the host, writable
 * roots that the policy's own validation accepts; everything else is listed as
 * refused, with the reason, never proposed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "learn/learn.h"

static int add(struct learn_items *it, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int add(struct learn_items *it, const char *value, const char *fmt, ...)
{
	struct learn_item *g;
	char *c = NULL;
	va_list ap;
	int rc;

	for (size_t i = 0; value && i < it->n; i++)
		if (strcmp(it->v[i].value, value) == 0)
			return 0; /* one entry; the first use names it */
	va_start(ap, fmt);
	rc = vasprintf(&c, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	g = realloc(it->v, (it->n + 1) * sizeof(*g));
	if (!g) {
		free(c);
		return -ENOMEM;
	}
	it->v = g;
	it->v[it->n].comment = c;
	it->v[it->n].value = strdup(value ? value : "");
	if (!it->v[it->n].value) {
		free(c);
		return -ENOMEM;
	}
	it->n++;
	return 0;
}

static void items_free(struct learn_items *it)
{
	for (size_t i = 0; i < it->n; i++) {
		free(it->v[i].value);
		free(it->v[i].comment);
	}
	free(it->v);
	it->v = NULL;
	it->n = 0;
}

void learn_plan_free(struct learn_plan *pl)
{
	struct learn_items *all[] = {&pl->domains,  &pl->presets, &pl->host_ports, &pl->roots,
				     &pl->env_pass, &pl->refused, &pl->notes};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		items_free(all[i]);
}

const struct policy_preset *learn_preset_of(const char *host)
{
	size_t n;
	const struct policy_preset *ps = policy_presets(&n);

	for (size_t i = 0; host && i < n; i++)
		for (size_t k = 0; k < ps[i].n; k++)
			if (policy_host_match(ps[i].entries[k].pattern, host))
				return &ps[i];
	return NULL;
}

static bool default_port(unsigned port)
{
	return port == 80 || port == 443;
}

/* Who used a host: every (proto, port, count) of its allowed connections, and the
 * command when the run had one. */
static void uses(const struct learn_record *r, const char *host, const char *by, char *out,
		 size_t n)
{
	size_t k = 0;

	out[0] = '\0';
	for (size_t i = 0; i < r->n_hosts && k < n; i++) {
		const struct learn_host *h = &r->hosts[i];
		if (h->kind != LEARN_HOST_ALLOWED || strcmp(h->host, host) != 0)
			continue;
		k += (size_t)snprintf(out + k, n - k, "%s%s port %u, %llu connection%s",
				      k ? "; " : "", h->proto, h->port, h->conns,
				      h->conns == 1 ? "" : "s");
	}
	if (k < n)
		snprintf(out + k, n - k, "%s", by);
}

static bool loopback_target(const char *host)
{
	return policy_loopback_name(host) || strcmp(host, "127.0.0.1") == 0 ||
	       strcmp(host, "::1") == 0;
}

/* The learned names, one entry each: "host" when a default port was used (it covers
 * every port), else "host:port" per port. */
struct name {
	const char *host;
	bool portless;
	bool taken; /* folded into a preset or a wildcard */
};

/* Did a learned (host, port, proto) pass the address check at least once? The proxy
 * records the decision first and then, when every address was outside allowPrivate,
 * the refusal: a name refused each time is listed as refused (refusals()), never
 * proposed. */
static bool passed(const struct learn_record *r, const struct learn_host *h)
{
	unsigned long long refused = 0;

	for (size_t i = 0; i < r->n_hosts; i++) {
		const struct learn_host *x = &r->hosts[i];
		if (x->kind == LEARN_HOST_PRIVATE && x->port == h->port &&
		    strcmp(x->host, h->host) == 0 && strcmp(x->proto, h->proto) == 0)
			refused += x->conns;
	}
	return refused < h->conns;
}

static size_t names_of(const struct learn_record *r, struct name *v)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_hosts; i++) {
		const struct learn_host *h = &r->hosts[i];
		size_t j;
		/* the host's loopback is reached through egress.hostPorts (refusals()) */
		if (h->kind != LEARN_HOST_ALLOWED || loopback_target(h->host) || !passed(r, h))
			continue;
		for (j = 0; j < n && strcmp(v[j].host, h->host) != 0; j++)
			;
		if (j == n)
			v[n++] = (struct name){h->host, false, false};
		v[j].portless |= default_port(h->port);
	}
	return n;
}

static int presets_fold(const struct halo_policy *p, struct name *v, size_t n, const char *by,
			struct learn_plan *out)
{
	size_t np;
	const struct policy_preset *ps = policy_presets(&np);

	for (size_t i = 0; i < np; i++) {
		char names[512] = "";
		size_t count = 0, k = 0;
		for (size_t j = 0; j < n; j++)
			if (v[j].portless && learn_preset_of(v[j].host) == &ps[i]) {
				count++;
				k += (size_t)snprintf(names +
							  (k < sizeof(names) ? k : sizeof(names)),
						      k < sizeof(names) ? sizeof(names) - k : 0,
						      "%s%s", k ? ", " : "", v[j].host);
			}
		if (count < 2)
			continue;
		for (size_t j = 0; j < n; j++)
			if (v[j].portless && learn_preset_of(v[j].host) == &ps[i])
				v[j].taken = true;
		(void)p;
		if (add(&out->presets, ps[i].name, "the preset holding %s%s", names, by) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* An IP literal (IPv6 has a ':'; a valid name's last label is never all digits, so
 * such a name is IPv4): no wildcard is ever over one ("*.2.3.4" is no pattern). */
static bool ip_literal(const char *host)
{
	const char *last = strrchr(host, '.');

	last = last ? last + 1 : host;
	return strchr(host, ':') || (*last && strspn(last, "0123456789") == strlen(last));
}

/* One rule of the list against name: 1 the rule makes it a suffix, -1 an exception
 * says it is not, 0 the rule is about something else. */
static int suffix_rule(const char *rule, size_t len, const char *name)
{
	const char *dot = strchr(name, '.');

	if (len && rule[0] == '!')
		return len - 1 == strlen(name) && strncasecmp(rule + 1, name, len - 1) == 0 ? -1
											    : 0;
	if (len > 2 && rule[0] == '*' && rule[1] == '.')
		return dot && len - 2 == strlen(dot + 1) &&
		       strncasecmp(rule + 2, dot + 1, len - 2) == 0;
	return len == strlen(name) && strncasecmp(rule, name, len) == 0;
}

bool learn_public_suffix(const char *list, const char *name)
{
	bool hit = false;

	if (!list || !name || !*name)
		return false;
	for (const char *l = list; *l;) {
		size_t len = strcspn(l, " \t\r\n");
		const char *next = l + strcspn(l, "\n");
		int r = strncmp(l, "//", 2) == 0 ? 0 : suffix_rule(l, len, name);
		if (r < 0)
			return false; /* an exception wins over a wildcard */
		hit |= r > 0;
		l = *next ? next + 1 : next;
	}
	return hit;
}

bool learn_suffix_within(const char *list, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (learn_public_suffix(list, name))
		return true;
	if (!list || !n)
		return false;
	for (const char *l = list; *l;) {
		size_t len = strcspn(l, " \t\r\n");
		const char *next = l + strcspn(l, "\n");
		/* Byte-wise: a rule's other labels may be in Unicode (the list's own form),
		 * the tail that names name is ASCII either way. Exceptions make nothing. */
		if (strncmp(l, "//", 2) != 0 && len > n + 1 && l[0] != '!' &&
		    l[len - n - 1] == '.' && strncasecmp(l + len - n, name, n) == 0)
			return true;
		l = *next ? next + 1 : next;
	}
	return false;
}

/* A name with an internationalised label (xn--): the list gives those in Unicode, and
 * this reader does not convert, so it cannot tell that such a parent is no suffix. */
static bool idn_name(const char *name)
{
	for (const char *p = name; p; p = strchr(p, '.'), p = p ? p + 1 : NULL)
		if (strncasecmp(p, "xn--", 4) == 0)
			return true;
	return false;
}

/* --wildcards: two names or more strictly below one parent of two labels or more,
 * when neither the parent nor any name below it is a public suffix ("*.co.uk",
 * "*.github.io" would let anyone's names in, and "*.amazonaws.com" everyone's S3
 * bucket below s3.amazonaws.com), nor an internationalised name the list cannot tell
 * (公司.cn is a suffix; learn sees xn--55qx5d.cn). */
static int wildcards_fold(struct name *v, size_t n, const struct learn_opts *o, const char *by,
			  struct learn_plan *out)
{
	for (size_t i = 0; i < n; i++) {
		const char *parent = v[i].taken || !v[i].portless ? NULL : strchr(v[i].host, '.');
		char pat[260];
		size_t count = 0;
		if (!parent || !strchr(parent + 1, '.') || ip_literal(v[i].host))
			continue;
		parent++;
		for (size_t j = 0; j < n; j++)
			count +=
			    !v[j].taken && v[j].portless &&
			    policy_name_under(v[j].host, strlen(v[j].host), parent, strlen(parent));
		if (count < 2)
			continue;
		snprintf(pat, sizeof(pat), "*.%s", parent);
		if (!o->suffixes || idn_name(parent) || learn_suffix_within(o->suffixes, parent)) {
			if (add(&out->refused, pat, "--wildcards: %s not proposed: %s", pat,
				!o->suffixes ? "no public suffix list to tell (Debian's "
					       "publicsuffix package); the names stay exact"
				: idn_name(parent)
				    ? "an internationalised name, which the public suffix list "
				      "read here cannot judge; the names stay exact"
				    : "a public suffix is there or below it (anyone can "
				      "register a name under it); the names stay exact") < 0)
				return -ENOMEM;
			continue;
		}
		for (size_t j = 0; j < n; j++)
			if (v[j].portless && policy_host_match(pat, v[j].host))
				v[j].taken = true;
		if (add(&out->domains, pat, "--wildcards: %zu names below %s%s", count, parent,
			by) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* An IP literal with a port needs brackets when it is IPv6. */
static void entry(char *out, size_t n, const char *host, unsigned port)
{
	if (!port)
		snprintf(out, n, "%s", host);
	else if (strchr(host, ':'))
		snprintf(out, n, "[%s]:%u", host, port);
	else
		snprintf(out, n, "%s:%u", host, port);
}

static int domains(const struct halo_policy *p, const struct learn_record *r,
		   const struct learn_opts *o, const char *by, struct learn_plan *out)
{
	struct name *v = calloc(r->n_hosts + 1, sizeof(*v));
	size_t n;
	int rc = 0;

	if (!v)
		return -ENOMEM;
	n = names_of(r, v);
	rc = presets_fold(p, v, n, by, out);
	if (rc == 0 && o && o->wildcards)
		rc = wildcards_fold(v, n, o, by, out);
	for (size_t j = 0; rc == 0 && j < n; j++) {
		char e[300], use[700];
		if (v[j].taken)
			continue;
		uses(r, v[j].host, by, use, sizeof(use));
		if (v[j].portless) {
			entry(e, sizeof(e), v[j].host, 0);
			rc = add(&out->domains, e, "%s", use);
			continue;
		}
		for (size_t i = 0; rc == 0 && i < r->n_hosts; i++) {
			const struct learn_host *h = &r->hosts[i];
			if (h->kind != LEARN_HOST_ALLOWED || strcmp(h->host, v[j].host) != 0 ||
			    !passed(r, h))
				continue;
			entry(e, sizeof(e), h->host, h->port);
			rc = add(&out->domains, e, "%s", use);
		}
	}
	free(v);
	return rc;
}

/* A loopback target (allowed, or refused as loopback) is a host loopback service:
 * egress.hostPorts, never an allowedDomains entry. Refused after the decision:
 * any other private address is said, never proposed; a rule's deny stays. */
static bool halo_port(unsigned port)
{
	return port == POLICY_PROXY_HTTP_PORT || port == POLICY_PROXY_SOCKS_PORT ||
	       port == POLICY_PROXY_CAPTURE_PORT;
}

/* A host loopback port: proposed, or refused one by one where validation would refuse
 * the whole file (halo-run's own ports inside, more than hostPorts takes, one the
 * policy lists already): what the command asked never costs the rest of the record. */
static int host_port(const struct halo_policy *p, const struct learn_host *h, const char *by,
		     struct learn_plan *out)
{
	char port[16];
	size_t have = 0;

	snprintf(port, sizeof(port), "%u", h->port);
	for (size_t i = 0; i < p->host_ports.n; i++)
		if (p->host_ports.items[i] == h->port)
			return 0; /* listed already */
	for (size_t i = 0; i < out->host_ports.n; i++)
		have += strcmp(out->host_ports.v[i].value, port) != 0;
	char said[300];
	int k = snprintf(said, sizeof(said), "%s port %u:", h->host, h->port);
	for (size_t i = 0; k > 0 && i < out->refused.n; i++)
		if (strncmp(out->refused.v[i].comment, said, (size_t)k) == 0)
			return 0; /* said once */
	if (halo_port(h->port))
		return add(&out->refused, NULL,
			   "%s port %u: halo-run's own proxy port inside the sandbox, which "
			   "egress.hostPorts cannot forward",
			   h->host, h->port);
	if (p->host_ports.n + have >= POLICY_MAX_HOST_PORTS)
		return add(&out->refused, NULL,
			   "%s port %u: egress.hostPorts takes at most %d ports; not proposed",
			   h->host, h->port, POLICY_MAX_HOST_PORTS);
	return add(&out->host_ports, port, "%s on the host's loopback, %s port %u%s", h->host,
		   h->proto, h->port, by);
}

static int refusals(const struct halo_policy *p, const struct learn_record *r, const char *by,
		    struct learn_plan *out)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < r->n_hosts; i++) {
		const struct learn_host *h = &r->hosts[i];
		char e[300];
		entry(e, sizeof(e), h->host, h->port);
		if (loopback_target(h->host) &&
		    (h->kind == LEARN_HOST_ALLOWED ||
		     (h->kind == LEARN_HOST_PRIVATE && strcmp(h->cls, "loopback") == 0))) {
			rc = host_port(p, h, by, out);
		} else if (h->kind == LEARN_HOST_PRIVATE) {
			rc =
			    add(&out->refused, NULL,
				"%s: address %s is %s; it would need egress.allowPrivate (learning "
				"never adds one)",
				e, h->addr, h->cls[0] ? h->cls : "private");
		} else if (h->kind == LEARN_HOST_DENIED) {
			rc = add(&out->refused, NULL, "%s (%s): denied by %s; stays denied", e,
				 h->proto, h->rule[0] ? h->rule : "a rule");
		}
	}
	return rc;
}

static bool beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

static void parent_of(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');
	size_t k = slash ? (size_t)(slash - path) : 0;

	snprintf(out, n, "%.*s", (int)(k ? k : 1), k ? path : "/");
}

/* A component of dir that the guard keeps read-only in every run (a guard name such as
 * .vscode or .claude, or a git directory), or NULL: a root there would change nothing
 * and mislead whoever reads the diff. */
static const char *guarded_component(const char *dir, char *comp, size_t n)
{
	for (const char *p = dir; *p;) {
		size_t len;
		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len && len < n) {
			memcpy(comp, p, len);
			comp[len] = '\0';
			if (policy_guard_name(comp) || policy_name_eq(comp, ".git"))
				return comp;
		}
		p += len;
	}
	return NULL;
}

/* The directory each refused write landed in, when validation accepts it as a root;
 * a root below another proposed one is folded into it. */
static int roots(const struct learn_record *r, const struct learn_opts *o, const char *by,
		 struct learn_plan *out)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < r->n_writes; i++) {
		const struct learn_write *w = &r->writes[i];
		char dir[4096], why[512] = "";
		bool folded = false;
		if (w->guard) {
			rc = add(&out->refused, NULL,
				 "write %s: refused by the gate (a guard target, a git rule or a "
				 "protected path); never proposed",
				 w->path);
			continue;
		}
		parent_of(w->path, dir, sizeof(dir));
		for (size_t k = 0; k < out->roots.n && !folded; k++)
			folded = beneath(dir, out->roots.v[k].value);
		if (folded)
			continue;
		if (!learn_yaml_quote(dir, why, sizeof(why))) {
			rc = add(
			    &out->refused, NULL,
			    "write %s: not proposed: the name is not UTF-8, or too long to write",
			    w->path);
			continue;
		}
		if (guarded_component(dir, why, sizeof(why))) {
			rc = add(
			    &out->refused, NULL,
			    "write %s (%s): %s is not proposed: %s stays read-only in every run "
			    "(a guard target or a git directory)",
			    w->path, strerror(w->err), dir, why);
			continue;
		}
		why[0] = '\0';
		if (!o || !o->root_check || o->root_check(o->ctx, dir, why, sizeof(why)) != 0) {
			rc = add(&out->refused, NULL, "write %s (%s): %s is not proposed: %s",
				 w->path, strerror(w->err), dir,
				 why[0] ? why : "no validation available");
			continue;
		}
		rc = add(&out->roots, dir, "a refused write: %s (%s, %llu time%s)%s", w->path,
			 strerror(w->err), w->count, w->count == 1 ? "" : "s", by);
	}
	/* A root proposed before one of its ancestors: the ancestor covers it. */
	for (size_t i = 0; rc == 0 && i < out->roots.n; i++)
		for (size_t k = 0; k < out->roots.n; k++)
			if (k != i && beneath(out->roots.v[i].value, out->roots.v[k].value)) {
				free(out->roots.v[i].value);
				free(out->roots.v[i].comment);
				out->roots.v[i] = out->roots.v[--out->roots.n];
				i--;
				break;
			}
	return rc;
}

int learn_propose(const struct halo_policy *p, const struct learn_record *r,
		  const struct learn_opts *o, struct learn_plan *out)
{
	char by[300] = "";
	int rc;

	memset(out, 0, sizeof(*out));
	if (r->n_commands == 1)
		snprintf(by, sizeof(by), "; by: %.100s%s", r->commands[0],
			 strlen(r->commands[0]) > 100 ? "..." : "");
	rc = domains(p, r, o, by, out);
	if (rc == 0)
		rc = refusals(p, r, by, out);
	if (rc == 0)
		rc = roots(r, o, by, out);
	if (rc)
		learn_plan_free(out);
	return rc;
}
