/* The home persistence set: what in a home runs code later, outside the sandbox, when
 * the host's next shell, login, git, editor, desktop session or tool starts. When the
 * home is the workspace (or a writable tree holds it), these stay read-only and cannot
 * be created; the rest of the home is the command's to change. The one list: the
 * launch scan (linux/scan_home.c), --dry-run's reasons (plan/), `halo-run hook`'s file
 * tools (hook/files.c) and `halo-run verify` all take it from here. The guard's own
 * names (policy/guard.c: agent and IDE directories) belong to it too. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "policy/policy_int.h"

static const struct policy_home_entry home_set[] = {
    /* Shells: every start-up and logout file of each. */
    {".bashrc", "bash runs it at every interactive start"},
    {".bash_profile", "bash runs it at every login"},
    {".bash_login", "bash runs it at login when .bash_profile is absent"},
    {".profile", "login shells (sh, dash, bash) run it"},
    {".bash_logout", "bash runs it at every logout"},
    {".bash_aliases", "Debian's default .bashrc sources it"},
    {".zshenv", "zsh runs it at every start, scripts included"},
    {".zprofile", "zsh runs it at every login"},
    {".zshrc", "zsh runs it at every interactive start"},
    {".zlogin", "zsh runs it at every login"},
    {".zlogout", "zsh runs it at every logout"},
    /* zsh runs a start-up file's compiled twin instead when it is the newer one, and
     * compinit sources its dump (review 16). */
    {".zshenv.zwc", "zsh runs it instead of .zshenv when it is newer"},
    {".zprofile.zwc", "zsh runs it instead of .zprofile when it is newer"},
    {".zshrc.zwc", "zsh runs it instead of .zshrc when it is newer"},
    {".zlogin.zwc", "zsh runs it instead of .zlogin when it is newer"},
    {".zlogout.zwc", "zsh runs it instead of .zlogout when it is newer"},
    {".zcompdump", "zsh's compinit sources it at every interactive start"},
    {".zcompdump.zwc", "zsh's compinit loads it instead of .zcompdump when it is newer"},
    {".config/fish", "fish runs config.fish, conf.d/ and functions/ from it"},
    {".config/environment.d", "systemd sets the user session's environment from it"},
    {".pam_environment", "PAM sets the login environment from it"},
    {".cargo/env", "the start-up lines rustup writes source it"},
    /* git's global configuration, in both places git reads it. */
    {".gitconfig", "git's global config (core.pager, aliases, hooks) runs programs"},
    {".config/git", "git's second global config (config, attributes, hooks)"},
    /* The usual PATH directories, on PATH or not (a login adds some when they exist). */
    {".local/bin", "on PATH: a program planted there runs instead of the real one"},
    {"bin", "on PATH (Debian's .profile adds it when it exists)"},
    {".cargo/bin", "on PATH: cargo-installed programs"},
    {"go/bin", "on PATH: go-installed programs"},
    {".deno/bin", "on PATH: deno-installed programs"},
    {".bun/bin", "on PATH: bun-installed programs"},
    {".yarn/bin", "on PATH: yarn's global programs"},
    {".npm-global/bin", "on PATH: npm's global programs (prefix ~/.npm-global)"},
    /* User services and autostart. */
    {".config/systemd/user", "systemd starts user services and timers from it"},
    {".local/share/systemd/user", "systemd starts user services and timers from it"},
    {".config/autostart", "the desktop session starts its entries at login"},
    /* Editors' start-up files. */
    {".vimrc", "vim runs it at start"},
    {".exrc", "vi runs it at start"},
    {".vim", "vim loads plugin/ and ftplugin/ from it at start"},
    {".config/nvim", "neovim runs init.lua and plugins from it"},
    {".emacs", "emacs runs it at start"},
    {".emacs.d", "emacs runs init.el and packages from it"},
    {".config/emacs", "emacs runs init.el from it"},
    /* Tool configuration that names programs to run. */
    {".cargo/config.toml", "cargo runs the runners, linkers and aliases it names"},
    {".cargo/config", "cargo's older name for config.toml"},
    {".gradle/init.d", "gradle runs every init script in it"},
    {".gradle/init.gradle", "gradle runs it before every build"},
    {".config/direnv", "direnv runs direnvrc and lib/ on every cd"},
    {".claude.json", "Claude Code starts the MCP servers it names"},
    {".config/opencode", "OpenCode starts the MCP servers and plugins it names"},
    {".config/go/env", "go's settings file: GOFLAGS=-toolexec runs a program per build"},
    {".gradle/gradle.properties", "gradle starts its JVM with the jvmargs (agents) it names"},
    {".mavenrc", "mvn sources it at every start"},
    {".docker/cli-plugins", "docker runs the plugins in it"},
    {".docker/config.json", "docker runs the credential helpers and plugin dirs it names"},
    {".npmrc", "npm runs the script-shell and node-options it names"},
    {".node_modules", "node loads modules from it when a project lacks them"},
    {".node_libraries", "node loads modules from it when a project lacks them"},
    {".rustup", "rustup runs the toolchains and overrides it holds"},
    {".bazelrc", "bazel takes flags (tool paths, startup options) from it"},
    {".sbt", "sbt loads global plugins and settings from it"},
    {".config/containers", "podman runs the runtimes and hooks it names"},
    {".config/husky",
     "husky 9's hooks source init.sh from it at every commit, in every repository"},
    {".huskyrc", "husky 4-8's hooks source it at every commit, in every repository"},
    /* Interpreters and tools that run a start-up file of the user's. */
    {".local/lib", "python runs .pth files and usercustomize in user site-packages at every start"},
    {".gdbinit", "gdb runs it at start"},
    {".config/gdb", "gdb runs gdbinit from it at start"},
    {".lesskey", "less takes LESSOPEN (a command) from it; git's pager is less"},
    {".less", "less's compiled lesskey file (LESSOPEN)"},
    {".config/lesskey", "less takes LESSOPEN (a command) from it; git's pager is less"},
    {".inputrc", "readline macros type commands into bash at a key press"},
    {".irbrc", "irb runs it at start"},
    {".pryrc", "pry runs it at start"},
    {".psqlrc", "psql runs it at start (\\! runs a shell command)"},
    {".sqliterc", "sqlite3 runs it at start (.shell runs a command)"},
    {".tmux.conf", "tmux runs it at start (run-shell)"},
    {".config/tmux", "tmux runs tmux.conf from it at start (run-shell)"},
    {".screenrc", "screen runs it at start (exec)"},
    {".wgetrc", "wget runs the use_askpass program it names"},
    {".mailcap", "mail and file openers run the commands it names"},
    {".forward", "the mail system pipes mail to the commands it names"},
    {".ssh", "ssh runs ProxyCommand/LocalCommand from config; rc and authorized_keys"},
    /* halo-run's own: a policy a sandbox wrote there would be the next launch's. */
    {".config/halo", "halo-run reads the user's policy from it at every launch"},
    /* Shell plug-in managers and version managers the start-up files source. */
    {".bashrc.d", "Fedora's default .bashrc sources every file in it"},
    {".nvm", "the start-up lines nvm writes source nvm.sh from it"},
    {".oh-my-zsh", ".zshrc sources oh-my-zsh and its custom/ plugins from it"},
    {".sdkman", "the start-up lines sdkman writes source its init script"},
    {".pyenv", "the start-up lines pyenv writes run it; its shims are on PATH"},
    {".rbenv", "the start-up lines rbenv writes run it; its shims are on PATH"},
    {".asdf", "the start-up lines asdf writes source it; its shims are on PATH"},
    /* The X and desktop session. */
    {".xsessionrc", "Debian's X session sources it at login"},
    {".xsession", "the X session runs it at login"},
    {".xprofile", "display managers source it at login"},
    {".xinitrc", "startx runs it"},
    {".local/share/applications", "desktop entries: the desktop runs their Exec lines"},
    {".config/mimeapps.list", "picks which desktop entry opens each file type"},
    {".local/share/dbus-1", "D-Bus starts the user services it names on demand"},
    {".local/share/flatpak/exports",
     "flatpak puts it on XDG_DATA_DIRS: D-Bus, systemd and the desktop run what it exports"},
    {".config/dconf", "the desktop's settings: shell extensions, key bindings that run commands"},
    {".config/plasma-workspace", "KDE sources env/ and runs shutdown/ scripts from it"},
    /* Data directories whose files run like start-up files. */
    {".local/share/nvim", "neovim loads plugin/ and packages from its site directory"},
    {".local/share/fish", "fish runs vendor_conf.d/ and completions from it"},
    {".local/share/bash-completion", "bash-completion runs its completions at a tab press"},
    {".bash_completion", "bash-completion sources it in every interactive bash"},
    {".ipython", "ipython runs profile_default/startup/ at every start"},
    {".jupyter", "jupyter runs its *_config.py files at start"},
    /* Review 15: more that runs at the next login, shell, prompt or interpreter start. */
    {".config/zsh", "zsh reads its start-up files there when ZDOTDIR names it"},
    {".config/sway", "sway runs its exec lines at login"},
    {".config/i3", "i3 runs its exec lines at login"},
    {".config/hypr", "Hyprland runs its exec lines at login"},
    {".config/autostart-scripts", "KDE runs the scripts in it at login"},
    {".config/starship.toml", "starship runs its custom modules' commands at every prompt"},
    {".config/kitty", "kitty runs the programs its config names"},
    {".config/wezterm", "wezterm runs its lua config at start"},
    {".wezterm.lua", "wezterm runs it at start"},
    {".config/powershell", "pwsh runs its profile at start"},
    {".Rprofile", "R runs it at every start"},
    {".julia/config", "julia runs startup.jl at every start"},
    {".ghci", "ghci runs it at start"},
    {".yarnrc", "yarn 1 runs the yarn-path it names"},
    {".config/Code/User", "VS Code's settings and tasks name programs it runs"},
    {".vscode-server", "VS Code Remote runs its server and extensions from it"},
    {".local/share/jupyter", "jupyter starts the kernels (argv) it names"},
    /* Review 16: what zsh's start-up files source from their plug-in managers. */
    {".p10k.zsh", "powerlevel10k's .zshrc lines source it at every interactive start"},
    {".zprezto", "prezto's .zshrc lines source it and its modules"},
    {".cache/prezto/zcompdump", "prezto's compinit sources it at every interactive start"},
    {".zim", "zim's .zshrc lines source its init.zsh and modules"},
    {".zimrc", "zim builds its init.zsh from the modules it names"},
    {".zsh_plugins.zsh", "antidote's .zshrc lines source it"},
    {".zsh_plugins.txt", "antidote builds .zsh_plugins.zsh from the plug-ins it names"},
    {".antidote", "antidote's .zshrc lines source it"},
    {".local/share/zinit", "zinit's .zshrc lines source it and its plug-ins"},
    {".zinit", "zinit's older home: its .zshrc lines source it"},
    {".antigen", "antigen's .zshrc lines source its plug-ins from it"},
    {".zplug", "zplug's .zshrc lines source it and its plug-ins"},
    {".zsh", "where zsh plug-ins are installed by hand and sourced from .zshrc"},
    {".zfunc", "on zsh's fpath: its functions and completions are autoloaded"},
};

/* The host's own tool caches (review 20: with the home as the workspace, cargo's
 * unpacked sources, the go module and build caches, maven's and gradle's jars,
 * pre-commit's hook repositories and npx's packages were writable, and the host's next
 * build or commit ran what was planted). Under `caches: isolated` (and off) the
 * command's tools use the sandbox's own (env/caches.c), so these stay read-only, as
 * docs/caches.md says; `caches: host` binds them writable on purpose
 * (policy_xdg.host_caches leaves them out). env/caches.c's runner_cache_host_dirs,
 * with ~/.cache taken by what in it holds code rather than whole: the sandbox's own
 * caches live beneath it. */
static const struct policy_home_entry home_caches[] = {
    {".npm", "npm's cache and npx's packages: the host's npm installs and runs them"},
    {".cargo/registry", "cargo's crate sources: the host's builds compile them"},
    {".cargo/git", "cargo's git dependencies: the host's builds compile them"},
    {"go/pkg/mod", "the go module cache: the host's builds compile it"},
    {".cache/go-build", "go's build cache: objects the host's go links into programs"},
    {".m2/repository", "maven's jars: the host's builds run them"},
    {".gradle/caches", "gradle's jars and plug-ins: the host's builds run them"},
    {".gradle/wrapper", "the gradle distributions gradlew runs"},
    {".local/share/pnpm/store", "pnpm's store: linked into the host's node_modules"},
    {".yarn/berry", "yarn's global cache: the host's installs unpack it"},
    {".cache/yarn", "yarn 1's cache: the host's installs unpack it"},
    {".bun/install/cache", "bun's cache: the host's installs unpack it"},
    {".cache/pip", "pip's wheels: the host's installs unpack them"},
    {".cache/uv", "uv's cache: the host's environments link it"},
    {".cache/pypoetry", "poetry's cache and virtualenvs: the host runs them"},
    {".cache/pre-commit", "pre-commit's hook repositories: the host's commits run them"},
    {".cache/ccache", "ccache's objects: linked into the host's builds"},
    {".ccache", "ccache's objects: linked into the host's builds"},
    {".cache/node-gyp", "node-gyp's headers: compiled into the host's native modules"},
    {".cache/ms-playwright", "playwright's browsers: the host's tests run them"},
    {".cache/puppeteer", "puppeteer's browsers: the host's tests run them"},
    {".cache/deno", "deno's module cache: the host's deno runs it"},
    {".cache/bazel", "bazel's output base: the host's builds run it"},
};

const struct policy_home_entry *policy_home_set(size_t *n)
{
	*n = sizeof(home_set) / sizeof(home_set[0]);
	return home_set;
}

/* `dir` lexically beneath `home` (not the home itself): its part below the home
 * (path_rel drops the slashes and "." components it may start with). */
static const char *below_home(const char *dir, size_t len, const char *home)
{
	size_t hl = strlen(home);

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (len <= hl + 1 || strncmp(dir, home, hl) != 0 || dir[hl] != '/')
		return NULL;
	return dir + hl + 1;
}

/* A PATH entry as a relative name: empty and "." components dropped (the same
 * directory to the kernel, whatever links there are: review, $HOME//tools/bin and
 * $HOME/./tools/bin left ~/tools/bin writable), none ".." (which a link on the way
 * would make another place), something left, and not longer than out. */
static bool path_rel(const char *rel, size_t len, char *out, size_t n)
{
	size_t k = 0, o = 0;

	for (size_t i = 0; i < len; i = k + 1) {
		k = i;
		while (k < len && rel[k] != '/')
			k++;
		if (k == i || (k - i == 1 && rel[i] == '.'))
			continue;
		if (k - i == 2 && rel[i] == '.' && rel[i + 1] == '.')
			return false;
		if (o + (o > 0) + (k - i) >= n)
			return false;
		if (o > 0)
			out[o++] = '/';
		memcpy(out + o, rel + i, k - i);
		o += k - i;
	}
	out[o] = '\0';
	return o > 0;
}

/* An entry under ~/.config also where $XDG_CONFIG_HOME puts it, and one under
 * ~/.local/share where $XDG_DATA_HOME does (git, fish, systemd, neovim, D-Bus and the
 * rest read there when it is set): xrel[k] is that directory relative to the home. */
static const char *const xdg_base[2] = {".config", ".local/share"};
enum { XDG_ZDOTDIR = 2 }; /* each_xdg_dir's kind for $ZDOTDIR */

static int xdg_one(char xrel[2][POLICY_PATH_MAX], const struct policy_home_entry *h,
		   int (*fn)(const char *rel, const char *why, void *arg), void *arg)
{
	char rel[POLICY_PATH_MAX];

	for (int k = 0; k < 2; k++) {
		size_t bl = strlen(xdg_base[k]);
		int rc;

		if (!xrel[k][0] || strncmp(h->rel, xdg_base[k], bl) != 0 || h->rel[bl] != '/' ||
		    strcmp(xrel[k], xdg_base[k]) == 0)
			continue;
		/* past PATH_MAX: an entry that cannot be judged fails the walk (review 11:
		 * one left out was writable) */
		if (snprintf(rel, sizeof(rel), "%s/%s", xrel[k], h->rel + bl + 1) >=
		    (int)sizeof(rel))
			return -ENAMETOOLONG;
		if ((rc = fn(rel, h->why, arg)) != 0)
			return rc;
	}
	return 0;
}

int policy_home_set_each(const char *home, const char *path_env,
			 int (*fn)(const char *rel, const char *why, void *arg), void *arg)
{
	return policy_home_set_each_xdg(home, path_env, NULL, fn, arg);
}

/* Each XDG directory xdg names, with its kind k (0: config, 1: data, XDG_ZDOTDIR):
 * $XDG_CONFIG_HOME, $XDG_DATA_HOME, $ZDOTDIR, then each absolute entry of
 * $XDG_CONFIG_DIRS and $XDG_DATA_DIRS (systemd's user units, D-Bus services, desktop
 * entries and autostart are read from those lists too). */
static int each_xdg_dir(const struct policy_xdg *xdg,
			int (*one)(const char *dir, size_t len, int k, void *ctx), void *ctx)
{
	const char *single[2] = {xdg->config, xdg->data},
		   *lists[2] = {xdg->config_dirs, xdg->data_dirs};
	int rc;

	for (int k = 0; k < 2; k++)
		if (single[k] && single[k][0] == '/' &&
		    (rc = one(single[k], strlen(single[k]), k, ctx)))
			return rc;
	for (const char *p = xdg->zdotdir; p && *p;) { /* every place it may be */
		size_t len = strcspn(p, ":");
		if (p[0] == '/' && (rc = one(p, len, XDG_ZDOTDIR, ctx)) != 0)
			return rc;
		p += len;
		p += *p == ':';
	}
	for (int k = 0; k < 2; k++)
		for (const char *p = lists[k]; p && *p;) {
			size_t len = strcspn(p, ":");
			if (p[0] == '/' && (rc = one(p, len, k, ctx)) != 0)
				return rc;
			p += len;
			p += *p == ':';
		}
	return 0;
}

struct xdg_walk {
	const char *home;	  /* policy_home_set_each_xdg's */
	const char *const *homes; /* policy_home_set_each_xdg_outside's */
	size_t n_homes;
	int (*fn)(const char *rel, const char *why, void *arg);
	void *arg;
};

/* zsh's start-up files, their compiled twins, compinit's dump and the plug-in
 * managers' files that go beside them (prezto, zim, antidote, powerlevel10k write
 * theirs to ${ZDOTDIR:-$HOME}): the home's entries whose name starts with ".z", and
 * .p10k.zsh, which zsh reads from $ZDOTDIR instead of the home when it is set (review
 * 16: ZDOTDIR=~/dotfiles/zsh left them writable in a home workspace). */
static bool zdotdir_entry(const char *rel)
{
	return strncmp(rel, ".z", 2) == 0 || strcmp(rel, ".p10k.zsh") == 0;
}

/* Those entries where $ZDOTDIR (xrel, relative) puts them. */
static int zdotdir_entries(const char *xrel, const struct xdg_walk *w)
{
	char rel[POLICY_PATH_MAX];
	int rc;

	for (size_t i = 0; i < sizeof(home_set) / sizeof(home_set[0]); i++) {
		if (!zdotdir_entry(home_set[i].rel))
			continue;
		if (snprintf(rel, sizeof(rel), "%s/%s", xrel, home_set[i].rel) >= (int)sizeof(rel))
			return -ENAMETOOLONG;
		if ((rc = w->fn(rel, home_set[i].why, w->arg)) != 0)
			return rc;
	}
	return 0;
}

/* The set's entries under the base of kind k, where xrel (relative) puts them. */
static int xdg_entries(const char *xrel, int k, const struct xdg_walk *w)
{
	char pair[2][POLICY_PATH_MAX] = {"", ""};
	int rc;

	if (k == XDG_ZDOTDIR)
		return zdotdir_entries(xrel, w);
	snprintf(pair[k], sizeof(pair[k]), "%s", xrel);
	for (size_t i = 0; i < sizeof(home_set) / sizeof(home_set[0]); i++)
		if ((rc = xdg_one(pair, &home_set[i], w->fn, w->arg)) != 0)
			return rc;
	return 0;
}

/* One beneath the home: its entries relative to the home. */
static int home_dir_one(const char *dir, size_t len, int k, void *ctx)
{
	const struct xdg_walk *w = ctx;
	const char *r = below_home(dir, len, w->home);
	char xrel[POLICY_PATH_MAX];

	if (len >= sizeof(xrel))
		return -ENAMETOOLONG;
	if (!r || !path_rel(r, len - (size_t)(r - dir), xrel, sizeof(xrel)))
		return 0;
	return xdg_entries(xrel, k, w);
}

int policy_home_set_each_xdg(const char *home, const char *path_env, const struct policy_xdg *xdg,
			     int (*fn)(const char *rel, const char *why, void *arg), void *arg)
{
	size_t ng;
	const char *const *g = policy_guard_names(&ng);
	char rel[POLICY_PATH_MAX];
	const struct xdg_walk w = {home, NULL, 0, fn, arg};
	int rc;

	for (size_t i = 0; i < sizeof(home_set) / sizeof(home_set[0]); i++)
		if ((rc = fn(home_set[i].rel, home_set[i].why, arg)) != 0)
			return rc;
	for (size_t i = 0;
	     (!xdg || !xdg->host_caches) && i < sizeof(home_caches) / sizeof(home_caches[0]); i++)
		if ((rc = fn(home_caches[i].rel, home_caches[i].why, arg)) != 0)
			return rc;
	if (xdg && home && home[0] == '/' && (rc = each_xdg_dir(xdg, home_dir_one, (void *)&w)))
		return rc;
	for (size_t i = 0; i < ng; i++)
		if ((rc = fn(g[i],
			     "the persistence guard's name (agent, IDE or shell "
			     "configuration)",
			     arg)) != 0)
			return rc;
	for (const char *p = path_env; home && home[0] == '/' && p && *p;) {
		size_t len = strcspn(p, ":");
		/* bash expands a "~/" in a PATH entry with the home when it looks a command
		 * up (review 20: PATH=~/mybin:... ran a planted ~/mybin/ls); dash and zsh
		 * take it literally, which this cannot know: guarded under each home. */
		const char *r = p[0] == '/'				? below_home(p, len, home)
				: p[0] == '~' && len > 1 && p[1] == '/' ? p + 1
									: NULL;

		if (r && path_rel(r, len - (size_t)(r - p), rel, sizeof(rel)) &&
		    (rc = fn(rel, "a directory on the caller's PATH", arg)) != 0)
			return rc;
		p += len;
		p += *p == ':';
	}
	return 0;
}

/* An XDG directory outside every home (XDG_CONFIG_HOME=/data/cfg): git, systemd, the
 * desktop and the rest read there, so each ~/.config (~/.local/share) entry is an entry
 * there too (review 9: git's global config, autostart and user services there were
 * writable from a workspace that held it). fn gets each relative to "/". One beneath a
 * home is that home's (policy_home_set_each_xdg); one that is a home ($HOME itself)
 * is taken here. */
static int outside_dir_one(const char *dir, size_t len, int k, void *ctx)
{
	const struct xdg_walk *w = ctx;
	char xrel[POLICY_PATH_MAX];

	if (len >= sizeof(xrel))
		return -ENAMETOOLONG;
	for (size_t i = 0; i < w->n_homes; i++)
		if (w->homes[i] && w->homes[i][0] == '/' && below_home(dir, len, w->homes[i]))
			return 0;
	/* (a ".." in it: judged as it resolves, by the caller that resolves it) */
	if (!path_rel(dir + 1, len - 1, xrel, sizeof(xrel)) || !xrel[0])
		return 0;
	return xdg_entries(xrel, k, w);
}

int policy_home_set_each_xdg_outside(const char *const *homes, size_t n_homes,
				     const struct policy_xdg *xdg,
				     int (*fn)(const char *rel, const char *why, void *arg),
				     void *arg)
{
	const struct xdg_walk w = {NULL, homes, n_homes, fn, arg};

	return xdg ? each_xdg_dir(xdg, outside_dir_one, (void *)&w) : 0;
}

struct hit {
	const char *rel;
	const char *why;
};

static int hit_one(const char *rel, const char *why, void *arg)
{
	struct hit *h = arg;
	size_t n = strlen(rel);

	/* At or beneath the entry, by the path facts' case rule. */
	if (policy_name_eqn(h->rel, rel, n) && (h->rel[n] == '\0' || h->rel[n] == '/')) {
		h->why = why;
		return 1;
	}
	return 0;
}

const char *policy_home_set_hit(const char *home, const char *path_env, const char *abs,
				const char **entry)
{
	return policy_home_set_hit_xdg(home, path_env, NULL, abs, entry);
}

const char *policy_home_set_hit_xdg(const char *home, const char *path_env,
				    const struct policy_xdg *xdg, const char *abs,
				    const char **entry)
{
	struct hit h = {NULL, NULL};
	size_t hl;

	if (!home || home[0] != '/' || !abs)
		return NULL;
	hl = strlen(home);
	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (!policy_name_eqn(abs, home, hl) || abs[hl] != '/')
		return NULL;
	h.rel = abs + hl + 1;
	while (*h.rel == '/')
		h.rel++;
	if (!*h.rel)
		return NULL;
	if (policy_home_set_each_xdg(home, path_env, xdg, hit_one, &h) == -ENAMETOOLONG)
		h.why = POLICY_HOME_SET_TOO_LONG;
	if (h.why && entry)
		*entry = h.rel;
	return h.why;
}

const char *policy_home_set_hit_xdg_outside(const char *const *homes, size_t n_homes,
					    const struct policy_xdg *xdg, const char *abs)
{
	struct hit h = {NULL, NULL};

	if (!abs || abs[0] != '/')
		return NULL;
	h.rel = abs;
	while (*h.rel == '/')
		h.rel++;
	if (!*h.rel)
		return NULL;
	if (policy_home_set_each_xdg_outside(homes, n_homes, xdg, hit_one, &h) == -ENAMETOOLONG)
		return POLICY_HOME_SET_TOO_LONG;
	return h.why;
}

bool policy_home_in_tree(const char *home, const char *tree)
{
	return home && home[0] == '/' && tree && policy_path_beneath(home, tree);
}
