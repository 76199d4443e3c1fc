#!/bin/bash
# The macOS launcher, on Linux: `halo-run profile --os macos` with any build; with the
# portable build (make PLATFORM=portable) also the whole launch through a fake
# sandbox-exec (tests/helpers/fake_sandbox_exec, which records its argv, profile, fds
# and environment, lints the profile and then runs halo-run's trampoline): exit codes,
# the wall clock, signals, the environment, limits, fd hygiene, refusals (a profile the
# fake refuses, a missing sandbox-exec, paths a profile cannot carry), the proxy behind
# the run's secret, the terminal, and with nm -u that nothing Linux-only is linked in.
# Loopback only: the origin listens on 127.0.0.1.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
FAKE="$HELPERS/fake_sandbox_exec"
cp "$HELPERS/it_sup" ./it_sup 2>/dev/null || true

# sbx ARGS...: run halo-run, bounded, stdin from /dev/null; sets OUT, ERR, RC.
sbx() {
	OUT=$(timeout -k 2 "${BOUND:-20}" "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

cat >pol.yaml <<'EOF'
sandbox:
  mode: workspace-write
  protectedPaths: [~/.ssh, ".env*"]
env:
  pass: [FAKE_SBX_LOG, FAKE_SBX_FAIL]
egress:
  default: deny
  allowedDomains: [127.0.0.1]
  allowPrivate: [127.0.0.1/32]
limits: {wallSeconds: 60}
EOF
printf 'sandbox:\n  protectedPaths: ["/nonexistent/a\\"b"]\n' >quote.yaml
printf 'sandbox:\n  mode: "off"\nenv:\n  pass: [FAKE_SBX_LOG]\n' >off.yaml

# ------------------------------------------------------------ profile (any build)
sbx profile --os macos --policy pol.yaml
expect "profile --os macos: exit 0" 0 "$RC"
expect_match "profile: (version 1) then (deny default)" \
	'^\(version 1\)$' "$OUT"
expect_match "profile: parameters listed" "^;;   -D WORKSPACE_0=/private$TMPDIR\$" "$OUT"
expect_match "profile: the .env* pattern case-insensitive" \
	'\(regex #"/\\\.\[Ee\]\[Nn\]\[Vv\]\[\^/\]\*\(/\.\*\)\?\$"\)' "$OUT"
expect_match "profile: network only to the proxy port" \
	'^\(allow network-outbound \(remote ip "localhost:49152"\)\)$' "$OUT"
sbx profile --policy pol.yaml
expect "profile: --os defaults to macos" 0 "$RC"
sbx profile --os linux --policy pol.yaml
expect "profile --os linux: exit 125" 125 "$RC"
expect_match "profile --os linux: not applicable, use --dry-run" "not applicable.*--dry-run" "$ERR"
sbx profile --os plan9
expect "profile --os plan9: exit 125" 125 "$RC"
printf 'sandbox:\n  mode: bogus\n' >bad.yaml
sbx profile --os macos --policy bad.yaml
expect "profile: invalid policy: exit 125" 125 "$RC"
sbx profile --os macos --policy quote.yaml
expect "profile: a path with a double quote: exit 125" 125 "$RC"
expect_match "profile: the double quote is named" 'contains a double quote' "$ERR"
sbx profile --os macos --policy off.yaml
expect "profile: mode off: exit 0, no profile" "0 0" "$RC $(grep -c '(version 1)' <<<"$OUT")"

# Issue 33: the doors the profile closes. No trustd/ocspd (they fetch certificate URLs
# past the proxy) unless the policy opts in, with a warning; no sysmond; no AF_SYSTEM
# sockets; the caller's own terminal by literal path, every other /dev/ttys* denied.
sbx profile --os macos --policy pol.yaml
allows=$(sed -n '/^(allow/,/^[(;]/p' <<<"$OUT")
expect "profile: trustd not allowed by default" 0 "$(grep -c 'com.apple.trustd' <<<"$OUT")"
expect "profile: ocspd not allowed by default" 0 "$(grep -c 'com.apple.ocspd' <<<"$OUT")"
expect "profile: no sysmond" 0 "$(grep -c 'sysmond' <<<"$OUT")"
expect "profile: no AF_SYSTEM sockets" 0 "$(grep -c 'AF_SYSTEM' <<<"$OUT")"
expect "profile: no write/ioctl rule over every /dev/ttys" 0 \
	"$(grep -c 'ttys\[0-9\]+\$") (vnode-type' <<<"$OUT")"
expect_match "profile: other terminals denied" \
	'^  \(require-all \(regex #"\^/dev/ttys\[0-9\]\+\$"\)$' "$OUT"
expect "profile: stdin not a terminal: no terminal named" 0 "$(grep -c 'TTY_0' <<<"$OUT")"
printf 'sandbox:\n  macos: {allowTrustd: true}\n' >trustd.yaml
sbx profile --os macos --policy trustd.yaml
expect "profile: allowTrustd: trustd allowed" 1 "$(grep -c '(global-name "com.apple.trustd")' <<<"$OUT")"
expect_match "profile: allowTrustd: warned as an egress path" \
	"warning: .*sandbox.macos.allowTrustd: .*an egress path" "$ERR"
printf 'sandbox:\n  macos: {allowTrustd: "yes"}\n' >trustd_bad.yaml
sbx profile --os macos --policy trustd_bad.yaml
expect "profile: allowTrustd not a boolean: refused (125)" 125 "$RC"
cat >ptyout.py <<'EOF'
import os, sys
sys.path.insert(0, os.environ["IT"])
from ptylib import Pty
P = Pty(sys.argv[1:])
P.drain(10)
P.status(5)
sys.stdout.write(P.buf.decode(errors="replace").replace("\r", ""))
EOF
if command -v python3 >/dev/null; then
	OUT=$(timeout -k 2 30 python3 ptyout.py "$HALO" profile --os macos --policy pol.yaml 2>&1 </dev/null)
	expect_match "profile on a terminal: the caller's terminal is a parameter" \
		'^;;   -D TTY_0=/dev/pts/[0-9]+$' "$OUT"
	expect_match "profile on a terminal: allowed by literal path" \
		'^      \(literal \(param "TTY_0"\)\)\)\)\)$' "$OUT"
	expect_match "profile on a terminal: carved out of the deny of the others" \
		'^    \(require-not \(literal \(param "TTY_0"\)\)\)\)\)$' "$OUT"
else
	skip "profile on a terminal" "python3 not installed"
fi

# Only the portable build goes further.
sbx --dry-run --policy pol.yaml -- true
if ! grep -q "macOS launcher" <<<"$OUT"; then
	finish
	exit
fi
expect_match "dry-run: the plan names the launcher and the profile" "profile:" "$OUT"
expect_match "dry-run: what is not enforced" "not yet run on a real Mac" "$OUT"

# ------------------------------------------------------------ nothing Linux-only
if command -v nm >/dev/null; then
	bad=$(nm -u "$HALO" | grep -oE '\b(epoll_[a-z_]+|signalfd[a-z0-9]*|timerfd_[a-z_]+|eventfd[a-z_]*|splice|pidfd_[a-z_]+|clone3|accept4|inotify_[a-z_]+)\b' | sort -u | tr '\n' ' ')
	expect "nm -u: no epoll, signalfd, timerfd, eventfd, splice, pidfd, clone3" "" "$bad"
	expect "nm -u: the binary has undefined symbols to check" 1 "$(nm -u "$HALO" | grep -c ' U poll@')"
else
	fail "nm available" "binutils missing"
fi

export HALO_TEST_SANDBOX_EXEC="$FAKE"
export FAKE_SBX_LOG="$TMPDIR/sbx.log"
P=(--policy pol.yaml)

# ------------------------------------------------------------ exit codes
sbx "${P[@]}" -- true
expect "exit 0" 0 "$RC"
sbx "${P[@]}" -- false
expect "exit 1" 1 "$RC"
sbx "${P[@]}" -- sh -c 'exit 42'
expect "exit 42" 42 "$RC"
sbx "${P[@]}" -- sh -c 'kill -TERM $$'
expect "killed by SIGTERM: 128+15" 143 "$RC"
sbx "${P[@]}" -- sh -c 'kill -KILL $$'
expect "killed by SIGKILL: 128+9" 137 "$RC"
sbx "${P[@]}" -- ./it_sup segv
expect "SIGSEGV: 128+11" 139 "$RC"
sbx "${P[@]}" -- no-such-command-halo
expect "command not found: 127" 127 "$RC"
expect_match "command not found: message" "no-such-command-halo: command not found" "$ERR"
printf 'echo hi\n' >notexec
chmod 644 notexec
sbx "${P[@]}" -- ./notexec
expect "not executable: 126" 126 "$RC"
expect_match "not executable: message" "notexec: Permission denied" "$ERR"
sbx "${P[@]}" -- sh -c 'echo out; echo err >&2'
expect "stdout passes through" "out" "$OUT"
expect "the command's stderr passes through (not the capture pipe)" "err" "$ERR"
( trap '' CHLD; exec "$HALO" "${P[@]}" -- sh -c 'exit 3' ) </dev/null 2>/dev/null
expect "a caller ignoring SIGCHLD still gets the status" 3 "$?"

# ------------------------------------------------------------ wall clock
start=$SECONDS
sbx "${P[@]}" --timeout 1 -- sh -c 'sleep 300 & echo $! >bgpid; sleep 300'
expect "timeout: 124" 124 "$RC"
expect "timeout: within a few seconds" 1 "$(( SECONDS - start < 8 ))"
expect_match "timeout: message" "wall-clock limit of 1 s" "$ERR"
bg=$(cat bgpid 2>/dev/null)
[ -n "$bg" ] && wait_for 3 sh -c "! kill -0 $bg 2>/dev/null"
expect "timeout: the command's background process is killed too" gone \
	"$( [ -n "$bg" ] && ! kill -0 "$bg" 2>/dev/null && echo gone)"
sbx "${P[@]}" -- sh -c 'sleep 300 >/dev/null 2>&1 & echo $! >bgpid2'
bg=$(cat bgpid2 2>/dev/null)
wait_for 3 sh -c "! kill -0 $bg 2>/dev/null"
expect "leftovers in the command's group are killed at the end" gone \
	"$( [ -n "$bg" ] && ! kill -0 "$bg" 2>/dev/null && echo gone)"

# ------------------------------------------------------------ signals
rm -f sigs sigs.ready
"$HALO" "${P[@]}" -- ./it_sup sigwait sigs </dev/null >/dev/null 2>"$E" &
HPID=$!
if wait_for 10 test -e sigs.ready; then
	for s in INT TERM HUP USR1 USR2 QUIT WINCH; do
		kill -s "$s" "$HPID" 2>/dev/null
		wait_for 3 grep -qx "$s" sigs
		expect "SIG$s forwarded to the command" "$s" "$(grep -x "$s" sigs)"
	done
else
	fail "signal forwarding" "the command never started: $(cat "$E")"
fi
wait "$HPID"
expect "signal forwarding: the command's own exit status (7)" 7 "$?"
rm -f ready
"$HALO" "${P[@]}" -- sh -c ': >ready; exec sleep 30' </dev/null >/dev/null 2>&1 &
HPID=$!
wait_for 10 test -e ready && sleep 0.2
kill -TERM "$HPID"
wait "$HPID"
expect "SIGTERM to halo-run ends the command: 143" 143 "$?"

# ------------------------------------------------------------ the launch itself
rm -f "$FAKE_SBX_LOG"
GITHUB_TOKEN=ghp_x AWS_SECRET_ACCESS_KEY=y SSH_AUTH_SOCK=/tmp/agent \
	sbx "${P[@]}" -- sh -c 'env; echo "tmp=$TMPDIR"; test -d "$TMPDIR" && touch "$TMPDIR/x" && echo tmp-writable'
expect "env: run exit 0" 0 "$RC"
expect "env: no GITHUB_TOKEN" 0 "$(grep -c '^GITHUB_TOKEN=' <<<"$OUT")"
expect "env: no AWS secret" 0 "$(grep -c '^AWS_SECRET_ACCESS_KEY=' <<<"$OUT")"
expect "env: no SSH_AUTH_SOCK" 0 "$(grep -c '^SSH_AUTH_SOCK=' <<<"$OUT")"
expect "env: HALO_SANDBOX=1" 1 "$(grep -cx 'HALO_SANDBOX=1' <<<"$OUT")"
# issue 33: the same environment rules as on Linux, with the same warnings
GHP=ghp_h5abcdefghijklmnopqrstuvwxyz0123456789
CI=$GHP LC_GH_TOKEN=x GOFLAGS="-mod=mod -toolexec=/tmp/x" sbx "${P[@]}" -- env
expect "env (macOS): CI holding a token is not passed" 0 "$(grep -c '^CI=' <<<"$OUT")"
expect "env (macOS): LC_GH_TOKEN is not a locale category" 0 "$(grep -c '^LC_GH_TOKEN=' <<<"$OUT")"
expect "env (macOS): GOFLAGS keeps only allowed flags" "GOFLAGS=-mod=mod" "$(grep '^GOFLAGS=' <<<"$OUT")"
expect_match "env (macOS): the warning names CI" "warning: CI: not passed: its value looks like a GitHub token" "$ERR"
expect "env (macOS): the token is nowhere" 0 "$(grep -c "$GHP" <<<"$OUT$ERR")"
rm -f "$FAKE_SBX_LOG"
GITHUB_TOKEN=ghp_x AWS_SECRET_ACCESS_KEY=y SSH_AUTH_SOCK=/tmp/agent \
	sbx "${P[@]}" -- sh -c 'env; echo "tmp=$TMPDIR"; test -d "$TMPDIR" && touch "$TMPDIR/x" && echo tmp-writable'
url=$(sed -n 's/^HTTPS_PROXY=//p' <<<"$OUT")
expect_match "env: proxy URL carries the run's secret" '^http://halo:[0-9a-f]{32}@127\.0\.0\.1:[0-9]+$' "$url"
port=${url##*:}
expect "env: ALL_PROXY is the same HTTP proxy" "$url" "$(sed -n 's/^ALL_PROXY=//p' <<<"$OUT")"
tmp=$(sed -n 's/^tmp=//p' <<<"$OUT")
expect_match "env: TMPDIR made for the run under the caller's" "^$TMPDIR/halo-run\.[A-Za-z0-9]{6}\$" "$tmp"
expect "env: TMPDIR writable" 1 "$(grep -cx tmp-writable <<<"$OUT")"
expect "TMPDIR removed after the run" gone "$( [ -n "$tmp" ] && [ ! -e "$tmp" ] && echo gone)"
log=$(cat "$FAKE_SBX_LOG" 2>/dev/null)
expect "fake sandbox-exec: argv starts -p PROFILE" "-p <PROFILE>" "$(sed -n '/^== argv/,/^== params/p' <<<"$log" | sed -n '3,4p' | tr '\n' ' ' | sed 's/ $//')"
expect_match "fake sandbox-exec: the trampoline after --" "^--$" "$(sed -n '/^== argv/,/^== params/p' <<<"$log")"
expect_match "fake sandbox-exec: halo-run __exec 3 4 -- sh" "__exec
3
4
--
sh" "$log"
expect "fake sandbox-exec: only fds 0-4 inherited" "0 1 2 3 4" "$(sed -n '/^== fds/{n;p}' <<<"$log")"
pg=$(sed -n '/^== pgrp/{n;p}' <<<"$log")
expect "fake sandbox-exec: runs in its own process group" "${pg#* }" "${pg% *}"
expect "fake sandbox-exec: -D TMPDIR_0 is the /private spelling" "TMPDIR_0=/private$tmp" \
	"$(sed -n '/^== params/,/^== fds/p' <<<"$log" | grep -x "TMPDIR_0=.*")"
expect "fake sandbox-exec: the profile allows exactly the proxy port" 1 \
	"$(grep -cx "(allow network-outbound (remote ip \"localhost:$port\"))" <<<"$log")"
expect "fake sandbox-exec: env has no GITHUB_TOKEN" 0 "$(sed -n '/^== env/,/^== profile/p' <<<"$log" | grep -c GITHUB_TOKEN)"
sbx "${P[@]}" -- ./it_sup fds
expect "the command inherits only stdio" "0 1 2" "$OUT"

# ------------------------------------------------------------ limits
sbx "${P[@]}" --limit nofile=64,fsize=1M -- sh -c 'ulimit -n; ulimit -f'
expect "limits: nofile and fsize applied (1 MiB = 2048 blocks)" "64 2048" "$(echo $OUT)"
sbx "${P[@]}" --limit nproc=20 -- sh -c 'ulimit -p'
expect "limits: nproc applied" 20 "$OUT"
sbx "${P[@]}" --limit mem=64M -- ./it_sup alloc 256
expect_match "limits: mem stops a 256 MiB allocation" "ENOMEM" "$OUT"

# ------------------------------------------------------------ refusals (exit 125)
rm -f ran
FAKE_SBX_FAIL=compile sbx "${P[@]}" -- sh -c ': >ran'
expect "profile refused by sandbox-exec: 125" 125 "$RC"
expect_match "profile refused: sandbox-exec's message shown" \
	"exited 65 before the command started.*sandbox-exec: syntax error in profile.*nothing was run" "$ERR"
expect "profile refused: the command did not run" absent "$( [ -e ran ] || echo absent)"
mkdir -p ws_HALO_FAKE_COMPILE_ERROR
sbx "${P[@]}" --workspace ws_HALO_FAKE_COMPILE_ERROR -- sh -c ": >$TMPDIR/ran"
expect "refused by a marker in a -D value: 125" 125 "$RC"
expect "refused by marker: the command did not run" absent "$( [ -e ran ] || echo absent)"
HALO_TEST_SANDBOX_EXEC=/nonexistent/sandbox-exec sbx "${P[@]}" -- sh -c ': >ran'
expect "missing sandbox-exec: 125" 125 "$RC"
expect_match "missing sandbox-exec: message" "/nonexistent/sandbox-exec: No such file.*never runs a command unsandboxed" "$ERR"
env -u HALO_TEST_SANDBOX_EXEC "$HALO" "${P[@]}" -- sh -c ': >ran' </dev/null >/dev/null 2>"$E"
expect "no override: /usr/bin/sandbox-exec is missing here: 125" 125 "$?"
expect_match "no override: names /usr/bin/sandbox-exec" "/usr/bin/sandbox-exec" "$(cat "$E")"
expect "missing sandbox-exec: the command did not run" absent "$( [ -e ran ] || echo absent)"
sbx --policy quote.yaml -- sh -c ': >ran'
expect "a protected path with a double quote: 125" 125 "$RC"
expect_match "double quote: named" 'contains a double quote' "$ERR"
mkdir -p "$TMPDIR/ws
nl"
sbx "${P[@]}" --workspace "$TMPDIR/ws
nl" -- sh -c ": >$TMPDIR/ran"
expect "a workspace with a newline: 125" 125 "$RC"
expect_match "newline: named" 'control character \(byte 0x0a, a newline\)' "$ERR"
expect "refusals: the command never ran" absent "$( [ -e ran ] || echo absent)"
expect "refusals: no TMPDIR left behind" 0 "$(ls -d "$TMPDIR"/halo-run.* 2>/dev/null | wc -l)"

# ------------------------------------------------------------ mode off
rm -f "$FAKE_SBX_LOG"
sbx --policy off.yaml -- sh -c 'env; exit 5'
expect "mode off: the command's status" 5 "$RC"
expect "mode off: no sandbox-exec" absent "$( [ -e "$FAKE_SBX_LOG" ] || echo absent)"
expect "mode off: no proxy variables" 0 "$(grep -c '_PROXY=' <<<"$OUT")"
sbx --policy off.yaml -- no-such-command-halo
expect "mode off: command not found: 127" 127 "$RC"

# ------------------------------------------------------------ the proxy and its secret
W="$TMPDIR/www"
mkdir -p "$W"
echo "hello through the proxy" >"$W/hello.txt"
cat >origin.py <<'EOF'
import http.server, os, sys
os.chdir(sys.argv[1])
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2] + ".tmp", "w").write(str(srv.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
srv.serve_forever()
EOF
python3 origin.py "$W" "$TMPDIR/origin.port" 2>/dev/null &
OPID=$!
if wait_for 10 test -s "$TMPDIR/origin.port" && command -v curl >/dev/null; then
	o=$(cat "$TMPDIR/origin.port")
	# NO_PROXY names 127.0.0.1 (direct, which the profile blocks on a Mac): --noproxy ''
	# makes curl use the proxy for the local origin here.
	sbx "${P[@]}" --audit "$TMPDIR/audit" -- sh -c '
		c() { curl -s -o /dev/null -w "%{http_code}" --noproxy "" --max-time 10 "$@"; echo; }
		hostport=${http_proxy##*@}
		echo "with=$(curl -s --noproxy "" --max-time 10 http://127.0.0.1:'"$o"'/hello.txt)"
		echo "without=$(c -x "http://$hostport" http://127.0.0.1:'"$o"'/hello.txt)"
		echo "wrong=$(c -x "http://halo:00000000000000000000000000000000@$hostport" http://127.0.0.1:'"$o"'/hello.txt)"
		echo "connect_without=$(curl -s -o /dev/null -w "%{http_connect}" --noproxy "" --max-time 10 -p -x "http://$hostport" http://127.0.0.1:'"$o"'/hello.txt)"
		echo "denied=$(c http://denied.example/)"
		echo "socks=$(c --socks5-hostname "$hostport" http://127.0.0.1:'"$o"'/hello.txt)"'
	expect "proxy: with the secret, the local origin answers" "hello through the proxy" "$(sed -n 's/^with=//p' <<<"$OUT")"
	expect "proxy: without the secret: 407" 407 "$(sed -n 's/^without=//p' <<<"$OUT")"
	expect "proxy: a wrong secret: 407" 407 "$(sed -n 's/^wrong=//p' <<<"$OUT")"
	expect "proxy: CONNECT without the secret: 407" 407 "$(sed -n 's/^connect_without=//p' <<<"$OUT")"
	expect "proxy: a host the policy does not allow: 403" 403 "$(sed -n 's/^denied=//p' <<<"$OUT")"
	expect "proxy: SOCKS5 refused (it cannot carry the secret)" 000 "$(sed -n 's/^socks=//p' <<<"$OUT")"
	expect "proxy: the allowed request is in the audit log" 1 \
		"$(grep '"host":"127.0.0.1"' "$TMPDIR/audit" 2>/dev/null | grep -c '"decision":"allow"')"
else
	fail "proxy origin" "python3 origin or curl unavailable"
fi
kill "$OPID" 2>/dev/null
wait "$OPID" 2>/dev/null

# ------------------------------------------------------------ the terminal
cat >ptydrive.py <<'EOF'
import os, sys, time
mode, argv = sys.argv[1], sys.argv[2:]
sys.path.insert(0, os.environ["IT"])
from ptylib import Pty

P = Pty(argv)
if mode == "read":
    ok = P.read_until(b"ready", 10)
    os.write(P.fd, b"hello\n")
    print("read", "yes" if P.read_until(b"got:hello", 10) else "no")
    print("status", P.status(10))
elif mode == "intr":
    ok = P.read_until(b"ready", 10)
    time.sleep(0.3)
    os.write(P.fd, b"\x03")
    print("status", P.status(10))
EOF
rm -f "$FAKE_SBX_LOG"
out=$(timeout 40 python3 ptydrive.py read "$HALO" "${P[@]}" -- sh -c 'echo ready; read x; echo "got:$x"' 2>&1)
expect "tty: the command reads the terminal (it has the foreground)" yes "$(sed -n 's/^read //p' <<<"$out")"
expect "tty: exit 0" 0 "$(sed -n 's/^status //p' <<<"$out")"
expect_match "tty: the launch named the caller's terminal to sandbox-exec" \
	'^TTY_0=/dev/pts/[0-9]+$' "$(sed -n '/^== params/,/^== fds/p' "$FAKE_SBX_LOG")"
out=$(timeout 40 python3 ptydrive.py intr "$HALO" "${P[@]}" -- sh -c 'echo ready; exec sleep 30' 2>&1)
expect "tty: ^C reaches the command once: 130" 130 "$(sed -n 's/^status //p' <<<"$out")"

# Job control under an interactive bash: the command reading the terminal from the
# background stops the job, `fg` gives it the terminal; ^Z stops the job, `fg` resumes.
cat >jobdrive.py <<'EOF'
import os, pty, select, sys, time
halo, pol = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.environ["PS1"] = "PROMPT$ "
    os.execv("/bin/bash", ["bash", "--norc", "--noprofile", "-i"])
buf = b""
def until(pat, secs):
    global buf
    end = time.time() + secs
    while time.time() < end:
        if pat in buf:
            return True
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                return False
            if not d:
                return False
            buf += d
    return pat in buf
def say(k, v):
    print(k, "yes" if v else "no", flush=True)
until(b"PROMPT$ ", 10)
run = "%s --policy %s -- sh -c " % (halo, pol)
os.write(fd, (run + "'read x; echo got:$x' &\n").encode())
time.sleep(1.5)
os.write(fd, b"jobs\n")
say("bg_stopped", until(b"Stopped", 10))
os.write(fd, b"fg\n")
time.sleep(0.5)
os.write(fd, b"hello\n")
say("fg_read", until(b"got:hello", 10))
buf = b""
os.write(fd, (run + "'echo started; read y; echo got2:$y'\n").encode())
until(b"started", 10)
time.sleep(0.3)
os.write(fd, b"\x1a")
say("tstp_stopped", until(b"Stopped", 10))
os.write(fd, b"fg\n")
time.sleep(0.5)
os.write(fd, b"world\n")
say("fg2_read", until(b"got2:world", 10))
os.write(fd, b"exit\n")
time.sleep(0.3)
try:
    os.kill(pid, 9)
except OSError:
    pass
EOF
if [ -x /bin/bash ]; then
	out=$(timeout 60 python3 jobdrive.py "$HALO" "$TMPDIR/pol.yaml" 2>&1)
	expect "jobs: reading the terminal from the background stops the job" yes "$(sed -n 's/^bg_stopped //p' <<<"$out")"
	expect "jobs: fg gives the command the terminal" yes "$(sed -n 's/^fg_read //p' <<<"$out")"
	expect "jobs: ^Z stops the job" yes "$(sed -n 's/^tstp_stopped //p' <<<"$out")"
	expect "jobs: fg resumes it with the terminal" yes "$(sed -n 's/^fg2_read //p' <<<"$out")"
fi

finish
