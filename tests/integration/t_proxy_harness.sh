#!/bin/bash
# Real clients through the proxy on its own (tests/helpers/proxy_harness), before the
# sandbox integration: curl through CONNECT (-p -x), absolute form (-x) and
# --socks5-hostname, python3 urllib with a ProxyHandler, wget, and git clone over
# smart HTTP from a local git http-backend (python3's CGI server). Every row checks the
# audit record, so a client that silently bypassed the proxy would fail. Deny rows show
# 403 with X-Halo-Deny. Loopback only: origins on 127.0.0.1 and 127.0.0.2; the
# policy's allowPrivate opens 127.0.0.0/8, and a second proxy without it refuses
# 127.0.0.1 before any connect (the origin's log stays empty).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
H="$HELPERS/proxy_harness"
if [ ! -x "$H" ]; then
	fail "proxy_harness helper present" "$H missing"
	finish
	exit
fi
W="$TMPDIR/px"
mkdir -p "$W/www/cgi-bin" "$W/www1" "$W/repos"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

# ----------------------------------------------------------------- origins
echo "hello from 127.0.0.2" >"$W/www/hello.txt"
echo "hello from 127.0.0.1" >"$W/www1/hello.txt"
. "$IT/git_http_lib.sh"
git_http_fixture "$W" "cloned through the proxy"
cat >"$W/origin.py" <<'EOF'
import http.server, os, sys
root, bind, portfile, log = sys.argv[1:5]
os.chdir(root)
class H(http.server.CGIHTTPRequestHandler):
    cgi_directories = ["/cgi-bin"]
    def log_message(self, fmt, *args):
        with open(log, "a") as f:
            f.write("REQ " + (fmt % args) + "\n")
import socketserver
class S(http.server.ThreadingHTTPServer):
    # HTTPServer.server_bind() calls getfqdn(), a reverse lookup that, for an address
    # missing from /etc/hosts, would leave the machine as a DNS query: never do that.
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]
srv = S((bind, 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
EOF
start_origin() { # ROOT BIND NAME
	python3 "$W/origin.py" "$1" "$2" "$W/$3.port" "$W/$3.log" 2>>"$W/$3.err" &
	pids+=($!)
}
start_origin "$W/www" 127.0.0.2 o2
start_origin "$W/www1" 127.0.0.1 o1

# ------------------------------------------------------------------ proxies
cat >"$W/allow.yaml" <<'EOF'
egress:
  default: deny
  allowedDomains: [localhost, 127.0.0.1, 127.0.0.2]
  deniedDomains: [pastebin.com]
  allowPrivate: [127.0.0.0/8, "::1/128"]
EOF
cat >"$W/noprivate.yaml" <<'EOF'
egress:
  default: deny
  allowedDomains: [localhost, 127.0.0.1]
EOF
start_proxy() { # NAME POLICY ARGS...
	local n=$1 pol=$2
	shift 2
	"$H" --policy "$W/$pol" --http-port 0 --socks-port 0 --audit "$W/$n.audit" "$@" \
		>"$W/$n.ready" 2>"$W/$n.err" &
	pids+=($!)
}
start_proxy pa allow.yaml --head-ms 300
start_proxy pb allow.yaml --poll
start_proxy pc noprivate.yaml

wait_for() { # FILE: up to 5 s for it to be non-empty
	for _ in $(seq 50); do [ -s "$1" ] && return 0; sleep 0.1; done
	return 1
}
for f in o1.port o2.port pa.ready pb.ready pc.ready; do
	wait_for "$W/$f" || fail "$f ready" "$(cat "$W"/*.err 2>/dev/null | head -5)"
done
O1=$(cat "$W/o1.port")
O2=$(cat "$W/o2.port")
port_of() { sed -n "s/.*$2=\([0-9]*\).*/\1/p" "$W/$1.ready"; }
PA=$(port_of pa http) SA=$(port_of pa socks) PB=$(port_of pb http) PC=$(port_of pc http)

# The newest audit record of proxy NAME, as "proto host decision address class".
# The record is written when the connection ends, which the proxy may notice just
# after the client exits: wait (at most 2 s) for a record newer than the last seen.
declare -A AUDIT_SEEN
last_audit() {
	local n=0
	for _ in $(seq 20); do
		n=$(wc -l <"$W/$1.audit")
		[ "$n" -gt "${AUDIT_SEEN[$1]:-0}" ] && break
		sleep 0.1
	done
	AUDIT_SEEN[$1]=$n
	python3 - "$W/$1.audit" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
r = recs[-1]
print(r["proto"], r["host"], r["decision"], r.get("address", "-"), r.get("class", "-"))
EOF
}
C=(curl -sS --max-time 10)
ere() { sed 's/[][().*]/\\&/g' <<<"$1"; } # TEXT as a literal ERE

# ------------------------------------------------------------------- allowed
OUT=$("${C[@]}" -p -x "http://127.0.0.1:$PA" "http://127.0.0.2:$O2/hello.txt" 2>&1)
expect "curl CONNECT (-p -x): body" "hello from 127.0.0.2" "$OUT"
expect "curl CONNECT: audit" "connect 127.0.0.2 allow 127.0.0.2 -" "$(last_audit pa)"

OUT=$("${C[@]}" -x "http://127.0.0.1:$PA" "http://localhost:$O1/hello.txt" 2>&1)
expect "curl absolute form (-x), name resolved: body" "hello from 127.0.0.1" "$OUT"
expect "curl absolute form: audit" "http localhost allow 127.0.0.1 -" "$(last_audit pa)"

OUT=$("${C[@]}" --socks5-hostname "127.0.0.1:$SA" "http://localhost:$O1/hello.txt" 2>&1)
expect "curl --socks5-hostname: body" "hello from 127.0.0.1" "$OUT"
expect "curl --socks5-hostname: audit" "socks5 localhost allow 127.0.0.1 -" "$(last_audit pa)"

OUT=$(python3 - "http://127.0.0.1:$PA" "http://127.0.0.2:$O2/hello.txt" 2>&1 <<'EOF'
import sys, urllib.request
op = urllib.request.build_opener(urllib.request.ProxyHandler({"http": sys.argv[1]}))
print(op.open(sys.argv[2], timeout=10).read().decode().strip())
EOF
)
expect "python3 urllib ProxyHandler: body" "hello from 127.0.0.2" "$OUT"
expect "python3 urllib: audit" "http 127.0.0.2 allow 127.0.0.2 -" "$(last_audit pa)"

OUT=$(timeout 15 wget -q -O - -e use_proxy=yes -e "http_proxy=http://127.0.0.1:$PA" \
	"http://127.0.0.2:$O2/hello.txt" 2>&1)
expect "wget -e use_proxy: body" "hello from 127.0.0.2" "$OUT"
expect "wget: audit" "http 127.0.0.2 allow 127.0.0.2 -" "$(last_audit pa)"

before=$(wc -l <"$W/pa.audit")
OUT=$(timeout 30 git -c "http.proxy=http://127.0.0.1:$PA" clone -q \
	"http://127.0.0.2:$O2/cgi-bin/git/demo.git" "$W/clone" 2>&1)
expect "git clone over smart HTTP: exit 0" 0 "$?"
expect "git clone: README" "cloned through the proxy" "$(cat "$W/clone/README" 2>&1)"
# Records are written when a connection ends, which the proxy may notice just after
# git exits: wait for them, bounded.
for _ in $(seq 50); do
	after=$(wc -l <"$W/pa.audit")
	[ $((after - before)) -ge 2 ] && break
	sleep 0.1
done
if [ $((after - before)) -ge 2 ]; then ok "git clone: every request audited ($((after - before)))"; else
	fail "git clone: every request audited" "only $((after - before)) records"; fi

OUT=$("${C[@]}" -p -x "http://127.0.0.1:$PB" "http://127.0.0.2:$O2/hello.txt" 2>&1)
expect "poll() backend: curl CONNECT" "hello from 127.0.0.2" "$OUT"
OUT=$("${C[@]}" -x "http://127.0.0.1:$PB" "http://localhost:$O1/hello.txt" 2>&1)
expect "poll() backend: curl absolute form" "hello from 127.0.0.1" "$OUT"

# -------------------------------------------------------------------- denied
DENY_HDR="X-Halo-Deny: pastebin.com (deniedDomains[0] pastebin.com)"
DENY_BODY="blocked by egress policy: pastebin.com (deniedDomains[0] pastebin.com)"
OUT=$("${C[@]}" -i -x "http://127.0.0.1:$PA" "http://pastebin.com/" 2>&1 | tr -d '\r')
expect_match "curl -x denied: 403" "^HTTP/1.1 403 Forbidden" "$OUT"
expect_match "curl -x denied: X-Halo-Deny" "^$(ere "$DENY_HDR")\$" "$OUT"
expect "curl -x denied: body" "$DENY_BODY" "$(tail -1 <<<"$OUT")"

OUT=$("${C[@]}" -v -p -x "http://127.0.0.1:$PA" "https://pastebin.com/" 2>&1 | tr -d '\r')
expect_match "curl CONNECT denied: 403" "CONNECT tunnel failed, response 403" "$OUT"
expect_match "curl CONNECT denied: X-Halo-Deny" "< $(ere "$DENY_HDR")" "$OUT"

"${C[@]}" --socks5-hostname "127.0.0.1:$SA" "http://pastebin.com/" >/dev/null 2>&1
expect "curl --socks5-hostname denied: exit 97" 97 "$?"
expect "socks5 denied: audit" "socks5 pastebin.com deny - -" "$(last_audit pa)"

OUT=$(timeout 15 wget -S -O /dev/null -e use_proxy=yes -e "http_proxy=http://127.0.0.1:$PA" \
	"http://pastebin.com/" 2>&1)
expect_match "wget denied: 403 with X-Halo-Deny" "X-Halo-Deny: pastebin.com" "$OUT"

OUT=$(python3 - "http://127.0.0.1:$PA" 2>&1 <<'EOF'
import sys, urllib.request, urllib.error
op = urllib.request.build_opener(urllib.request.ProxyHandler({"http": sys.argv[1]}))
try:
    op.open("http://pastebin.com/", timeout=10)
except urllib.error.HTTPError as e:
    print(e.code, e.headers["X-Halo-Deny"])
EOF
)
expect "python3 urllib denied" "403 pastebin.com (deniedDomains[0] pastebin.com)" "$OUT"

n=$(grep -c "egress denied: pastebin.com" "$W/pa.err")
expect "denial line printed once per host" 1 "$n"
expect_match "denial line text" \
	"^halo-run: egress denied: pastebin.com:80 \(deniedDomains\[0\] pastebin.com\)$" \
	"$(cat "$W/pa.err")"

# Head timeout: a client that stalls mid-head gets 408.
OUT=$(python3 - "$PA" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET http://127.0.0.2/ HTT")
print(s.recv(100).split(b"\r\n")[0].decode())
EOF
)
expect "stalled head: 408" "HTTP/1.1 408 Request Timeout" "$OUT"

# ------------------------------------------- loopback without allowPrivate
reqs_before=$(cat "$W/o1.log" 2>/dev/null | wc -l)
OUT=$("${C[@]}" -i -x "http://127.0.0.1:$PC" "http://localhost:$O1/hello.txt" 2>&1 | tr -d '\r')
expect_match "no allowPrivate: 403" "^HTTP/1.1 403 Forbidden" "$OUT"
# localhost is 127.0.0.1, and ::1 too on a stock Debian /etc/hosts: the resolver's
# first answer is refused, whichever family it is.
LO='(127\.0\.0\.1|::1)'
expect_match "no allowPrivate: X-Halo-Deny names the address" \
	"^X-Halo-Deny: localhost \(address $LO is loopback, not in allowPrivate\)$" "$OUT"
expect_match "no allowPrivate: audit record" "^http localhost deny $LO loopback$" \
	"$(last_audit pc)"
expect "no allowPrivate: the origin saw nothing" "$reqs_before" "$(cat "$W/o1.log" | wc -l)"

# ---------------------------------------------------------------- the audit
OUT=$(python3 - "$W/pa.audit" <<'EOF'
import json, sys, re
keys = {"time", "proto", "host", "port", "decision", "rule", "bytes_up", "bytes_down",
        "duration_ms"}
bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if not keys <= r.keys() or not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["time"]):
        bad += 1
print(bad)
EOF
)
expect "audit: every record complete and well-formed" 0 "$OUT"
finish
