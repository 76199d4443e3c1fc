#!/bin/bash
# halo-sh: halo-run invoked as a shell (a link named halo-sh). `halo-sh -c CMD ARG0
# ARGS...` is `/bin/sh -c CMD ARG0 ARGS...` inside the sandbox under the discovered
# policy, with halo-run's exit codes; `halo-sh` alone reads a script from stdin, or is
# an interactive shell on a terminal (checked under a pty with python3's pty module).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
SH="$(dirname "$HALO")/halo-sh"
[ -x "$SH" ] || { fail "halo-sh link" "missing next to $HALO"; finish; exit; }
mkdir -p ws && cd ws || exit 1
E="$TMPDIR/_stderr"

run() { OUT=$(timeout -k 2 30 "$@" 2>"$E" </dev/null); RC=$?; ERR=$(cat "$E"); }

# ---------------------------------------------------------------- -c and arguments
run "$SH" -c 'echo hi'
expect "-c runs the command" "0:hi" "$RC:$OUT"
run "$SH" -c 'echo "$0|$1|$2|$#"' a0 a1 'a two'
expect "-c CMD ARG0 ARGS: positional parameters as sh sets them" "a0|a1|a two|2" "$OUT"
run "$SH" -c 'printf "%s\n" "$@"' a0 'x y' '*'
expect "-c: arguments reach \$@ unsplit and unglobbed" "x y|*" "$(paste -sd'|' <<<"$OUT")"
run "$SH" -e -c 'false; echo not-reached'
expect "sh options before -c are sh's (-e)" "1:" "$RC:$OUT"

# ---------------------------------------------------------------- exit codes
run "$SH" -c 'exit 42'
expect "exit status passes (42)" 42 "$RC"
run "$SH" -c 'kill -TERM $$'
expect "death by signal: 128+N (143)" 143 "$RC"
run "$SH" -c 'no-such-command-h12'
expect "command not found inside sh: 127" 127 "$RC"
run "$SH" ./no-such-script-h12
expect "missing script: sh's own status (2 or 127)" yes "$([ "$RC" = 2 ] || [ "$RC" = 127 ] && echo yes || echo "no ($RC)")"
HALO_POLICY=/nonexistent/h12.yaml run "$SH" -c 'echo ran'
expect "a policy that cannot be loaded: 125, nothing ran" "125:" "$RC:$OUT"
expect_match "... and says why" "HALO_POLICY" "$ERR"

# ---------------------------------------------------------------- it is sandboxed
run "$SH" -c 'hostname; echo "HALO_SANDBOX=$HALO_SANDBOX"; sed -n "s/^Seccomp:[[:space:]]*//p" /proc/self/status'
expect "the command runs in the sandbox (hostname, HALO_SANDBOX, seccomp)" "halo HALO_SANDBOX=1 2" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"
run "$SH" -c 'touch made-by-halo-sh && echo ok'
expect "the current directory is the writable workspace" "ok:yes" "$OUT:$([ -e made-by-halo-sh ] && echo yes)"
run "$SH" -c 'touch /var/tmp/h12-halo-sh-$$ 2>/dev/null && echo wrote || echo refused'
expect "outside the workspace is read-only" refused "$OUT"
GITHUB_TOKEN=h12-planted run "$SH" -c 'env'
expect "the environment is stripped" 0 "$(grep -c h12-planted <<<"$OUT")"
SHELL="$SH" run "$SH" -c 'echo "$SHELL"'
expect "SHELL pointing at halo-sh becomes /bin/sh inside (no nested sandbox)" /bin/sh "$OUT"

# The discovered policy is used: HALO_POLICY (outside the workspace) sets a variable.
printf 'env: {set: {H12_MARK: "from-policy"}}\n' >"$TMPDIR/h12-policy.yaml"
HALO_POLICY="$TMPDIR/h12-policy.yaml" run "$SH" -c 'echo "$H12_MARK"'
expect "the discovered policy applies (HALO_POLICY)" from-policy "$OUT"

# ---------------------------------------------------------------- no arguments
OUT=$(printf 'echo from-stdin\nexit 3\n' | timeout -k 2 30 "$SH" 2>/dev/null)
expect "no arguments, stdin not a terminal: a script from stdin" "3:from-stdin" "$?:$OUT"
OUT=$(timeout -k 2 30 bash -c 'exec -a -halo-sh "$0" -c "echo login-shell"' "$HALO" 2>/dev/null </dev/null)
expect "argv[0] -halo-sh (a login shell) is recognised" login-shell "$OUT"
run "$SH" --help
expect_match "--help says what halo-sh is" "usage: halo-sh -c CMD" "$OUT"

# ---------------------------------------------------------------- interactive, on a pty
cat >"$TMPDIR/shdrive.py" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["IT"])
from ptylib import Pty

P = Pty([sys.argv[1]])
P.read_until((b"$ ", b"# "), 10)  # the prompt (root's is "# ")
os.write(P.fd, b"case $- in *i*) echo mode-interactive;; esac; [ -t 0 ] && echo stdin-tty\n")
print("interactive", "yes" if P.read_until(b"stdin-tty\r\n", 10) and b"mode-interactive" in P.buf else "no")
os.write(P.fd, b"echo sum-$((6*7)); exit 5\n")
print("output", "yes" if P.read_until(b"sum-42", 10) else "no")
print("status", P.status(10))
EOF
OUT=$(timeout -k 2 40 python3 "$TMPDIR/shdrive.py" "$SH" 2>&1)
expect "on a pty, halo-sh alone is an interactive shell" yes "$(sed -n 's/^interactive //p' <<<"$OUT")"
expect "... which runs what is typed" yes "$(sed -n 's/^output //p' <<<"$OUT")"
expect "... and exits with the status typed (5)" 5 "$(sed -n 's/^status //p' <<<"$OUT")"

finish
