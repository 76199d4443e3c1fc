#!/bin/bash
# The creation broker never holds the sandbox: a call that waits (an open that breaks a
# file lease, a FIFO without its other end) is answered apart from the others, so
# other creations, signal forwarding and the run's exit go on; leases cannot be taken
# inside. Timings are measured from the host, each run under its own timeout (the old
# binary held everything for the kernel's lease-break time, 45 s by default).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
W=$TMPDIR
HOLDER=

cleanup() { [ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null; }
trap cleanup EXIT

now_ms() { date +%s%3N; }

# A read lease on $1 held from the host (the sandbox cannot take one), until killed.
# SIGIO (the break notice) is ignored, so the lease stays for the whole break time.
hold_lease() {
	rm -f "$W/lease.ready"
	python3 - "$1" "$W/lease.ready" <<'EOF' &
import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
except OSError as e:
    open(sys.argv[2], "w").write("error %s" % e)
    sys.exit(1)
open(sys.argv[2], "w").write("held")
time.sleep(120)
EOF
	HOLDER=$!
	for _ in $(seq 50); do [ -s "$W/lease.ready" ] && break; sleep 0.1; done
	[ "$(cat "$W/lease.ready" 2>/dev/null)" = held ]
}
drop_lease() {
	[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null && wait "$HOLDER" 2>/dev/null
	HOLDER=
}

if ! command -v python3 >/dev/null; then
	skip "lease rows" "python3 is needed to take a lease"
	finish
	exit
fi

# 1. Inside, F_SETLEASE is refused (the seccomp table), F_GETLEASE still answers.
echo data >"$W/own"
out=$(timeout -k 2 20 "$HALO" --quiet -- python3 -c '
import fcntl, os
fd = os.open("own", os.O_RDONLY)
print("get", fcntl.fcntl(fd, fcntl.F_GETLEASE))
try:
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    print("lease taken")
except OSError as e:
    print("refused", e.errno)
' 2>&1)
expect "F_SETLEASE inside is EPERM, F_GETLEASE answers" "get 2
refused 1" "$out"

# 2. A lease held outside on a workspace file: the command's open for writing waits
# for the break (in the background), and another creation completes at once; the run
# ends right after the command, not after the break.
echo data >"$W/leased"
rm -f "$W/other" "$W/elapsed"
if hold_lease "$W/leased"; then
	t0=$(now_ms)
	out=$(timeout -k 2 20 "$HALO" -- bash -c '
		( : >>leased ) &
		sleep 0.3
		a=$(date +%s%3N); : >other; b=$(date +%s%3N)
		echo $((b - a)) >elapsed
		exit 0' 2>&1)
	rc=$?
	t1=$(now_ms)
	expect "lease held: the run exits 0" 0 "$rc"
	el=$(cat "$W/elapsed" 2>/dev/null || echo none)
	if [ "$el" != none ] && [ "$el" -lt 1000 ]; then
		ok "lease held: another creation completes within a second ($el ms)"
	else
		fail "lease held: another creation completes within a second" "took ${el} ms; $out"
	fi
	if [ $((t1 - t0)) -lt 3000 ]; then
		ok "lease held: the run exits within a second of the command ($((t1 - t0)) ms in all)"
	else
		fail "lease held: the run exits within a second of the command" "$((t1 - t0)) ms"
	fi
	drop_lease
else
	skip "lease held rows" "cannot take a read lease here: $(cat "$W/lease.ready" 2>/dev/null)"
	drop_lease
fi

# 3. SIGTERM reaches the command while an open waits on a lease break.
if hold_lease "$W/leased"; then
	rm -f "$W/started"
	timeout -k 2 20 "$HALO" -- bash -c '( : >>leased ) & sleep 0.2; : >started; sleep 30' \
		>/dev/null 2>&1 &
	hp=$!
	for _ in $(seq 50); do [ -e "$W/started" ] && break; sleep 0.1; done
	t0=$(now_ms)
	kill -TERM "$hp"
	wait "$hp"
	rc=$?
	t1=$(now_ms)
	expect "lease wait pending: SIGTERM ends the run (143)" 143 "$rc"
	if [ -e "$W/started" ] && [ $((t1 - t0)) -lt 2000 ]; then
		ok "lease wait pending: the run ends within a second of SIGTERM ($((t1 - t0)) ms)"
	else
		fail "lease wait pending: the run ends within a second of SIGTERM" \
			"$((t1 - t0)) ms, started: $([ -e "$W/started" ] && echo yes || echo no)"
	fi
	drop_lease
else
	skip "SIGTERM during a lease wait" "cannot take a read lease here"
fi

# 4. The open itself still completes when the break is over (here: the holder lets
# go), with O_TRUNC applied and the data written.
if hold_lease "$W/leased"; then
	( sleep 1; kill "$HOLDER" ) &
	killer=$!
	out=$(timeout -k 2 20 "$HALO" --quiet -- bash -c 'echo new >leased; cat leased' 2>&1)
	wait "$killer"
	HOLDER=
	expect "lease released: the waiting open completes and truncates" new "$out"
else
	skip "waiting open completes" "cannot take a read lease here"
fi

# 4b. Whatever waits in the broker, a denial reaches the audit and --fail-on-deny: a
# background process asks the proxy for a denied host (loopback only: the proxy denies
# before any lookup) while another open waits on a lease break; the command exits 0.
printf 'egress:\n  default: deny\n  allowedDomains: [allowed.example]\n' >"$W/deny.yaml"
rm -f "$W/audit.jsonl"
if hold_lease "$W/leased"; then
	out=$(timeout -k 2 20 "$HALO" --policy "$W/deny.yaml" --audit "$W/audit.jsonl" \
		--fail-on-deny -- bash -c '
		( : >>leased ) &
		sleep 0.2
		( : >x; exec 3<>/dev/tcp/127.0.0.1/3128
		  printf "CONNECT denied.example:443 HTTP/1.1\r\nHost: denied.example:443\r\n\r\n" >&3
		  read -r -t 5 line <&3; echo "$line" >answer ) &
		for i in $(seq 50); do [ -s answer ] && break; sleep 0.1; done
		exit 0' 2>&1)
	rc=$?
	expect "lease held, denied CONNECT: --fail-on-deny fails the run (122)" 122 "$rc"
	expect_match "lease held, denied CONNECT: the audit records it" '"denied\.example"' \
		"$(cat "$W/audit.jsonl" 2>/dev/null)"
	drop_lease
else
	skip "denial while a lease wait is pending" "cannot take a read lease here"
fi

# 5. FIFOs: writers with no reader wait apart; creations go on; beyond the bound of
# waiting opens the next one fails at once (EAGAIN) instead of waiting.
rm -f "$W/fifo" "$W/elapsed"
out=$(timeout -k 2 30 "$HALO" -- bash -c '
	mkfifo fifo
	for i in $(seq 70); do ( : >fifo ) 2>/dev/null & done
	# Settled: the refused ones have exited (bounded: 10 s, under load too).
	for i in $(seq 100); do [ "$(jobs -r | wc -l)" -le 64 ] && break; sleep 0.1; done
	sleep 0.3
	a=$(date +%s%3N); : >other; b=$(date +%s%3N)
	echo $((b - a)) >elapsed
	n=$(jobs -r | wc -l)
	echo "waiting $n"
	exit 0' 2>&1)
rc=$?
el=$(cat "$W/elapsed" 2>/dev/null || echo none)
expect "70 FIFO writers: the run exits 0" 0 "$rc"
if [ "$el" != none ] && [ "$el" -lt 1000 ]; then
	ok "70 FIFO writers: another creation completes within a second ($el ms)"
else
	fail "70 FIFO writers: another creation completes within a second" "$el ms: $out"
fi
n=$(sed -n 's/^waiting //p' <<<"$out")
if [ "$n" = 64 ]; then
	ok "70 FIFO writers: at most 64 wait, the rest are refused at once ($n waiting)"
else
	fail "70 FIFO writers: at most 64 wait, the rest are refused at once" "$out"
fi

# 5b. A name chosen inside reaches halo-run's own lines escaped: a hook file named with
# ESC and a newline that forge a `halo-run: egress denied` line, refused by the git
# rules and named in halo-run's closing warning. The command's own complaints go to
# /dev/null: every byte on stderr is halo-run's.
rm -rf "$W/repo" && mkdir "$W/repo" && git -C "$W/repo" init -q 2>/dev/null
if [ -d "$W/repo/.git/hooks" ]; then
	err=$(cd "$W/repo" && timeout -k 2 20 "$HALO" -- bash -c \
		$'exec 2>/dev/null; : >".git/hooks/x\e[2J\nhalo-run: egress denied: evil.example:443 (forged)"; exit 0' \
		2>&1 >/dev/null)
	if grep -q $'\e' <<<"$err"; then
		fail "hostile hook name: no raw ESC on stderr" "$(od -c <<<"$err" | head -5)"
	else
		ok "hostile hook name: no raw ESC on stderr"
	fi
	expect "hostile hook name: no forged halo-run line" 0 \
		"$(grep -c '^halo-run: egress denied' <<<"$err")"
	expect_match "hostile hook name: named, escaped, in the refusal warning" \
		'^halo-run: warning: refused 1 change to git hooks .*hooks/x\\x1b\[2J\\x0ahalo-run: egress denied' "$err"
else
	skip "hostile hook name rows" "git init failed here"
fi

# 6. Modes still follow the caller's umask (init's is 0; the broker masks per call).
out=$(timeout -k 2 20 "$HALO" --quiet -- bash -c '
	umask 027; : >m1; mkdir d1; mkfifo f1
	umask 077; : >m2; mkdir d2
	python3 -c "import os, socket; os.umask(0o027); socket.socket(socket.AF_UNIX).bind(\"s1\")"
	stat -c "%a" m1 d1 f1 m2 d2 s1 | tr "\n" " "' 2>&1)
expect "umask applied per call: files, directories, FIFOs, sockets" "640 750 640 600 700 750 " "$out"

# 7. The git rules' check and the creation it allows are one step, whatever the
# worker threads: two calls racing (open hooks/pre-commit in a directory without refs/;
# mkdir refs/ while its hooks/ is still empty) never both pass. The pool without the
# judgment lock let about 1 pair in 75 through: a git directory with a hook the host's
# next git would run.
cat >"$W/race.py" <<'EOF'
import os, sys, threading, time
n, limit = int(sys.argv[1]), time.time() + float(sys.argv[2])
bar = threading.Barrier(2)
def hook(d):
    bar.wait()
    try:
        os.close(os.open(d + "/hooks/pre-commit", os.O_CREAT | os.O_WRONLY, 0o755))
    except OSError:
        pass
def refs(d):
    bar.wait()
    try:
        os.mkdir(d + "/refs")
    except OSError:
        pass
done = 0
for i in range(n):
    if time.time() > limit:
        break
    d = "race/r%d" % i
    os.makedirs(d + "/objects"); os.mkdir(d + "/hooks")
    ts = [threading.Thread(target=f, args=(d,)) for f in (hook, refs)]
    [t.start() for t in ts]; [t.join() for t in ts]
    done += 1
print("tries", done)
EOF
rm -rf "$W/race"
out=$(timeout -k 2 60 "$HALO" -- python3 race.py 1500 30 2>/dev/null)
both=0
for d in "$W"/race/r*; do
	[ -d "$d/refs" ] && [ -e "$d/hooks/pre-commit" ] && both=$((both + 1))
done
tries=$(sed -n 's/^tries //p' <<<"$out")
if [ "${tries:-0}" -lt 200 ]; then
	skip "racing hook and refs/: never both" "only ${tries:-0} tries in 30 s"
else
	expect "racing hook and refs/: never both ($tries tries)" 0 "$both"
fi

# 8. An O_TMPFILE gets the mode the kernel gives it in the directory it is made in,
# not in that directory's parent: the caller's umask where that directory has no
# default ACL (even if its parent has one), the ACL where it has one.
python3 - "$W" <<'EOF' || true
import os, struct, sys
w = sys.argv[1]
def ent(tag, perm): return struct.pack("<HHI", tag, perm, 0xffffffff)
acl = struct.pack("<I", 2) + ent(1, 7) + ent(4, 7) + ent(0x10, 7) + ent(0x20, 7)
for d in ("acl1", "acl1/t", "acl2", "acl2/t"):
    os.makedirs(os.path.join(w, d), exist_ok=True)
os.setxattr(os.path.join(w, "acl1"), "system.posix_acl_default", acl)
os.setxattr(os.path.join(w, "acl2/t"), "system.posix_acl_default", acl)
EOF
if getfattr_ok=$(python3 -c 'import os,sys; os.getxattr(sys.argv[1], "system.posix_acl_default")' "$W/acl1" 2>&1); then
	out=$(timeout -k 2 20 "$HALO" --quiet -- python3 -c '
import os
os.umask(0o077)
for d in ("acl1/t", "acl2/t"):
    fd = os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o666)
    print(d, oct(os.fstat(fd).st_mode & 0o777))
' 2>&1)
	expect "O_TMPFILE: umask in a directory without default ACL (its parent has one)" \
		"acl1/t 0o600" "$(sed -n 1p <<<"$out")"
	expect "O_TMPFILE: the default ACL of the directory it is made in" \
		"acl2/t 0o666" "$(sed -n 2p <<<"$out")"
else
	skip "O_TMPFILE modes under default ACLs" "no POSIX ACLs here: $getfattr_ok"
fi

# 9. bind() with a unix address longer than struct sockaddr_un (addrlen 128): EINVAL,
# as the kernel answers it. The old broker copied the path into a 109-byte buffer of
# init's (an overrun of 17 bytes chosen by the command) and then answered otherwise.
out=$(timeout -k 2 20 "$HALO" --quiet -- python3 -c '
import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
for n in (128, 111):
    buf = ctypes.create_string_buffer(b"\x01\x00" + b"s" * (n - 2), n)
    r = libc.bind(s.fileno(), buf, n)
    print(n, r, ctypes.get_errno() if r < 0 else 0)
' 2>&1)
expect "bind with an over-long unix address: EINVAL" "128 -1 22
111 -1 22" "$out"

finish
