#!/bin/bash
# The proxy's system calls per CONNECT tunnel (issue 25 item 6): the engine as the
# sandbox's supervisor runs it (tests/helpers/proxy_harness) under strace -f -c, with
# the bench's rate client (bench_net rate: connect, CONNECT, a 64-byte echo, a second
# one, close; the client checks every answer and every echoed byte and fails
# otherwise). Per connection: the difference between a run of 550 and one of 110
# connections (warm-up included), so that start-up and shut-down cancel out.
# Budgets (measured 25 system calls besides accept4 and epoll_wait, 32 before):
#   recvfrom <= 7: the request, the first flight, four echoes less the one the hello
#     read, both EOFs; no read after a short one (it would only say EAGAIN);
#   epoll_ctl <= 4: the client's interest stays registered while the origin is
#     dialled (no DEL + ADD per connection), and a loopback origin, connected
#     within connect() itself, is registered once for reading (no ADD for
#     writability, then a MOD);
#   connect <= 2: the dial, and for a loopback origin the question whether it is
#     done already (it is: the kernel ran the handshake within the first call);
#   shutdown <= 1: both ends at EOF, close() alone sends the last FIN;
#   getsockopt 0: a socket reported writable without an error has connected;
#   setsockopt <= 3: the window clamp on the accepted socket, Nagle and the low-water
#     mark on the dialled one (the accepted one inherits them from its listener).
# Loopback only: the origin (bench_net sink) and the proxy listen on 127.0.0.1.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
NET="$HELPERS/bench_net"
H="$HELPERS/proxy_harness"
W="$TMPDIR/sc"
mkdir -p "$W"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

if ! command -v strace >/dev/null; then
	skip "system calls per tunnel" "strace is not installed (make deps)"
	finish
	exit
fi
for f in "$NET" "$H"; do
	[ -x "$f" ] || { fail "helper present" "$f missing (make all)"; finish; exit; }
done
if ! strace -f -qq -o /dev/null true 2>"$W/probe.err"; then
	skip "system calls per tunnel" "strace cannot trace here: $(head -c 200 "$W/probe.err")"
	finish
	exit
fi

"$NET" sink 0 >"$W/sink.out" 2>"$W/sink.err" &
pids+=($!)
for ((n = 0; n < 50; n++)); do
	origin=$(awk '{print $2}' "$W/sink.out" 2>/dev/null)
	[ -n "$origin" ] && break
	sleep 0.1
done
if [ -z "$origin" ]; then
	fail "origin started" "$(head -c 300 "$W/sink.err")"
	finish
	exit
fi
cat >"$W/p.yaml" <<'EOF'
egress:
  default: deny
  allowedDomains: [127.0.0.1]
  allowPrivate: [127.0.0.1/32]
EOF

# traced N: N connections (8 at a time) through a traced proxy; strace's table in
# $W/st.N. 1 when a step failed (the reason in $W/why).
traced() {
	local spid hpid port n
	rm -f "$W/h.$1.out"
	strace -f -c -o "$W/st.$1" "$H" --policy "$W/p.yaml" --http-port 0 --socks-port 0 \
		--quiet >"$W/h.$1.out" 2>"$W/h.$1.err" &
	spid=$!
	pids+=("$spid")
	for ((n = 0; n < 100; n++)); do
		port=$(sed -n 's/.*http=\([0-9]*\).*/\1/p' "$W/h.$1.out" 2>/dev/null)
		[ -n "$port" ] && break
		sleep 0.1
	done
	hpid=$(pgrep -P "$spid" | head -1)
	[ -n "$hpid" ] && pids+=("$hpid")
	if [ -z "$port" ] || [ -z "$hpid" ]; then
		echo "the traced proxy did not start: $(head -c 300 "$W/h.$1.err")" >"$W/why"
		return 1
	fi
	if ! timeout 60 "$NET" rate 127.0.0.1 "$port" "$origin" "$1" 8 >"$W/rate.$1" 2>&1; then
		echo "the rate client failed: $(head -c 300 "$W/rate.$1")" >"$W/why"
		return 1
	fi
	kill "$hpid"
	for ((n = 0; n < 100; n++)); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	[ -s "$W/st.$1" ] || { echo "no strace table" >"$W/why"; return 1; }
}

# calls FILE NAME: the calls of one system call in a strace -c table (0 when absent).
calls() { awk -v s="$2" '$NF == s { print $4; f = 1 } END { if (!f) print 0 }' "$1"; }

for n in 100 500; do
	if ! traced $n; then
		fail "traced run of $n connections" "$(cat "$W/why")"
		finish
		exit
	fi
	expect_match "$n connections through the traced proxy" "^rate n=$n " "$(cat "$W/rate.$n")"
done
conns=$((500 + 50 - 100 - 10)) # each run adds a tenth as warm-up
per() { awk -v a="$(calls "$W/st.100" "$1")" -v b="$(calls "$W/st.500" "$1")" -v n=$conns \
	'BEGIN { printf "%.2f", (b - a) / n }'; }
table=""
total=0
for s in $(awk 'NR > 2 && $NF != "total" && $NF ~ /^[a-z_0-9]+$/ { print $NF }' "$W/st.500"); do
	v=$(per "$s")
	case $v in 0.00 | -0.00) ;; *) table="$table $s=$v" ;; esac
	case $s in accept4 | epoll_wait | epoll_pwait) ;; *) total=$(awk -v a="$total" -v b="$v" 'BEGIN { print a + b }') ;; esac
done
echo "# per connection:$table (besides accept4 and epoll_wait: $total)"
# within: NAME BUDGET: the per-connection count of NAME is at most BUDGET (+0.2 for
# the odd extra call: a signal, a retry).
within() {
	local v
	v=$(per "$1")
	if awk -v v="$v" -v b="$2" 'BEGIN { exit !(v <= b + 0.2) }'; then
		ok "$1 per tunnel $v <= $2"
	else
		fail "$1 per tunnel" "$v, budget $2"
	fi
}
within recvfrom 7
within epoll_ctl 4
within connect 2
within shutdown 1
within getsockopt 0
within setsockopt 3
within sendto 5
if awk -v v="$total" 'BEGIN { exit !(v <= 26.5) }'; then
	ok "system calls per tunnel besides accept4 and epoll_wait: $total <= 26"
else
	fail "system calls per tunnel besides accept4 and epoll_wait" "$total, budget 26 (32 before)"
fi
finish
