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

#include "hook/net_int.h"

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
/* scp -S PROGRAM: the program it runs instead of ssh. */
static const struct opt scp_opts[] = {
    {"-J", V | O_LIST},
    {"-o", V | O_SSHOPT},
    {"-S", V | O_CMD},
    {NULL, 0},
};
/* Programs that are not network clients but run a command given as an option value:
 * the value is judged as shell text. */
static const struct opt tar_opts[] = {
    {"--to-command", V | O_CMD},	   {"-I", V | O_CMD},
    {"--use-compress-program", V | O_CMD}, {"-F", V | O_CMD},
    {"--info-script", V | O_CMD},	   {"--new-volume-script", V | O_CMD},
    {"--rsh-command", V | O_CMD},	   {NULL, 0},
};
static const struct opt man_opts[] = {{"-P", V | O_CMD}, {"--pager", V | O_CMD}, {NULL, 0}};
static const struct opt zip_opts[] = {
    {"-TT", V | O_CMD}, {"--unzip-command", V | O_CMD}, {NULL, 0}};
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
static const char *const n_tar[] = {"tar", "gtar", NULL};
static const char *const n_man[] = {"man", NULL};
static const char *const n_zip[] = {"zip", NULL};
const char *const hook_n_git[] = {"git", NULL};
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
    {n_scp, K_SCP, scp_opts, "cDFilPX"},
    {n_rsync, K_RSYNC, rsync_opts, "BfMT"},
    {hook_n_git, K_GIT, none_opts, ""},
    {n_socat, K_SOCAT, none_opts, "btTLW"},
    {n_dig, K_DIG, none_opts, "bcfkpqtyN"},
    {n_openssl, K_OPTS, openssl_opts, ""},
    {n_clients, K_OPTS, clients_opts, ""},
    {n_pip, K_PKG, pip_opts, ""},
    {n_npm, K_PKG, npm_opts, ""},
    {n_pkg, K_PKG, none_opts, ""},
    {n_tar, K_OPTS, tar_opts, "bCfgHKLNTVX"},
    {n_man, K_OPTS, man_opts, "CMmLpSseEERrW"},
    {n_zip, K_OPTS, zip_opts, "bntPs"},
};

/* ---------------------------------------------------------------- targets */

/* [start, end) of the host in "[user@]host[:rest]" starting at `start`. */
size_t hook_strip_user(const char *t, size_t start, size_t end)
{
	for (size_t k = end; k > start; k--)
		if (t[k - 1] == '@')
			return k;
	return start;
}

/* After a bracketed IPv6 literal at i, or i itself. */
size_t hook_past_bracket(const char *t, size_t i)
{
	if (t[i] != '[')
		return i;
	i += strcspn(t + i, "]");
	return t[i] ? i + 1 : i;
}

/* A URL (scheme://...) or a bare host[:port][/path] at `off` in w. */
void hook_url_at(struct hook_judge *j, const char *what, const struct hook_word *w, size_t off)
{
	struct hook_word sub = {w->text + off, w->lit > off ? w->lit - off : 0};
	hook_target_word(j, what, &sub);
}

/* ssh's destinations: [user@]host[:port], comma separated (-J) */
void hook_host_list(struct hook_judge *j, const char *what, const struct hook_word *w, size_t off)
{
	const char *t = w->text;

	while (t[off]) {
		size_t end = off + strcspn(t + off, ",");
		if (strncmp(t + off, "ssh://", 6) == 0) {
			hook_url_at(j, what, w, off);
		} else {
			size_t hs = hook_strip_user(t, off, end), he = hook_past_bracket(t, hs);
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

const struct opt *hook_find_opt(const struct opt *opts, const char *a, size_t n)
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
			hook_host_list(j, "ssh -o", w, vo);
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

/* What an option's value means, by the row's flags. */
static void opt_value(struct hook_judge *j, const char *prog, unsigned f, const struct hook_word *w,
		      size_t off)
{
	char what[64];

	snprintf(what, sizeof(what), "%s", prog);
	if (f & O_HOST)
		hook_url_at(j, what, w, off);
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
		hook_host_list(j, what, w, off);
	if (f & (O_RESOLVE | O_CONNECT_TO))
		resolve_value(j, w, off, f & O_CONNECT_TO);
	if (f & O_GITCONF)
		hook_git_config_pair(j, w, off);
	if (f & O_HTTPIE_PROXY) /* --proxy=https:http://proxy:3128 */
		hook_url_at(j, what, w, off + strcspn(w->text + off, ":") + 1);
	if (f & O_WGET_E) {
		const char *t = w->text + off, *eq = strchr(t, '=');
		if (eq && eq - t > 6 && strncasecmp(eq - 6, "_proxy", 6) == 0)
			hook_url_at(j, "wget -e", w, off + (size_t)(eq - t) + 1);
	}
}

/* Walk argv[from..]: options per the row, operands into s->pos. */
void hook_walk(struct hook_judge *j, const struct prog *p, const struct hook_word *argv,
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
		if ((o = hook_find_opt(p->opts, a, strlen(a))) ||
		    (a[1] == '-' && (o = hook_find_opt(p->opts, a, n)))) {
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
			const struct opt *so = hook_find_opt(p->opts, one, 2);
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
			hook_url_at(j, prog, s->pos[i],
				    t[0] == '@' ? 1 : hook_strip_user(t, 0, strcspn(t, "/")));
		}
		break;
	case K_NC:
		for (size_t i = 0; !s->listen && !s->unix_sock && i < s->n; i++)
			if (!digits(s->pos[i]->text)) {
				hook_url_at(j, prog, s->pos[i], 0);
				break;
			}
		break;
	case K_SSH:
		if (s->n)
			hook_host_list(j, prog, s->pos[0], 0);
		break;
	case K_SCP:
	case K_RSYNC:
		for (size_t i = 0; i < s->n; i++) {
			const char *t = s->pos[i]->text;
			size_t colon = strcspn(t, ":"), slash = strcspn(t, "/");
			if (strstr(t, "://"))
				hook_target_word(j, prog, s->pos[i]);
			else if (t[colon] && colon < slash && colon > 1)
				hook_target(j, prog, s->pos[i], hook_strip_user(t, 0, colon),
					    colon);
		}
		break;
	case K_SOCAT:
		for (size_t i = 0; i < s->n; i++)
			hook_socat_address(j, s->pos[i]);
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
		hook_check_git(j, argv, argc);
		return true;
	}
	if (!(s = calloc(1, sizeof(*s)))) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return true;
	}
	hook_walk(j, p, argv, 1, argc, s);
	operands(j, p, s);
	free(s);
	return true;
}
