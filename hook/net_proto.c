/* Network programs with their own grammar (git's repositories and config keys,
 * socat's addresses), the environment variables that point clients elsewhere, and
 * URLs written in interpreters' inline code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hook/net_int.h"

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
	hook_target(j, what, w, hook_strip_user(t, 0, colon), colon);
}

/* Config keys whose value git runs as a shell command (alias.* only with '!'). */
static bool git_runs_command(const char *k, const char *value)
{
	static const char *const exact[] = {"core.sshcommand",
					    "core.gitproxy",
					    "core.pager",
					    "core.editor",
					    "core.fsmonitor",
					    "core.askpass",
					    "sequence.editor",
					    "diff.external",
					    "gpg.program",
					    "credential.helper",
					    "uploadpack.packobjectshook",
					    "sendemail.sendmailcmd",
					    "web.browser",
					    NULL};
	static const char *const suffixes[] = {".clean",    ".smudge",	".process",
					       ".textconv", ".command", ".driver",
					       ".program",  ".cmd",	NULL};
	size_t n = strlen(k);

	if (!strncmp(k, "alias.", 6))
		return value[0] == '!';
	if (!strncmp(k, "pager.", 6))
		return true;
	for (size_t i = 0; exact[i]; i++)
		if (!strcmp(k, exact[i]))
			return true;
	for (size_t i = 0; suffixes[i]; i++) {
		size_t sl = strlen(suffixes[i]);
		if (n > sl && !strcmp(k + n - sl, suffixes[i]) && strchr(k, '.') != k + n - sl)
			return true; /* filter.X.clean, diff.X.textconv, merge.X.driver */
	}
	return false;
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
	} else if (git_runs_command(k, w->text + voff)) {
		/* git -c alias.x='!curl …' x, core.pager, filters: git runs the value */
		size_t bang = w->text[voff] == '!' ? 1 : 0;
		struct hook_word sub = {w->text + voff + bang,
					w->lit > voff + bang ? w->lit - voff - bang : 0};
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

void hook_git_config_pair(struct hook_judge *j, const struct hook_word *w, size_t off)
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
    {"--upload-pack", V | O_CMD},
    {"--receive-pack", V | O_CMD},
    {"--exec", V | O_CMD},
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

/* git clone: -u is the upload-pack command. */
static const struct opt git_clone[] = {
    {"-o", V},
    {"--origin", V},
    {"-b", V},
    {"--branch", V},
    {"-u", V | O_CMD},
    {"--upload-pack", V | O_CMD},
    {"--reference", V},
    {"--reference-if-able", V},
    {"--separate-git-dir", V},
    {"--depth", V},
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
    {"--revision", V},
    {"--ref-format", V},
    {NULL, 0},
};
/* git fetch, pull, push, ls-remote: -u, -f and -m are flags there (--update-head-ok,
 * --set-upstream, --force, --multiple), so they must not swallow the repository. */
static const struct opt git_remote[] = {
    {"-o", V},
    {"--push-option", V},
    {"--server-option", V},
    {"--upload-pack", V | O_CMD},
    {"--receive-pack", V | O_CMD},
    {"--exec", V | O_CMD},
    {"--repo", VH},
    {"--depth", V},
    {"--deepen", V},
    {"--shallow-since", V},
    {"--shallow-exclude", V},
    {"-j", V},
    {"--jobs", V},
    {"--filter", V},
    {"--refmap", V},
    {"--negotiation-tip", V},
    {"-s", V},
    {"--strategy", V},
    {"-X", V},
    {"--strategy-option", V},
    {"--sort", V},
    {"--recurse-submodules-default", V},
    {NULL, 0},
};

static bool git_remote_sub(const char *sub)
{
	return !strcmp(sub, "fetch") || !strcmp(sub, "pull") || !strcmp(sub, "push") ||
	       !strcmp(sub, "ls-remote");
}

/* Operands past the first of fetch/pull/push/ls-remote: every one is a repository
 * under fetch --multiple; otherwise a refspec, except a URL is still contacted by
 * nobody but judged anyway (git pull URL1 URL2 is an error, not a way round). */
static void git_more_repos(struct hook_judge *j, const char *sub, const struct hook_word *argv,
			   size_t argc, const struct seen *t)
{
	bool multiple = false;

	for (size_t k = 0; k < argc && !strcmp(sub, "fetch"); k++)
		multiple |= !strcmp(argv[k].text, "--multiple") || !strcmp(argv[k].text, "-m");
	for (size_t k = 1; k < t->n && !hook_decided(j); k++)
		if (multiple || strstr(t->pos[k]->text, "://"))
			git_repo(j, "git", t->pos[k], true);
}

void hook_check_git(struct hook_judge *j, const struct hook_word *argv, size_t argc)
{
	static const struct prog gs = {hook_n_git, K_GIT, git_sub, ""};
	static const struct prog gc = {hook_n_git, K_GIT, git_clone, ""};
	static const struct prog gr = {hook_n_git, K_GIT, git_remote, ""};
	struct seen *t = calloc(1, sizeof(*t));
	size_t i = 1;

	if (!t) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return;
	}
	for (; i < argc && argv[i].text[0] == '-'; i++) {
		const char *a = argv[i].text;
		size_t n = strcspn(a, "=");
		const struct opt *o = hook_find_opt(git_global, a, n);
		if (!o)
			continue;
		if (a[n] == '=') {
			if (o->flags & O_GITCONF)
				hook_git_config_pair(j, &argv[i], n + 1);
		} else if (i + 1 < argc) {
			if (o->flags & O_GITCONF)
				hook_git_config_pair(j, &argv[i + 1], 0);
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
	hook_walk(j,
		  !strcmp(sub, "clone") ? &gc
		  : git_remote_sub(sub) ? &gr
					: &gs,
		  argv, i + 1, argc, t);
	if (!strcmp(sub, "clone") && t->n)
		git_repo(j, "git clone", t->pos[0], false);
	else if (git_remote_sub(sub) && t->n) {
		git_repo(j, "git", t->pos[0], true);
		git_more_repos(j, sub, argv + i + 1, argc - i - 1, t);
	} else if (!strcmp(sub, "remote") && t->n >= 3 &&
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

void hook_socat_address(struct hook_judge *j, const struct hook_word *w)
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
	size_t h = c + 1, he = hook_past_bracket(t, h);
	he += strcspn(t + he, ":,");
	bool is_one = false, is_two = false;
	for (size_t k = 0; one[k]; k++)
		is_one |= strcmp(type, one[k]) == 0;
	for (size_t k = 0; two[k]; k++)
		is_two |= strcmp(type, two[k]) == 0;
	if (is_one || is_two)
		hook_target(j, "socat", w, h, he);
	if (is_two && t[he] == ':') {
		size_t h2 = he + 1, e2 = hook_past_bracket(t, h2);
		hook_target(j, "socat", w, h2, e2 + strcspn(t + e2, ":,"));
	}
	if (!strcmp(type, "EXEC") || !strcmp(type, "SYSTEM")) {
		struct hook_word v = {w->text + c + 1, w->lit > c + 1 ? w->lit - c - 1 : 0};
		hook_judge_text(j, "socat", &v);
	}
}

/* ---------------------------------------------------------------- environment */

static const char *const env_hosts[] = {
    "npm_config_registry",
    "NPM_CONFIG_REGISTRY",
    "YARN_REGISTRY",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "GOPROXY",
    "DOCKER_HOST",
    "CARGO_REGISTRY_INDEX",
    "GH_HOST",
    NULL,
};
/* Variables whose value is a command line some program runs (a pager, an editor, a
 * prompt hook): judged as shell text like the command itself. */
static const char *const env_cmds[] = {"GIT_PROXY_COMMAND",
				       "GIT_SSH_COMMAND",
				       "GIT_PAGER",
				       "GIT_EDITOR",
				       "GIT_SEQUENCE_EDITOR",
				       "GIT_EXTERNAL_DIFF",
				       "GIT_ASKPASS",
				       "SSH_ASKPASS",
				       "PAGER",
				       "MANPAGER",
				       "SYSTEMD_PAGER",
				       "EDITOR",
				       "VISUAL",
				       "PROMPT_COMMAND",
				       "BROWSER",
				       NULL};

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
