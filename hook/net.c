/* Network programs: which arguments of each one name a host it would contact.
 *
 * One table. A row names the programs, how their operands carry hosts (a kind), and
 * their options: which take a value (so `-o FILE` is skipped, not read as a URL) and
 * which values are themselves hosts, proxies or commands. An option missing from a
 * row is read as a flag, so the word after it is judged as an operand: the hook may
 * refuse too much there, never too little. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hook/hook_int.h"

enum kind {
	K_URLS,
	K_HTTPIE,
	K_HOSTS,
	K_NC,
	K_SSH,
	K_SCP,
	K_RSYNC,
	K_GIT,
	K_SOCAT,
	K_DIG,
	K_OPTS,
	K_PKG
};

enum {
	O_VAL = 1,
	O_HOST = 2,
	O_FILE = 4,
	O_CMD = 8,
	O_SSHOPT = 16,
	O_LIST = 32,
	O_RESOLVE = 64,
	O_CONNECT_TO = 128,
	O_GITCONF = 256,
	O_WGET_E = 512,
	O_LISTEN = 1024,
	O_UNIX = 2048,
	O_HTTPIE_PROXY = 4096
};

struct opt {
	const char *name; /* "-x", "--proxy", or a one-dash word such as "-connect" */
	unsigned flags;
};

struct prog {
	const char *const *names;
	enum kind kind;
	const struct opt *opts;
	const char *vals; /* other short options that take a value */
};

#define V  O_VAL
#define VH (O_VAL | O_HOST)

static const struct opt curl_opts[] = {
    {"-x", VH},
    {"--proxy", VH},
    {"--preproxy", VH},
    {"--url", VH},
    {"--socks4", VH},
    {"--socks4a", VH},
    {"--socks5", VH},
    {"--socks5-hostname", VH},
    {"--doh-url", VH},
    {"--resolve", V | O_RESOLVE},
    {"--connect-to", V | O_CONNECT_TO},
    {"-K", V | O_FILE},
    {"--config", V | O_FILE},
    {"--data", V},
    {"--data-raw", V},
    {"--data-binary", V},
    {"--data-urlencode", V},
    {"--data-ascii", V},
    {"--json", V},
    {"--header", V},
    {"--output", V},
    {"--user-agent", V},
    {"--user", V},
    {"--proxy-user", V},
    {"--request", V},
    {"--cookie", V},
    {"--cookie-jar", V},
    {"--form", V},
    {"--form-string", V},
    {"--cacert", V},
    {"--capath", V},
    {"--cert", V},
    {"--key", V},
    {"--max-time", V},
    {"--connect-timeout", V},
    {"--retry", V},
    {"--retry-delay", V},
    {"--retry-max-time", V},
    {"--limit-rate", V},
    {"--range", V},
    {"--referer", V},
    {"--write-out", V},
    {"--upload-file", V},
    {"--interface", V},
    {"--dns-servers", V},
    {"--proxy-header", V},
    {"--noproxy", V},
    {"--output-dir", V},
    {"--trace", V},
    {"--trace-ascii", V},
    {"--stderr", V},
    {"--variable", V},
    {"--aws-sigv4", V},
    {"--oauth2-bearer", V},
    {"--max-filesize", V},
    {"--local-port", V},
    {"--mail-from", V},
    {"--mail-rcpt", V},
    {"--unix-socket", V},
    {"--abstract-unix-socket", V},
    {"--expect100-timeout", V},
    {"--ciphers", V},
    {"--tls-max", V},
    {"--keepalive-time", V},
    {"--pubkey", V},
    {"--create-file-mode", V},
    {NULL, 0},
};
static const struct opt wget_opts[] = {
    {"-i", V | O_FILE},
    {"--input-file", V | O_FILE},
    {"-e", V | O_WGET_E},
    {"--execute", V | O_WGET_E},
    {"--output-document", V},
    {"--output-file", V},
    {"--append-output", V},
    {"--directory-prefix", V},
    {"--tries", V},
    {"--timeout", V},
    {"--wait", V},
    {"--user-agent", V},
    {"--header", V},
    {"--post-data", V},
    {"--post-file", V},
    {"--user", V},
    {"--password", V},
    {"--level", V},
    {"--accept", V},
    {"--reject", V},
    {"--domains", V},
    {"--base", V},
    {"--bind-address", V},
    {NULL, 0},
};
static const struct opt aria_opts[] = {
    {"-i", V | O_FILE},	   {"--input-file", V | O_FILE},
    {"--all-proxy", VH},   {"--http-proxy", VH},
    {"--https-proxy", VH}, {"-d", V},
    {"--dir", V},	   {"-o", V},
    {"--out", V},	   {NULL, 0},
};
static const struct opt httpie_opts[] = {
    {"--proxy", V | O_HTTPIE_PROXY},
    {"--auth", V},
    {"-a", V},
    {"--output", V},
    {"-o", V},
    {"--session", V},
    {"--session-read-only", V},
    {"--verify", V},
    {"--cert", V},
    {"--cert-key", V},
    {"--timeout", V},
    {"--pretty", V},
    {"--style", V},
    {"--print", V},
    {"-p", V},
    {"--auth-type", V},
    {"-A", V},
    {NULL, 0},
};
static const struct opt nc_opts[] = {
    {"-x", VH},
    {"--proxy", VH},
    {"-e", V | O_CMD},
    {"--exec", V | O_CMD},
    {"-c", V | O_CMD},
    {"--sh-exec", V | O_CMD},
    {"--lua-exec", V | O_CMD},
    {"-l", O_LISTEN},
    {"--listen", O_LISTEN},
    {"-U", O_UNIX},
    {"--unixsock", O_UNIX},
    {NULL, 0},
};
static const struct opt ssh_opts[] = {
    {"-J", V | O_LIST},
    {"-o", V | O_SSHOPT},
    {"-W", VH},
    {NULL, 0},
};
static const struct opt rsync_opts[] = {
    {"-e", V | O_CMD},
    {"--rsh", V | O_CMD},
    {"--port", V},
    {"--password-file", V},
    {"--exclude", V},
    {"--include", V},
    {"--exclude-from", V},
    {"--include-from", V},
    {"--files-from", V},
    {"--log-file", V},
    {"--chmod", V},
    {"--chown", V},
    {"--timeout", V},
    {"--bwlimit", V},
    {"--partial-dir", V},
    {"--out-format", V},
    {"--address", V},
    {"--backup-dir", V},
    {"--suffix", V},
    {"--compare-dest", V},
    {"--copy-dest", V},
    {"--link-dest", V},
    {NULL, 0},
};
static const struct opt openssl_opts[] = {
    {"-connect", VH},
    {"-proxy", VH},
    {"-host", VH},
    {NULL, 0},
};
static const struct opt clients_opts[] = {
    {"--endpoint-url", VH}, {"--server", VH}, {"--host", VH}, {"-H", VH}, {"-h", VH}, {NULL, 0},
};
static const struct opt pip_opts[] = {
    {"-i", VH},		  {"--index-url", VH}, {"--extra-index-url", VH}, {"-f", VH},
    {"--find-links", VH}, {"--proxy", VH},     {"--trusted-host", VH},	  {"--default-index", VH},
    {"--index", VH},	  {"-r", V},	       {"--requirement", V},	  {"-c", V},
    {"--constraint", V},  {"-t", V},	       {"--target", V},		  {"-e", V},
    {"--editable", V},	  {NULL, 0},
};
static const struct opt npm_opts[] = {
    {"--registry", VH},
    {"--proxy", VH},
    {"--https-proxy", VH},
    {NULL, 0},
};
static const struct opt none_opts[] = {{NULL, 0}};

static const char *const n_curl[] = {"curl", NULL};
static const char *const n_wget[] = {"wget", "wget2", NULL};
static const char *const n_aria[] = {"aria2c", NULL};
static const char *const n_browsers[] = {"lynx", "w3m", "links", "elinks", NULL};
static const char *const n_httpie[] = {"http", "https", "httpie", "xh", "xhs", NULL};
static const char *const n_hosts[] = {"telnet", "ftp",	      "tftp",	     "lftp",	  "ping",
				      "ping6",	"traceroute", "traceroute6", "tracepath", "mtr",
				      "arping", "fping",      "nmap",	     "nping",	  NULL};
static const char *const n_nc[] = {"nc", "ncat", "netcat", "nc.openbsd", "nc.traditional", NULL};
static const char *const n_ssh[] = {"ssh", "autossh", "sftp", "mosh", NULL};
static const char *const n_scp[] = {"scp", "sshfs", NULL};
static const char *const n_rsync[] = {"rsync", NULL};
static const char *const n_git[] = {"git", NULL};
static const char *const n_socat[] = {"socat", NULL};
static const char *const n_dig[] = {"dig", "host", "nslookup", "drill", "kdig", "delv", NULL};
static const char *const n_openssl[] = {"openssl", NULL};
static const char *const n_clients[] = {"aws",	   "kubectl", "docker",	   "podman", "mysql",
					"mariadb", "psql",    "redis-cli", NULL};
static const char *const n_pip[] = {"pip", "pip3", "uv", "pipx", "poetry", NULL};
static const char *const n_npm[] = {"npm", "npx", "pnpm", "yarn", "bun", NULL};
static const char *const n_pkg[] = {"cargo", "go",   "gem", "composer", "conda",
				    "mamba", "brew", "apt", "apt-get",	NULL};

static const struct prog progs[] = {
    {n_curl, K_URLS, curl_opts, "AbcCdDeEFHmoPQrtTuUwXyYz"},
    {n_wget, K_URLS, wget_opts, "OoaPtTwUQlARDIXB"},
    {n_aria, K_URLS, aria_opts, ""},
    {n_browsers, K_URLS, none_opts, ""},
    {n_httpie, K_HTTPIE, httpie_opts, ""},
    {n_hosts, K_HOSTS, none_opts, "lepcisStwWIbpPQMTuo"},
    {n_nc, K_NC, nc_opts, "IiMmOPpsTVWwXqo"},
    {n_ssh, K_SSH, ssh_opts, "BbcDEeFIiLlmOpQRSwP"},
    {n_scp, K_SCP, ssh_opts, "cDFiloPSX"},
    {n_rsync, K_RSYNC, rsync_opts, "BfMT"},
    {n_git, K_GIT, none_opts, ""},
    {n_socat, K_SOCAT, none_opts, "btTLW"},
    {n_dig, K_DIG, none_opts, "bcfkpqtyN"},
    {n_openssl, K_OPTS, openssl_opts, ""},
    {n_clients, K_OPTS, clients_opts, ""},
    {n_pip, K_PKG, pip_opts, ""},
    {n_npm, K_PKG, npm_opts, ""},
    {n_pkg, K_PKG, none_opts, ""},
};

/* ---------------------------------------------------------------- targets */

/* [start, end) of the host in "[user@]host[:rest]" starting at `start`. */
static size_t strip_user(const char *t, size_t start, size_t end)
{
	for (size_t k = end; k > start; k--)
		if (t[k - 1] == '@')
			return k;
	return start;
}

/* After a bracketed IPv6 literal at i, or i itself. */
static size_t past_bracket(const char *t, size_t i)
{
	if (t[i] != '[')
		return i;
	i += strcspn(t + i, "]");
	return t[i] ? i + 1 : i;
}

/* A URL (scheme://...) or a bare host[:port][/path] at `off` in w. */
static void url_at(struct hook_judge *j, const char *what, const struct hook_word *w, size_t off)
{
	struct hook_word sub = {w->text + off, w->lit > off ? w->lit - off : 0};
	hook_target_word(j, what, &sub);
}

/* ssh's destinations: [user@]host[:port], comma separated (-J) */
static void host_list(struct hook_judge *j, const char *what, const struct hook_word *w, size_t off)
{
	const char *t = w->text;

	while (t[off]) {
		size_t end = off + strcspn(t + off, ",");
		if (strncmp(t + off, "ssh://", 6) == 0) {
			url_at(j, what, w, off);
		} else {
			size_t hs = strip_user(t, off, end), he = past_bracket(t, hs);
			he += strcspn(t + he, ":,");
			hook_target(j, what, w, hs, he > end ? end : he);
		}
		off = t[end] ? end + 1 : end;
	}
}

static bool digits(const char *s)
{
	size_t n = strspn(s, "0123456789-");
	return n > 0 && s[n] == 0;
}

/* ---------------------------------------------------------------- options */

struct seen {
	const struct hook_word *pos[HOOK_MAX_WORDS];
	size_t n;
	bool listen, unix_sock, replace;
};

static const struct opt *find_opt(const struct opt *opts, const char *a, size_t n)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == n && strncmp(opts->name, a, n) == 0)
			return opts;
	return NULL;
}

static void ssh_option(struct hook_judge *j, const struct hook_word *w, size_t off)
{
	static const char *const keys[] = {"proxyjump", "proxycommand", "hostname", "localcommand"};
	const char *t = w->text + off;
	size_t kl = strcspn(t, "= \t");
	size_t vo = off + kl + strspn(t + kl, "= \t");

	for (size_t k = 0; k < 4; k++) {
		if (strlen(keys[k]) != kl || strncasecmp(t, keys[k], kl) != 0)
			continue;
		if (k == 0 || k == 2)
			host_list(j, "ssh -o", w, vo);
		else {
			struct hook_word v = {w->text + vo, w->lit > vo ? w->lit - vo : 0};
			hook_judge_text(j, "ssh -o", &v);
		}
	}
}

/* curl --resolve [+]HOST:PORT:ADDR[,ADDR]... and --connect-to H1:P1:H2:P2 */
static void resolve_value(struct hook_judge *j, const struct hook_word *w, size_t off, bool connect)
{
	const char *t = w->text;
	size_t p = off + (t[off] == '+'), fields[4], nf = 0;

	while (nf < 4) {
		fields[nf++] = p;
		if (t[p] == '[')
			p += strcspn(t + p, "]");
		p += strcspn(t + p, ":");
		if (!t[p])
			break;
		p++;
	}
	size_t h1e = fields[0] + strcspn(t + fields[0], ":");
	hook_target(j, connect ? "curl --connect-to" : "curl --resolve", w, fields[0], h1e);
	if (connect && nf >= 3)
		hook_target(j, "curl --connect-to", w, fields[2],
			    fields[2] + strcspn(t + fields[2], ":"));
	if (!connect && nf >= 3)
		for (size_t a = fields[2]; t[a];) {
			size_t e = a + strcspn(t + a, ",");
			hook_target(j, "curl --resolve", w, a, e);
			a = t[e] ? e + 1 : e;
		}
}

static void git_config_pair(struct hook_judge *j, const struct hook_word *w, size_t off);

/* What an option's value means, by the row's flags. */
static void opt_value(struct hook_judge *j, const char *prog, unsigned f, const struct hook_word *w,
		      size_t off)
{
	char what[64];

	snprintf(what, sizeof(what), "%s", prog);
	if (f & O_HOST)
		url_at(j, what, w, off);
	if (f & O_FILE)
		hook_block(j, HOOK_BLOCK,
			   "%s reads the hosts it contacts from a file (%.160s), which the hook "
			   "cannot see",
			   prog, w->text + off);
	if (f & O_CMD) {
		struct hook_word v = {w->text + off, w->lit > off ? w->lit - off : 0};
		hook_judge_text(j, what, &v);
	}
	if (f & O_SSHOPT)
		ssh_option(j, w, off);
	if (f & O_LIST)
		host_list(j, what, w, off);
	if (f & (O_RESOLVE | O_CONNECT_TO))
		resolve_value(j, w, off, f & O_CONNECT_TO);
	if (f & O_GITCONF)
		git_config_pair(j, w, off);
	if (f & O_HTTPIE_PROXY) /* --proxy=https:http://proxy:3128 */
		url_at(j, what, w, off + strcspn(w->text + off, ":") + 1);
	if (f & O_WGET_E) {
		const char *t = w->text + off, *eq = strchr(t, '=');
		if (eq && eq - t > 6 && strncasecmp(eq - 6, "_proxy", 6) == 0)
			url_at(j, "wget -e", w, off + (size_t)(eq - t) + 1);
	}
}

/* Walk argv[from..]: options per the row, operands into s->pos. */
static void walk(struct hook_judge *j, const struct prog *p, const struct hook_word *argv,
		 size_t from, size_t argc, struct seen *s)
{
	const char *prog = p->names[0];

	for (size_t i = from; i < argc && !hook_decided(j); i++) {
		const char *a = argv[i].text;
		const struct opt *o;
		if (strcmp(a, "--") == 0) {
			while (++i < argc && s->n < HOOK_MAX_WORDS)
				s->pos[s->n++] = &argv[i];
			break;
		}
		if (a[0] != '-' || a[1] == 0 || !hook_word_literal(&argv[i]) ||
		    (p->kind == K_DIG && a[0] == '+')) {
			if (s->n < HOOK_MAX_WORDS)
				s->pos[s->n++] = &argv[i];
			continue;
		}
		size_t n = strcspn(a, "=");
		if ((o = find_opt(p->opts, a, strlen(a))) ||
		    (a[1] == '-' && (o = find_opt(p->opts, a, n)))) {
			s->listen |= (o->flags & O_LISTEN) != 0;
			s->unix_sock |= (o->flags & O_UNIX) != 0;
			if (!(o->flags & O_VAL))
				continue;
			if (a[n] == '=' && a[1] == '-')
				opt_value(j, prog, o->flags, &argv[i], n + 1);
			else if (i + 1 < argc)
				opt_value(j, prog, o->flags, &argv[++i], 0);
			continue;
		}
		if (a[1] == '-')
			continue; /* an unknown long option: a flag */
		for (size_t k = 1; a[k]; k++) {
			char one[3] = {'-', a[k], 0};
			const struct opt *so = find_opt(p->opts, one, 2);
			unsigned f = so ? so->flags : strchr(p->vals, a[k]) ? O_VAL : 0;
			s->listen |= (f & O_LISTEN) != 0;
			s->unix_sock |= (f & O_UNIX) != 0;
			if (!(f & O_VAL))
				continue;
			if (a[k + 1])
				opt_value(j, prog, f, &argv[i], k + 1);
			else if (i + 1 < argc)
				opt_value(j, prog, f, &argv[++i], 0);
			break;
		}
	}
}

/* ---------------------------------------------------------------- git */

/* A repository argument: a URL, scp-like [user@]host:path, or local (a path, a name). */
static void git_repo(struct hook_judge *j, const char *what, const struct hook_word *w,
		     bool maybe_remote_name)
{
	const char *t = w->text, *tr = strstr(t, "::");
	size_t colon, slash;

	(void)maybe_remote_name;
	if (strncmp(t, "ext::", 5) == 0) {
		hook_block(j, HOOK_BLOCK,
			   "%s: the ext:: transport runs a command, which the hook "
			   "does not judge",
			   what);
		return;
	}
	const char *sch = strstr(t, "://");
	if (tr && (!sch || tr < sch)) {
		struct hook_word sub = {w->text + (tr - t) + 2, 0};
		sub.lit = w->lit > (size_t)(tr - t) + 2 ? w->lit - (size_t)(tr - t) - 2 : 0;
		git_repo(j, what, &sub, false);
		return;
	}
	if (strncmp(t, "file://", 7) == 0)
		return;
	if (strstr(t, "://")) {
		hook_target_word(j, what, w);
		return;
	}
	colon = strcspn(t, ":");
	slash = strcspn(t, "/");
	if (!t[colon] || slash < colon || colon <= 1)
		return; /* a path, a remote's name, C:\ */
	hook_target(j, what, w, strip_user(t, 0, colon), colon);
}

/* git -c KEY=VALUE / git config KEY VALUE: the keys that point git elsewhere. */
static void git_config_kv(struct hook_judge *j, const char *key, size_t kl,
			  const struct hook_word *w, size_t voff)
{
	char k[128];

	if (kl >= sizeof(k))
		return;
	for (size_t i = 0; i < kl; i++)
		k[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] + 32 : key[i]);
	k[kl] = 0;
	size_t n = strlen(k);
	if ((n > 6 && strcmp(k + n - 6, ".proxy") == 0) ||
	    (n > 4 && strcmp(k + n - 4, ".url") == 0) ||
	    (n > 8 && strcmp(k + n - 8, ".pushurl") == 0)) {
		struct hook_word sub = {w->text + voff, w->lit > voff ? w->lit - voff : 0};
		git_repo(j, "git config", &sub, false);
	} else if (strcmp(k, "core.sshcommand") == 0 || strcmp(k, "core.gitproxy") == 0) {
		struct hook_word sub = {w->text + voff, w->lit > voff ? w->lit - voff : 0};
		hook_judge_text(j, "git config", &sub);
	} else if (strncmp(k, "url.", 4) == 0 && n > 14 &&
		   (strcmp(k + n - 10, ".insteadof") == 0 ||
		    strcmp(k + n - 14, ".pushinsteadof") == 0)) {
		/* url.<base>.insteadOf: <base> is what git contacts. */
		size_t be = strcmp(k + n - 10, ".insteadof") == 0 ? n - 10 : n - 14;
		char *base = strndup(key + 4, be - 4);
		if (base) {
			struct hook_word b = {base, strlen(base)};
			size_t off = (size_t)(key - w->text);
			b.lit = w->lit > off + 4 ? w->lit - off - 4 : 0;
			git_repo(j, "git config url", &b, false);
			free(base);
		}
	}
}

static void git_config_pair(struct hook_judge *j, const struct hook_word *w, size_t off)
{
	const char *t = w->text + off, *eq = strchr(t, '=');

	if (eq)
		git_config_kv(j, t, (size_t)(eq - t), w, off + (size_t)(eq - t) + 1);
}

static const struct opt git_global[] = {
    {"-C", V},		{"-c", V | O_GITCONF}, {"--git-dir", V},      {"--work-tree", V},
    {"--namespace", V}, {"--config-env", V},   {"--super-prefix", V}, {"--list-cmds", V},
    {NULL, 0},
};
static const struct opt git_sub[] = {
    {"-o", V},
    {"--origin", V},
    {"-b", V},
    {"--branch", V},
    {"-u", V},
    {"--upload-pack", V},
    {"--receive-pack", V},
    {"--exec", V},
    {"--reference", V},
    {"--reference-if-able", V},
    {"--separate-git-dir", V},
    {"--depth", V},
    {"--deepen", V},
    {"--shallow-since", V},
    {"--shallow-exclude", V},
    {"-c", V | O_GITCONF},
    {"--config", V | O_GITCONF},
    {"--template", V},
    {"-j", V},
    {"--jobs", V},
    {"--filter", V},
    {"--bundle-uri", VH},
    {"--server-option", V},
    {"--push-option", V},
    {"--refmap", V},
    {"--negotiation-tip", V},
    {"--repo", VH},
    {"--remote", VH},
    {"-s", V},
    {"--strategy", V},
    {"-X", V},
    {"--strategy-option", V},
    {"--name", V},
    {"--file", V},
    {"-f", V},
    {"--type", V},
    {"--sort", V},
    {"-m", V},
    {"--message", V},
    {NULL, 0},
};

static void check_git(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	static const struct prog gs = {n_git, K_GIT, git_sub, ""};
	struct seen *t = calloc(1, sizeof(*t));
	size_t i = 1;

	if (!t) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return;
	}
	for (; i < argc && argv[i].text[0] == '-'; i++) {
		const char *a = argv[i].text;
		size_t n = strcspn(a, "=");
		const struct opt *o = find_opt(git_global, a, n);
		if (!o)
			continue;
		if (a[n] == '=') {
			if (o->flags & O_GITCONF)
				git_config_pair(j, &argv[i], n + 1);
		} else if (i + 1 < argc) {
			if (o->flags & O_GITCONF)
				git_config_pair(j, &argv[i + 1], 0);
			i++;
		}
	}
	if (i < argc && !hook_word_literal(&argv[i]))
		hook_block(j, HOOK_BLOCK,
			   "git: the subcommand '%.100s' is an expansion, so what "
			   "git would contact cannot be verified",
			   argv[i].text);
	if (i >= argc || hook_decided(j))
		goto out;
	const char *sub = argv[i].text;
	walk(j, &gs, argv, i + 1, argc, t);
	if (!strcmp(sub, "clone") && t->n)
		git_repo(j, "git clone", t->pos[0], false);
	else if ((!strcmp(sub, "fetch") || !strcmp(sub, "pull") || !strcmp(sub, "push") ||
		  !strcmp(sub, "ls-remote")) &&
		 t->n)
		git_repo(j, "git", t->pos[0], true);
	else if (!strcmp(sub, "remote") && t->n >= 3 &&
		 (!strcmp(t->pos[0]->text, "add") || !strcmp(t->pos[0]->text, "set-url")))
		git_repo(j, "git remote", t->pos[2], false);
	else if (!strcmp(sub, "submodule") && t->n >= 2 && !strcmp(t->pos[0]->text, "add"))
		git_repo(j, "git submodule", t->pos[1], false);
	else if (!strcmp(sub, "config")) {
		size_t k = t->n && !strcmp(t->pos[0]->text, "set") ? 1 : 0;
		if (t->n >= k + 2)
			git_config_kv(j, t->pos[k]->text, strlen(t->pos[k]->text), t->pos[k + 1],
				      0);
	}
out:
	free(t);
}

/* ---------------------------------------------------------------- socat */

static void socat_address(struct hook_judge *j, const struct hook_word *w)
{
	static const char *const one[] = {"TCP",
					  "TCP4",
					  "TCP6",
					  "TCP-CONNECT",
					  "TCP4-CONNECT",
					  "TCP6-CONNECT",
					  "UDP",
					  "UDP4",
					  "UDP6",
					  "UDP-CONNECT",
					  "UDP4-CONNECT",
					  "UDP6-CONNECT",
					  "UDP-SENDTO",
					  "UDP4-SENDTO",
					  "UDP6-SENDTO",
					  "SCTP-CONNECT",
					  "SCTP4-CONNECT",
					  "SCTP6-CONNECT",
					  "OPENSSL",
					  "OPENSSL-CONNECT",
					  "SSL",
					  "DTLS",
					  "OPENSSL-DTLS-CLIENT",
					  NULL};
	static const char *const two[] = {"PROXY",  "PROXY-CONNECT",  "SOCKS4", "SOCKS4A",
					  "SOCKS5", "SOCKS5-CONNECT", NULL};
	const char *t = w->text;
	size_t c = strcspn(t, ":,");
	char type[32];

	if (t[c] != ':' || c >= sizeof(type))
		return;
	if (w->lit < c) {
		hook_block(j, HOOK_BLOCK, "socat: the address '%.160s' is not literal", t);
		return;
	}
	for (size_t i = 0; i < c; i++)
		type[i] = (char)(t[i] >= 'a' && t[i] <= 'z' ? t[i] - 32 : t[i]);
	type[c] = 0;
	size_t h = c + 1, he = past_bracket(t, h);
	he += strcspn(t + he, ":,");
	bool is_one = false, is_two = false;
	for (size_t k = 0; one[k]; k++)
		is_one |= strcmp(type, one[k]) == 0;
	for (size_t k = 0; two[k]; k++)
		is_two |= strcmp(type, two[k]) == 0;
	if (is_one || is_two)
		hook_target(j, "socat", w, h, he);
	if (is_two && t[he] == ':') {
		size_t h2 = he + 1, e2 = past_bracket(t, h2);
		hook_target(j, "socat", w, h2, e2 + strcspn(t + e2, ":,"));
	}
	if (!strcmp(type, "EXEC") || !strcmp(type, "SYSTEM")) {
		struct hook_word v = {w->text + c + 1, w->lit > c + 1 ? w->lit - c - 1 : 0};
		hook_judge_text(j, "socat", &v);
	}
}

/* ---------------------------------------------------------------- operands */

static void operands(struct hook_judge *j, const struct prog *p, const struct seen *s)
{
	const char *prog = p->names[0];
	size_t first = 0;

	switch (p->kind) {
	case K_HTTPIE:
		if (s->n && strspn(s->pos[0]->text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") ==
				strlen(s->pos[0]->text))
			first = 1; /* http POST URL */
		if (first < s->n && s->pos[first]->text[0] != ':')
			hook_target_word(j, prog, s->pos[first]); /* :3000/x is localhost */
		break;
	case K_URLS:
		for (size_t i = 0; i < s->n; i++)
			hook_target_word(j, prog, s->pos[i]);
		break;
	case K_HOSTS:
	case K_DIG:
		for (size_t i = 0; i < s->n; i++) {
			const char *t = s->pos[i]->text;
			if (digits(t) || t[0] == '+' ||
			    (p->kind == K_DIG &&
			     strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == strlen(t)))
				continue;
			url_at(j, prog, s->pos[i],
			       t[0] == '@' ? 1 : strip_user(t, 0, strcspn(t, "/")));
		}
		break;
	case K_NC:
		for (size_t i = 0; !s->listen && !s->unix_sock && i < s->n; i++)
			if (!digits(s->pos[i]->text)) {
				url_at(j, prog, s->pos[i], 0);
				break;
			}
		break;
	case K_SSH:
		if (s->n)
			host_list(j, prog, s->pos[0], 0);
		break;
	case K_SCP:
	case K_RSYNC:
		for (size_t i = 0; i < s->n; i++) {
			const char *t = s->pos[i]->text;
			size_t colon = strcspn(t, ":"), slash = strcspn(t, "/");
			if (strstr(t, "://"))
				hook_target_word(j, prog, s->pos[i]);
			else if (t[colon] && colon < slash && colon > 1)
				hook_target(j, prog, s->pos[i], strip_user(t, 0, colon), colon);
		}
		break;
	case K_SOCAT:
		for (size_t i = 0; i < s->n; i++)
			socat_address(j, s->pos[i]);
		break;
	case K_PKG:
		for (size_t i = 0; i < s->n; i++)
			if (strstr(s->pos[i]->text, "://"))
				hook_target_word(j, prog, s->pos[i]);
		break;
	default:
		break;
	}
}

bool hook_net_check(struct hook_judge *j, const char *base, const struct hook_word *argv,
		    size_t argc, bool from_xargs)
{
	const struct prog *p = NULL;
	struct seen *s;

	for (size_t k = 0; !p && k < sizeof(progs) / sizeof(progs[0]); k++)
		for (const char *const *n = progs[k].names; *n; n++)
			if (strcmp(*n, base) == 0) {
				p = &progs[k];
				break;
			}
	if (!p)
		return false;
	if (from_xargs && p->kind != K_PKG && p->kind != K_OPTS) {
		hook_block(j, HOOK_BLOCK,
			   "xargs %s: the arguments %s gets from standard input may be hosts, "
			   "which cannot be verified",
			   base, base);
		return true;
	}
	if (p->kind == K_GIT) {
		check_git(j, argv, argc);
		return true;
	}
	if (!(s = calloc(1, sizeof(*s)))) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return true;
	}
	walk(j, p, argv, 1, argc, s);
	operands(j, p, s);
	free(s);
	return true;
}

/* ---------------------------------------------------------------- environment */

static const char *const env_hosts[] = {
    "npm_config_registry", "NPM_CONFIG_REGISTRY",  "YARN_REGISTRY",
    "PIP_INDEX_URL",	   "PIP_EXTRA_INDEX_URL",  "PIP_FIND_LINKS",
    "UV_INDEX_URL",	   "UV_EXTRA_INDEX_URL",   "GOPROXY",
    "DOCKER_HOST",	   "CARGO_REGISTRY_INDEX", NULL,
};
static const char *const env_cmds[] = {"GIT_PROXY_COMMAND", "GIT_SSH_COMMAND", NULL};

void hook_net_assign(struct hook_judge *j, const struct hook_word *w)
{
	const char *t = w->text, *eq = strchr(t, '=');
	char name[64];
	size_t n;

	if (!eq || (n = (size_t)(eq - t)) >= sizeof(name) || (n && t[n - 1] == '+' && !--n))
		return;
	memcpy(name, t, n);
	name[n] = 0;
	size_t v = (size_t)(eq - t) + 1;
	bool proxy =
	    n > 6 && strcasecmp(name + n - 6, "_proxy") == 0 && strcasecmp(name, "no_proxy");
	bool hosts = proxy;
	for (size_t k = 0; env_hosts[k]; k++)
		hosts |= strcmp(name, env_hosts[k]) == 0;
	for (size_t k = 0; env_cmds[k]; k++)
		if (strcmp(name, env_cmds[k]) == 0) {
			struct hook_word sub = {w->text + v, w->lit > v ? w->lit - v : 0};
			hook_judge_text(j, name, &sub);
			return;
		}
	if (!hosts)
		return;
	/* Lists: GOPROXY=a,b|direct, PIP_EXTRA_INDEX_URL="a b". */
	while (t[v] && !hook_decided(j)) {
		size_t e = v + strcspn(t + v, ", |");
		if (e > v && strncmp(t + v, "direct", e - v) && strncmp(t + v, "off", e - v)) {
			char *one = strndup(t + v, e - v);
			if (one) {
				struct hook_word sub = {one, w->lit > v ? w->lit - v : 0};
				if (sub.lit > e - v)
					sub.lit = e - v;
				hook_target_word(j, name, &sub);
				free(one);
			}
		}
		v = t[e] ? e + 1 : e;
	}
}

/* ---------------------------------------------------------------- inline code */

/* python -c CODE, perl -e CODE, node -e CODE ...: the hook cannot run the code, but a
 * URL written in it is a host it means to contact. */
static const struct {
	const char *prefix; /* python matches python3 and python3.12 */
	const char *opts;   /* short options whose value is code */
	const char *const longs[3];
} interpreters[] = {
    {"python", "c", {NULL}},
    {"pypy", "c", {NULL}},
    {"perl", "eE", {NULL}},
    {"ruby", "e", {NULL}},
    {"node", "ep", {"--eval", "--print", NULL}},
    {"deno", "", {"eval", NULL}},
    {"bun", "e", {"--eval", NULL}},
    {"php", "rR", {NULL}},
    {"lua", "e", {NULL}},
};

static void urls_in(struct hook_judge *j, const char *what, const struct hook_word *w, size_t off)
{
	const char *t = w->text;

	for (size_t i = off; t[i] && !hook_decided(j); i++) {
		size_t s = 0;
		if (!strncasecmp(t + i, "http://", 7))
			s = 7;
		else if (!strncasecmp(t + i, "https://", 8))
			s = 8;
		if (!s)
			continue;
		size_t e = i + s + strcspn(t + i + s, "/?#\"' \t\n)`;,");
		hook_target(j, what, w, i, e);
		i = e ? e - 1 : i;
	}
}

bool hook_net_inline(struct hook_judge *j, const char *base, const struct hook_word *argv,
		     size_t argc)
{
	for (size_t k = 0; k < sizeof(interpreters) / sizeof(interpreters[0]); k++) {
		size_t pl = strlen(interpreters[k].prefix);
		if (strncmp(base, interpreters[k].prefix, pl) != 0 ||
		    (base[pl] && !strchr("0123456789.", base[pl])))
			continue;
		for (size_t i = 1; i < argc; i++) {
			const char *a = argv[i].text;
			bool is_long = false;
			for (size_t l = 0; interpreters[k].longs[l]; l++)
				is_long |= !strcmp(a, interpreters[k].longs[l]);
			if (is_long && i + 1 < argc) {
				urls_in(j, base, &argv[++i], 0);
			} else if (a[0] == '-' && a[1] && !a[2] &&
				   strchr(interpreters[k].opts, a[1]) && i + 1 < argc) {
				urls_in(j, base, &argv[++i], 0); /* -c CODE */
			} else if (a[0] == '-' && a[1] && strchr(interpreters[k].opts, a[1]) &&
				   a[2]) {
				urls_in(j, base, &argv[i], 2); /* -cCODE */
			} else if (a[0] != '-') {
				break; /* a script file: its text is not here */
			}
		}
		return true;
	}
	return false;
}
