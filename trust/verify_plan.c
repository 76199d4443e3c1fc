/* What `halo-run verify` tries: from the plan of its launch (the writable set, the
 * persistence guard, the limits and what holds them), from the policy (its protected
 * paths and globs, egress rules) and from the seccomp table (verify_proc.c: each
 * system call probe expects the errno of the row that denies it). Where the sandbox answering "ok"
 * might still be harmless (a file created in the sandbox's private /tmp), the host is asked: did it
 * arrive here? */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/linux.h"
#include "rlimits/rlimits.h"
#include "trust/trust.h"
#include "trust/verify_int.h"

#define MAX_PROTECTED 12 /* existing protected paths probed */
#define MAX_GLOBS     8

struct vrow *verify_add(struct verify *v, enum vcheck check, const char *expected, const char *spec,
			const char *fmt, ...)
{
	struct vrow *r;
	va_list ap;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		struct vrow *nr = realloc(v->rows, cap * sizeof(*nr));
		if (!nr)
			return NULL;
		v->rows = nr;
		v->cap = cap;
	}
	r = &v->rows[v->n];
	memset(r, 0, sizeof(*r));
	r->check = check;
	r->host_fd = -1;
	snprintf(r->expected, sizeof(r->expected), "%s", expected);
	va_start(ap, fmt);
	vsnprintf(r->probe, sizeof(r->probe), fmt, ap);
	va_end(ap);
	if (spec && !(r->spec = strdup(spec)))
		return NULL;
	v->n++;
	return r;
}

struct vrow *verify_add_spec(struct verify *v, enum vcheck check, const char *expected,
			     const char *probe, const char *fmt, ...)
{
	char spec[4400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(spec, sizeof(spec), fmt, ap);
	va_end(ap);
	return verify_add(v, check, expected, spec, "%s", probe);
}

/* The path facts' one meaning (policy_path_beneath), a trailing '/' of dir dropped. */
static bool beneath(const char *path, const char *dir)
{
	char d[PATH_MAX];
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n >= sizeof(d))
		return false;
	memcpy(d, dir, n);
	d[n] = '\0';
	return policy_path_beneath(path, d);
}

/* Beneath a tree the plan makes writable (the workspace, a writable root)? */
static bool writable_in_plan(const struct verify *v, const char *path)
{
	for (size_t i = 0; i < v->plan.n_steps; i++) {
		const struct plan_step *s = &v->plan.steps[i];
		if ((s->op == PLAN_BIND_RW || s->op == PLAN_CACHE_BIND) && beneath(path, s->path))
			return true;
	}
	return false;
}

/* A create row: the runner makes `dir`/halo-verify.PID; the host then looks for it. */
static int add_create(struct verify *v, const char *dir, enum vcheck check, const char *expected,
		      const char *what)
{
	char path[4200];
	struct vrow *r;

	/* pid and random: never the name of something already there */
	snprintf(path, sizeof(path), "%s/halo-verify.%d.%s", dir, (int)v->self, v->tag);
	r = verify_add_spec(v, check, expected, what, "create:%s", path);
	if (!r || !(r->host_path = strdup(path)))
		return -ENOMEM;
	return 0;
}

/* ---------------------------------------------------------------- files */

static int plan_writes(struct verify *v)
{
	char parent[4096], what[4300];
	const char *dirs[] = {"/etc", "/usr", "/var/tmp", v->home, parent};
	const char *done[8];
	size_t n_done = 0;

	snprintf(parent, sizeof(parent), "%s", v->ws);
	*strrchr(parent, '/') = '\0';
	if (v->p->mode != POLICY_MODE_READ_ONLY) {
		if (add_create(v, v->ws, V_ON_HOST, "created",
			       "create a file in the workspace "
			       "(control)") < 0)
			return -ENOMEM;
	} else if (add_create(v, v->ws, V_NOT_ON_HOST, "refused (read-only)",
			      "create a file in the read-only workspace") < 0) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		bool dup = false;
		if (!dirs[i] || dirs[i][0] != '/' || !dirs[i][1] || writable_in_plan(v, dirs[i]))
			continue;
		for (size_t k = 0; k < n_done; k++)
			dup |= strcmp(done[k], dirs[i]) == 0;
		if (dup)
			continue;
		done[n_done++] = dirs[i];
		snprintf(what, sizeof(what), "write outside the writable set: %s", dirs[i]);
		if (add_create(v, dirs[i], V_NOT_ON_HOST, "refused", what) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The first regular file in dir (its name into out), for a read probe. */
static bool first_file(const char *dir, char *out, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	while (d && !found && (de = readdir(d))) {
		char path[4400];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			snprintf(out, n, "%s", path);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* Readable inside by design: an allowRead carve-out, or a floor file shown as its
 * sanitized copy (whose write probe still applies). */
static bool shown_inside(const struct verify *v, const char *path)
{
	const struct halo_policy *p = v->p;

	for (size_t i = 0; i < p->sanitize_abs.n; i++)
		if (strcmp(path, p->sanitize_abs.items[i]) == 0)
			return true;
	for (size_t i = 0; i < p->allow_read_abs.n; i++) {
		if (policy_path_beneath(path, p->allow_read_abs.items[i]))
			return true;
	}
	return false;
}

static int plan_protected_one(struct verify *v, const char *path, const struct stat *st)
{
	char file[4400], what[4600];

	if (shown_inside(v, path)) {
		snprintf(what, sizeof(what), "open %s (shown read-only) for writing", path);
		return verify_add_spec(v, V_REFUSED, "refused", what, "write:%s", path) ? 0
											: -ENOMEM;
	}
	if (S_ISDIR(st->st_mode)) {
		bool has = first_file(path, file, sizeof(file)) && !shown_inside(v, file);
		snprintf(what, sizeof(what), "read protected %s", has ? file : path);
		if (!verify_add_spec(v, V_REFUSED, "refused", what, "read:%s", has ? file : path))
			return -ENOMEM;
		snprintf(what, sizeof(what), "create a file in protected %s", path);
		return add_create(v, path, V_NOT_ON_HOST, "refused", what);
	}
	snprintf(what, sizeof(what), "read protected %s", path);
	if (!verify_add_spec(v, V_REFUSED, "refused", what, "read:%s", path))
		return -ENOMEM;
	snprintf(what, sizeof(what), "open protected %s for writing", path);
	return verify_add_spec(v, V_REFUSED, "refused", what, "write:%s", path) ? 0 : -ENOMEM;
}

static int plan_protected(struct verify *v)
{
	const struct policy_list *l = &v->p->protected_abs;
	struct stat seen[MAX_PROTECTED];
	size_t n_seen = 0;

	for (size_t i = 0; i < l->n && n_seen < MAX_PROTECTED; i++) {
		struct stat st;
		bool dup = false;
		if (lstat(l->items[i], &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			continue;
		for (size_t k = 0; k < n_seen; k++)
			dup |= seen[k].st_dev == st.st_dev && seen[k].st_ino == st.st_ino;
		if (dup)
			continue;
		seen[n_seen++] = st;
		if (plan_protected_one(v, l->items[i], &st) < 0)
			return -ENOMEM;
	}
	if (n_seen == 0 &&
	    !verify_add(v, V_SKIP, "refused", NULL,
			"protected paths: none of the policy's exists on this machine"))
		return -ENOMEM;
	return 0;
}

/* A file name a plain glob matches: '*' → "" (".env*" → ".env") or, when that does
 * not match, "halo-verify"; '?' → 'x'. Globs with classes or escapes are skipped. */
static bool plant_name(const char *glob, const char *star, char *out, size_t n)
{
	size_t k = 0;

	for (const char *g = glob; *g; g++) {
		char one[2] = {*g, 0};
		const char *put = *g == '*' ? star : *g == '?' ? "x" : one;
		if (strchr("[]\\{}", *g) || k + strlen(put) + 1 > n)
			return false;
		memcpy(out + k, put, strlen(put));
		k += strlen(put);
	}
	out[k] = '\0';
	return k > 0 && out[0] != '/' && out[k - 1] != '/' && !strstr(out, "..") &&
	       strcmp(out, ".") != 0 && fnmatch(glob, out, 0) == 0;
}

static bool plantable(const char *glob, char *out, size_t n)
{
	while (glob[0] == '.' && glob[1] == '/')
		glob += 2;
	return plant_name(glob, "", out, n) || plant_name(glob, "halo-verify", out, n);
}

static int plant(const char *ws, const char *rel, const char *text)
{
	char path[4400];
	FILE *f;

	for (const char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
		snprintf(path, sizeof(path), "%s/%.*s", ws, (int)(s - rel), rel);
		mkdir(path, 0700);
	}
	snprintf(path, sizeof(path), "%s/%s", ws, rel);
	if (!(f = fopen(path, "wx")))
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -EIO;
}

static int plan_globs(struct verify *v)
{
	const struct policy_list *g = &v->p->protected_globs;
	char name[512], text[160];

	snprintf(text, sizeof(text), "HALO_VERIFY_SECRET=%s\n", v->secret);
	for (size_t i = 0; i < g->n && i < MAX_GLOBS; i++) {
		if (!plantable(g->items[i], name, sizeof(name)) || plant(v->ws, name, text) < 0) {
			if (!verify_add(v, V_SKIP, "refused", NULL,
					"protected glob %s: no file planted for it", g->items[i]))
				return -ENOMEM;
			continue;
		}
		char spec[4700];
		snprintf(spec, sizeof(spec), "read:%s/%s", v->ws, name);
		if (!verify_add(v, V_REFUSED, "refused", spec,
				"read planted %.60s (glob "
				"%.40s)",
				name, g->items[i]))
			return -ENOMEM;
		snprintf(spec, sizeof(spec), "write:%s/%s", v->ws, name);
		if (!verify_add(v, V_REFUSED, "refused", spec, "open planted %.60s for writing",
				name))
			return -ENOMEM;
	}
	return 0;
}

/* A git repository with a hook, a shell start-up file and editor settings: what a
 * command would change to run code later, outside the sandbox. */
static int plan_guard(struct verify *v)
{
	static const struct {
		const char *rel;
		const char *text;
	} files[] = {
	    {".git/HEAD", "ref: refs/heads/main\n"},
	    {".git/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"},
	    {".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n"},
	    {".git/objects/.keep", ""},
	    {".git/refs/heads/.keep", ""},
	    {".bashrc", "# planted by halo-run verify\n"},
	    {".vscode/settings.json", "{}\n"},
	};
	static const struct {
		const char *what;
		const char *kind;
		const char *rel;
	} rows[] = {
	    {"persistence: append to .git/hooks/pre-commit", "write", ".git/hooks/pre-commit"},
	    {"persistence: new hook in .git/hooks", "create", ".git/hooks"},
	    {"persistence: append to .git/config", "write", ".git/config"},
	    {"persistence: append to .bashrc", "write", ".bashrc"},
	    {"persistence: new file in .vscode", "create", ".vscode"},
	};
	bool off = !v->plan.guard;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (plant(v->ws, files[i].rel, files[i].text) < 0)
			return -EIO;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", v->ws, rows[i].rel);
		if (off) {
			if (!verify_add(v, V_SKIP, "refused", NULL, "%s (guardPersistence: false)",
					rows[i].what))
				return -ENOMEM;
		} else if (strcmp(rows[i].kind, "create") == 0) {
			if (add_create(v, path, V_NOT_ON_HOST, "refused", rows[i].what) < 0)
				return -ENOMEM;
		} else if (!verify_add_spec(v, V_REFUSED, "refused", rows[i].what, "write:%s",
					    path)) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- network */

static int plan_sockets(struct verify *v)
{
	struct vrow *r;

	r = verify_add_spec(v, V_REFUSED, "refused", "TCP to the host's 127.0.0.1", "tcp4:%u",
			    v->port_tcp4);
	if (!r)
		return -ENOMEM;
	r->host_fd = v->tcp4;
	if (v->tcp6 >= 0) {
		if (!(r = verify_add_spec(v, V_REFUSED, "refused", "TCP to the host's [::1]",
					  "tcp6:%u", v->port_tcp6)))
			return -ENOMEM;
		r->host_fd = v->tcp6;
	}
	if (!(r = verify_add_spec(v, V_NOTHING_ARRIVED, "nothing arrives",
				  "UDP to the host's 127.0.0.1", "udp4:%u", v->port_udp4)))
		return -ENOMEM;
	r->host_fd = v->udp4;
	if (v->udp6 >= 0) {
		if (!(r = verify_add_spec(v, V_NOTHING_ARRIVED, "nothing arrives",
					  "UDP to the host's [::1]", "udp6:%u", v->port_udp6)))
			return -ENOMEM;
		r->host_fd = v->udp6;
	}
	if (!(r = verify_add_spec(v, V_REFUSED, "refused", "the host's abstract unix socket",
				  "unix:%s", v->unix_name)))
		return -ENOMEM;
	r->host_fd = v->unix_fd;
	if (!verify_add_spec(v, V_VALUE, "its own", "network namespace", "netns:%llu",
			     v->netns_ino) ||
	    !verify_add_spec(v, V_VALUE, "lo", "network interfaces", "ifaces:"))
		return -ENOMEM;
	snprintf(v->rows[v->n - 2].want, sizeof(v->rows[0].want), "its own");
	snprintf(v->rows[v->n - 1].want, sizeof(v->rows[0].want), "lo");
	return 0;
}

/* A host the policy denies, found without any lookup: a denied domain (a wildcard's
 * made-up subdomain), else a reserved name under the default. */
static bool denied_host(const struct halo_policy *p, char *out, size_t n)
{
	struct policy_decision d;
	const char *cands[2] = {p->denied_domains.n ? p->denied_domains.items[0] : NULL,
				"halo-verify.invalid"};

	for (size_t i = 0; i < 2; i++) {
		if (!cands[i])
			continue;
		if (strncmp(cands[i], "*.", 2) == 0)
			snprintf(out, n, "halo-verify.%s", cands[i] + 2);
		else
			snprintf(out, n, "%s", cands[i]);
		if (policy_decide(p, out, strlen(out), &d) == 0 && !d.allow)
			return true;
	}
	return false;
}

/* Does /etc/hosts name localhost? Then the proxy's lookup of it never leaves the
 * machine (files come before DNS), which is the only way verify will ask for it. */
static bool hosts_file_has_localhost(void)
{
	FILE *f = fopen("/etc/hosts", "re");
	char line[512];
	bool yes = false;

	while (f && !yes && fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
		if (!tok || tok[0] == '#')
			continue;
		while (!yes && (tok = strtok_r(NULL, " \t\n", &save)) && tok[0] != '#')
			yes = strcmp(tok, "localhost") == 0;
	}
	if (f)
		fclose(f);
	return yes;
}

static int proxy_row(struct verify *v, const char *host, const char *what)
{
	static const uint8_t lo[4] = {127, 0, 0, 1};
	struct policy_decision d;
	bool allowed = policy_decide(v->p, host, strlen(host), &d) == 0 && d.allow;
	bool permitted = allowed && policy_addr_permitted(v->p, AF_INET, lo, NULL);
	struct vrow *r;

	if (allowed && strcmp(host, "localhost") == 0 && !hosts_file_has_localhost())
		return verify_add(v, V_SKIP, "403", NULL, "%s (would need DNS)", what) ? 0
										       : -ENOMEM;
	r = verify_add_spec(v, V_VALUE, permitted ? "200 (allowPrivate)" : "403", what,
			    "proxy:%llu:%s:%u", v->netns_ino, host, v->port_target4);
	if (!r)
		return -ENOMEM;
	snprintf(r->want, sizeof(r->want), "%s", permitted ? "200" : "403");
	return 0;
}

static int plan_proxy(struct verify *v)
{
	char host[300], what[400];
	struct vrow *r;

	if (denied_host(v->p, host, sizeof(host))) {
		snprintf(what, sizeof(what), "proxy CONNECT to denied %s", host);
		r = verify_add_spec(v, V_VALUE, "403", what, "proxy:%llu:%s:443", v->netns_ino,
				    host);
		if (!r)
			return -ENOMEM;
		snprintf(r->want, sizeof(r->want), "403");
	} else if (!verify_add(v, V_SKIP, "403", NULL,
			       "proxy CONNECT to a denied host (the policy "
			       "denies none)")) {
		return -ENOMEM;
	}
	if (proxy_row(v, "127.0.0.1", "proxy CONNECT to 127.0.0.1 (private address)") < 0)
		return -ENOMEM;
	return proxy_row(v, "localhost", "proxy CONNECT to localhost (resolves to loopback)");
}

/* ---------------------------------------------------------------- layers and limits */

int verify_plan(struct verify *v)
{
	int (*const steps[])(struct verify *) = {
	    verify_plan_layers,	  plan_protected,  plan_globs, plan_guard,
	    plan_writes,	  plan_sockets,	   plan_proxy, verify_plan_limits,
	    verify_plan_syscalls, verify_plan_home};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i](v) < 0)
			return -ENOMEM;
	return 0;
}
