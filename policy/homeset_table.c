/* The home persistence set's table (policy/homeset.c walks it): one row per name,
 * relative to the home, a file or a directory, with why it runs code later on the
 * host. An entry under .config/ or .local/share/ is also one under $XDG_CONFIG_HOME,
 * $XDG_DATA_HOME and their *_DIRS lists (homeset.c adds those), and one whose name
 * starts with ".z" also one in $ZDOTDIR. */
#include <stddef.h>

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
    {"node_modules", "node's require() looks up the directory tree: every script in the home "
		     "that a module of its own lacks loads it from here (review 20)"},
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
    {".volta", "Volta's shims on PATH run the tools installed in it (review 20)"},
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
    {".cache/gitstatus",
     "gitstatus (powerlevel10k's) runs the gitstatusd it finds there at every interactive start"},
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
    /* Review 20: more that the host runs later from the home. */
    {".config/systemd/user.control", "systemd's first user unit path: it starts the units in it"},
    {".config/systemd/user.conf",
     "the user manager's settings (DefaultEnvironment: LD_PRELOAD for every user service)"},
    {".config/systemd/user.conf.d", "drop-ins to user.conf where the user manager reads them"},
    {".config/user-tmpfiles.d",
     "systemd-tmpfiles --user applies it at login (f+ %h/.bashrc rewrites a start-up file)"},
    {".local/share/user-tmpfiles.d", "systemd-tmpfiles --user applies it at login"},
    {".local/share/direnv/allow",
     "direnv's approvals: an .envrc approved there runs at the next cd into its directory"},
    {".config/mise", "mise runs the hooks, env scripts and tasks its global config names"},
    {".local/share/mise", "mise's installed tools and shims (on PATH with mise activate)"},
    {".mise.toml", "mise applies it in every directory below the home"},
    {"mise.toml", "mise applies it in every directory below the home"},
    {".config/vim", "vim (9.1) runs vimrc and loads plugin/ from it at start"},
    {".hgrc", "mercurial's config: aliases, hooks and extensions run programs"},
    {".config/hg", "mercurial's second config (hgrc): aliases, hooks and extensions"},
    {".config/jj", "jj's config: aliases, the pager and fix tools run programs"},
    {".config/gh/config.yml", "gh runs the pager, editor and shell aliases (!) it names"},
    {".local/share/gh/extensions", "gh runs the extensions in it as gh subcommands"},
    {".subversion/config", "svn runs the editor, diff and tunnel commands it names"},
    {".tcshrc", "tcsh runs it at every start"},
    {".cshrc", "csh (and tcsh without .tcshrc) runs it at every start"},
    {".login", "csh and tcsh run it at every login"},
    {".logout", "csh and tcsh run it at every logout"},
    {".kshrc", "ksh93 runs it at every interactive start (when $ENV is unset)"},
    {".mkshrc", "mksh runs it at every interactive start"},
    {".config/nushell", "nushell runs config.nu, env.nu and autoload/ from it at start"},
    {".xonshrc", "xonsh runs it at start"},
    {".config/xonsh", "xonsh runs rc.xsh and rc.d/ from it at start"},
    {".config/elvish", "elvish runs rc.elv and loads lib/ from it at start"},
    {".elvish", "elvish's older home: rc.elv and lib/ run at start"},
    {".local/share/elvish/lib", "elvish loads the modules rc.elv uses from it"},
    /* VS Code's forks and editions: settings and tasks name programs, extensions run. */
    {".config/Code - Insiders/User", "VS Code Insiders' settings and tasks name programs it runs"},
    {".config/VSCodium/User", "VSCodium's settings and tasks name programs it runs"},
    {".config/Cursor/User", "Cursor's settings and tasks name programs it runs"},
    {".config/Windsurf/User", "Windsurf's settings and tasks name programs it runs"},
    {".vscode-insiders", "VS Code Insiders runs the extensions in it (and argv.json)"},
    {".vscode-oss", "VSCodium runs the extensions in it (and argv.json)"},
    {".windsurf", "Windsurf runs the extensions in it"},
    {".vscode-server-insiders", "VS Code Insiders Remote runs its server and extensions from it"},
    {".vscodium-server", "VSCodium Remote runs its server and extensions from it"},
    {".cursor-server", "Cursor Remote runs its server and extensions from it"},
    {".windsurf-server", "Windsurf Remote runs its server and extensions from it"},
    /* Terminals and editors whose config names a shell or programs to run. */
    {".config/alacritty", "alacritty runs the shell and hint commands its config names"},
    {".config/alacritty.toml", "alacritty runs the shell and hint commands it names"},
    {".config/alacritty.yml", "alacritty (before 0.13) runs the shell it names"},
    {".alacritty.toml", "alacritty runs the shell and hint commands it names"},
    {".alacritty.yml", "alacritty (before 0.13) runs the shell it names"},
    {".config/foot", "foot runs the shell its foot.ini names"},
    {".config/ghostty", "ghostty runs the command its config names"},
    {".config/helix", "helix starts the language servers and formatters its config names"},
    {".config/zed", "zed starts the language servers and tasks its settings name"},
    /* Other start-up files. */
    {".bunfig.toml", "bun runs the preload scripts it names"},
    {".Renviron", "R sets its environment from it at every start (R_PROFILE_USER, R_LIBS_USER)"},
    {".lldbinit", "lldb runs it at start (script, platform shell)"},
    {".pdbrc", "pdb runs it at start (python statements)"},
    {".selected_editor",
     "Debian's sensible-editor runs the editor it names (crontab -e and others)"},
    {".terraformrc", "terraform runs the providers its dev_overrides and plugin dirs name"},
    {".config/pipewire", "pipewire loads the modules and runs the programs it names at login"},
    {".config/wireplumber", "wireplumber runs its lua scripts and settings at login"},
    {".config/bat", "bat runs the pager its config names"},
    /* Review 22: installed tools whose code the host runs (a pipx command's own script
     * was read-only, the venv it imports from writable: a .pth there ran on the host). */
    {".local/share/pipx", "pipx's venvs: the commands it puts on PATH import from them"},
    {".local/pipx", "pipx's older home (before 1.3): the venvs its commands import from"},
    {".local/share/uv/tools", "uv's tool venvs: the commands uv tool puts on PATH run from them"},
    {".local/share/uv/python", "uv's Python installations: uv's venvs and tools run them"},
    {".npm-global/lib", "npm's global packages (prefix ~/.npm-global): its programs run them"},
    {".bun/install/global", "bun's global packages: the programs in ~/.bun/bin run them"},
    /* (its store, beneath, is a tool cache: home_caches) */
    {".local/share/pnpm",
     "pnpm's home: its global programs (on PATH), packages (global/) and node (nodejs/)"},
    {".dotnet/tools", "on PATH: dotnet's global tools"},
    {".local/share/virtualenv", "virtualenv's seed wheels: installed into every new venv"},
    {".gem/ruby", "user gems (gem install --user-install): the host's ruby loads them"},
    {".mix/archives", "mix loads every archive in it at every start"},
    {".ghcup", "ghcup's toolchains (ghc, cabal) and env, which the start-up lines source"},
    {".opam", "opam's switches and opam-init, which the start-up lines source"},
    {".elan", "elan's lean toolchains and env, which the start-up lines source"},
    {".rye", "rye's shims, toolchains and env, which the start-up lines source"},
    {".atuin/bin", "atuin's program and env, which the start-up lines source"},
    {".deno/env", "the start-up lines deno's installer writes source it"},
    {".fzf.bash", "the start-up lines fzf's installer writes source it in bash"},
    {".fzf.zsh", "the start-up lines fzf's installer writes source it in zsh"},
    {".local/share/gnome-shell/extensions", "GNOME Shell runs the extensions in it at login"},
    {".local/share/nautilus-python/extensions", "nautilus runs the python extensions in it"},
    {".local/share/plasma/plasmoids", "KDE Plasma runs the widgets in it at login"},
    {".config/JetBrains", "JetBrains IDEs' settings: vmoptions (-javaagent), tools they run"},
    {".local/share/JetBrains", "JetBrains IDEs load the plug-ins in it at start"},
    {".cache/JetBrains",
     "JetBrains IDEs' system directories: the next start runs plugins/action.script"},
    {".cache/nvim/luac", "neovim's vim.loader runs the compiled lua in it instead of the plug-ins"},
    {".R/Makevars", "R's package builds run the compilers and flags it names"},
    {".config/lf", "lf runs lfrc and the previewers and commands it names"},
    {".config/user-dirs.dirs", "xdg-user-dir and the session's scripts source it (shell)"},
    {".gradle/init.gradle.kts", "gradle runs it before every build"},
};

const struct policy_home_entry *policy_home_set(size_t *n)
{
	*n = sizeof(home_set) / sizeof(home_set[0]);
	return home_set;
}

/* Names the host's zsh sources whose end varies (host, version, user): kept by their
 * start (policy_home_prefix_name). A prefix is a prefix: .zcompdumpling is kept too,
 * since ZSH_COMPDUMP can name the dump anything and no tool but compinit makes such a
 * name. ~/.cache as named, as the table's .cache/ entries are (no $XDG_CACHE_HOME). */
#define BESIDE "a name beside it that a host script writes and renames over it (.bashrc.tmp)"
static const struct policy_home_prefix home_prefixes[] = {
    {"", ".zcompdump",
     "zsh's compinit sources the dump at every interactive start, oh-my-zsh's named "
     ".zcompdump-HOST-VERSION (and its .zwc twin)"},
    /* (review 30) A name a host script takes for its temp file is predictable: made by
     * the command first, the script's `> ~/.bashrc.tmp` writes into the command's own
     * file and its mv puts that over .bashrc, the command still holding it open. */
    {"", ".bashrc.", BESIDE},
    {"", ".bash_profile.", BESIDE},
    {"", ".bash_login.", BESIDE},
    {"", ".bash_logout.", BESIDE},
    {"", ".bash_aliases.", BESIDE},
    {"", ".profile.", BESIDE},
    {"", ".zshenv.", BESIDE},
    {"", ".zprofile.", BESIDE},
    {"", ".zshrc.", BESIDE},
    {"", ".zlogin.", BESIDE},
    {"", ".zlogout.", BESIDE},
    {"", ".gitconfig.", BESIDE},
    /* (review 27: not only the instant prompt and the dump; its prompt cache
     * p10k-USER/prompt-N has fields the instant prompt expands with (e)) */
    {".cache", "p10k-",
     "powerlevel10k sources p10k-instant-prompt-USER.zsh first thing and p10k-dump-USER.zsh, "
     "and expands the fields of p10k-USER/prompt-N, at every interactive start"},
};

const struct policy_home_prefix *policy_home_prefixes(size_t *n)
{
	*n = sizeof(home_prefixes) / sizeof(home_prefixes[0]);
	return home_prefixes;
}

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
    /* Review 22: more caches that hold code the host runs. */
    {".cache/node/corepack", "corepack's package managers: the host's pnpm and yarn run from it"},
    {".cache/Cypress", "Cypress's app: the host's tests run it"},
    {".cache/selenium", "selenium-manager's drivers and browsers: the host's tests run them"},
    {".cache/bazelisk", "bazelisk's bazel downloads: the host's bazel runs them"},
    {".cache/coursier", "coursier's jars: the host's scala builds and apps run them"},
    {".nuget/packages", "NuGet's packages: the host's dotnet builds run their targets"},
    {".cache/pipx", "pipx run's venvs: the host's pipx run runs them"},
    {".cache/pnpm", "pnpm dlx's packages: the host's pnpm dlx runs them"},
    {".cache/torch/hub", "torch.hub's repositories: torch.hub.load runs their hubconf.py"},
    {".cache/composer", "composer's package files: the host's installs unpack them"},
    {".cache/nix",
     "nix's fetched flake sources (tarball-cache, gitv3): the host's nix builds them"},
};

const struct policy_home_entry *policy_home_caches(size_t *n)
{
	*n = sizeof(home_caches) / sizeof(home_caches[0]);
	return home_caches;
}

/* What uv, pnpm and bun hard-link between their caches, their installed tools and
 * projects' environments: one file under several names by design (review 24). */
static const char *const linked_stores[] = {
    ".local/share/pnpm",
    ".local/share/uv",
    ".cache/uv",
    ".bun/install",
};

const char *const *policy_home_linked_stores(size_t *n)
{
	*n = sizeof(linked_stores) / sizeof(linked_stores[0]);
	return linked_stores;
}
