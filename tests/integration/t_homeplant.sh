#!/bin/bash
# The home as the workspace, attacked: from inside a sandbox whose workspace is the home,
# plant what the host's python, go, gdb, less (git's pager), readline, docker, maven,
# ssh, npm, X session, desktop, D-Bus, shell plug-in managers and XDG_CONFIG_HOME git
# would run later; then check on the host that nothing was created and nothing ran.
# Each entry is in the home persistence set (policy/homeset.c) or the floor.
#
# The home is the runner's scratch directory (HOME=$TMPDIR, never the real /root).
set -u
. "$IT/lib.sh"
H=$HOME
cd "$H" || exit 1
E="$TMPDIR/_stderr"
MARK=/var/tmp/halo-homeplant-ran.$$.$AS
rm -f "$MARK"
trap 'rm -f "$MARK"' EXIT

# Present before: ~/.config, ~/.local/share, an XDG config home the caller names, a repo.
mkdir -p .config .local/share .local/lib xdg xdgdata repo
git -C repo init -q && git -C repo -c user.name=t -c user.email=t@e.invalid \
	commit -q --allow-empty -m init || exit 1

run_home() {
	OUT=$(cd "$H" && XDG_CONFIG_HOME="$H/xdg" XDG_DATA_HOME="$H/xdgdata" timeout -k 2 60 "$HALO" -- sh -c "$1" \
		2>"$E" </dev/null)
	RC=$?
}

# hookw CWD FILE [VAR=VALUE...]: what `halo-run hook` says of a Claude Code Write of FILE
hookw() {
	local cwd=$1 file=$2
	shift 2
	python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$cwd" "$file" |
		env "$@" "$HALO" hook 2>&1 >/dev/null
}

PY=$(python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null)
PLANT=$(
	cat <<EOF
T="touch $MARK"
mkdir -p ~/.local/lib/$PY/site-packages && echo "import os; os.system('\$T')" > ~/.local/lib/$PY/site-packages/x.pth
echo "import os; os.system('\$T')" > ~/.local/lib/$PY/site-packages/usercustomize.py
mkdir -p ~/.config/go && echo "GOFLAGS=-toolexec=/tmp/x" > ~/.config/go/env
echo "shell \$T" > ~/.gdbinit
mkdir -p ~/.config/gdb && echo "shell \$T" > ~/.config/gdb/gdbinit
printf '#env\nLESSOPEN=|%s %%s\n' "\$T" > ~/.config/lesskey
printf '#env\nLESSOPEN=|%s %%s\n' "\$T" > ~/.lesskey
printf '"\\\\C-m": "\$T\\\\n"\n' > ~/.inputrc
mkdir -p ~/.docker/cli-plugins && echo x > ~/.docker/cli-plugins/docker-x
echo "\$T" > ~/.mavenrc
mkdir -p ~/.ssh && echo "Host *\n ProxyCommand \$T" > ~/.ssh/config
echo "node-options=--require=/tmp/x.js" > ~/.npmrc
mkdir -p ~/.node_modules && echo x > ~/.node_modules/x.js
echo "\$T" > ~/.xsessionrc; echo "\$T" > ~/.xprofile; echo "\$T" > ~/.xinitrc; echo "\$T" > ~/.xsession
mkdir -p ~/.local/share/applications && echo x > ~/.local/share/applications/x.desktop
echo x > ~/.config/mimeapps.list
mkdir -p ~/.local/share/dbus-1/services && echo x > ~/.local/share/dbus-1/services/x.service
mkdir -p ~/.bashrc.d && echo "\$T" > ~/.bashrc.d/x.sh
mkdir -p ~/.nvm && echo "\$T" > ~/.nvm/nvm.sh
mkdir -p ~/.oh-my-zsh/custom && echo "\$T" > ~/.oh-my-zsh/custom/x.zsh
mkdir -p ~/xdg/git && printf '[alias]\n\tlg = !%s\n[core]\n\tpager = %s\n' "\$T" "\$T" > ~/xdg/git/config
echo "\$T" > ~/.irbrc; echo "\\\\! \$T" > ~/.psqlrc; echo "run-shell '\$T'" > ~/.tmux.conf
echo "use_askpass = /tmp/x" > ~/.wgetrc
mkdir -p ~/.local/share/nvim/site/plugin && echo x > ~/.local/share/nvim/site/plugin/x.vim
mkdir -p ~/.local/share/fish/vendor_conf.d && echo "\$T" > ~/.local/share/fish/vendor_conf.d/x.fish
mkdir -p ~/.local/share/bash-completion/completions && echo "\$T" > ~/.local/share/bash-completion/completions/git
echo "\$T" > ~/.bash_completion
mkdir -p ~/.ipython/profile_default/startup && echo x > ~/.ipython/profile_default/startup/x.py
mkdir -p ~/.config/dconf && echo x > ~/.config/dconf/user
mkdir -p ~/.config/husky && echo x > ~/.config/husky/init.sh
echo x > ~/.huskyrc
mkdir -p ~/xdgdata/systemd/user && echo x > ~/xdgdata/systemd/user/x.service
mkdir -p ~/xdgdata/nvim/site/plugin && echo x > ~/xdgdata/nvim/site/plugin/x.vim
echo notes > ~/xdgdata/notes.txt
echo done
EOF
)
run_home "$PLANT"
expect "the planting run ran" done "$(tail -n1 <<<"$OUT")"
for f in ".local/lib/$PY/site-packages" .config/go/env .gdbinit .config/gdb .config/lesskey \
	.lesskey .inputrc .docker/cli-plugins .mavenrc .ssh/config .npmrc .node_modules \
	.xsessionrc .xprofile .xinitrc .xsession .local/share/applications .config/mimeapps.list \
	.local/share/dbus-1/services .bashrc.d .nvm .oh-my-zsh xdg/git .irbrc .psqlrc \
	.tmux.conf .wgetrc .local/share/nvim .local/share/fish .local/share/bash-completion \
	.bash_completion .ipython .config/dconf xdgdata/systemd/user xdgdata/nvim .config/husky \
	.huskyrc; do
	expect "absent on the host: ~/$f" absent \
		"$([ -e "$H/$f" ] || [ -L "$H/$f" ] && echo present || echo absent)"
done

expect "\$XDG_DATA_HOME: an ordinary file there is written" notes "$(cat "$H/xdgdata/notes.txt" 2>/dev/null)"

# Rename tricks: a parent of an entry renamed away and rebuilt.
run_home 'mv ~/.local ~/.local.old; mkdir -p ~/.local/lib/'"$PY"'/site-packages &&
	echo "import os" > ~/.local/lib/'"$PY"'/site-packages/y.pth;
	mv ~/.config ~/.config.old; mkdir -p ~/.config/git && echo x > ~/.config/git/config;
	mv ~/xdg ~/xdg.old; mkdir -p ~/xdg/git && printf "[alias]\\n\\tlg = !touch '"$MARK"'\\n" > ~/xdg/git/config; echo done'
expect "the rename run ran" done "$(tail -n1 <<<"$OUT")"
for f in .local.old .config.old xdg.old ".local/lib/$PY" .config/git xdg/git; do
	expect "rename trick: absent on the host: ~/$f" absent \
		"$([ -e "$H/$f" ] || [ -L "$H/$f" ] && echo present || echo absent)"
done

# The host's tools with this HOME run nothing planted.
if [ -n "$PY" ]; then HOME=$H python3 -c 'pass' </dev/null >/dev/null 2>&1; fi
HOME=$H XDG_CONFIG_HOME=$H/xdg git -C "$H/repo" lg >/dev/null 2>&1
HOME=$H XDG_CONFIG_HOME=$H/xdg git -C "$H/repo" log -1 >/dev/null 2>&1
HOME=$H bash -i -c true </dev/null >/dev/null 2>&1
expect "the host's python, git (XDG config home) and bash -i ran nothing planted" absent \
	"$([ -e "$MARK" ] && echo present || echo absent)"

# Another workspace's isolated cache: the directory of all caches is hidden, and the
# directories above it cannot be moved aside so that the next launch hides a fresh one
# and leaves the old one (with every other workspace's cache) in plain sight.
mkdir -p "$H/w1"
(cd "$H/w1" && "$HALO" --quiet -- sh -c 'mkdir -p "$GOCACHE" && echo s > "$GOCACHE/other"')
(cd "$H" && "$HALO" --quiet -- sh -c 'mv ~/.cache/halo-run ~/.cache/hr.old; mv ~/.cache ~/.cache.old;
	mkdir -p ~/.cache' >/dev/null 2>&1)
OUT=$(cd "$H" && "$HALO" --quiet -- sh -c 'cat ~/.cache.old/hr.old/caches/w1-*/go-build/other \
	~/.cache/hr.old/caches/w1-*/go-build/other 2>/dev/null; echo end' 2>/dev/null)
expect "home workspace: ~/.cache moved aside, another workspace's cache still unreadable" \
	end "$OUT"
expect "home workspace: ~/.cache and ~/.cache/halo-run stay where they are" absent \
	"$([ -e "$H/.cache.old" ] || [ -e "$H/.cache/hr.old" ] && echo present || echo absent)"
rm -rf "$H/w1"

# --dry-run and the hook's file tools judge the XDG config home the same way.
OUT=$(cd "$H" && XDG_CONFIG_HOME="$H/xdg" "$HALO" --dry-run -- true 2>/dev/null)
expect_match "dry-run: \$XDG_CONFIG_HOME/git is in the home set" \
	"$H/xdg/git \(home set: git's second global config" "$OUT"
hook_ev() {
	python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$H" "$1" |
		XDG_CONFIG_HOME="$H/xdg" XDG_DATA_HOME="$H/xdgdata" "$HALO" hook 2>&1 >/dev/null
}
expect_match "hook: Write \$XDG_CONFIG_HOME/git/config is blocked" \
	"~/xdg/git/config is in the home.s persistence set" "$(hook_ev "$H/xdg/git/config")"
expect_match "hook: Write into python's user site is blocked" \
	"~/.local/lib/x.pth is in the home.s persistence set" "$(hook_ev "$H/.local/lib/x.pth")"
expect "hook: Write ~/xdg/notes is allowed" "" "$(hook_ev "$H/xdg/notes")"
expect_match "hook: Write \$XDG_DATA_HOME/systemd/user/x.service is blocked" \
	"~/xdgdata/systemd/user/x.service is in the home.s persistence set" "$(hook_ev "$H/xdgdata/systemd/user/x.service")"
OUT=$(cd "$H" && XDG_DATA_HOME="$H/xdgdata" "$HALO" --dry-run -- true 2>/dev/null)
expect_match "dry-run: \$XDG_DATA_HOME/systemd/user is in the home set" "$H/xdgdata/systemd/user \(home set: " "$OUT"
# The set holds wherever a writable tree reaches into the home, not only when the home
# is the workspace: a writable root inside it (~/.local with ~/.local/bin on PATH), and a
# link in the home into the workspace (~/.config -> a dotfiles checkout being edited).
printf 'sandbox:\n  mode: workspace-write\n  writableRoots: [%s/.local]\n' "$H" >"$TMPDIR/local.yaml"
mkdir -p "$H/.local/bin" "$TMPDIR/lws"
OUT=$(cd "$TMPDIR/lws" && PATH="$H/.local/bin:$PATH" timeout -k 2 60 "$HALO" --policy "$TMPDIR/local.yaml" -- sh -c \
	'echo x >~/.local/bin/halo-planted; echo "bin=$?"; mkdir -p ~/.local/share/systemd/user; echo "sd=$?"; echo x >~/.local/fine; echo "ok=$?"' 2>"$E" </dev/null)
expect_match "writable root ~/.local: a program on PATH cannot be planted" '^bin=[1-9]' "$(grep '^bin=' <<<"$OUT")"
expect_match "... nor a user service made" '^sd=[1-9]' "$(grep '^sd=' <<<"$OUT")"
expect "... the rest of the root is writable" "ok=0" "$(grep '^ok=' <<<"$OUT")"
expect "host: nothing planted on PATH" no "$([ -e "$H/.local/bin/halo-planted" ] && echo yes || echo no)"
H2=$TMPDIR/h2
mkdir -p "$H2" "$TMPDIR/dotfiles/config/autostart"
ln -sfn "$TMPDIR/dotfiles/config" "$H2/.config"
OUT=$(cd "$TMPDIR/dotfiles" && HOME=$H2 timeout -k 2 60 "$HALO" -- sh -c \
	'echo x >"$HOME/.config/autostart/halo.desktop"; echo "as=$?"; echo x >README; echo "ok=$?"' 2>"$E" </dev/null)
expect_match "~/.config linked into the workspace: autostart stays read-only" '^as=[1-9]' "$(grep '^as=' <<<"$OUT")"
expect "... the workspace is writable" "ok=0" "$(grep '^ok=' <<<"$OUT")"
expect "host: no autostart entry made" no "$([ -e "$TMPDIR/dotfiles/config/autostart/halo.desktop" ] && echo yes || echo no)"
# Review 7: a link in the home to a workspace directory not made yet (~/.vault ->
# ws/vault), with five protected paths below it (enough for the scan to list the way
# there): none of the five can be made through the workspace. Before, the listing of a
# way through the dangling link said "missing, no link on the way" from the fourth on.
H3=$TMPDIR/h3
mkdir -p "$H3" "$TMPDIR/vws"
ln -sfn "$TMPDIR/vws/vault" "$H3/.vault"
printf 'sandbox:\n  protectedPaths: ["~/.vault/keys/a", "~/.vault/keys/b", "~/.vault/keys/c", "~/.vault/keys/d", "~/.vault/keys/e"]\n' >"$TMPDIR/vault.yaml"
OUT=$(cd "$TMPDIR/vws" && HOME=$H3 timeout -k 2 60 "$HALO" --policy "$TMPDIR/vault.yaml" -- sh -c \
	'mkdir -p vault/keys; for k in a b c d e; do echo k >vault/keys/$k 2>/dev/null && printf "%s " $k; done; echo end' 2>"$E" </dev/null)
expect "protected paths below a link to a directory not made yet: none made" "end" "$OUT"
expect "... none on the host" "" "$(ls -A "$TMPDIR/vws/vault/keys" 2>/dev/null)"
# A write into a masked floor directory (~/.ssh) is refused as the kernel would refuse
# it, with no word about git (the broker took the unsearchable mask for a hooks dir).
mkdir -p "$H/.ssh"
run_home 'echo x >~/.ssh/new-key; echo "rc=$?"'
expect "floor dir in the home: the write is refused" "rc=2" "$(grep '^rc=' <<<"$OUT")"
expect "... and no git-hooks warning is said" "" "$(grep -i 'git hooks\|hook in a git' "$E")"
expect "... nothing created on the host" no "$([ -e "$H/.ssh/new-key" ] && echo yes || echo no)"
# Review 9: XDG directories beneath no home (XDG_CONFIG_HOME=/var/tmp/x/cfg), in the
# workspace: git's global config, user services and desktop entries there are the home
# set's as much as under ~/.config, named so or through a link in the home; the hook
# and --dry-run judge them the same way.
X=$(mktemp -d /var/tmp/halo-xdgout.XXXXXX)
trap 'rm -f "$MARK"; rm -rf "$X"' EXIT
mkdir -p "$X/cfg/git" "$X/data" "$X/lcfg"
echo "[user]" >"$X/cfg/git/config"
ln -sfn "$X/lcfg" "$H/xdglink"
OUT=$(cd "$X" && XDG_CONFIG_HOME="$X/cfg" XDG_DATA_HOME="$X/data" timeout -k 2 60 "$HALO" -- sh -c \
	'echo "[core] fsmonitor=x" >>cfg/git/config; echo "g=$?"
	mkdir -p cfg/systemd/user 2>/dev/null; echo x >cfg/systemd/user/x.service; echo "s=$?"
	mkdir -p data/applications 2>/dev/null; echo x >data/applications/x.desktop; echo "d=$?"
	echo x >cfg/notes; echo "n=$?"' 2>"$E" </dev/null)
expect_match "XDG config home outside the home: its git config stays read-only" '^g=[1-9]' "$(grep '^g=' <<<"$OUT")"
expect_match "... no user service can be made there" '^s=[1-9]' "$(grep '^s=' <<<"$OUT")"
expect_match "... nor a desktop entry in the XDG data home" '^d=[1-9]' "$(grep '^d=' <<<"$OUT")"
expect "... the rest of it is writable" "n=0" "$(grep '^n=' <<<"$OUT")"
expect "host: the git config unchanged, nothing made" "[user] no no" \
	"$(cat "$X/cfg/git/config") $([ -e "$X/cfg/systemd/user/x.service" ] && echo yes || echo no) $([ -e "$X/data/applications/x.desktop" ] && echo yes || echo no)"
OUT=$(cd "$X" && XDG_CONFIG_HOME="$H/xdglink" timeout -k 2 60 "$HALO" -- sh -c \
	'mkdir -p lcfg/git 2>/dev/null; echo x >lcfg/git/config; echo "l=$?"' 2>"$E" </dev/null)
expect_match "XDG config home named in the home, a link out into the workspace: git config not made" \
	'^l=[1-9]' "$(grep '^l=' <<<"$OUT")"
xdg_hook() { hookw "$X" "$1" XDG_CONFIG_HOME="$X/cfg"; }
expect_match "hook: Write to the XDG config home's git config outside the home is blocked" \
	"$X/cfg/git/config is in the home.s persistence set" "$(xdg_hook "$X/cfg/git/config")"
expect "hook: Write $X/cfg/notes is allowed" "" "$(xdg_hook "$X/cfg/notes")"
OUT=$(cd "$X" && XDG_CONFIG_HOME="$X/cfg" "$HALO" --dry-run -- true 2>/dev/null)
expect_match "dry-run: the XDG config home outside the home: its git dir is in the home set" \
	"$X/cfg/git \(home set: " "$OUT"
# Review 10: an XDG directory named through a ".." that does not exist yet: where it
# leads is judged (sub/../cfg is cfg); one whose way goes on past a missing name (m/..)
# keeps that name from being made. The hook judges both alike, and a dotfiles link to
# a directory not made yet (~/.config -> dots/config without git/) or an XDG link to one.
rm -rf "$X/cfg" "$X/data" "$X/lcfg"
mkdir -p "$X/sub"
OUT=$(cd "$X" && XDG_CONFIG_HOME="$X/sub/../cfg" timeout -k 2 60 "$HALO" -- sh -c \
	'mkdir -p cfg/git 2>/dev/null; echo x >cfg/git/config; echo "g=$?"' 2>"$E" </dev/null)
expect_match "XDG config home sub/../cfg, cfg not made yet: git config not made" '^g=[1-9]' "$(grep '^g=' <<<"$OUT")"
OUT=$(cd "$X" && XDG_CONFIG_HOME="$X/m/../cfg2" timeout -k 2 60 "$HALO" -- sh -c \
	'mkdir m 2>/dev/null; echo "m=$?"; mkdir -p cfg2/git 2>/dev/null; echo x >cfg2/git/config; echo "g=$?"' 2>"$E" </dev/null)
expect_match "XDG config home m/../cfg2, m missing: m cannot be made" '^m=[1-9]' "$(grep '^m=' <<<"$OUT")"
expect_match "... nor cfg2's git config" '^g=[1-9]' "$(grep '^g=' <<<"$OUT")"
expect "host: nothing made" "no no" "$([ -e "$X/cfg/git/config" ] && echo yes || echo no) $([ -e "$X/cfg2/git/config" ] && echo yes || echo no)"
xhook() { hookw "$X" "$2" XDG_CONFIG_HOME="$1"; } # XDG FILE
expect_match "hook: sub/../cfg: Write cfg/git/config blocked" "persistence set" "$(xhook "$X/sub/../cfg" "$X/cfg/git/config")"
expect_match "hook: m/../cfg2: Write m/x blocked (m cannot be made)" "XDG_CONFIG_HOME leads through it" "$(xhook "$X/m/../cfg2" "$X/m/x")"
expect_match "hook: m/../cfg2: Write cfg2/git/config blocked" "persistence set" "$(xhook "$X/m/../cfg2" "$X/cfg2/git/config")"
ln -sfn real "$X/cfglink"
expect_match "hook: an XDG link to a directory not made yet: Write there blocked" "persistence set" "$(xhook "$X/cfglink" "$X/real/git/config")"
expect "hook: ... its other files allowed" "" "$(xhook "$X/cfglink" "$X/real/notes")"
H4=$TMPDIR/h4
mkdir -p "$H4/dots/config"
ln -sfn dots/config "$H4/.config"
OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$H4/dots" "$H4/dots/config/git/config" |
	HOME=$H4 "$HALO" hook 2>&1 >/dev/null)
expect_match "hook: ~/.config linked to dots/config without git/: Write dots/config/git/config blocked" \
	"~/.config/git/config is in the home.s persistence set" "$OUT"
OUT=$(cd "$H4/dots" && HOME=$H4 timeout -k 2 60 "$HALO" -- sh -c 'mkdir -p config/git 2>/dev/null; echo x >config/git/config; echo "g=$?"' 2>"$E" </dev/null)
expect_match "... as the sandbox refuses it" '^g=[1-9]' "$(grep '^g=' <<<"$OUT")"
# Review 10: flatpak's exports are on the session's XDG_DATA_DIRS (D-Bus services,
# desktop entries, user units there run on the host).
run_home 'mkdir -p ~/.local/share/flatpak/exports/share/dbus-1/services 2>/dev/null; echo "f=$?"'
expect_match "home workspace: ~/.local/share/flatpak/exports cannot be made" '^f=[1-9]' "$(grep '^f=' <<<"$OUT")"
expect "host: no flatpak exports made" no "$([ -e "$H/.local/share/flatpak/exports" ] && echo yes || echo no)"
# Review 10: $XDG_DATA_DIRS and $XDG_CONFIG_DIRS entries in a writable tree: D-Bus
# services, user units and autostart entries there run on the host like the homes'.
mkdir -p "$X/dd" "$X/cd"
OUT=$(cd "$X" && XDG_DATA_DIRS="/usr/share:$X/dd" XDG_CONFIG_DIRS="$X/cd" timeout -k 2 60 "$HALO" -- sh -c \
	'mkdir -p dd/dbus-1/services 2>/dev/null; echo x >dd/dbus-1/services/x.service; echo "d=$?"
	mkdir -p cd/autostart 2>/dev/null; echo x >cd/autostart/x.desktop; echo "a=$?"; echo x >dd/notes; echo "n=$?"' 2>"$E" </dev/null)
expect_match "XDG_DATA_DIRS entry in the workspace: no D-Bus service made there" '^d=[1-9]' "$(grep '^d=' <<<"$OUT")"
expect_match "XDG_CONFIG_DIRS entry in the workspace: no autostart entry made there" '^a=[1-9]' "$(grep '^a=' <<<"$OUT")"
expect "... the rest of them writable" "n=0" "$(grep '^n=' <<<"$OUT")"
OUT=$(hookw "$X" "$X/dd/dbus-1/services/x.service" XDG_DATA_DIRS="/usr/share:$X/dd")
expect_match "hook: Write a D-Bus service into an XDG_DATA_DIRS entry: blocked" "persistence set" "$OUT"
# Review 11: an XDG directory through a link to a tree whose real path is 4093 bytes:
# its entries (L/git: 4097) cannot be judged, so the launch refuses (before, they were
# left out, and git/config was made); the hook blocks the same writes.
mkdir -p "$X/long"
python3 - "$X/long" 4093 <<'PY'
import os, sys
ws, want = sys.argv[1], int(sys.argv[2])
left, comps = want - len(ws) - 1, []
while left > 0:
    n = min(200, left - (1 if comps else 0))
    if 0 < left - n - (1 if comps else 0) < 5:
        n -= 5
    comps.append("d" * n)
    left -= n + (1 if len(comps) > 1 else 0)
fd = cur = os.open(ws, os.O_RDONLY)
for c in comps:
    os.mkdir(c, dir_fd=cur)
    cur = os.open(c, os.O_RDONLY, dir_fd=cur)
os.symlink("/".join(comps), "L", dir_fd=fd)
PY
OUT=$(cd "$X/long" && XDG_CONFIG_HOME="$X/long/L" timeout -k 2 60 "$HALO" -- sh -c 'mkdir L/git; echo "g=$?"' 2>&1 </dev/null)
RC=$?
expect "XDG config home leading past PATH_MAX: the launch is refused" "125" "$RC"
expect_match "... saying why" "longer than PATH_MAX" "$OUT"
expect "... and nothing made" no "$([ -e "$X/long/L/git" ] && echo yes || echo no)"
OUT=$(hookw "$X/long" "$X/long/L/git/config" XDG_CONFIG_HOME="$X/long/L")
expect_match "hook: a Write there is blocked" "blocked" "$OUT"
rm -rf "$X/long"
# Review 12: XDG list entries named through a ".." or a link are judged where they lead,
# by the sandbox and the hook alike.
mkdir -p "$X/la" "$X/lcfg2"
ln -sfn "$X/lcfg2" "$TMPDIR/xdglistlink"
OUT=$(cd "$X" && XDG_CONFIG_DIRS="$X/la/../lcfg" XDG_DATA_DIRS="$X/lb/../ldat" timeout -k 2 60 "$HALO" -- sh -c \
	'mkdir -p lcfg/autostart 2>/dev/null; echo x >lcfg/autostart/e.desktop; echo "a=$?"; mkdir lb 2>/dev/null; echo "b=$?"' 2>"$E" </dev/null)
expect_match "XDG_CONFIG_DIRS entry la/../lcfg: no autostart entry made in lcfg" '^a=[1-9]' "$(grep '^a=' <<<"$OUT")"
expect_match "XDG_DATA_DIRS entry lb/../ldat, lb missing: lb cannot be made" '^b=[1-9]' "$(grep '^b=' <<<"$OUT")"
lhook() { hookw "$X" "$2" "$1"; } # VAR=VALUE FILE
expect_match "hook: XDG_CONFIG_DIRS la/../lcfg: Write lcfg/autostart blocked" "blocked" \
	"$(lhook "XDG_CONFIG_DIRS=$X/la/../lcfg" "$X/lcfg/autostart/e.desktop")"
expect_match "hook: XDG_CONFIG_DIRS a link outside the homes: Write where it leads blocked" "persistence set" \
	"$(lhook "XDG_CONFIG_DIRS=$TMPDIR/xdglistlink" "$X/lcfg2/autostart/e.desktop")"
OUT=$(cd "$X" && XDG_CONFIG_DIRS="$TMPDIR/xdglistlink" timeout -k 2 60 "$HALO" -- sh -c \
	'mkdir -p lcfg2/autostart 2>/dev/null; echo x >lcfg2/autostart/e.desktop; echo "a=$?"' 2>"$E" </dev/null)
expect_match "... as the sandbox refuses it" '^a=[1-9]' "$(grep '^a=' <<<"$OUT")"
# Review 11: a link on an XDG directory's way is pinned in the sandbox (rm: EBUSY); the
# hook refuses a write or a delete of it too (Codex's `*** Delete File` removed it).
mkdir -p "$X/px/y"
ln -sfn px/y "$X/PL"
OUT=$(cd "$X" && XDG_CONFIG_HOME="$X/PL/../cfg" timeout -k 2 60 "$HALO" -- sh -c 'rm PL 2>/dev/null; echo "r=$?"' 2>"$E" </dev/null)
expect_match "a link on the XDG way: the sandbox keeps it" '^r=[1-9]' "$(grep '^r=' <<<"$OUT")"
expect_match "hook: a Write over that link is blocked" "is a link on the way to the home persistence set" \
	"$(lhook "XDG_CONFIG_HOME=$X/PL/../cfg" "$X/PL")"
OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"apply_patch",
	"tool_input":{"command":"*** Begin Patch\n*** Delete File: PL\n*** End Patch\n"}}))' "$X" |
	XDG_CONFIG_HOME="$X/PL/../cfg" "$HALO" hook --harness codex 2>&1 >/dev/null)
expect_match "hook: Codex's apply_patch Delete of it is blocked" "PL is a link on the way" "$OUT"
expect "hook: a Write beside it allowed" "" "$(lhook "XDG_CONFIG_HOME=$X/PL/../cfg" "$X/px/notes")"
# Review 14: the same link by another spelling (alias -> .), and an XDG way through a
# file and a ".." (~/f/x/../c, f a file: the set there was left out).
ln -sfn . "$X/alias"
OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"apply_patch",
	"tool_input":{"command":"*** Begin Patch\n*** Delete File: alias/PL\n*** End Patch\n"}}))' "$X" |
	XDG_CONFIG_HOME="$X/PL/../cfg" "$HALO" hook --harness codex 2>&1 >/dev/null)
expect_match "hook: Codex's Delete of the pinned link as alias/PL is blocked" "is a link on the way" "$OUT"
echo x >"$X/ff"
OUT=$(cd "$X" && XDG_CONFIG_HOME="$X/ff/x/../c" timeout -k 2 60 "$HALO" -- sh -c \
	'rm -f ff; mkdir -p ff/x ff/c/git 2>/dev/null; echo x >ff/c/git/config; echo "g=$?"' 2>"$E" </dev/null)
expect_match "XDG way through a file and a '..': no git config made there" '^g=[1-9]' "$(grep '^g=' <<<"$OUT")"
expect "... nothing on the host" no "$([ -e "$X/ff/c/git/config" ] && echo yes || echo no)"
# Review 15: more that runs at the next login, shell or interpreter start.
run_home 'for f in .config/zsh/.zshrc .Rprofile .julia/config/startup.jl .config/sway/config \
	.config/hypr/hyprland.conf .vscode-server/data/x .yarnrc .config/Code/User/tasks.json .ghci; do
	mkdir -p "$(dirname "$f")" 2>/dev/null; echo x >"$f" 2>/dev/null && echo "W $f"; done; echo end'
expect "home workspace: zsh's ZDOTDIR files, R, julia, sway, Hyprland, VS Code, yarn, ghci: none made" "end" "$OUT"
finish
