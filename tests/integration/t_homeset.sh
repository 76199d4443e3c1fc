#!/bin/bash
# The home as the workspace (`cd ~ && halo-run -- ...`): the home is writable, but its
# persistence set stays read-only and cannot be created (shell start-up and logout
# files, git's two global configs, PATH directories under the home, user services and
# autostart, editor start-up files, tool configs that name programs). Everything is
# planted from inside, then checked on the host: nothing created or changed, and the
# host's own git and login shell, run with this HOME, run nothing planted.
#
# The home is the runner's scratch directory (HOME=$TMPDIR, never the real /root); it
# lies under the host's /tmp and is bound back into the sandbox's private /tmp.
set -u
. "$IT/lib.sh"
H=$HOME
cd "$H" || exit 1
E="$TMPDIR/_stderr"
MARK=/var/tmp/halo-homeset-ran.$$.$AS
rm -f "$MARK"
trap 'rm -f "$MARK"' EXIT

# What the home holds before: a Debian-like .bashrc (it sources .bash_aliases), git's
# first global config, a repository, ~/.config without git/ or systemd/, a PATH dir.
printf '# rc\n[ -f ~/.bash_aliases ] && . ~/.bash_aliases\n' >.bashrc
printf '[user]\n\tname = t\n\temail = t@example.invalid\n' >.gitconfig
mkdir -p .config mytools repo .local/bin .cargo
# Review 22: pipx's layout (the command's link read-only, its venv was writable: a .pth
# planted there ran at the host's next `black`), podman's config beside its logins.
mkdir -p .local/share/pipx/venvs/black/lib/site-packages/black .config/containers .gem/ruby/3.1.0
echo 'def main(): pass' >.local/share/pipx/venvs/black/lib/site-packages/black/__init__.py
ln -s ../share/pipx/venvs/black/bin/black .local/bin/black
printf '[registries.search]\nregistries = []\n' >.config/containers/registries.conf
echo 'HOMESETSECRET' >.config/containers/auth.json
git -C repo init -q && git -C repo commit -q --allow-empty -m init || exit 1
# Files and links only: a missing entry's directories may be made (empty, as mkdir -p
# of a sibling would), the entry itself never.
snapshot() { (cd "$H" && find . -path ./.cache -prune -o -path ./.local/state -prune -o \
	-path ./repo/.git -prune -o -path ./scratch -prune -o ! -type d ! -name _stderr \
	-printf '%p %s %y\n' | sort); }
before=$(snapshot)

# Run in the home with the home's PATH dirs on PATH; sets OUT, ERR, RC.
PATH_IN="$H/mytools:$PATH"
run_home() {
	OUT=$(cd "$H" && PATH=$PATH_IN timeout -k 2 60 "$HALO" -- sh -c "$1" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}

# The planting script: each line tries one way in; failures are expected and ignored.
PLANT=$(
	cat <<EOF
mkdir -p scratch/e/systemd/user scratch/g/git
echo '[Unit]' > scratch/e/systemd/user/x.service
printf '[core]\n\tpager = sh -c "touch $MARK; cat"\n[alias]\n\tlg = !touch $MARK\n' > scratch/g/git/config
mkdir -p ~/.config/git && cp scratch/g/git/config ~/.config/git/config
mv -T scratch/g/git ~/.config/git
ln -s ~/scratch/g/git ~/.config/git
mkdir -p ~/.config/systemd/user && cp scratch/e/systemd/user/x.service ~/.config/systemd/user/
mv -T scratch/e/systemd ~/.config/systemd
mv scratch/e/systemd/user ~/.config/systemd/user
echo "touch $MARK" > ~/.bash_aliases
echo "touch $MARK" > ~/.profile
echo "touch $MARK" > ~/.bash_profile
echo "touch $MARK" >> ~/.bashrc
printf '[alias]\n\tlg = !touch $MARK\n' >> ~/.gitconfig
mv ~/.gitconfig ~/gitconfig.old; printf '[alias]\n\tlg = !touch $MARK\n' > ~/.gitconfig
printf '#!/bin/sh\ntouch $MARK\n' > ~/.local/bin/git; chmod +x ~/.local/bin/git
mkdir -p ~/.cargo/bin && printf '#!/bin/sh\ntouch $MARK\n' > ~/.cargo/bin/git
printf '#!/bin/sh\ntouch $MARK\n' > ~/mytools/git; chmod +x ~/mytools/git
mkdir -p ~/bin && printf '#!/bin/sh\ntouch $MARK\n' > ~/bin/ls
echo '[build]' > ~/.cargo/config.toml
mkdir -p ~/.config/fish && echo "touch $MARK" > ~/.config/fish/config.fish
mkdir -p ~/.config/autostart && echo x > ~/.config/autostart/x.desktop
echo "set shell=sh" > ~/.vimrc
mkdir -p ~/.config/nvim && echo x > ~/.config/nvim/init.lua
mkdir -p ~/.gradle/init.d && echo x > ~/.gradle/init.d/x.gradle
echo "touch $MARK" > ~/.zshenv
mkdir -p ~/.config/systemd/user.control && cp scratch/e/systemd/user/x.service ~/.config/systemd/user.control/
printf '[Manager]\nDefaultEnvironment=LD_PRELOAD=/x.so\n' > ~/.config/systemd/user.conf
mkdir -p ~/.config/user-tmpfiles.d && echo 'f+ %h/.bashrc 0644 - - - touch $MARK' > ~/.config/user-tmpfiles.d/x.conf
mkdir -p ~/.local/share/user-tmpfiles.d && echo 'f+ %h/.profile 0644 - - - touch $MARK' > ~/.local/share/user-tmpfiles.d/x.conf
mkdir -p ~/.local/share/direnv/allow && echo "$H/.envrc" > ~/.local/share/direnv/allow/0
mkdir -p ~/.config/gh && echo 'pager: touch $MARK' > ~/.config/gh/config.yml
printf '[alias]\nx = !touch $MARK\n' > ~/.hgrc
echo "touch $MARK" > ~/.tcshrc
mkdir -p ~/.vscode-oss/extensions/x && echo '{}' > ~/.vscode-oss/extensions/x/package.json
mkdir -p ~/".config/Code - Insiders/User" && echo '{}' > ~/".config/Code - Insiders/User/tasks.json"
mkdir -p ~/.config/alacritty && echo '[terminal.shell]' > ~/.config/alacritty/alacritty.toml
echo 'platform shell touch $MARK' > ~/.lldbinit
echo 'import os; os.system("touch $MARK")' > ~/.local/share/pipx/venvs/black/lib/site-packages/evil.pth
echo 'x' >> ~/.local/share/pipx/venvs/black/lib/site-packages/black/__init__.py
echo 'x' > ~/.config/containers/auth.json
mkdir -p ~/.gem/ruby/3.1.0/gems/json-9/lib && echo x > ~/.gem/ruby/3.1.0/gems/json-9/lib/json.rb
mkdir -p ~/.local/share/uv/tools/ruff && echo x > ~/.local/share/uv/tools/ruff/x
echo "touch $MARK" > ~/.fzf.bash
mkdir -p ~/.gradle && echo x > ~/.gradle/init.gradle.kts
mkdir -p ~/.config/JetBrains/Idea && echo '-javaagent:/x.jar' > ~/.config/JetBrains/Idea/idea64.vmoptions
mkdir -p ~/.local/share/gnome-shell/extensions/x && echo x > ~/.local/share/gnome-shell/extensions/x/extension.js
mkdir -p ~/.R && echo 'CC=touch $MARK' > ~/.R/Makevars
mkdir -p ~/.config/lf && echo '\$touch $MARK' > ~/.config/lf/lfrc
echo 'XDG_DESKTOP_DIR="\$(touch $MARK)"' > ~/.config/user-dirs.dirs
echo done
EOF
)

run_home "$PLANT"
expect "the planting run itself ran (the home is the workspace)" done "$(tail -n1 <<<"$OUT")"
expect "the home as the workspace: no line of halo-run's (the guard is the default, nothing loosened)" \
	0 "$(grep -c '^halo-run:' <<<"$ERR")"
V=$(cd "$H" && timeout -k 2 60 "$HALO" --verbose -- true 2>&1 </dev/null)
expect_match "--verbose: one line says the home is the workspace and what stays guarded" \
	"is your home \(or holds it\): writable, except what runs code later" "$V"
expect "that line once" 1 "$(grep -c 'is your home' <<<"$V")"
run_home 'echo work > ~/notes.txt && mkdir -p ~/proj/src && echo y > ~/proj/src/a.c && echo ok'
expect "the rest of the home is writable" ok "$OUT"
rm -rf "$H/notes.txt" "$H/proj" "$H/scratch"

after=$(snapshot)
if [ "$before" = "$after" ]; then
	ok "nothing of the home set was created or changed on the host"
else
	fail "nothing of the home set was created or changed on the host" \
		"$(diff <(echo "$before") <(echo "$after") | head -20 | tr '\n' ' ')"
fi
for f in .config/git .config/systemd/user .bash_aliases .profile .bash_profile .cargo/bin \
	.cargo/config.toml .config/fish .config/autostart .vimrc .config/nvim .gradle/init.d .zshenv \
	mytools/git bin .local/bin/git .config/systemd/user.control .config/systemd/user.conf \
	.config/user-tmpfiles.d .local/share/user-tmpfiles.d .local/share/direnv/allow \
	.config/gh/config.yml .hgrc .tcshrc .vscode-oss ".config/Code - Insiders/User" \
	.config/alacritty .lldbinit .local/share/pipx/venvs/black/lib/site-packages/evil.pth \
	.gem/ruby/3.1.0/gems .local/share/uv/tools .fzf.bash .gradle/init.gradle.kts .config/JetBrains \
	.local/share/gnome-shell/extensions .R/Makevars .config/lf .config/user-dirs.dirs; do
	expect "absent on the host: ~/$f" absent "$([ -e "$H/$f" ] || [ -L "$H/$f" ] && echo present || echo absent)"
done
expect ".bashrc unchanged" "$(printf '# rc\n[ -f ~/.bash_aliases ] && . ~/.bash_aliases')" "$(cat "$H/.bashrc")"

expect "pipx's venv unchanged (review 22)" "def main(): pass" \
	"$(cat "$H/.local/share/pipx/venvs/black/lib/site-packages/black/__init__.py")"
expect "~/.config/containers/auth.json unchanged (review 22)" HOMESETSECRET "$(cat "$H/.config/containers/auth.json")"
# podman's logins are masked inside its read-only config directory, the rest readable.
run_home "cat ~/.config/containers/registries.conf; cat ~/.config/containers/auth.json 2>/dev/null || echo masked"
expect "~/.config/containers: registries.conf readable beside its masked auth.json (review 22)" \
	"$(printf '[registries.search]\nregistries = []\nmasked')" "$OUT"

# The host's own tools with this HOME run nothing planted.
HOME=$H git -C "$H/repo" log --oneline >/dev/null 2>&1
HOME=$H git -C "$H/repo" -c core.pager=cat log -1 >/dev/null 2>&1
HOME=$H git -C "$H/repo" lg >/dev/null 2>&1
HOME=$H PATH="$H/.local/bin:$H/mytools:$H/.cargo/bin:$H/bin:$PATH" git --version >/dev/null 2>&1
HOME=$H bash -l -c true </dev/null >/dev/null 2>&1
HOME=$H bash -i -c true </dev/null >/dev/null 2>&1
HOME=$H sh -l -c true </dev/null >/dev/null 2>&1
expect "the host's git log, git alias, login and interactive shells ran nothing planted" \
	absent "$([ -e "$MARK" ] && echo present || echo absent)"

# --dry-run lists the set, each with its reason.
OUT=$(cd "$H" && PATH=$PATH_IN "$HALO" --dry-run -- true 2>/dev/null)
expect_match "dry-run: ~/.config/git refused, with its reason" \
	"$H/.config/git \(home set: git's second global config" "$OUT"
expect_match "dry-run: a PATH directory under the home, read-only" \
	"$H/mytools \(home set: a directory on the caller's PATH\)" "$OUT"
expect_match "dry-run: .bashrc read-only" "$H/.bashrc \(home set: bash runs it" "$OUT"
expect_match "dry-run: systemd's user-tmpfiles.d, with its reason (review 20)" \
	"$H/.config/user-tmpfiles.d \(home set: systemd-tmpfiles --user applies it at login" "$OUT"

# A workspace inside the home is not the home: no line, its own files writable.
mkdir -p "$H/sub"
OUT=$(cd "$H/sub" && "$HALO" -- sh -c 'echo x > .bash_aliases && echo ok' 2>"$E")
expect "a workspace below the home: no home line" 0 "$(grep -c 'is your home' "$E")"
expect "a workspace below the home: its own .bash_aliases is not the home's" ok "$OUT"
rm -rf "$H/sub"

# The hook's file tools judge the same set (policy/homeset.c).
hook_ev() {
	python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$H" "$1" |
		PATH=$PATH_IN "$HALO" hook 2>&1 >/dev/null
}
expect_match "hook: Write ~/.config/git/config is blocked" \
	"~/.config/git/config is in the home.s persistence set" "$(hook_ev "$H/.config/git/config")"
expect_match "hook: Write ~/.config/systemd/user/x.service is blocked" \
	"~/.config/systemd/user/x.service is in the home.s persistence set" "$(hook_ev "$H/.config/systemd/user/x.service")"
expect_match "hook: Write into a PATH directory under the home is blocked" \
	"~/mytools/ls is in the home.s persistence set" "$(hook_ev "$H/mytools/ls")"
expect "hook: Write ~/notes.txt is allowed" "" "$(hook_ev "$H/notes.txt")"
expect_match "hook: Write ~/.config/user-tmpfiles.d/x.conf is blocked (review 20)" \
	"~/.config/user-tmpfiles.d/x.conf is in the home.s persistence set" \
	"$(hook_ev "$H/.config/user-tmpfiles.d/x.conf")"
expect_match "hook: Write ~/.config/gh/config.yml is blocked (review 20)" \
	"~/.config/gh/config.yml is in the home.s persistence set" "$(hook_ev "$H/.config/gh/config.yml")"

# PATH entries that lead into the home other than by name are judged where they lead,
# in the sandbox and by the hook: through a link outside the home, through a "..", and
# through a ".." after a name that does not exist (a link made there would send it
# anywhere: the name itself cannot be made). Before, all three were writable.
mkdir -p "$H/ptools/bin" "$H/pa" "$H/ptools2/bin"
LNK=$(mktemp -d /var/tmp/halo-homeset-link.XXXXXX) && ln -s "$H/ptools/bin" "$LNK/bin"
PATH_LEAD="$LNK/bin:$H/pa/../ptools2/bin:$H/pnone/../ptools3/bin:$PATH"
OUT=$(cd "$H" && PATH=$PATH_LEAD timeout -k 2 60 "$HALO" -- sh -c '
	for d in ptools/bin ptools2/bin; do (echo x >"$d/planted") 2>/dev/null && echo "wrote $d"; done
	(mkdir pnone) 2>/dev/null && echo "made pnone"; (ln -s /tmp pnone) 2>/dev/null && echo "linked pnone"
	echo x >pfree.txt && echo done' 2>"$E" </dev/null)
expect "PATH into the home by a link or a '..': nothing planted, the rest writable" done "$OUT"
expect "PATH into the home by a link or a '..': nothing on the host" "absent absent absent" \
	"$(for f in ptools/bin/planted ptools2/bin/planted pnone; do
		[ -e "$H/$f" ] || [ -L "$H/$f" ] && printf 'present ' || printf 'absent '
	done | sed 's/ $//')"
PATH_IN_SAVED=$PATH_IN
PATH_IN=$PATH_LEAD
expect_match "hook: Write where a PATH link leads is blocked" \
	"~/ptools/bin is in the home.s persistence set, read-only wherever it lands in a writable tree \(a directory on the caller's PATH leads there" \
	"$(hook_ev "$H/ptools/bin/ls")"
expect_match "hook: Write where a PATH '..' leads is blocked" "~/ptools2/bin is in the home.s persistence set" \
	"$(hook_ev "$H/ptools2/bin/ls")"
expect_match "hook: Write making the missing name before a PATH '..' is blocked" \
	"~/pnone is in the home.s persistence set" "$(hook_ev "$H/pnone/x")"
PATH_IN=$PATH_IN_SAVED
rm -rf "$LNK" "$H/ptools" "$H/pa" "$H/ptools2" "$H/pfree.txt" "$H/pnone"

# Review 8: what a ".." leaves is pinned (~/pa cannot be swapped for a link that sends
# ~/pa/../ptools2/bin elsewhere); a PATH entry with a trailing '/' or '//' in a part
# that does not exist launches (it failed every launch, 125); a PATH link to a place
# not made yet is refused by the hook as by the sandbox; an XDG_CONFIG_HOME named
# through a link keeps git's config read-only.
mkdir -p "$H/pa" "$H/ptools2/bin" "$H/cfgA"
LNK=$(mktemp -d /var/tmp/halo-homeset-link.XXXXXX)
ln -s "$H/pnew" "$LNK/nb" && ln -s "$H/cfgA" "$LNK/cfg"
PATH_IN="$H/pa/../ptools2/bin:$H/pgone/x//bin:$H/pgone2/bin/:$LNK/nb:$PATH"
OUT=$(cd "$H" && PATH=$PATH_IN XDG_CONFIG_HOME=$LNK/cfg timeout -k 2 60 "$HALO" -- sh -c '
	(mv pa pa.old && ln -s /tmp pa) 2>/dev/null && echo "swapped pa"
	(mkdir -p cfgA/git && echo x >cfgA/git/config) 2>/dev/null && echo "wrote cfgA/git/config"
	echo done' 2>"$E" </dev/null)
expect "a '..' left pinned, trailing slashes launch, XDG through a link guarded" "0:done" "$?:$OUT"
expect "... on the host: pa still a directory, no git config" "dir absent" \
	"$([ -d "$H/pa" ] && [ ! -L "$H/pa" ] && echo dir || echo swapped) $([ -e "$H/cfgA/git/config" ] && echo present || echo absent)"
expect_match "hook: Write where a PATH link to a place not made yet leads is blocked" \
	"~/pnew is in the home.s persistence set" "$(hook_ev "$H/pnew/git")"
OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$H" "$H/cfgA/git/config" |
	PATH=$PATH_IN XDG_CONFIG_HOME=$LNK/cfg "$HALO" hook 2>&1 >/dev/null)
expect_match "hook: Write git's config where XDG_CONFIG_HOME's link leads is blocked" "git" "$OUT"
PATH_IN=$PATH_IN_SAVED
rm -rf "$LNK" "$H/pa" "$H/pa.old" "$H/ptools2" "$H/cfgA" "$H/pnew"

# Review 9: a home-set entry whose link target has a '..' after a missing name
# (~/.vimrc -> gone/../myvimrc): that name cannot be made, in the sandbox as by the
# hook; an XDG_CONFIG_HOME named in the home that leads out of it keeps git's config
# read-only where it leads, in both; and the hook judges a writable root inside the
# home (writableRoots: [~/.cargo]) as the sandbox does.
ln -s gone/../myvimrc "$H/.vimrc"
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" -- sh -c '(mkdir gone) 2>/dev/null && echo made; echo done' 2>"$E" </dev/null)
expect "~/.vimrc -> gone/../myvimrc: gone cannot be made" "done" "$OUT"
expect_match "hook: ... nor by the harness" "~/.vimrc/x is in the home.s persistence set" "$(hook_ev "$H/gone/x")"
rm -f "$H/.vimrc"
XW=$(mktemp -d /var/tmp/halo-homeset-xw.XXXXXX)
mkdir -p "$XW/dot/cfg" && ln -s "$XW/dot/cfg" "$H/mycfg"
OUT=$(cd "$XW" && XDG_CONFIG_HOME=$H/mycfg timeout -k 2 60 "$HALO" -- sh -c '(mkdir -p dot/cfg/git && echo x >dot/cfg/git/config) 2>/dev/null && echo wrote; echo done' 2>"$E" </dev/null)
expect "XDG_CONFIG_HOME in the home leading out of it: git's config there read-only" "done" "$OUT"
OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$XW" "$XW/dot/cfg/git/config" |
	(cd "$XW" && XDG_CONFIG_HOME=$H/mycfg "$HALO" hook 2>&1 >/dev/null))
expect_match "hook: ... blocked as well" "git" "$OUT"
printf 'sandbox:\n  writableRoots: ["%s/.cargo"]\n' "$H" >"$TMPDIR/cargo-root.yaml"
mkdir -p "$H/.cargo"
OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$XW" "$H/.cargo/config.toml" |
	(cd "$XW" && "$HALO" hook --policy "$TMPDIR/cargo-root.yaml" 2>&1 >/dev/null))
expect_match "hook: writableRoots ~/.cargo: its config.toml blocked, as inside" "cargo" "$OUT"
rm -rf "$XW" "$H/mycfg"
# Review 9: a link of the command's whose target goes through another workspace's
# cache (hidden inside) with a '..' pinned nothing the next launch could open, and
# every later launch in the home failed (125).
mkdir -p "$H/proj9" && (cd "$H/proj9" && timeout -k 2 60 "$HALO" -- true >/dev/null 2>&1 </dev/null)
OTHER=$(ls -d "$H"/.cache/halo-run/caches/proj9-* 2>/dev/null | head -1)
if [ -n "$OTHER" ]; then
	(cd "$H" && timeout -k 2 60 "$HALO" -- sh -c "ln -s '$OTHER/../none' .env.local" >/dev/null 2>&1 </dev/null)
	OUT=$(cd "$H" && timeout -k 2 60 "$HALO" -- echo next 2>"$E" </dev/null)
	expect "a protected link through another workspace's hidden cache: the next launch runs" "0:next" "$?:$OUT"
else
	skip "a link through another workspace's cache" "no cache made for $H/proj9"
fi
rm -rf "$H/.env.local" "$H/proj9"

# Another workspace's isolated cache stays out of sight, the home being the workspace
# or not: the caches directory shows only this workspace's own.
mkdir -p "$H/w1"
(cd "$H/w1" && "$HALO" --quiet -- sh -c 'mkdir -p "$GOCACHE" && echo s > "$GOCACHE/other"')
OUT=$(cd "$H" && "$HALO" --quiet -- sh -c 'cat "$1"/w1-*/go-build/other 2>/dev/null || echo unreadable
	mkdir -p "$GOCACHE" && echo m > "$GOCACHE/mine" && cat "$GOCACHE/mine"' sh \
	"$H/.cache/halo-run/caches" 2>/dev/null)
expect "home workspace: another workspace's cache is unreadable" unreadable "$(sed -n 1p <<<"$OUT")"
expect "home workspace: its own cache is writable" m "$(sed -n 2p <<<"$OUT")"
rm -rf "$H/w1"

# guardPersistence: false says the whole home is writable.
printf 'sandbox: {guardPersistence: false}\n' >"$TMPDIR/noguard.yaml"
OUT=$(cd "$H" && "$HALO" --policy "$TMPDIR/noguard.yaml" -- true 2>&1)
expect_match "guardPersistence false: a warning that the whole home is writable" \
	"warning: .* sandbox.guardPersistence is false: the whole home is writable" "$OUT"

# (review) The floor's entries that do not exist cannot be made from a home workspace
# either, guardPersistence or not: a hard link to a file of the command's own that the
# user's next in-place write to ~/.netrc fills (read by a later launch), a ~/.kube/config
# whose exec plugin the host's kubectl runs. Nor can halo-run's own policy directory:
# a policy written there would be every later launch's (sandbox.mode: off).
FLOOR_PLANT='mkdir -p proj && : > proj/leak
ln proj/leak .netrc; ln proj/leak .git-credentials
mkdir -p .config/gh && ln proj/leak .config/gh/hosts.yml
mkdir .kube; mkdir -p .aws && echo "[default]" > .aws/credentials
mkdir -p .config/halo && printf "sandbox: {mode: \"off\"}\n" > .config/halo/policy.yaml
echo planted'
for pol in default noguard; do
	args=()
	[ $pol = noguard ] && args=(--policy "$TMPDIR/noguard.yaml")
	OUT=$(cd "$H" && timeout -k 2 60 "$HALO" "${args[@]}" -- sh -c "$FLOOR_PLANT" 2>/dev/null </dev/null)
	expect "floor, $pol: the planting run ran" planted "$(tail -n1 <<<"$OUT")"
	made=$(cd "$H" && ls -d .netrc .git-credentials .config/gh/hosts.yml .kube .aws/credentials \
		.config/halo/policy.yaml 2>/dev/null | paste -sd' ')
	want=""
	[ $pol = noguard ] && want=".config/halo/policy.yaml" # the whole home, the user said
	expect "floor, $pol: no missing floor entry made from a home workspace" "$want" "$made"
	rm -rf "$H/.config/halo" "$H/.config/gh" "$H/.aws" "$H/proj"
done
# (review) ... nor by way of a file: one launch makes a regular file where a directory of
# the entry would be (~/.config/gh, ~/.docker), the next swaps it for a directory.
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" -- sh -c 'mkdir -p .config; : > .config/gh; : > .docker; echo made' 2>/dev/null </dev/null)
expect "floor: files on the way made" made "$(tail -n1 <<<"$OUT")"
(cd "$H" && timeout -k 2 60 "$HALO" -- sh -c 'rm -f .config/gh .docker; mkdir .config/gh .docker
	echo t > .config/gh/hosts.yml; echo "{}" > .docker/config.json' >/dev/null 2>&1 </dev/null)
made=$(cd "$H" && ls -d .config/gh/hosts.yml .docker/config.json 2>/dev/null | paste -sd' ')
expect "floor: a file on the way swapped for a directory at the next launch: still not made" "" "$made"
rm -rf "$H/.config/gh" "$H/.docker"
# (third review) Two sessions: S started before ~/.config/gh existed, T after it. S moves
# gh away (T's pin holds in T's mount namespace only) and fills another directory; T
# renames that one into the name: refused, every name on the way is kept from the top.
SS=hs$$s ST=hs$$t
hs() { (cd "$H" && timeout -k 2 60 "$HALO" --session "$1" -- sh -c "$2" 2>&1 </dev/null); }
hs "$SS" 'mkdir -p .config && mkdir .config/gh && echo made' >/dev/null
hs "$ST" 'true' >/dev/null
hs "$SS" 'mv .config/gh .config/ghx && mkdir .config/ghy && echo t > .config/ghy/hosts.yml' >/dev/null
OUT=$(hs "$ST" 'mv .config/ghy .config/gh && echo moved')
expect "floor, two sessions: a directory renamed into a name on the way is refused" "" \
	"$(ls "$H/.config/gh/hosts.yml" 2>/dev/null)"
# Refused by the broker, or T is refused and ends first: S's rename moved T's pin
# with the directory (a mount of T's gone from its place: session/sup_calls.c).
expect_match "... the rename said so, or the session whose pin moved ended" \
	"Permission denied|mounts? (is|are) gone or moved.*so the session ends" "$OUT"
(cd "$H" && "$HALO" session stop "$SS" "$ST" >/dev/null 2>&1)
rm -rf "$H/.config/gh" "$H/.config/ghx" "$H/.config/ghy"
expect_match "hook: Write ~/.config/halo/policy.yaml is blocked (halo-run's own policy)" \
	"~/.config/halo/policy.yaml is in the home.s persistence set" "$(hook_ev "$H/.config/halo/policy.yaml")"
finish
