#!/bin/bash
# One-off flags (issue 24): --allow HOST[:PORT], --writable DIR, --env NAME[=VALUE],
# --host-port PORT, each repeatable, layered over every policy file (adding to its
# lists), validated like a file, each loosening said once on stderr and named in
# --dry-run's "policy:" line; and --mode MODE (issue 25), sandbox.mode over every file.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
E="$TMPDIR/_stderr"

start_origin o1 echo 127.0.0.1
O1=$(wait_port o1)
cat >"$W/base.yaml" <<'Y'
egress:
  default: deny
  allowedDomains: [two.test]
  allowPrivate: [127.0.0.1/32, 127.0.0.2/32]
Y
chmod a+r "$W/base.yaml"
fetch() { # URL: from inside, through the proxy
	echo "python3 client.py proxy 127.0.0.1 3128 GET $1"
}

# ---------------------------------------------------------------- --allow
hr base.yaml a1 -- curl -sS --max-time 20 "http://origin.test:$O1/hello" >"$W/out" 2>&1
expect "without --allow: origin.test is refused (default deny)" 0 "$(grep -c '^hello from' "$W/out")"
HR_ERR="$E" hr base.yaml a2 --allow origin.test -- curl -sS --max-time 20 "http://origin.test:$O1/hello" >"$W/out" 2>&1
expect_match "--allow origin.test: reached" "^hello from" "$(cat "$W/out")"
expect_match "--allow: the loosening said" "^halo-run: warning: command line: loosens egress.allowedDomains \(adds 'origin.test'\)" "$(cat "$E")"
expect "--allow: said once" 1 "$(grep -c "adds 'origin.test'" "$E")"
HR_ERR="$E" hr base.yaml a3 --allow origin.test -- curl -sS --max-time 20 "http://two.test:$O1/hello" >"$W/out" 2>&1
expect "--allow adds to the file's allowlist (two.test still allowed)" "" "$(grep 'egress denied: two.test' "$E" "$W/out")"
expect "... and decided by it" "allow" "$(aud a3 decision | cut -d' ' -f1)"
HR_ERR="$E" hr base.yaml a4 --allow "origin.test:1" -- curl -sS --max-time 20 "http://origin.test:$O1/hello" >"$W/out" 2>&1
expect "--allow HOST:PORT: another port stays refused" 0 "$(grep -c '^hello from' "$W/out")"

# ---------------------------------------------------------------- --writable, --env
mkdir -p "$TMPDIR/outside"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" -- sh -c "touch '$TMPDIR/outside/f' 2>/dev/null && echo wrote || echo refused" 2>/dev/null </dev/null)
expect "without --writable: a directory outside the workspace is read-only" refused "$OUT"
OUT=$(cd "$TMPDIR" && timeout -k 2 30 "$HALO" --workspace "$WS" --writable outside -- sh -c "touch '$TMPDIR/outside/f' && echo wrote" 2>"$E" </dev/null)
expect "--writable DIR (relative to the current directory): writable" wrote "$OUT"
expect_match "--writable: the loosening said" "loosens sandbox.writableRoots \(adds '$TMPDIR/outside'\)" "$(cat "$E")"
OUT=$(cd "$WS" && MYVAR=v1 timeout -k 2 30 "$HALO" --env MYVAR --env OTHER=v2 -- sh -c 'echo "$MYVAR:$OTHER"' 2>"$E" </dev/null)
expect "--env NAME passes it, --env NAME=VALUE sets it" "v1:v2" "$OUT"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --env UNSET_ONEOFF_VAR -- sh -c 'echo "[${UNSET_ONEOFF_VAR-unset}]"' 2>"$E" </dev/null)
expect "--env NAME of an unset variable: nothing passed" "[unset]" "$OUT"
expect_match "... and said" "--env UNSET_ONEOFF_VAR: not set in this environment; nothing is passed" "$(cat "$E")"

# A root through a linked parent directory is judged by where it leads: the link's
# name passed every rule, the launcher binds its target (here ~/.config, which holds
# halo-run's own policy directory: the command would write the next launch's policy).
mkdir -p "$HOME/.config" && ln -sfn "$HOME" "$TMPDIR/outside/hl"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --writable "$TMPDIR/outside/hl/.config" -- sh -c "mkdir -p '$HOME/.config/halo' && echo wrote" 2>"$E" </dev/null)
expect "--writable through a linked parent (-> ~/.config): refused, nothing run" "125:" "$?:$OUT"
expect_match "... named by where it leads" "resolves to .*/\.config, which contains halo-run's policy directory" "$(cat "$E")"
expect "... halo-run's policy directory not created" no "$([ -e "$HOME/.config/halo" ] && echo yes || echo no)"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --writable "$TMPDIR/outside/hl/outside" -- sh -c "touch '$TMPDIR/outside/g' && echo wrote" 2>"$E" </dev/null)
expect "--writable through a linked parent to an allowed directory: still writable" wrote "$OUT"

# A session's policy is fixed at its start: a later call with a one-off is refused,
# never silently run without it (nor with it), and the refusal names the flags.
S="oneoff$$"
(cd "$WS" && timeout -k 2 30 "$HALO" --session "$S" -- true </dev/null >/dev/null 2>&1)
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --session "$S" --allow origin.test -- echo ran 2>"$E" </dev/null)
expect "--session: a later call with --allow is refused, nothing run" "125:" "$?:$OUT"
expect_match "... naming the one-off flags as the cause" "effective policy differs .*one-off flags: --allow" "$(cat "$E")"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --session "$S" --mode read-only -- echo ran 2>"$E" </dev/null)
expect "--session: a later call with --mode is refused, nothing run" "125:" "$?:$OUT"
expect_match "... naming --mode among the causes" "effective policy differs .*--mode are fixed" "$(cat "$E")"
"$HALO" session stop "$S" >/dev/null 2>&1

# ---------------------------------------------------------------- --mode
# A read-only run says nothing of its own (issue 25 item 4): only the command's output.
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --mode read-only -- echo hello 2>"$E" </dev/null)
expect "--mode read-only -- echo hello: hello, and nothing on stderr" "0:hello:" "$?:$OUT:$(cat "$E")"
rm -f "$WS/ro-made"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --mode read-only -- sh -c '{ echo x >ro-made; } 2>/dev/null && echo wrote || echo refused' 2>"$E" </dev/null)
expect "--mode read-only: the workspace is read-only, nothing made" "refused:no" \
	"$OUT:$([ -e "$WS/ro-made" ] && echo yes || echo no)"
expect "... and said nothing (a tightening)" "" "$(cat "$E")"
printf 'sandbox:\n  mode: read-only\n' >"$W/ro.yaml"
chmod a+r "$W/ro.yaml"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --policy "$W/ro.yaml" --mode workspace-write -- sh -c 'echo x >ro-made && echo wrote' 2>"$E" </dev/null)
expect "--mode workspace-write over a read-only file: the workspace writable" wrote "$OUT"
expect_match "... the loosening said" "^halo-run: warning: command line: loosens sandbox.mode \(read-only → workspace-write\)" "$(cat "$E")"
rm -f "$WS/ro-made"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --mode readonly -- echo ran 2>&1 </dev/null)
expect "--mode readonly (not a mode): 125, nothing run" "125" "$?"
expect_match "... naming the modes" "--mode 'readonly': one of read-only, workspace-write, off" "$OUT"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --dry-run --mode read-only -- true 2>/dev/null </dev/null)
expect_match "--dry-run names --mode in its policy line" "^policy: .*command line \(--mode read-only\)" "$OUT"
expect_match "... and plans the mode" "^mode: read-only" "$OUT"

# ---------------------------------------------------------------- --host-port
PORT_FILE="$TMPDIR/hp.port"
timeout 60 python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
for _ in range(4):
    c, _ = s.accept(); c.sendall(b"host-service\n"); c.close()
' "$PORT_FILE" &
HP=$!
for _ in $(seq 50); do [ -s "$PORT_FILE" ] && break; sleep 0.1; done
P=$(cat "$PORT_FILE" 2>/dev/null)
CLIENT='import socket,sys
try:
    s=socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5); print(s.recv(64).decode().strip())
except OSError as e:
    print("refused")'
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" -- python3 -c "$CLIENT" "$P" 2>/dev/null </dev/null)
expect "without --host-port: the host service is out of reach" refused "$OUT"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --host-port "$P" -- python3 -c "$CLIENT" "$P" 2>"$E" </dev/null)
expect "--host-port PORT: the host service answers inside" host-service "$OUT"
expect_match "--host-port: the loosening said" "loosens egress.hostPorts \(adds $P\)" "$(cat "$E")"
kill "$HP" 2>/dev/null

# ---------------------------------------------------------------- --dry-run, validation
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --dry-run --allow a.example --writable "$TMPDIR/outside" --env FOO=secret-value --host-port 4873 -- true 2>"$E" </dev/null)
expect_match "--dry-run names every one-off in its policy line" \
	"^policy: .*command line \(--allow a.example, --writable $TMPDIR/outside, --env FOO, --host-port 4873\)" "$OUT"
expect "--dry-run: an --env value is never printed" 0 "$(cat "$E" <(echo "$OUT") | grep -c secret-value)"
expect "--dry-run: each loosening said once on stderr" 3 "$(grep -c 'command line: loosens' "$E")"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --allow Upper.example --allow '*' --writable /etc/x --env LD_PRELOAD=/x.so --host-port 0 --host-port 3128 --host-port x -- true 2>&1 </dev/null)
RC=$?
expect "invalid one-offs: 125, nothing run" 125 "$RC"
for want in "--host-port '0': a port is a number" "--host-port 'x': a port is a number" \
	"egress.allowedDomains\[[0-9]\]: 'Upper.example': upper case" "a bare '\*'" \
	"'/etc/x' is inside the system directory /etc" "'LD_PRELOAD' is reserved" \
	"3128 is halo-run's own HTTP proxy port"; do
	expect_match "validated like a file: $want" "$want" "$OUT"
done
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --env =x -- true 2>&1 </dev/null)
expect_match "--env =VALUE: needs a name" "--env: needs a variable name" "$OUT"
OUT=$(cd "$WS" && timeout -k 2 30 "$HALO" --allow -- true 2>&1 </dev/null)
expect "--allow without a value: usage error" 125 "$?"
finish
