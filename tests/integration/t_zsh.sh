#!/bin/bash
# zsh's start-up files wherever zsh reads them (review 16): with $ZDOTDIR set, zsh reads
# .zshenv, .zprofile, .zshrc, .zlogin and .zlogout there instead of in the home, runs a
# file's compiled twin (.zshrc.zwc) instead when it is the newer one, and compinit
# sources .zcompdump. A command run in the home, or in a workspace that holds
# $ZDOTDIR (named, or through a link), can neither change nor create any of them; the
# hook blocks the harness's own writes there; a session call with another $ZDOTDIR is
# another sandbox. The host's own zsh, run afterwards with this HOME and ZDOTDIR, runs
# nothing planted.
#
# The home is the runner's scratch directory (HOME=$TMPDIR, never the real /root).
set -u
. "$IT/lib.sh"
H=$HOME
cd "$H" || exit 1
E="$TMPDIR/_stderr"
MARK=/var/tmp/halo-zsh-ran.$$.$AS
W=$(mktemp -d /var/tmp/halo-zsh-ws.XXXXXX)
trap 'rm -rf "$MARK" "$W" "${D:-}"' EXIT
rm -f "$MARK"

ZD=$H/dots/zsh
mkdir -p "$ZD"
echo 'true # rc' >"$ZD/.zshrc"
snapshot() { (find "$1" -path "$1/.cache" -prune -o -path "$1/.local/state" -prune -o \
	! -type d ! -name _stderr -printf '%p %s %y\n' | sort); }
before=$(snapshot "$H")

# Every way in from inside, one per line; failures are expected and ignored. $1 is the
# directory zsh reads from, $2 the home.
plant() {
	cat <<EOF
echo "touch $MARK" >> $1/.zshrc
for f in .zshenv .zprofile .zlogin .zlogout .zshrc.zwc .zshenv.zwc .zcompdump; do echo "touch $MARK" > $1/\$f; done
mv $1/.zshrc $1/old.zshrc; echo "touch $MARK" > $1/.zshrc
for f in .zshrc.zwc .zshenv.zwc .zprofile.zwc .zlogin.zwc .zcompdump .zcompdump.zwc; do echo "touch $MARK" > $2/\$f; done
echo done
EOF
}

# 1. The home as the workspace, ZDOTDIR beneath it.
OUT=$(cd "$H" && ZDOTDIR=$ZD timeout -k 2 60 "$HALO" -- sh -c "$(plant "$ZD" "$H")" 2>"$E" </dev/null)
expect "home workspace, ZDOTDIR=~/dots/zsh: the planting ran" "0:done" "$?:$OUT"
expect "... on the host: nothing made or changed there" "$before" "$(snapshot "$H")"
# The host's zsh as a login and an interactive shell (reads every start-up file there).
if command -v zsh >/dev/null; then
	HOME=$H ZDOTDIR=$ZD timeout 20 zsh -l -i -c true </dev/null >/dev/null 2>&1
	HOME=$H timeout 20 zsh -l -i -c true </dev/null >/dev/null 2>&1
	expect "... the host's zsh (login, interactive) ran nothing planted" absent \
		"$([ -e "$MARK" ] && echo present || echo absent)"
else
	skip "... the host's zsh ran nothing planted" "zsh is not installed (make deps)"
fi

# 1b. Review 16: ZDOTDIR set in ~/.zshenv, not in the environment (the usual way): zsh
# reads the rest there all the same.
mkdir -p "$H/.zsh" && echo 'true # rc' >"$H/.zsh/.zshrc"
echo 'export ZDOTDIR="$HOME/.zsh"' >"$H/.zshenv"
before=$(snapshot "$H")
OUT=$(cd "$H" && env -u ZDOTDIR timeout -k 2 60 "$HALO" -- sh -c "$(plant "$H/.zsh" "$H")" 2>"$E" </dev/null)
expect "home workspace, ZDOTDIR set in ~/.zshenv: the planting ran" "0:done" "$?:$OUT"
expect "... on the host: nothing made or changed in ~/.zsh" "$before" "$(snapshot "$H")"
expect_match "hook: ... Write ~/.zsh/.zshrc.zwc is blocked" "persistence set" \
	"$(cd "$H" && python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$H" "$H/.zsh/.zshrc.zwc" |
		env -u ZDOTDIR "$HALO" hook 2>&1 >/dev/null)"
if command -v zsh >/dev/null; then
	env -u ZDOTDIR HOME=$H timeout 20 zsh -l -i -c true </dev/null >/dev/null 2>&1
	expect "... the host's zsh ran nothing planted" absent "$([ -e "$MARK" ] && echo present || echo absent)"
fi
rm -rf "$H/.zsh" "$H/.zshenv"
# Review 17: ${ZDOTDIR:-...} and both branches of an if are taken; a value that
# cannot be told is said (a warning), the run goes on.
mkdir -p "$H/dz" "$H/dold"
printf '%s\n' 'export ZDOTDIR="${ZDOTDIR:-$HOME/dz}"' \
	'if [ -d ~/nope ]; then ZDOTDIR=~/nope; else ZDOTDIR=~/dold; fi' >"$H/.zshenv"
before=$(snapshot "$H")
OUT=$(cd "$H" && env -u ZDOTDIR timeout -k 2 60 "$HALO" -- sh -c \
	"$(plant "$H/dz" "$H/dz"); $(plant "$H/dold" "$H/dold")" 2>"$E" </dev/null)
expect "ZDOTDIR=\${ZDOTDIR:-~/dz}, and an else branch's: the planting ran" "0:done
done" "$?:$OUT"
expect "... nothing made or changed in either" "$before" "$(snapshot "$H")"
expect "... and no warning" "" "$(grep -c 'cannot follow' "$E" | grep -v '^0$')"
echo 'ZDOTDIR=$(dirname "$0")/zsh' >"$H/.zshenv"
OUT=$(cd "$H" && env -u ZDOTDIR timeout -k 2 60 "$HALO" -- echo ran 2>"$E" </dev/null)
expect "a ZDOTDIR that cannot be told: the run goes on" "0:ran" "$?:$OUT"
expect_match "... with a warning naming what to do" "ZDOTDIR is set in a way halo-run cannot follow.*protectedPaths" "$(cat "$E")"
# Review 18: `: ${ZDOTDIR:=...}` and `;then` spellings assign it too; a relative one in
# the environment is said.
mkdir -p "$H/dz2"
printf '%s\n' ': ${ZDOTDIR:=$HOME/dz2}' 'if [ -d /nonexistent ];then ZDOTDIR=$HOME/dz3; fi' >"$H/.zshenv"
before=$(snapshot "$H")
OUT=$(cd "$H" && env -u ZDOTDIR timeout -k 2 60 "$HALO" -- sh -c \
	"$(plant "$H/dz2" "$H/dz2"); mkdir -p dz3; $(plant "$H/dz3" "$H/dz3")" 2>"$E" </dev/null)
expect "\${ZDOTDIR:=~/dz2} and a ;then branch's ~/dz3: the planting ran" "0:done
done" "$?:$OUT"
expect "... nothing made or changed in either (dz3 itself aside)" "$before" "$(snapshot "$H")"
# Review 19: $XDG_CONFIG_HOME as .zshenv sets it, and a ZDOTDIR that .zprofile sets
# (zsh reads .zshrc and .zlogin there then).
mkdir -p "$H/.xdg/zsh" "$H/dp"
printf '%s\n' 'export XDG_CONFIG_HOME=$HOME/.xdg' \
	'export ZDOTDIR=${XDG_CONFIG_HOME:-$HOME/.config}/zsh' >"$H/.zshenv"
echo 'export ZDOTDIR=$HOME/dp' >"$H/.zprofile"
before=$(snapshot "$H")
OUT=$(cd "$H" && env -u ZDOTDIR -u XDG_CONFIG_HOME timeout -k 2 60 "$HALO" -- sh -c \
	"$(plant "$H/.xdg/zsh" "$H/.xdg/zsh"); $(plant "$H/dp" "$H/dp")" 2>"$E" </dev/null)
expect "XDG_CONFIG_HOME set in .zshenv, ZDOTDIR set in .zprofile: the planting ran" "0:done
done" "$?:$OUT"
expect "... nothing made or changed in either" "$before" "$(snapshot "$H")"
rm -rf "$H/.xdg" "$H/dp" "$H/.zprofile"
rm -f "$H/.zshenv"
OUT=$(cd "$H" && ZDOTDIR=dz2 timeout -k 2 60 "$HALO" -- echo ran 2>"$E" </dev/null)
expect_match "a relative ZDOTDIR in the environment: said" "ZDOTDIR is set in a way halo-run cannot follow" "$(cat "$E")"
rm -rf "$H/dz2" "$H/dz3"
rm -rf "$H/dz" "$H/dold" "$H/.zshenv"

# 2. ZDOTDIR outside the home, in the workspace, not made yet: its files cannot be made
# (the directory itself may be, empty).
OUT=$(cd "$W" && ZDOTDIR=$W/zdot timeout -k 2 60 "$HALO" -- sh -c \
	"mkdir -p zdot; $(plant "$W/zdot" "$W/zdot")" 2>"$E" </dev/null)
expect "ZDOTDIR in a workspace outside the home: the planting ran" "0:done" "$?:$OUT"
expect "... nothing made there" "" "$(find "$W" ! -type d)"

# 3. ZDOTDIR named in the home through a link into the workspace.
mkdir -p "$W/zreal" && echo 'true # rc' >"$W/zreal/.zshrc"
ln -s "$W/zreal" "$H/zlink"
wbefore=$(snapshot "$W")
OUT=$(cd "$W" && ZDOTDIR=$H/zlink timeout -k 2 60 "$HALO" -- sh -c "$(plant "$W/zreal" "$W/zreal")" \
	2>"$E" </dev/null)
expect "ZDOTDIR through a link into the workspace: the planting ran" "0:done" "$?:$OUT"
expect "... nothing made or changed where it leads" "$wbefore" "$(snapshot "$W")"
rm -f "$H/zlink"

# 4. The hook judges the harness's own writes the same way.
hook_ev() { # CWD FILE ZDOTDIR
	python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$1" "$2" |
		(cd "$1" && ZDOTDIR=$3 "$HALO" hook 2>&1 >/dev/null)
}
expect_match "hook: Write \$ZDOTDIR/.zshenv (not made yet) is blocked" \
	"persistence set.*|zsh" "$(hook_ev "$H" "$ZD/.zshenv" "$ZD")"
expect_match "hook: Write ~/.zshrc.zwc is blocked" "persistence set" \
	"$(hook_ev "$H" "$H/.zshrc.zwc" "$ZD")"
expect_match "hook: Write \$ZDOTDIR/.zshrc outside the home is blocked" "zsh" \
	"$(hook_ev "$W" "$W/zdot/.zshrc" "$W/zdot")"
expect "hook: Write a plain file beside it is allowed" "" "$(hook_ev "$W" "$W/notes.txt" "$W/zdot")"
# Review 16: $ZDOTDIR outside the home and the workspace, its .zlogin a link to a file
# (not made yet) in the workspace: the sandbox keeps it from being made, and so does
# the hook (it judged the outside directory's entries by name only).
D=$(mktemp -d /var/tmp/halo-zsh-dots.XXXXXX)
ln -s "$W/zlogin.real" "$D/.zlogin"
OUT=$(cd "$W" && ZDOTDIR=$D timeout -k 2 60 "$HALO" -- sh -c 'echo x > zlogin.real 2>/dev/null && echo made; echo done' 2>"$E" </dev/null)
expect "ZDOTDIR outside, .zlogin a link into the workspace: the sandbox keeps it from being made" "done" "$OUT"
expect_match "hook: ... and the hook blocks it" "\.zlogin is in the home.s persistence set" \
	"$(hook_ev "$W" "$W/zlogin.real" "$D")"
rm -rf "$D"

# 5. A session call with another ZDOTDIR is a call into another sandbox.
S=zsh$$
OUT=$(cd "$H" && ZDOTDIR=$ZD timeout -k 2 60 "$HALO" --session "$S" -- echo started 2>&1 </dev/null)
expect "session started with ZDOTDIR=~/dots/zsh" started "$OUT"
OUT=$(cd "$H" && ZDOTDIR=$H/elsewhere timeout -k 2 60 "$HALO" --session "$S" -- echo joined 2>&1 </dev/null)
expect_match "... a call with ZDOTDIR=~/elsewhere is refused" "other|differ|another" "$OUT"
OUT=$(cd "$H" && ZDOTDIR=$ZD timeout -k 2 60 "$HALO" --session "$S" -- echo joined 2>&1 </dev/null)
expect "... a call with the same ZDOTDIR joins" joined "$OUT"
(cd "$H" && "$HALO" session stop "$S" >/dev/null 2>&1)
rm -rf "$H/dots"
finish
