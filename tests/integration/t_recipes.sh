#!/bin/bash
# halo-bash and the harness recipes. Each harness's documented (or, where the docs are
# silent, source-read) shell invocation is reproduced by recipes.py, with its exact
# quoting, and every command below is run through it twice: with plain /bin/bash (the
# reference, what the harness does without halo-run) and with the recipe (halo-bash in
# the harness's shell slot, or the harness itself under halo-run). Same output and
# status, and the command really ran inside the sandbox.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
BASH_H="$(dirname "$HALO")/halo-bash"
[ -x "$BASH_H" ] || { fail "halo-bash link" "missing next to $HALO"; finish; exit; }
[ -x /bin/bash ] || { skip "halo-bash" "no /bin/bash"; finish; exit; }
mkdir -p ws/sub && cd ws || exit 1
WS=$PWD
# The harness's own temp files (Claude's snapshot and cwd file, Gemini's pgrep list)
# where the sandbox can reach them: the sandbox's /tmp is its own (the Claude recipe
# sets CLAUDE_CODE_TMPDIR to such a place).
RT="$WS/.rt"
mkdir -p "$RT"
cp "$IT/recipes.py" "$RT/"
E="$TMPDIR/_stderr"
run() { OUT=$(timeout -k 2 60 "$@" 2>"$E" </dev/null); RC=$?; ERR=$(cat "$E"); }

# ---------------------------------------------------------------- halo-bash itself
run "$BASH_H" -c 'arr=(1 "two three" 4); echo "${#arr[@]}:${arr[1]}"'
expect "halo-bash -c: bash arrays" "0:3:two three" "$RC:$OUT"
run "$BASH_H" -c '[[ abc == a* ]] && echo "$BASH_VERSION" | grep -c .; echo "$HALO_SANDBOX"'
expect "halo-bash runs bash ([[ ]], BASH_VERSION) in the sandbox" "1 1" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"
run "$BASH_H" -o pipefail -c 'false | true'
expect "bash's own options before -c (-o pipefail)" 1 "$RC"
run "$BASH_H" -c 'echo "$0|$1|$#"' a0 'a 1'
expect "-c CMD ARG0 ARGS as bash sets them" "a0|a 1|1" "$OUT"
OUT=$(printf 'declare -A m=([k]=v); echo "${m[k]}"\nexit 4\n' | timeout -k 2 30 "$BASH_H" 2>/dev/null)
expect "a script on stdin (no arguments, not a terminal)" "4:v" "$?:$OUT"
printf 'echo "script:$1"\n' >script.sh
run "$BASH_H" script.sh arg
expect "a script file and its arguments" "script:arg" "$OUT"
SHELL="$BASH_H" run "$BASH_H" -c 'echo "$SHELL"'
expect "SHELL pointing at halo-bash becomes /bin/bash inside" /bin/bash "$OUT"
run "$BASH_H" -c 'kill -TERM $$'
expect "death by signal: 128+N" 143 "$RC"
OUT=$(timeout -k 2 30 bash -c 'exec -a -halo-bash "$0" -c "shopt -q login_shell && echo login"' "$HALO" 2>/dev/null </dev/null)
expect "argv[0] -halo-bash is a login shell (bash -l)" login "$OUT"
run "$BASH_H" --help
expect_match "--help names halo-bash and /bin/bash" "usage: halo-bash -c CMD.*/bin/bash" "$OUT"

if command -v python3 >/dev/null && [ -r "$IT/ptylib.py" ]; then
	cat >"$TMPDIR/bashdrive.py" <<'PY'
import os, sys
sys.path.insert(0, os.environ["IT"])
from ptylib import Pty
P = Pty([sys.argv[1], "--norc"])
P.read_until((b"$ ", b"# "), 10)  # the prompt (root's is "# ")
os.write(P.fd, b"a=(x y); case $- in *i*) echo mode-$((${#a[@]}*21));; esac\n")
print("interactive", "yes" if P.read_until(b"mode-42", 10) else "no")
os.write(P.fd, b"exit 6\n")
print("status", P.status(10))
PY
	OUT=$(timeout -k 2 40 python3 "$TMPDIR/bashdrive.py" "$BASH_H" 2>&1)
	expect "on a pty, halo-bash is an interactive bash" yes "$(sed -n 's/^interactive //p' <<<"$OUT")"
	expect "... whose exit status is kept" 6 "$(sed -n 's/^status //p' <<<"$OUT")"
else
	skip "halo-bash interactive" "no python3 pty helper"
fi

# ---------------------------------------------------------------- the recipes
n=0
cmd() { n=$((n + 1)); printf '%s' "$1" >"$RT/cmd$n"; }
cmd "echo \"it's \\\"quoted\\\"\" 'single \$HOME' \"tab	x\""
cmd 'true && echo and-ok || echo or-branch; false || echo or-ok'
cmd "printf 'a\\nb\\nc\\n' | grep -c . | tr 3 T"
cmd 'X=42; export Y="v w"; echo "${X}x $((X+1)) $Y" $(echo sub) `echo tick`'
cmd "cat <<'EOF'
literal \$X \`no\`
EOF
V=exp; cat <<EOF
expanded \$V
EOF"
cmd 'arr=(1 "two three" 4); arr+=(five); echo "${#arr[@]}:${arr[1]}:${arr[-1]}"; declare -A m=([k]=v); echo "${m[k]}"'
cmd '[ ! -e nope ] && echo bang-ok; [[ "a b" == a* ]] && echo dbl-ok; echo $(( 2**10 ))'
cmd 'set -o pipefail; false | true; echo "pipefail:$?"; cd sub && pwd -P | sed "s|.*/||"'
cmd 'f() { local a=$1; echo "fn:${a^^}"; }; f lower; printf "%q\n" "a b"'
cmd 'echo "$HALO_SANDBOX"; exit 7'

# The expected first line of a few (so that two equally broken runs cannot pass).
want1=$'it\'s "quoted" single $HOME tab\tx'
want6='4:two three:five'

# One harness form over every command: reference (plain bash, no halo-run) against the
# recipe. The last command prints HALO_SANDBOX: empty outside, 1 inside.
# A reference is run once per harness argv and command (the same plain bash for a
# harness's plain and wrapped recipes; OpenCode's and Cursor's argv are one form) and
# kept: REF[harness|SHELL_QUOTE|command].
declare -A REF=()
recipe() { # label harness shell [wrap]
	local label=$1 h=$2 sh=$3 wrap=${4:-} i ref got bad=0 first="" key
	local -a pre=()

	# Wrapped: the harness (here recipes.py, from the workspace: the sandbox's /tmp is
	# its own) runs inside halo-run and spawns plain bash there.
	[ -n "$wrap" ] && pre=("$HALO" --)
	for i in $(seq 1 $n); do
		key="${h/#cursor/opencode}|${SHELL_QUOTE:-}|$i"
		if [ -z "${REF[$key]+set}" ]; then
			REF[$key]=$(cd "$WS" && TMPDIR="$RT" timeout -k 2 60 python3 "$IT/recipes.py" "$h" /bin/bash "$RT/cmd$i" 2>&1; echo "rc=$?")
		fi
		ref=${REF[$key]}
		got=$(cd "$WS" && TMPDIR="$RT" timeout -k 2 60 "${pre[@]}" python3 "$RT/recipes.py" "$h" "$sh" "$RT/cmd$i" 2>&1; echo "rc=$?")
		if [ "$i" = "$n" ]; then
			[ "$got" = $'1\nrc=7' ] || { bad=$((bad + 1)); first=${first:-"cmd$i: got [$got]"}; }
			[ "$ref" = $'\nrc=7' ] || { bad=$((bad + 1)); first=${first:-"cmd$i: reference [$ref]"}; }
			continue
		fi
		[ "$i" = 1 ] && [ "$(head -1 <<<"$got")" != "$want1" ] && { bad=$((bad + 1)); first=${first:-"cmd1: [$got]"}; }
		[ "$i" = 6 ] && [ "$(head -1 <<<"$got")" != "$want6" ] && { bad=$((bad + 1)); first=${first:-"cmd6: [$got]"}; }
		[ "$ref" = "$got" ] || { bad=$((bad + 1)); first=${first:-"cmd$i: want [$ref] got [$got]"}; }
	done
	expect "$label: $n commands (quotes, &&/||, pipes, \$VARS, heredocs, arrays) as without halo-run, inside the sandbox" 0 "$bad${first:+ ($first)}"
}

# Claude Code, two quote() generations (shell-quote 1.8 and 1.12). The prefix ends in
# " -c", so Claude runs 'halo-bash' -c 'source SNAPSHOT && eval ... && pwd -P >| CWD'.
recipe "Claude Code CLAUDE_CODE_SHELL_PREFIX='halo-bash -c' (shell-quote 1.8)" claude-code "$BASH_H"
SHELL_QUOTE=1.12 recipe "Claude Code, shell-quote 1.12 quoting" claude-code "$BASH_H"
rm -f "$RT/claude-cwd"
printf 'cd sub' >"$RT/cdcmd"
(cd "$WS" && TMPDIR="$RT" timeout -k 2 60 python3 "$IT/recipes.py" claude-code "$BASH_H" "$RT/cdcmd" >/dev/null 2>&1)
expect "Claude Code: its cwd file reaches it when CLAUDE_CODE_TMPDIR is in a writable path" "$WS/sub" "$(cat "$RT/claude-cwd" 2>/dev/null)"
printf 'echo snap; snapfn' >"$RT/snapcmd"
OUT=$(cd "$WS" && TMPDIR="$RT" timeout -k 2 60 python3 "$IT/recipes.py" claude-code "$BASH_H" "$RT/snapcmd" 2>&1)
expect "Claude Code: the shell snapshot is sourced inside (its functions work)" "snap from-snapshot" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"
recipe "Claude Code hooks (/bin/sh -c \"'halo-bash' -c 'HOOK'\")" claude-code-hook "$BASH_H"
# The recipe the issue found broken: a prefix without -c hands bash the whole command
# as a script name. Reproduced so that the README never goes back to it.
OUT=$(cd "$WS" && PREFIX_OVERRIDE="$BASH_H" TMPDIR="$RT" timeout -k 2 60 python3 "$IT/recipes.py" claude-code "$BASH_H" "$RT/cmd2" 2>&1)
expect "Claude Code: a prefix without ' -c' fails as the issue says (127: the command taken for a file name)" 127 "$?"

recipe "Codex: [halo-bash, -lc, CMD]" codex "$BASH_H"
recipe "Codex wrapped (halo-run -- codex): [/bin/bash, -lc, CMD] inside" codex /bin/bash wrap
recipe "Gemini CLI wrapped (halo-run -- gemini): bash -c 'shopt ...; { CMD; }; __code=\$?; pgrep ...'" gemini /bin/bash wrap
recipe "Gemini CLI's wrapping through halo-bash" gemini "$BASH_H"
recipe "OpenCode SHELL=halo-bash: [\$SHELL, -c, CMD]" opencode "$BASH_H"
recipe "Cursor (undocumented): [\$SHELL, -c, CMD] with SHELL=halo-bash" cursor "$BASH_H"
recipe "Cursor wrapped (halo-run -- cursor-agent)" cursor /bin/bash wrap
finish
