#!/bin/bash
# egress.hostPorts: a listed port of the host's loopback is reachable inside the
# sandbox at localhost:P, 127.0.0.1:P and [::1]:P (listeners made inside the sandbox's
# network namespace; the supervisor dials the host's 127.0.0.1:P, then [::1]:P, and
# relays). Listing the port is the permission: no allowedDomains entry. Each connection
# is audited (proto hostport, the rule egress.hostPorts[i]). A port not listed is
# refused inside; nothing listening on the host closes the client's connection with
# one stderr line per port (none with --quiet). The listed ports are taken inside
# (EADDRINUSE). Bad lists are refused with 125. Without user namespaces
# (failIfUnavailable: false) the command reaches the host's loopback directly.
#
# Origins are egress_origin.py (GET /hello answers "hello from BIND") on ports the
# kernel picks, on 127.0.0.1 or on ::1 only. Nothing leaves loopback.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
W="$TMPDIR/hp"
mkdir -p "$W/ws"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT

start_origin() { # NAME BIND
	timeout 280 python3 "$IT/egress_origin.py" echo "$2" "$W/$1.port" "$W/$1.log" \
		2>>"$W/$1.err" &
	pids+=($!)
}
wait_port() { # NAME: its port, waiting up to 5 s
	for _ in $(seq 50); do
		[ -s "$W/$1.port" ] && {
			cat "$W/$1.port"
			return 0
		}
		sleep 0.1
	done
	fail "origin $1 listening" "$(head -c 300 "$W/$1.err" 2>/dev/null)"
	echo 0
}
conns() { grep -c '^CONN' "$W/$1.log" 2>/dev/null; } # connections origin NAME saw
free_port() {                                        # a port nothing listens on (v4 and v6)
	python3 -c '
import socket
for _ in range(50):
    s = socket.socket(socket.AF_INET6); s.bind(("::1", 0)); p = s.getsockname()[1]
    t = socket.socket(); ok = t.connect_ex(("127.0.0.1", p)) != 0; t.close(); s.close()
    if ok and p not in (3128, 1080):
        print(p); break'
}

# hr POLICY AUDIT [HALO OPTIONS] -- CMD...: halo-run from the workspace, stderr in $W/err
hr() {
	local pol=$1 aud=$2
	shift 2
	rm -f "$W/$aud"
	(cd "$W/ws" && timeout -k 5 60 "$HALO" --policy "$W/$pol" --audit "$W/$aud" "$@" \
		</dev/null) 2>"$W/err"
}
# aud AUDIT [FIELD...]: each record's fields, records joined by ';'
aud() {
	python3 - "$W/$1" "${@:2}" <<'EOF'
import json, os, sys
path, fields = sys.argv[1], sys.argv[2:] or ["proto", "host", "port", "decision", "address"]
recs = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
print(";".join(" ".join(str(r.get(f, "-")) for f in fields) for r in recs))
EOF
}
# A raw TCP client inside: send a request, print what came back ("<closed>" when
# the connection closed without a byte, "<refused>" when it was refused).
cat >"$W/ws/raw.py" <<'EOF'
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    s = socket.create_connection((host, port), timeout=10)
except ConnectionRefusedError:
    print("<refused>"); sys.exit(0)
except PermissionError:  # Landlock's TCP rule, where it still applies
    print("<denied>"); sys.exit(0)
s.sendall(b"GET /hello HTTP/1.0\r\nHost: x\r\n\r\n")
data = b""
while True:
    try:
        b = s.recv(65536)
    except ConnectionResetError:
        print("<reset>"); sys.exit(0)
    if not b:
        break
    data += b
print(data.decode(errors="replace").split("\r\n\r\n", 1)[-1].strip() if data else "<closed>")
EOF
chmod -R a+rX "$W"

start_origin v4 127.0.0.1
start_origin v6 ::1
start_origin other 127.0.0.1
# sink: reads to EOF, answers the count (7 digits) and the bytes back
timeout 280 python3 -c '
import socket, sys
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
open(sys.argv[1], "w").write(str(l.getsockname()[1]))
while True:
    c, _ = l.accept(); data = b""
    while True:
        b = c.recv(65536)
        if not b: break
        data += b
    c.sendall(b"%07d" % len(data) + data); c.close()' "$W/sink.port" 2>>"$W/sink.err" &
pids+=($!)
P4=$(wait_port v4) P6=$(wait_port v6) PO=$(wait_port other) PS=$(wait_port sink)
PN=$(free_port)
[ -n "$PN" ] || fail "a free port for the nothing-listening rows"

printf 'egress:\n  default: deny\n  hostPorts: [%s, %s, %s]\n' "$P6" "$P4" "$PS" >"$W/hp.yaml"
printf 'egress:\n  hostPorts: [%s]\n' "$PN" >"$W/none.yaml"
C=(curl -sS --max-time 10)
H4="hello from 127.0.0.1" H6="hello from ::1"

# ------------------------------------------------ a host service on 127.0.0.1
row() { # NAME WANT CMD...: inside under hp.yaml; the body, and one audit record
	local name=$1 want=$2 out
	shift 2
	out=$(hr hp.yaml a.audit -- "$@")
	expect "$name: exit 0" 0 "$?"
	expect "$name: body" "$want" "$out"
	expect "$name: audit" "hostport localhost $P4 allow 127.0.0.1" "$(aud a.audit)"
}
row "curl localhost, --noproxy '*'" "$H4" "${C[@]}" --noproxy '*' "http://localhost:$P4/hello"
row "curl 127.0.0.1, --noproxy '*'" "$H4" "${C[@]}" --noproxy '*' "http://127.0.0.1:$P4/hello"
row "curl [::1], --noproxy '*'" "$H4" "${C[@]}" --noproxy '*' -g "http://[::1]:$P4/hello"
row "curl localhost, proxy variables as set" "$H4" "${C[@]}" "http://localhost:$P4/hello"
row "curl 127.0.0.1, proxy variables as set" "$H4" "${C[@]}" "http://127.0.0.1:$P4/hello"
row "curl [::1], proxy variables as set" "$H4" "${C[@]}" -g "http://[::1]:$P4/hello"
row "raw TCP client, 127.0.0.1" "$H4" python3 raw.py 127.0.0.1 "$P4"
row "raw TCP client, ::1" "$H4" python3 raw.py ::1 "$P4"
expect "the audit names the rule and the port" "egress.hostPorts[1] $P4 hostport" \
	"$(aud a.audit rule proto)"
out=$(hr hp.yaml a.audit -- sh -c 'env | grep -i "^no_proxy="')
expect_match "NO_PROXY keeps loopback direct" "localhost.*127\.0\.0\.1.*::1" "$out"

# The --verbose summary: one row per port, with its rule.
out=$(hr hp.yaml a.audit --verbose -- sh -c \
	"${C[*]} -o /dev/null http://localhost:$P4/hello && ${C[*]} -o /dev/null http://127.0.0.1:$P4/hello")
expect_match "--verbose: summary row localhost:PORT, 2 allowed, the rule" \
	"localhost:$P4 +allow +2 +0 .*egress\.hostPorts\[1\] $P4" "$(cat "$W/err")"

# 3 MB each way through the relay: the sink counts what arrived and sends it back.
out=$(hr hp.yaml a.audit -- python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(b"x" * 3000000)
s.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = s.recv(65536)
    if not b: break
    got += b
print(len(got), got[:7].decode())' "$PS")
expect "3 MB up and back through a host port" "3000007 3000000" "$out"
expect "... audit counts the bytes" "hostport 3000000 3000007" "$(aud a.audit proto bytes_up bytes_down)"

# ------------------------------------------------ a host service on ::1 only
out=$(hr hp.yaml a.audit -- "${C[@]}" "http://127.0.0.1:$P6/hello")
expect "v6-only host service, curl 127.0.0.1 inside" "0:$H6" "$?:$out"
expect "... dialed the host's ::1 after 127.0.0.1 refused" \
	"hostport localhost $P6 allow ::1 egress.hostPorts[0] $P6" \
	"$(aud a.audit proto host port decision address rule)"
out=$(hr hp.yaml a.audit -- "${C[@]}" "http://localhost:$P6/hello")
expect "v6-only host service, curl localhost inside" "0:$H6" "$?:$out"
out=$(hr hp.yaml a.audit -- python3 raw.py 127.0.0.1 "$P6")
expect "v6-only host service, raw TCP client" "$H6" "$out"

# ------------------------------------------------ a port not listed
before=$(conns other)
out=$(hr hp.yaml a.audit -- python3 raw.py 127.0.0.1 "$PO")
expect_match "a port not listed: unreachable inside (refused)" "^<refused>$" "$out"
hr hp.yaml a.audit -- "${C[@]}" --noproxy '*' "http://127.0.0.1:$PO/hello" >/dev/null
expect "... curl fails to connect (7)" 7 "$?"
expect "... the host's service saw nothing" "$before" "$(conns other)"
expect "... no audit record (nothing was relayed)" "" "$(aud a.audit)"
# Through the proxy (a client that ignores NO_PROXY) an unlisted port of the host's
# loopback stays refused (no allowPrivate), and `check` says the same.
out=$(hr hp.yaml a.audit -- "${C[@]}" --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$PO/hello")
expect "the proxy refuses an unlisted port of the host's loopback (403)" "403" "$out"
expect "... the host's service saw nothing" "$before" "$(conns other)"
out=$(timeout 30 "$HALO" check --policy "$W/hp.yaml" "127.0.0.1:$PO" 2>&1 </dev/null)
expect_match "... check 127.0.0.1:$PO agrees (deny)" "^1 deny 127\.0\.0\.1:$PO rule: default deny" "$(echo "$?" $out)"

# ------------------------------------------------ a listed port through the proxy
# A client that sends localhost:P to the proxy anyway gets what `check` says (review
# 21): CONNECT, SOCKS5 and forwarding dial the host's 127.0.0.1:P, then [::1]:P, as
# the listener does, audited with the request's proto and the hostPorts rule.
PX=(--noproxy '' -x http://127.0.0.1:3128)
prow() { # NAME WANT-AUDIT CURL-ARGS...
	local name=$1 want=$2 out
	shift 2
	out=$(hr hp.yaml a.audit -- "${C[@]}" "$@")
	expect "through the proxy, $name: the host's service answers" "0:$H4" "$?:$out"
	expect "... audited with the hostPorts rule" "$want" "$(aud a.audit proto host port decision address rule)"
}
prow "http://localhost:$P4" "http localhost $P4 allow 127.0.0.1 egress.hostPorts[1] $P4" \
	"${PX[@]}" "http://localhost:$P4/hello"
prow "http://127.0.0.1:$P4" "http 127.0.0.1 $P4 allow 127.0.0.1 egress.hostPorts[1] $P4" \
	"${PX[@]}" "http://127.0.0.1:$P4/hello"
prow "CONNECT localhost:$P4" "connect localhost $P4 allow 127.0.0.1 egress.hostPorts[1] $P4" \
	"${PX[@]}" -p "http://localhost:$P4/hello"
prow "CONNECT [::1]:$P4" "connect ::1 $P4 allow 127.0.0.1 egress.hostPorts[1] $P4" \
	"${PX[@]}" -p -g "http://[::1]:$P4/hello"
prow "SOCKS5 localhost:$P4" "socks5 localhost $P4 allow 127.0.0.1 egress.hostPorts[1] $P4" \
	--noproxy '' --socks5-hostname 127.0.0.1:1080 "http://localhost:$P4/hello"
out=$(hr hp.yaml a.audit -- "${C[@]}" "${PX[@]}" "http://localhost:$P6/hello")
expect "through the proxy, a v6-only host service: [::1] after 127.0.0.1 refused" "0:$H6" "$?:$out"
expect "... audited" "http localhost $P6 allow ::1" "$(aud a.audit proto host port decision address)"

# ------------------------------------------------ nothing listening on the host
out=$(hr none.yaml n.audit -- sh -c \
	"python3 raw.py 127.0.0.1 $PN; python3 raw.py ::1 $PN; ${C[*]} http://localhost:$PN/ 2>&1")
expect_match "nothing listening: the raw client sees a closed connection" \
	"^<closed>"$'\n'"<closed>" "$out"
expect_match "... curl: empty reply" "curl: \(52\)" "$out"
err=$(cat "$W/err")
expect "... halo-run says why once (one line for three connections)" 1 \
	"$(grep -c "host port $PN" <<<"$err")"
expect_match "... naming the port, the rule and the reason" \
	"host port $PN \(egress\.hostPorts\[0\] $PN\): connection refused on the host's 127\.0\.0\.1:$PN and \[::1\]:$PN" \
	"$err"
expect "... audited as allowed, with the error" \
	"allow connection refused;allow connection refused;allow connection refused" \
	"$(aud n.audit decision error)"
hr none.yaml n.audit --quiet -- python3 raw.py 127.0.0.1 "$PN" >/dev/null
expect "... --quiet: no line" "" "$(grep "host port" "$W/err")"

# ------------------------------------------------ the ports are taken inside
out=$(hr hp.yaml a.audit -- python3 -c '
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1]))); print("bound")
except OSError as e:
    print(e.errno)' "$P4")
expect "a listed port is taken inside: bind gets EADDRINUSE" 98 "$out"
out=$(hr hp.yaml a.audit --dry-run -- true)
expect_match "--dry-run lists the host ports" "host ports \(egress\.hostPorts\): $P6, $P4, $PS" "$out"
expect_match "--dry-run says they are taken inside (EADDRINUSE)" \
	"taken inside the sandbox: a command that binds one gets EADDRINUSE" "$out"
out=$("$HALO" policy --json --policy "$W/hp.yaml" 2>&1)
expect_match "policy --json shows hostPorts" "\"hostPorts\":"$'\t'"\[$P6, $P4, $PS\]" "$out"

# ------------------------------------------------ validation (125)
bad() { # NAME VALUE WANT-MESSAGE
	printf 'egress:\n  hostPorts: %s\n' "$2" >"$W/bad.yaml"
	hr bad.yaml b.audit -- echo ran >"$W/out"
	expect "$1: exit 125, nothing ran" "125:" "$?:$(cat "$W/out")"
	expect_match "$1: message" "$3" "$(cat "$W/err")"
}
bad "a string" '["4873"]' 'egress\.hostPorts\[0\]: expected a port number .*got the string .4873.'
bad "zero" '[0]' 'egress\.hostPorts\[0\]: must be an integer from 1 to 65535, got 0'
bad "negative" '[80, -1]' 'egress\.hostPorts\[1\]: must be an integer from 1 to 65535, got -1'
bad "too big" '[65536]' 'egress\.hostPorts\[0\]: must be an integer from 1 to 65535'
bad "not an integer" '[4873.5]' 'egress\.hostPorts\[0\]: must be an integer .*4873\.5'
bad "hex" '[0x10]' "egress\.hostPorts\[0\]: '0x10' is not a plain decimal"
bad "the HTTP proxy port" '[3128]' "egress\.hostPorts\[0\]: 3128 is halo-run's own HTTP proxy port"
bad "the SOCKS5 proxy port" '[1080]' "egress\.hostPorts\[0\]: 1080 is halo-run's own SOCKS5 proxy port"
bad "a duplicate" "[$P4, $P4]" "egress\.hostPorts\[1\]: $P4 is listed twice"
bad "not a list" "$P4" 'egress\.hostPorts: expected a list of port numbers'
printf '{"egress": {"hostPorts": [%s, "%s"]}}\n' "$P4" "$P6" >"$W/bad.json"
hr bad.json b.audit -- echo ran >/dev/null
expect "JSON string: 125" 125 "$?"
expect_match "JSON string: message" 'egress\.hostPorts\[1\]: expected a port number' "$(cat "$W/err")"
printf 'sandbox: {mode: off}\negress: {hostPorts: [%s]}\n' "$P4" >"$W/bad.yaml"
hr bad.yaml b.audit -- echo ran >/dev/null
expect "mode off with hostPorts: 125" 125 "$?"
expect_match "mode off: message" 'egress\.hostPorts: not allowed with sandbox\.mode off' \
	"$(cat "$W/err")"
printf 'egress:\n  hostPorts: [%s]\n' "$P6" >"$W/base.yaml"
(cd "$W/ws" && timeout 30 "$HALO" --policy "$W/base.yaml" --policy "$W/hp.yaml" -- true \
	</dev/null) 2>"$W/err"
expect_match "a later file adding a port is reported as a loosening" \
	"loosens egress\.hostPorts \(adds $P4\)" "$(cat "$W/err")"

# ------------------------------------------------ check: the loopback names
# One loopback-name rule (policy_loopback_name): each loopback name with a listed port
# is relayed to the host, as `halo-run hook` takes it for the sandbox's own loopback;
# a name that merely starts with localhost goes through Decide() (default deny).
for t in "localhost:$P4" "LOCALHOST.:$P4" "ip6-localhost:$P4" "ip6-loopback:$P4" \
	"localhost.localdomain:$P4" "a.localhost:$P4"; do
	out=$(timeout 30 "$HALO" check --policy "$W/hp.yaml" "$t" 2>&1 </dev/null)
	expect_match "check $t: relayed (egress.hostPorts)" \
		"^0 allow .* rule: egress\.hostPorts\[1\] $P4 " "$(echo "$?" $out)"
done
out=$(timeout 30 "$HALO" check --policy "$W/hp.yaml" "localhost.test:$P4" 2>&1 </dev/null)
expect_match "check localhost.test:$P4: not a loopback name (default deny)" \
	"^1 deny .*default deny" "$(echo "$?" $out)"

# ------------------------------------------------ no user namespaces (degraded)
if [ -x "$HELPERS/it_nouserns" ]; then
	printf 'sandbox: {failIfUnavailable: false}\negress:\n  hostPorts: [%s]\n' "$P4" \
		>"$W/degrade.yaml"
	out=$(cd "$W/ws" && timeout -k 2 30 "$HELPERS/it_nouserns" "$HALO" --quiet \
		--policy "$W/degrade.yaml" -- "${C[@]}" "http://127.0.0.1:$P4/hello" 2>"$W/err" </dev/null)
	expect "degraded (no namespaces): a listed port is the host's, reached directly" \
		"0:$H4" "$?:$out"
	out=$(cd "$W/ws" && timeout -k 2 30 "$HELPERS/it_nouserns" "$HALO" --dry-run \
		--policy "$W/degrade.yaml" -- true 2>&1 </dev/null)
	expect_match "degraded --dry-run says so" "no network namespace: the command reaches the host's loopback directly" "$out"
else
	fail "degraded rows" "helper it_nouserns missing"
fi

finish
