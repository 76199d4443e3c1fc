/* The credential floor: present under every policy and chain, added to by
 * protectedPaths; sandbox.allowRead carve-outs (validation table with hostile values,
 * loosening warnings); which floor files are shown sanitized. */
#include <errno.h>
#include <unistd.h>

#include "tests/unit/policy_test.h"

/* Table rows name only the fields they need. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* The README's agent example: before the floor, it dropped most credential stores. */
#define AGENT                                                                                      \
	"sandbox: {mode: workspace-write, protectedPaths: [~/.ssh, ~/.aws, ~/.config/gcloud, "     \
	"\".env*\"]}\n"

static const char *const floor_musts[] = {
    "~/.ssh",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh/hosts.yml",
    "~/.gnupg",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials.toml",
    "~/.cargo/credentials",
    "~/.m2/settings.xml",
    "~/.gradle/gradle.properties",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    /* review 20: common secrets that were readable inside an ordinary workspace */
    "~/.config/git/credentials",
    "~/.pip/pip.conf",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.vault-token",
    "~/.config/glab-cli/config.yml",
    "~/.config/rclone/rclone.conf",
    "~/.gem/credentials",
    "~/.config/sops/age/keys.txt",
    "~/.cache/huggingface/token",
    "~/.huggingface/token",
    "~/.config/composer/auth.json",
    "~/.composer/auth.json",
    "~/.pulumi/credentials.json",
    "~/.databrickscfg",
    "~/.s3cfg",
    "~/.boto",
    "~/.config/doctl/config.yaml",
    "~/.oci",
    "~/.local/share/atuin/key",
    "~/.config/hcloud/cli.toml",
    "~/.config/configstore/firebase-tools.json",
    "~/.config/helm/repositories.yaml",
    /* review 22: browsers and mail in snaps and flatpaks, chat apps, more CLIs' tokens */
    "~/snap/firefox/common/.mozilla",
    "~/.var/app/org.mozilla.firefox/.mozilla",
    "~/.thunderbird",
    "~/snap/thunderbird/common/.thunderbird",
    "~/.var/app/org.mozilla.Thunderbird/.thunderbird",
    "~/.config/vivaldi",
    "~/.config/Signal",
    "~/.config/discord",
    "~/.config/github-copilot",
    "~/.config/containers/auth.json",
    "~/.nuget/NuGet/NuGet.Config",
    "~/.config/NuGet/NuGet.Config",
    "~/.bunfig.toml",
    "~/.fly/config.yml",
    "~/.tsh",
    "~/.local/share/com.vercel.cli/auth.json",
    "~/.vercel/auth.json",
    "~/.now/auth.json",
    "~/.cloudflared",
    "~/.config/.wrangler/config",
    "~/.wrangler/config",
    "~/.config/stripe/config.toml",
    "~/.sentryclirc",
    "~/.mc/config.json",
    "~/.config/ngrok/ngrok.yml",
    "~/.ngrok2/ngrok.yml",
    "~/.bitcoin/wallets",
    "~/.bitcoin/wallet.dat",
};

static void assert_floor(const struct halo_policy *p, const char *home)
{
	char abs[512];

	for (size_t i = 0; i < sizeof(floor_musts) / sizeof(floor_musts[0]); i++) {
		snprintf(abs, sizeof(abs), "%s%s", home, floor_musts[i] + 1);
		ck_assert_msg(pt_list_has(&p->protected_abs, abs), "floor entry %s missing", abs);
	}
	ck_assert(pt_list_has(&p->protected_globs, ".env*"));
}

START_TEST(table_is_sound)
{
	size_t n;
	const struct policy_floor_entry *f = policy_floor(&n);

	ck_assert_uint_gt(n, sizeof(floor_musts) / sizeof(floor_musts[0]));
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(f[i].reason && *f[i].reason, "%s has no reason", f[i].path);
		ck_assert(f[i].path[0] == '~' || f[i].path[0] == '.');
		ck_assert_msg(!f[i].carve || f[i].kind == POLICY_FLOOR_SECRET, "%s", f[i].path);
		ck_assert_msg(!f[i].sanitizer || f[i].kind == POLICY_FLOOR_MIXED, "%s", f[i].path);
	}
}
END_TEST

START_TEST(floor_under_one_policy)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_msg(pt_load(AGENT, &p, &d) == 0, "%s", pt_dump(&d));
	assert_floor(p, "/home/alice");
	/* The policy's own entries stay as written: the floor is not copied in. */
	ck_assert_uint_eq(p->protected_paths.n, 4);
	policy_free(p);
	policy_diags_free(&d);
	/* Both homes when $HOME differs. */
	ck_assert_msg(pt_load_ctx(AGENT, 'y', &pt_ctx2, &p, &d) == 0, "%s", pt_dump(&d));
	assert_floor(p, "/home/alice");
	assert_floor(p, "/work/envhome");
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

/* A file path for policy_load: written to a temporary directory. */
static void write_file(char *path, size_t n, const char *dir, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, n, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(floor_under_every_chain)
{
	char dir[] = "/tmp/halo-floor-XXXXXX", a[256], b[256], c[256];
	const char *const chains[][3] = {{a, NULL, NULL}, {a, b, NULL}, {b, a, c}, {c, NULL, NULL}};
	const size_t lens[] = {1, 2, 3, 1};

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_file(a, sizeof(a), dir, "agent.yaml", AGENT);
	write_file(b, sizeof(b), dir, "more.yaml", "sandbox: {protectedPaths: [/srv/keys]}\n");
	write_file(c, sizeof(c), dir, "bare.yaml", "egress: {allowedDomains: [a.example]}\n");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct policy_diags d = {0};
		struct halo_policy *p = NULL;

		ck_assert_msg(policy_load(chains[i], lens[i], &pt_ctx, &p, &d) == 0, "%s",
			      pt_dump(&d));
		assert_floor(p, "/home/alice");
		if (i == 1 || i == 2) /* protectedPaths add to it */
			ck_assert(pt_list_has(&p->protected_abs, "/srv/keys"));
		policy_free(p);
		policy_diags_free(&d);
	}
	unlink(a);
	unlink(b);
	unlink(c);
	rmdir(dir);
}
END_TEST

START_TEST(mode_off_has_no_floor)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_msg(pt_load("sandbox: {mode: off}\n", &p, &d) == 0, "%s", pt_dump(&d));
	ck_assert_uint_eq(p->protected_abs.n, 0);
	ck_assert_uint_eq(d.n_errors + d.n_warnings, 0);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

struct acase {
	const char *name;
	const char *yaml;
	const char *error;   /* substring of an error, or NULL: accepted */
	const char *warning; /* substring of a warning */
	int ctx2;
};

#define AR(x)	     "sandbox:\n  allowRead: [" x "]\n"
#define ARP(prot, x) "sandbox:\n  protectedPaths: [" prot "]\n  allowRead: [" x "]\n"

static const struct acase acases[] = {
    /* carve-outs that hold */
    {"aws config", AR("~/.aws/config"), NULL,
     "t.yaml: sandbox.allowRead[0]: '~/.aws/config' loosens the protected path '~/.aws'"},
    {"aws config absolute", AR("/home/alice/.aws/config"), NULL, "loosens the protected path"},
    {"aws config both homes", AR("~/.aws/config"), NULL, "loosens", 1},
    {"ssh config", AR("~/.ssh/config"), NULL, "'~/.ssh/config' loosens"},
    {"ssh known_hosts", AR("~/.ssh/known_hosts"), NULL, "loosens"},
    {"gcloud configurations", AR("~/.config/gcloud/configurations/config_default"), NULL,
     "loosens"},
    {"azure config", AR("~/.azure/config"), NULL, "loosens"},
    {"kube config (mixed)", AR("~/.kube/config"), NULL, "loosens the protected path '~/.kube'"},
    {"npmrc whole", AR("~/.npmrc"), NULL, "loosens the protected path '~/.npmrc'"},
    {"docker config", AR("~/.docker/config.json"), NULL, "loosens"},
    {"oci config", AR("~/.oci/config"), NULL,
     "'~/.oci/config' loosens the protected path '~/.oci'"},
    {"pip legacy (mixed)", AR("~/.pip/pip.conf"), NULL,
     "loosens the protected path '~/.pip/pip.conf'"},
    {"my.cnf (mixed)", AR("~/.my.cnf"), NULL, "loosens"},
    {"dotenv example", AR("/home/alice/proj/.env.example"), NULL,
     "loosens the protected path '.env*'"},
    {"own protected dir", ARP("/srv/secrets", "/srv/secrets/README"), NULL,
     "loosens the protected path '/srv/secrets'"},
    {"own protected equal", ARP("/srv/secrets", "/srv/secrets"), NULL, "loosens"},
    {"trailing slash", AR("~/.aws/config/"), NULL, "loosens"},
    {"case folded carve name", AR("~/.ssh/CONFIG"), NULL, "loosens"},
    /* never: secret stores of the floor */
    {"ssh key", AR("~/.ssh/id_ed25519"),
     "sandbox.allowRead[0]: '~/.ssh/id_ed25519' is inside '~/.ssh', a secret store of the "
     "credential floor"},
    {"ssh whole", AR("~/.ssh"), "a secret store"},
    {"ssh key case", AR("~/.SSH/id_rsa"), "a secret store"},
    {"ssh key via own entry", ARP("~/.ssh", "~/.ssh/id_rsa"), "a secret store"},
    {"gnupg", AR("~/.gnupg"), "'~/.gnupg' is inside '~/.gnupg', a secret store"},
    {"gnupg key", AR("~/.gnupg/private-keys-v1.d/x.key"), "a secret store"},
    {"keyring", AR("~/.local/share/keyrings/login.keyring"), "a secret store"},
    {"cargo credentials", AR("~/.cargo/credentials.toml"), "a secret store"},
    {"aws credentials", AR("~/.aws/credentials"), "'~/.aws/credentials', a secret store"},
    {"aws sso cache", AR("~/.aws/sso/cache/abc.json"), "a secret store"},
    {"gh hosts", AR("~/.config/gh/hosts.yml"), "a secret store"},
    {"claude", AR("~/.claude/.credentials.json"), "a secret store"},
    {"chrome cookies", AR("~/.config/google-chrome/Default/Cookies"), "a secret store"},
    {"gcloud creds", AR("~/.config/gcloud/credentials.db"), "a secret store"},
    {"oci key", AR("~/.oci/oci_api_key.pem"),
     "'~/.oci/oci_api_key.pem' is inside '~/.oci', a secret store"},
    {"git xdg credentials", AR("~/.config/git/credentials"), "a secret store"},
    {"pgpass", AR("~/.pgpass"), "a secret store"},
    {"vault token", AR("~/.vault-token"), "a secret store"},
    {"age keys", AR("~/.config/sops/age/keys.txt"), "a secret store"},
    {"hf token", AR("~/.cache/huggingface/token"), "a secret store"},
    {"carve name prefix only", AR("~/.ssh/configx"), "a secret store"},
    /* a carve-out is a leaf */
    {"aws whole", AR("~/.aws"), "'~/.aws' contains the protected path '~/.aws/credentials'"},
    {"aws sso", AR("~/.aws/sso"), "contains the protected path '~/.aws/sso/cache'"},
    {"contains own", ARP("/srv/secrets/inner", "/srv/secrets"),
     "contains the protected path '/srv/secrets/inner'"},
    /* nothing to carve out */
    {"outside", AR("/etc/passwd"), "'/etc/passwd' is not inside any protected path"},
    {"home", AR("\"~\""), "contains the protected path"},
    {"neighbour", AR("~/.sshx/config"), "is not inside any protected path"},
    {"root", AR("/"), "'/' is the whole file system"},
    /* hostile and malformed values */
    {"empty", AR("\"\""), "sandbox.allowRead[0]: is empty"},
    {"relative", AR("aws/config"), "must be an absolute path or start with ~/"},
    {"dot relative", AR("./.env"), "must be an absolute path or start with ~/"},
    {"glob", AR("\"~/.ssh/*.pub\""), "globs are not allowed"},
    {"glob class", AR("\"~/.aws/[c]onfig\""), "globs are not allowed"},
    {"tilde user", AR("~bob/.aws/config"), "uses ~user"},
    {"dotdot escape", AR("~/.aws/../.ssh/id_rsa"), "'..' component"},
    {"dotdot in carve", AR("~/.ssh/config/../id_rsa"), "'..' component"},
    {"control chars", AR("\"~/.ssh/\\e[31mkey\""),
     "'~/.ssh/\\x1b[31mkey' contains a control character"},
    {"newline", AR("\"~/.aws/a\\nb\""), "contains a control character"},
    {"not a list", "sandbox: {allowRead: ~/.aws/config}\n", "sandbox.allowRead"},
    {"number item", AR("42"), "sandbox.allowRead[0]"},
    {"mode off", "sandbox: {mode: off, allowRead: [~/.aws/config]}\n",
     "sandbox.allowRead: not allowed with sandbox.mode off"},
};

START_TEST(allow_read_table)
{
	const struct acase *c = &acases[_i];
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	int rc = pt_load_ctx(c->yaml, 'y', c->ctx2 ? &pt_ctx2 : &pt_ctx, &p, &d);

	if (c->error) {
		ck_assert_msg(rc < 0, "[%s] accepted:\n%s%s", c->name, c->yaml, pt_dump(&d));
		ck_assert_msg(pt_err(&d, c->error), "[%s] want '%s' in:%s", c->name, c->error,
			      pt_dump(&d));
	} else {
		ck_assert_msg(rc == 0, "[%s] refused:\n%s%s", c->name, c->yaml, pt_dump(&d));
		ck_assert_msg(pt_warn(&d, c->warning), "[%s] want warning '%s' in:%s", c->name,
			      c->warning, pt_dump(&d));
		ck_assert_uint_eq(p->allow_read_abs.n, c->ctx2 ? 2 : 1);
	}
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(allow_read_layers)
{
	struct policy_diags d = {0};
	struct halo_policy *b = NULL, *u = NULL;

	ck_assert_int_eq(policy_parse_buffer("a.yaml", AR("~/.aws/config"),
					     strlen(AR("~/.aws/config")), 'y', &b, &d),
			 0);
	ck_assert_int_eq(policy_parse_buffer("b.yaml", AR("~/.ssh/known_hosts, ~/.aws/config"),
					     strlen(AR("~/.ssh/known_hosts, ~/.aws/config")), 'y',
					     &u, &d),
			 0);
	ck_assert_int_eq(policy_layer(b, u, "b.yaml", &d), 0);
	ck_assert_uint_eq(b->allow_read.n, 2);
	ck_assert_int_eq(policy_finalize(b, &pt_ctx, &d), 0);
	ck_assert(pt_warn(&d, "'~/.ssh/known_hosts' loosens"));
	ck_assert(pt_warn(&d, "'~/.aws/config' loosens"));
	policy_free(b);
	policy_free(u);
	policy_diags_free(&d);
}
END_TEST

START_TEST(writable_roots_and_floor)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	/* A build cache holding a floor file: it stays writable, the file masked. */
	ck_assert_msg(pt_load("sandbox: {writableRoots: [~/.gradle, ~/.cargo, ~/.m2]}\n", &p, &d) ==
			  0,
		      "%s", pt_dump(&d));
	policy_free(p);
	ck_assert_int_eq(pt_load("sandbox: {writableRoots: [~/.aws/cli]}\n", &p, &d), -EINVAL);
	ck_assert_msg(pt_err(&d, "sandbox.writableRoots[0]: '~/.aws/cli' (/home/alice/.aws/cli) is "
				 "inside the credential floor's '~/.aws'"),
		      "%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(workspace_inside_floor)
{
	static const struct policy_ctx ws = {"/home/alice", "/home/alice", "/home/alice/.ssh/x"};
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(pt_load_ctx("egress: {default: deny}\n", 'y', &ws, &p, &d), -EINVAL);
	ck_assert_msg(pt_err(&d, "the workspace /home/alice/.ssh/x is inside the credential "
				 "floor's '~/.ssh'"),
		      "%s", pt_dump(&d));
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(sanitized_files)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	ck_assert_int_eq(pt_load(AGENT, &p, &d), 0);
	ck_assert(pt_list_has(&p->sanitize_abs, "/home/alice/.npmrc"));
	ck_assert_uint_eq(p->sanitize_kind[0], POLICY_SANITIZE_NPMRC);
	ck_assert(pt_list_has(&p->sanitize_abs, "/home/alice/.config/pnpm/rc"));
	policy_free(p);
	/* Protected by the policy itself: masked whole. Carved out: the real file. */
	ck_assert_int_eq(pt_load("sandbox: {protectedPaths: [~/.npmrc]}\n", &p, &d), 0);
	ck_assert(!pt_list_has(&p->sanitize_abs, "/home/alice/.npmrc"));
	ck_assert_uint_eq(p->sanitize_abs.n, 1); /* pnpm's rc */
	policy_free(p);
	ck_assert_int_eq(pt_load(AR("~/.npmrc"), &p, &d), 0);
	ck_assert(!pt_list_has(&p->sanitize_abs, "/home/alice/.npmrc"));
	ck_assert_uint_eq(p->sanitize_abs.n, 1);
	policy_free(p);
	ck_assert_int_eq(pt_load_ctx(AGENT, 'y', &pt_ctx2, &p, &d), 0);
	ck_assert_uint_eq(p->sanitize_abs.n, 4); /* .npmrc and pnpm's rc, two homes */
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

START_TEST(json_marks_floor)
{
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;
	char *j;

	ck_assert_int_eq(
	    pt_load("sandbox: {protectedPaths: [~/.aws], allowRead: [~/.aws/config]}\n", &p, &d),
	    0);
	j = policy_to_json(p);
	ck_assert_ptr_nonnull(j);
	ck_assert_msg(strstr(j, "\"floor\":") && strstr(j, "\"path\":\t\"~/.git-credentials\"") &&
			  strstr(j, "\"kind\":\t\"secret\"") &&
			  strstr(j, "\"sanitizer\":\t\"npmrc\"") &&
			  strstr(j, "\"allowRead\":\t[\"~/.aws/config\"]"),
		      "%s", j);
	free(j);
	policy_free(p);
	policy_diags_free(&d);
}
END_TEST

/* The home persistence set (policy/homeset.c): every entry the issue names, each with
 * its reason, all relative and clean; the caller's PATH adds its directories under the
 * home and nothing else (relative, "..", ".", another home, empty entries). */
static const char *const home_musts[] = {
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".config/environment.d",
    ".pam_environment",
    ".gitconfig",
    ".config/git",
    ".local/bin",
    "bin",
    ".cargo/bin",
    "go/bin",
    ".config/systemd/user",
    ".config/autostart",
    ".vimrc",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".cargo/config.toml",
    ".gradle/init.d",
    ".config/direnv",
    ".vscode",
    ".claude",
    ".codex",
    ".idea",
    /* what the review found missing: each runs code on the host later */
    ".local/lib",
    ".config/go/env",
    ".gdbinit",
    ".config/husky",
    ".huskyrc",
    ".config/lesskey",
    ".inputrc",
    ".ssh",
    ".npmrc",
    ".docker/cli-plugins",
    ".mavenrc",
    ".local/share/applications",
    ".local/share/dbus-1",
    ".local/share/flatpak/exports",
    ".config/zsh",
    ".config/sway",
    ".Rprofile",
    ".julia/config",
    ".vscode-server",
    ".yarnrc",
    ".xsessionrc",
    ".bashrc.d",
    ".nvm",
    "node_modules",
    ".volta",
    /* review 20: systemd's other user places, other shells, tools, editors, terminals */
    ".config/systemd/user.control",
    ".config/systemd/user.conf",
    ".config/user-tmpfiles.d",
    ".local/share/user-tmpfiles.d",
    ".local/share/direnv/allow",
    ".config/mise",
    ".config/vim",
    ".hgrc",
    ".config/hg",
    ".config/jj",
    ".config/gh/config.yml",
    ".subversion/config",
    ".tcshrc",
    ".cshrc",
    ".login",
    ".logout",
    ".kshrc",
    ".mkshrc",
    ".config/nushell",
    ".xonshrc",
    ".config/xonsh",
    ".config/elvish",
    ".elvish",
    ".config/VSCodium/User",
    ".config/Code - Insiders/User",
    ".config/Cursor/User",
    ".vscode-oss",
    ".vscode-insiders",
    ".windsurf",
    ".cursor",
    ".config/alacritty",
    ".alacritty.toml",
    ".alacritty.yml",
    ".config/foot",
    ".config/ghostty",
    ".config/helix",
    ".config/zed",
    ".bunfig.toml",
    ".Renviron",
    ".lldbinit",
    ".pdbrc",
    ".selected_editor",
    ".terraformrc",
    ".config/pipewire",
    ".config/bat",
    /* review 22: installed tools' code the host runs (pipx's venvs beneath a read-only
     * ~/.local/bin/black), more start-up files and desktop extensions */
    ".local/share/pipx",
    ".local/pipx",
    ".local/share/uv/tools",
    ".local/share/uv/python",
    ".npm-global/lib",
    ".bun/install/global",
    ".local/share/pnpm",
    ".dotnet/tools",
    ".local/share/virtualenv",
    ".gem/ruby",
    ".mix/archives",
    ".ghcup",
    ".opam",
    ".elan",
    ".rye",
    ".atuin/bin",
    ".deno/env",
    ".fzf.bash",
    ".fzf.zsh",
    ".local/share/gnome-shell/extensions",
    ".local/share/nautilus-python/extensions",
    ".local/share/plasma/plasmoids",
    ".config/JetBrains",
    ".local/share/JetBrains",
    ".cache/JetBrains",
    ".cache/nvim/luac",
    ".R/Makevars",
    ".config/lf",
    ".config/user-dirs.dirs",
    ".gradle/init.gradle.kts",
    /* review 22: caches holding code the host runs (home_caches, but for caches: host) */
    ".cache/node/corepack",
    ".cache/Cypress",
    ".cache/selenium",
    ".cache/bazelisk",
    ".cache/coursier",
    ".nuget/packages",
    ".cache/pipx",
    ".cache/pnpm",
    ".cache/torch/hub",
    ".cache/composer",
    ".cache/nix",
};

static int collect(const char *rel, const char *why, void *arg)
{
	char *buf = arg;
	ck_assert_msg(why && why[0], "%s has a reason", rel);
	ck_assert_msg(rel[0] && rel[0] != '/' && !strstr(rel, "..") && !strstr(rel, "//") &&
			  rel[strlen(rel) - 1] != '/',
		      "%s is relative and clean", rel);
	strcat(buf, "|");
	strcat(buf, rel);
	return 0;
}

/* The host's own tool caches are in the set (review 20: writable from a home
 * workspace, run by the host's next build), but for caches: host, which binds them
 * writable on purpose. */
static int collect_caches(const char *rel, const char *why, void *arg)
{
	(void)why;
	*(int *)arg += !strcmp(rel, ".m2/repository") || !strcmp(rel, ".cargo/registry") ||
		       !strcmp(rel, ".cache/pre-commit") || !strcmp(rel, ".npm") ||
		       !strcmp(rel, "go/pkg/mod") || !strcmp(rel, ".cache/node/corepack") ||
		       !strcmp(rel, ".nuget/packages") || !strcmp(rel, ".cache/torch/hub");
	return 0;
}

START_TEST(home_set_host_caches)
{
	struct policy_xdg xdg = {0};
	int n = 0;

	ck_assert_int_eq(policy_home_set_each_xdg("/home/u", NULL, &xdg, collect_caches, &n), 0);
	ck_assert_int_eq(n, 8);
	/* review 22: pnpm's store is a cache in pnpm's home, an entry of the set: read-only
	 * but for caches: host; the rest of that home (global packages) always */
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg(
	    "/home/u", NULL, &xdg, "/home/u/.local/share/pnpm/store/v3/files/00/x", NULL));
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg("/home/u", "/home/u/.local/share/pnpm", &xdg,
						      "/home/u/.local/share/pnpm/store/x", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg("/home/u", NULL, &xdg, "/home/u/.m2/repository/x.jar", NULL));
	xdg.host_caches = true;
	n = 0;
	ck_assert_int_eq(policy_home_set_each_xdg("/home/u", NULL, &xdg, collect_caches, &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_ptr_null(
	    policy_home_set_hit_xdg("/home/u", NULL, &xdg, "/home/u/.m2/repository/x.jar", NULL));
	ck_assert_ptr_null(policy_home_set_hit_xdg(
	    "/home/u", NULL, &xdg, "/home/u/.local/share/pnpm/store/v3/files/00/x", NULL));
	ck_assert_ptr_null(policy_home_set_hit_xdg("/home/u", NULL, &xdg,
						   "/home/u/.local/share/pnpm/store", NULL));
	/* (its PATH entry too: the store is the cache's, whichever entry holds it) */
	ck_assert_ptr_null(policy_home_set_hit_xdg("/home/u", "/home/u/.local/share/pnpm", &xdg,
						   "/home/u/.local/share/pnpm/store/x", NULL));
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg(
	    "/home/u", NULL, &xdg, "/home/u/.local/share/pnpm/global/5/node_modules/x", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg("/home/u", NULL, &xdg, "/home/u/.local/share/pnpm/tsc", NULL));
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg("/home/u", NULL, &xdg,
						      "/home/u/.local/share/pnpm/storex", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg("/home/u", NULL, &xdg, "/home/u/.cache/nvim/luac/x", NULL));
	/* never the sandbox's own caches, nor ~/.cache whole */
	ck_assert_ptr_null(policy_home_set_hit(
	    "/home/u", NULL, "/home/u/.cache/halo-run/caches/ws-1/go-build", NULL));
}
END_TEST

START_TEST(home_set)
{
	static char all[16384];
	const char *entry = NULL;

	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each("/home/u",
					      "/usr/bin:/home/u/mine::rel/bin:/home/u/../x:"
					      "/home/u/./y:/home/u:/home/uu/bin:/home/u/z/:"
					      "/home/u//w//v/:/home/u/./:/home/u/a/../b:"
					      "~/tbin:~:~u/ubin:~/",
					      collect, all),
			 0);
	strcat(all, "|");
	for (size_t i = 0; i < sizeof(home_musts) / sizeof(home_musts[0]); i++) {
		char k[128];
		snprintf(k, sizeof(k), "|%s|", home_musts[i]);
		ck_assert_msg(strstr(all, k), "%s is in the home set", home_musts[i]);
	}
	ck_assert_ptr_nonnull(strstr(all, "|mine|"));
	ck_assert_ptr_nonnull(strstr(all, "|z|")); /* trailing slash dropped */
	ck_assert_ptr_null(strstr(all, "rel"));
	ck_assert_ptr_null(strstr(all, "|x|"));
	/* "." and empty components are the same directory (review: $HOME//tools/bin was
	 * left writable); ".." is not followed (a link on the way would move it) */
	ck_assert_ptr_nonnull(strstr(all, "|y|"));
	ck_assert_ptr_nonnull(strstr(all, "|w/v|"));
	ck_assert_ptr_null(strstr(all, "|b|"));
	ck_assert_ptr_null(strstr(all, "|a/../b|"));
	ck_assert_ptr_null(strstr(all, "||"));
	/* bash expands "~/" in a PATH entry (review 20): under the home */
	ck_assert_ptr_nonnull(strstr(all, "|tbin|"));
	ck_assert_ptr_null(strstr(all, "ubin"));
	/* hits: at or beneath an entry, by the path facts' case rule (exact on Linux,
	 * where ~/.BASHRC is another file); never the home itself */
	ck_assert_ptr_nonnull(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.config/git/config", &entry));
	ck_assert_str_eq(entry, ".config/git/config");
	ck_assert(!policy_home_set_hit("/home/u/", NULL, "/home/u/.BASHRC", NULL) ==
		  !POLICY_PATH_FOLD);
	ck_assert_ptr_nonnull(policy_home_set_hit("/home/u/", NULL, "/home/u/.bashrc", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit("/home/u", "/home/u/mine", "/home/u/mine/ls", NULL));
	ck_assert_ptr_null(policy_home_set_hit("/home/u", NULL, "/home/u/mine/ls", NULL));
	ck_assert_ptr_null(policy_home_set_hit("/home/u", NULL, "/home/u", NULL));
	ck_assert_ptr_null(policy_home_set_hit("/home/u", NULL, "/home/u/bashrc.bak", NULL));
	/* (review 30) a name beside a start-up file, a script's temp file for it */
	ck_assert_ptr_nonnull(policy_home_set_hit("/home/u", NULL, "/home/u/.bashrc.bak", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.GITCONFIG.lock", NULL));
	ck_assert_ptr_null(policy_home_set_hit("/home/u", NULL, "/home/u/.bashrcx", NULL));
	ck_assert_ptr_null(policy_home_set_hit("/home/u", NULL, "/home/uu/.bashrc", NULL));
	ck_assert_ptr_null(policy_home_set_hit("/home/u", NULL, "/home/u/proj/.config/git", NULL));
	ck_assert_ptr_null(policy_home_set_hit(NULL, NULL, "/home/u/.bashrc", NULL));
	ck_assert_ptr_null(policy_home_set_hit("relative", NULL, "relative/.bashrc", NULL));
	/* review 20: beneath the new entries; the sibling of gh's config.yml is the
	 * floor's (hosts.yml), systemd's user.conf is no prefix of another name */
	ck_assert_ptr_nonnull(policy_home_set_hit(
	    "/home/u", NULL, "/home/u/.config/systemd/user.control/default.target.wants/x.service",
	    NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.config/user-tmpfiles.d/x.conf", NULL));
	ck_assert_ptr_nonnull(policy_home_set_hit(
	    "/home/u", NULL, "/home/u/.config/Code - Insiders/User/tasks.json", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.vscode-oss/extensions/x/a.js", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.local/share/direnv/allow/0a", NULL));
	ck_assert_ptr_null(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.config/gh/hosts.yml", NULL));
	ck_assert_ptr_null(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.config/systemd/user.confx", NULL));
	ck_assert_ptr_null(
	    policy_home_set_hit("/home/u", NULL, "/home/u/.local/share/direnv/deny/0a", NULL));
	ck_assert(policy_home_in_tree("/home/u", "/home/u"));
	ck_assert(policy_home_in_tree("/home/u", "/home"));
	ck_assert(!policy_home_in_tree("/home/u", "/home/u/proj"));
	ck_assert(!policy_home_in_tree(NULL, "/home"));
}
END_TEST

/* $XDG_CONFIG_HOME beneath the home: git, fish, systemd... read their ~/.config entries
 * there instead, so each is an entry there too; outside the home or unclean, nothing. */
START_TEST(home_set_xdg)
{
	static char all[32768];
	const char *entry = NULL;

	all[0] = '\0';
	ck_assert_int_eq(
	    policy_home_set_each_xdg("/home/u", NULL,
				     &(struct policy_xdg){.config = "/home/u/dots/", .data = NULL},
				     collect, all),
	    0);
	strcat(all, "|");
	ck_assert_ptr_nonnull(strstr(all, "|dots/git|"));
	ck_assert_ptr_nonnull(strstr(all, "|dots/systemd/user|"));
	ck_assert_ptr_nonnull(strstr(all, "|dots/go/env|"));
	ck_assert_ptr_nonnull(strstr(all, "|dots/systemd/user.control|"));
	ck_assert_ptr_nonnull(strstr(all, "|dots/user-tmpfiles.d|"));
	ck_assert_ptr_nonnull(strstr(all, "|dots/mise|"));
	ck_assert_ptr_nonnull(strstr(all, "|dots/alacritty.toml|"));
	ck_assert_ptr_null(strstr(all, "|dots/.alacritty.toml|"));
	ck_assert_ptr_null(strstr(all, "|dots/.bashrc|"));
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg(
	    "/home/u", NULL, &(struct policy_xdg){.config = "/home/u/dots", .data = NULL},
	    "/home/u/dots/git/config", &entry));
	ck_assert_str_eq(entry, "dots/git/config");
	ck_assert_ptr_null(policy_home_set_hit_xdg(
	    "/home/u", NULL, &(struct policy_xdg){.config = "/home/u/dots", .data = NULL},
	    "/home/u/dots/notes", NULL));
	ck_assert_ptr_null(policy_home_set_hit("/home/u", NULL, "/home/u/dots/git/config", NULL));
	/* outside the home, relative, dot-dot, the home itself: no extra entries */
	const char *bad[] = {"/etc/xdg", "rel/dots", "/home/u/../x", "/home/u", "/home/uu/c", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		all[0] = '\0';
		ck_assert_int_eq(
		    policy_home_set_each_xdg("/home/u", NULL,
					     &(struct policy_xdg){.config = bad[i], .data = bad[i]},
					     collect, all),
		    0);
		ck_assert_msg(!strstr(all, "|xdg/") && !strstr(all, "|rel/") &&
				  !strstr(all, "|x/") && !strstr(all, "|c/") && !strstr(all, "|/"),
			      "%s adds nothing", bad[i]);
	}
}
END_TEST

/* $XDG_DATA_HOME beneath the home: systemd's user units, neovim's site, fish's
 * vendor_conf.d, D-Bus services... are read there instead of ~/.local/share. */
START_TEST(home_set_xdg_data)
{
	static char all[32768];
	const struct policy_xdg both = {.config = "/home/u/cfg", .data = "/home/u/data"};
	const char *entry = NULL;

	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg("/home/u", NULL, &both, collect, all), 0);
	strcat(all, "|");
	ck_assert_ptr_nonnull(strstr(all, "|data/systemd/user|"));
	ck_assert_ptr_nonnull(strstr(all, "|data/nvim|"));
	ck_assert_ptr_nonnull(strstr(all, "|data/dbus-1|"));
	ck_assert_ptr_nonnull(strstr(all, "|data/user-tmpfiles.d|"));
	ck_assert_ptr_nonnull(strstr(all, "|data/direnv/allow|"));
	ck_assert_ptr_nonnull(strstr(all, "|cfg/git|"));
	ck_assert_ptr_null(strstr(all, "|data/git|"));
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg(
	    "/home/u", NULL, &both, "/home/u/data/systemd/user/x.service", &entry));
	ck_assert_str_eq(entry, "data/systemd/user/x.service");
	ck_assert_ptr_null(
	    policy_home_set_hit_xdg("/home/u", NULL, &both, "/home/u/data/notes.txt", NULL));
	/* the default place is still an entry, and a data home equal to it adds nothing */
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg(
	    "/home/u", NULL, &(struct policy_xdg){.config = NULL, .data = "/home/u/.local/share"},
	    "/home/u/.local/share/systemd/user/x.service", NULL));
}
END_TEST

/* Review 9: XDG directories beneath no home (or the home itself) keep their entries
 * where they are; hostile values (relative, "/", a "..", beneath a home) add none. */
START_TEST(home_set_xdg_outside)
{
	const char *homes[] = {"/home/u", NULL, "/home/u-real", NULL};
	const struct policy_xdg out = {.config = "/data//cfg/", .data = "/data/./share"};
	static char all[32768];

	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg_outside(homes, 4, &out, collect, all), 0);
	strcat(all, "|");
	ck_assert_ptr_nonnull(strstr(all, "|data/cfg/git|"));
	ck_assert_ptr_nonnull(strstr(all, "|data/cfg/systemd/user|"));
	ck_assert_ptr_nonnull(strstr(all, "|data/share/systemd/user|"));
	ck_assert_ptr_null(strstr(all, "|data/cfg/.bashrc|"));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg_outside(homes, 4, &out, "/data/cfg/git/config"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 4, &out, "/data/cfg/notes"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 4, &out, "/"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 4, &out, "relative/git/config"));
	/* the home itself as the XDG config home: $HOME/git/config is git's config */
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg_outside(
	    homes, 4, &(struct policy_xdg){.config = "/home/u", .data = NULL},
	    "/home/u/git/config"));
	static const char *const none[] = {
	    "cfg", "/", "//", "/data/../cfg", "/home/u/cfg", "/home/u-real/x/cfg", ""};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		all[0] = '\0';
		ck_assert_int_eq(policy_home_set_each_xdg_outside(
				     homes, 4,
				     &(struct policy_xdg){.config = none[i], .data = none[i]},
				     collect, all),
				 0);
		ck_assert_msg(all[0] == '\0', "%s adds none: %s", none[i], all);
	}
	ck_assert_int_eq(policy_home_set_each_xdg_outside(homes, 4, NULL, collect, all), 0);
}
END_TEST

/* Review 10: $XDG_CONFIG_DIRS and $XDG_DATA_DIRS are lists whose entries are read like
 * the XDG homes (systemd user units, D-Bus services, autostart): each absolute entry
 * counts, beneath a home or outside; relative and empty ones add nothing. */
START_TEST(home_set_xdg_lists)
{
	static char all[65536];
	const char *homes[] = {"/home/u", NULL};
	const struct policy_xdg l = {.config_dirs = "/etc/xdg::rel/cd:/home/u/cd",
				     .data_dirs =
					 "/home/u/.local/share/flatpak/exports/share:/w/dd:"};

	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg("/home/u", NULL, &l, collect, all), 0);
	strcat(all, "|");
	ck_assert_ptr_nonnull(strstr(all, "|cd/autostart|"));
	ck_assert_ptr_nonnull(strstr(all, "|.local/share/flatpak/exports/share/dbus-1|"));
	ck_assert_ptr_null(strstr(all, "|rel/cd/autostart|"));
	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg_outside(homes, 2, &l, collect, all), 0);
	strcat(all, "|");
	ck_assert_ptr_nonnull(strstr(all, "|etc/xdg/autostart|"));
	ck_assert_ptr_nonnull(strstr(all, "|w/dd/systemd/user|"));
	ck_assert_ptr_null(strstr(all, "|home/u/cd/autostart|")); /* the home's, not here */
	ck_assert_ptr_null(strstr(all, "rel/"));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg_outside(homes, 2, &l, "/w/dd/dbus-1/services/x.service"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 2, &l, "/w/dd/notes"));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg("/home/u", NULL, &l, "/home/u/cd/autostart/x.desktop", NULL));
	/* a list of separators only, or of one "/": nothing */
	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg_outside(
			     homes, 2, &(struct policy_xdg){.config_dirs = ":::", .data_dirs = "/"},
			     collect, all),
			 0);
	ck_assert_str_eq(all, "");
}
END_TEST

/* Review 16: $ZDOTDIR holds zsh's start-up files, their compiled twins and compinit's
 * dump (the set's ".z" names), beneath a home or outside, and nothing else of the set;
 * a relative one adds nothing. */
START_TEST(home_set_zdotdir)
{
	static char all[65536];
	const char *homes[] = {"/home/u", NULL};
	const struct policy_xdg in = {.zdotdir = "/home/u/dots/zsh"};
	const struct policy_xdg out = {.zdotdir = "/w/z"};
	const char *names[] = {".zshenv",     ".zprofile",     ".zshrc",      ".zlogin",
			       ".zlogout",    ".zshrc.zwc",    ".zshenv.zwc", ".zcompdump",
			       ".zlogin.zwc", ".zprofile.zwc", ".zlogout.zwc"};
	char want[256];

	strcpy(all, "|");
	ck_assert_int_eq(policy_home_set_each_xdg("/home/u", NULL, &in, collect, all), 0);
	strcat(all, "|");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "|dots/zsh/%s|", names[i]);
		ck_assert_msg(strstr(all, want), "%s missing", want);
		snprintf(want, sizeof(want), "|%s|", names[i]); /* the home's own */
		ck_assert_msg(strstr(all, want), "%s missing", want);
	}
	ck_assert_ptr_null(strstr(all, "|dots/zsh/.bashrc|"));
	ck_assert_ptr_null(strstr(all, "|dots/zsh/.oh-my-zsh|"));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg("/home/u", NULL, &in, "/home/u/dots/zsh/.zshrc.zwc", NULL));
	ck_assert_ptr_null(
	    policy_home_set_hit_xdg("/home/u", NULL, &in, "/home/u/dots/zsh/notes", NULL));
	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg_outside(homes, 2, &in, collect, all), 0);
	ck_assert_str_eq(all, ""); /* the home's, not here */
	ck_assert_int_eq(policy_home_set_each_xdg_outside(homes, 2, &out, collect, all), 0);
	strcat(all, "|");
	ck_assert_ptr_nonnull(strstr(all, "|w/z/.zshenv|"));
	ck_assert_ptr_nonnull(strstr(all, "|w/z/.zcompdump|"));
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg_outside(homes, 2, &out, "/w/z/.zlogin"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 2, &out, "/w/z/.bashrc"));
	all[0] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg_outside(
			     homes, 2, &(struct policy_xdg){.zdotdir = "rel/z"}, collect, all),
			 0);
	ck_assert_str_eq(all, "");
	/* every place it may be (a list: the zshenv files' branches, review 17) */
	const struct policy_xdg both = {.zdotdir = "/home/u/a:rel:/w/b"};
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg("/home/u", NULL, &both, "/home/u/a/.zlogin", NULL));
	ck_assert_ptr_nonnull(policy_home_set_hit_xdg_outside(homes, 2, &both, "/w/b/.zlogin"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 2, &both, "/rel/.zlogin"));
}
END_TEST

/* Names kept by their start (oh-my-zsh's .zcompdump-HOST-VERSION, powerlevel10k's
 * instant prompt): each name that starts with a row's prefix in its directory, case
 * folded, and what lies beneath it; the home's ".z" rows in each $ZDOTDIR too. */
static int collect_prefix(const char *dir, const char *prefix, const char *why, void *arg)
{
	char *all = arg;

	ck_assert_ptr_nonnull(why);
	strcat(all, dir);
	strcat(all, dir[0] ? "/" : "");
	strcat(all, prefix);
	strcat(all, "*|");
	return 0;
}

START_TEST(home_set_prefix)
{
	static char all[4096];
	const char *homes[] = {"/home/u", NULL};
	const struct policy_xdg in = {.zdotdir = "/home/u/dots/zsh"};
	const struct policy_xdg out = {.zdotdir = "/w/z"};
	const char *hit[] = {".zcompdump-host-5.9",
			     ".zcompdump-host-5.9.zwc",
			     ".ZCOMPDUMP-X",
			     ".zcompdump",
			     ".zcompdumpling", /* a prefix is a prefix */
			     ".zcompdump-x/inside",
			     ".cache/p10k-instant-prompt-u.zsh",
			     ".cache/p10k-dump-u.zsh.zwc",
			     ".cache/P10K-DUMP-",
			     ".cache/p10k-x", /* review 27: every p10k- name */
			     ".cache/p10k-u/prompt-14"};
	const char *miss[] = {"x.zcompdump",	     ".zcompdum",
			      "proj/.zcompdump-x",   ".cache/p10k",
			      "p10k-dump-u.zsh",     ".cache/sub/p10k-dump-u.zsh",
			      ".cachex/p10k-dump-u", "dots/zsh/.zcompdump-x"};
	char abs[256];

	ck_assert(policy_home_prefix_name(".zcompdump-h", ".zcompdump"));
	ck_assert(policy_home_prefix_name(".ZcompDump", ".zcompdump"));
	ck_assert(!policy_home_prefix_name(".zcompdum", ".zcompdump"));
	ck_assert(!policy_home_prefix_name("", ".zcompdump"));
	for (size_t i = 0; i < sizeof(hit) / sizeof(hit[0]); i++) {
		snprintf(abs, sizeof(abs), "/home/u/%s", hit[i]);
		ck_assert_msg(policy_home_set_hit("/home/u", NULL, abs, NULL), "%s", abs);
	}
	for (size_t i = 0; i < sizeof(miss) / sizeof(miss[0]); i++) {
		snprintf(abs, sizeof(abs), "/home/u/%s", miss[i]);
		ck_assert_msg(!policy_home_set_hit("/home/u", NULL, abs, NULL), "%s", abs);
	}
	/* in $ZDOTDIR: the home's zsh rows, not ~/.cache's */
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg("/home/u", NULL, &in, "/home/u/dots/zsh/.zcompdump-h", NULL));
	ck_assert_ptr_null(policy_home_set_hit_xdg("/home/u", NULL, &in,
						   "/home/u/dots/zsh/p10k-dump-u.zsh", NULL));
	ck_assert_ptr_nonnull(
	    policy_home_set_hit_xdg_outside(homes, 2, &out, "/w/z/.zcompdump-h-5.9"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 2, &out, "/w/z/zcompdump"));
	ck_assert_ptr_null(policy_home_set_hit_xdg_outside(homes, 2, &in, "/home/u/dots/zsh/.zc"));
	/* the walks: each row once for the home, the zsh rows once more per $ZDOTDIR */
	strcpy(all, "|");
	ck_assert_int_eq(policy_home_prefix_each_xdg("/home/u", NULL, collect_prefix, all), 0);
	ck_assert_str_eq(all, "|.zcompdump*|.bashrc.*|.bash_profile.*|.bash_login.*|.bash_logout.*|"
			      ".bash_aliases.*|.profile.*|.zshenv.*|.zprofile.*|.zshrc.*|.zlogin.*|"
			      ".zlogout.*|.gitconfig.*|.cache/p10k-*|");
	strcpy(all, "|");
	ck_assert_int_eq(policy_home_prefix_each_xdg("/home/u", &in, collect_prefix, all), 0);
	ck_assert_ptr_nonnull(strstr(all, "|dots/zsh/.zcompdump*|"));
	ck_assert_ptr_null(strstr(all, "dots/zsh/.cache"));
	all[0] = '\0';
	ck_assert_int_eq(policy_home_prefix_each_xdg_outside(homes, 2, &in, collect_prefix, all),
			 0);
	ck_assert_str_eq(all, ""); /* the home's, not here */
	ck_assert_int_eq(policy_home_prefix_each_xdg_outside(homes, 2, &out, collect_prefix, all),
			 0);
	/* the zsh rows in a $ZDOTDIR outside the homes (.z*: zsh's own names) */
	ck_assert_str_eq(all, "w/z/.zcompdump*|w/z/.zshenv.*|w/z/.zprofile.*|w/z/.zshrc.*|"
			      "w/z/.zlogin.*|w/z/.zlogout.*|");
}
END_TEST

/* Review 11: an XDG directory whose entries would pass PATH_MAX fails the walk (an
 * entry left out was writable): the each functions say -ENAMETOOLONG, the hit ones a
 * reason, so nothing is judged writable. */
static int collect_none(const char *rel, const char *why, void *arg)
{
	(void)rel, (void)why, (void)arg;
	return 0;
}

START_TEST(home_set_xdg_too_long)
{
	static char dir[5000];
	const char *homes[] = {"/home/u", NULL};

	dir[0] = '/';
	memset(dir + 1, 'd', 4080);
	dir[4081] = '\0';
	const struct policy_xdg x = {.config = dir};
	ck_assert_int_eq(policy_home_set_each_xdg_outside(homes, 2, &x, collect_none, NULL),
			 -ENAMETOOLONG);
	ck_assert_str_eq(policy_home_set_hit_xdg_outside(homes, 2, &x, "/elsewhere/x"),
			 POLICY_HOME_SET_TOO_LONG);
	memcpy(dir, "/home/u/", 8);
	memset(dir + 4081, 'd', 9); /* 4090 bytes: ~/<that>/plasma-workspace is past it */
	dir[4090] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg("/home/u", NULL, &x, collect_none, NULL),
			 -ENAMETOOLONG);
	ck_assert_str_eq(policy_home_set_hit_xdg("/home/u", NULL, &x, "/home/u/notes", NULL),
			 POLICY_HOME_SET_TOO_LONG);
	/* one past PATH_MAX in a list: the same */
	memset(dir + 4090, 'd', 410);
	dir[4500] = '\0';
	ck_assert_int_eq(policy_home_set_each_xdg_outside(
			     homes, 2, &(struct policy_xdg){.data_dirs = dir}, collect_none, NULL),
			 -ENAMETOOLONG);
}
END_TEST

/* A fake file system for policy_path_leads: directories and links by name. */
static int fake_link(void *ctx, const char *abs, char *buf, size_t n)
{
	static const char *const dirs[] = {"/h", "/h/sub", "/h/dots", "/h/dots/config", "/w"};
	static const char *const links[][2] = {
	    {"/h/.config", "dots/config"}, {"/h/l", "/w/real"}, {"/h/loop", "/h/loop"}};
	(void)ctx;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strcmp(abs, dirs[i]))
			return 0;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (!strcmp(abs, links[i][0]))
			return snprintf(buf, n, "%s", links[i][1]) < (int)n ? 1 : -ENAMETOOLONG;
	return -ENOENT;
}

/* Review 10: where an XDG directory leads, as the sandbox, the hook and a session's
 * digest judge it (policy_xdg_leads), hostile spellings included. */
START_TEST(xdg_leads_table)
{
	static const struct {
		const char *in, *out, *cut;
		int rc;
	} t[] = {
	    {"/h/sub/../cfg", "/h/cfg", "", 0},	      /* a ".." over a directory */
	    {"/h/m/../cfg2", "/h/cfg2", "/h/m", 0},   /* past a missing name: cut there */
	    {"/h/m/x/../bin", "/h/m/bin", "/h/m", 0}, /* review 13: beneath it, still cut */
	    {"/h/m/x/..", "/h/m", "/h/m", 0},
	    {"/h/.config/git", "/h/dots/config/git", "", 0}, /* a link, not made below */
	    {"/h/l/git", "/w/real/git", "", 0},		     /* an absolute link */
	    {"/h//./sub/", "/h/sub", "", 0},
	    {"/h/loop/x", "", "", -ELOOP},
	    {"cfg", "", "", -EINVAL},
	    {"", "", "", -EINVAL},
	};
	char out[256], cut[256];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc =
		    policy_xdg_leads(t[i].in, fake_link, NULL, out, sizeof(out), cut, sizeof(cut));
		ck_assert_msg(rc == t[i].rc, "%s: rc %d", t[i].in, rc);
		if (rc == 0) {
			ck_assert_msg(!strcmp(out, t[i].out), "%s: leads to %s", t[i].in, out);
			ck_assert_msg(!strcmp(cut, t[i].cut), "%s: cut %s", t[i].in, cut);
		}
	}
	ck_assert_int_eq(policy_xdg_leads(NULL, fake_link, NULL, out, sizeof(out), cut, 4),
			 -EINVAL);
	/* too long for out: an error, never a cut-short path */
	ck_assert_int_eq(policy_xdg_leads("/h/sub/../cfg", fake_link, NULL, out, 4, cut, 4),
			 -ENAMETOOLONG);
}
END_TEST

static int count_cut(const char *cut, void *arg)
{
	ck_assert_str_eq(cut, "/h/m");
	(*(int *)arg)++;
	return 0;
}

/* Review 12: each entry of an XDG list where it leads; cuts said; an entry that cannot
 * be told is an error the callers fail closed on, the others still listed. */
START_TEST(xdg_list_leads)
{
	char *out = NULL;
	int cuts = 0;

	ck_assert_int_eq(policy_xdg_list_leads("/h/sub/../cfg::rel:/h/m/../c2:/h/l/x:", fake_link,
					       NULL, &out, count_cut, &cuts),
			 0);
	ck_assert_str_eq(out, "/h/cfg:/h/c2:/w/real/x");
	ck_assert_int_eq(cuts, 1);
	free(out);
	ck_assert_int_eq(
	    policy_xdg_list_leads("/h/loop/x:/h/sub", fake_link, NULL, &out, NULL, NULL), -ELOOP);
	ck_assert_str_eq(out, "/h/sub");
	free(out);
	ck_assert_int_eq(policy_xdg_list_leads(NULL, fake_link, NULL, &out, NULL, NULL), 0);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(policy_xdg_list_leads(":::", fake_link, NULL, &out, NULL, NULL), 0);
	ck_assert_ptr_null(out);
}
END_TEST

static Suite *floor_suite(void)
{
	Suite *s = suite_create("policy_floor");
	TCase *t = tcase_create("floor");

	tcase_add_test(t, table_is_sound);
	tcase_add_test(t, floor_under_one_policy);
	tcase_add_test(t, floor_under_every_chain);
	tcase_add_test(t, mode_off_has_no_floor);
	tcase_add_loop_test(t, allow_read_table, 0, (int)(sizeof(acases) / sizeof(acases[0])));
	tcase_add_test(t, allow_read_layers);
	tcase_add_test(t, writable_roots_and_floor);
	tcase_add_test(t, workspace_inside_floor);
	tcase_add_test(t, sanitized_files);
	tcase_add_test(t, json_marks_floor);
	tcase_add_test(t, home_set);
	tcase_add_test(t, home_set_host_caches);
	tcase_add_test(t, home_set_xdg);
	tcase_add_test(t, home_set_xdg_data);
	tcase_add_test(t, home_set_xdg_outside);
	tcase_add_test(t, xdg_leads_table);
	tcase_add_test(t, home_set_xdg_lists);
	tcase_add_test(t, home_set_zdotdir);
	tcase_add_test(t, home_set_prefix);
	tcase_add_test(t, home_set_xdg_too_long);
	tcase_add_test(t, xdg_list_leads);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(floor_suite)
