#!/bin/bash
# Proxy-unaware clients by name (issue 13, items 2, 3 and 7): inside the sandbox, name
# resolution is halo-run's (its own /etc/hosts, resolv.conf and nsswitch.conf; the DNS
# stub at 127.0.0.53), an allowed name gets a fake address from 198.18.0.0/15, and a
# connection to it is captured into the proxy and decided by name. Real clients run
# with every proxy variable unset: curl --noproxy '*', python sockets and
# http.client, Node's fetch, Go's net.Dial. Denied names never resolve (A, AAAA, TXT,
# ANY, over UDP and TCP; malformed queries FORMERR) and nothing but the stub's own
# record is ever made of them; a refused SSH connection (captured, or a CONNECT to
# port 22) is answered so that OpenSSH prints halo-run's reason. Names on the host
# side come from egress_lib.sh's bind-mounted /etc/hosts: that is the supervisor's
# resolver, which keeps working while the sandbox sees halo-run's files.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

cp "$IT/capture_client.py" "$WS/cc.py"
printf '127.0.0.1 denied.test other.test gitdeny.test portonly.test\n' >>"$W/etc/hosts"
start_origin c1 echo 127.0.0.1
P=$(wait_port c1)
cat >"$W/cap.yaml" <<EOF2
egress:
  default: deny
  allowedDomains: [origin.test, "gitdeny.test:443", "portonly.test:$P"]
  deniedDomains: [denied.test]
  allowPrivate: [127.0.0.1/32, 127.0.0.2/32]
EOF2
chmod a+r "$W/cap.yaml"
# Every proxy variable halo-run sets, unset: the clients below know of no proxy.
NOPROXY=(env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy -u ALL_PROXY -u all_proxy
	-u NO_PROXY -u no_proxy -u NODE_USE_ENV_PROXY -u NODE_OPTIONS -u JAVA_TOOL_OPTIONS
	-u npm_config_proxy -u npm_config_https_proxy -u CARGO_HTTP_PROXY)
cap() { hr cap.yaml a.audit -- "${NOPROXY[@]}" "$@"; }
recs() { aud a.audit proto host port decision | tr ';' '\n' | grep -v '^dns' | paste -sd';'; }

# ------------------------------------------------------------ halo-run's own files
OUT=$(cap sh -c 'cat /etc/resolv.conf /etc/nsswitch.conf /etc/hosts')
expect_match "resolv.conf inside names the stub (the host side's says 127.0.0.1)" "^nameserver 127\.0\.0\.53$" "$OUT"
expect_match "nsswitch.conf inside: hosts: files dns" "^hosts: files dns$" "$OUT"
expect_match "/etc/hosts inside: localhost" "^127\.0\.0\.1[[:space:]]localhost$" "$OUT"
if grep -q origin.test <<<"$OUT"; then fail "/etc/hosts inside: none of the host side's names"; else
	ok "/etc/hosts inside: none of the host side's names"; fi
OUT=$("${WRAP[@]}" "$HALO" --policy "$W/cap.yaml" --dry-run -- true 2>&1)
expect_match "--dry-run shows halo-run's resolv.conf" "^  /etc/resolv.conf +halo-run's own" "$OUT"
expect_match "--dry-run says what is captured and what not" "not captured: UDP other than DNS, IP literals" "$OUT"

# A host whose resolv.conf is a symlink into /run (systemd-resolved): the sandbox's
# /run is its own fresh tmpfs, where halo-run's copy is written at the link's target.
mkdir -p "$W/etc2"
cp -a /etc/. "$W/etc2/" 2>/dev/null
rm -f "$W/etc2/resolv.conf"
ln -s ../run/systemd/resolve/stub-resolv.conf "$W/etc2/resolv.conf"
cp "$W/etc/hosts" "$W/etc/nsswitch.conf" "$W/etc2/"
BIND2='mount --bind "$0/etc2" /etc || exit 125'
if [ "$AS" = root ]; then
	W2=(unshare --mount --propagation private sh -c "$BIND2; exec \"\$@\"" "$W")
else
	W2=(unshare --user --map-current-user --mount --propagation private --keep-caps
		sh -c "$BIND2; exec setpriv --inh-caps=-all --ambient-caps=-all -- \"\$@\"" "$W")
fi
OUT=$(cd "$WS" && timeout -k 5 60 "${W2[@]}" "$HALO" --policy "$W/cap.yaml" -- "${NOPROXY[@]}" \
	sh -c "cat /etc/resolv.conf; curl -sS --max-time 10 --noproxy '*' http://origin.test:$P/hello" \
	</dev/null 2>"$W/err")
expect_match "resolv.conf a symlink into /run: halo-run's copy at its target" "^nameserver 127\.0\.0\.53$" "$OUT"
expect_match "... and names resolve through the stub" "^hello from 127\.0\.0\.1$" "$OUT"

# ------------------------------------------------------------ clients by name
OUT=$(cap curl -sS --max-time 10 --noproxy '*' "http://origin.test:$P/hello")
expect "curl --noproxy '*': reaches the allowed origin by name" "hello from 127.0.0.1" "$OUT"
expect "... captured and decided by name" "captured origin.test $P allow" "$(recs)"
expect_match "... the lookup is audited with its fake address" '"proto":"dns","host":"origin.test".*"address":"198\.1[89]\.' "$(cat "$W/a.audit")"
expect "python socket" "hello from 127.0.0.1" "$(cap python3 cc.py sock origin.test "$P")"
expect "python http.client" "200 hello from 127.0.0.1" "$(cap python3 cc.py httpc origin.test "$P")"
expect "a name allowed on this port only (portonly.test:$P)" "200 hello from 127.0.0.1" \
	"$(cap python3 cc.py httpc portonly.test "$P")"
if command -v node >/dev/null; then
	OUT=$(cap node -e "fetch('http://origin.test:$P/hello').then(r => r.text()).then(t => console.log(t.trim()), e => console.log('error', e.cause ? e.cause.code : e))")
	expect "node fetch" "hello from 127.0.0.1" "$OUT"
	expect "... captured" "captured origin.test $P allow" "$(recs)"
else
	skip "node fetch" "node not installed"
fi
if command -v go >/dev/null; then
	mkdir -p "$W/godial"
	cat >"$W/godial/main.go" <<'EOF2'
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	c, err := net.DialTimeout("tcp", os.Args[1], 10*time.Second)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Fprintf(c, "GET /hello HTTP/1.0\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(c)
	last := ""
	for {
		l, err := r.ReadString('\n')
		if l != "" {
			last = l
		}
		if err != nil {
			break
		}
	}
	fmt.Print(last)
}
EOF2
	if (cd "$W/godial" && env GOCACHE="$W/gocache" GOPATH="$W/gopath" GO111MODULE=off GOFLAGS= \
		CGO_ENABLED=0 timeout 120 go build -o "$WS/godial" main.go) >"$W/go.err" 2>&1; then
		expect "go net.Dial (pure Go resolver)" "hello from 127.0.0.1" \
			"$(cap ./godial "origin.test:$P")"
		expect "... captured" "captured origin.test $P allow" "$(recs)"
		expect "go net.Dial to a denied name: no such host" "1" \
			"$(cap ./godial "denied.test:$P" | grep -c 'no such host')"
	else
		skip "go net.Dial" "go build failed: $(head -c 200 "$W/go.err")"
	fi
else
	skip "go net.Dial" "no Go toolchain"
fi

# WebSocket clients with no proxy settings: the `ws` library (Debian's node-ws) and
# Node's own (undici's, behind --experimental-websocket on Node 20), against a
# standard-library RFC 6455 echo origin on the host's loopback.
if command -v node >/dev/null; then
	timeout 280 python3 "$IT/ws_echo.py" 127.0.0.1 "$W/ows.port" "$W/ows.log" 2>>"$W/ows.err" &
	pids+=($!)
	WP=$(wait_port ows)
	cat >"$WS/wsc.js" <<'EOF2'
// node wsc.js lib|native URL MESSAGE: "echo MESSAGE", "error CODE" or "timeout"
const [mode, url, msg] = process.argv.slice(2);
const done = (s) => { console.log(s); process.exit(0); };
setTimeout(() => done("timeout"), 10000);
const WS = mode === "lib" ? require("ws") : WebSocket;
const ws = new WS(url);
ws.onopen = () => ws.send(msg);
ws.onmessage = (e) => done("echo " + e.data);
ws.onerror = (e) => done("error " + ((e.error && e.error.code) || e.message || "failed"));
EOF2
	NODEWS=/usr/share/nodejs # where Debian's node-ws puts the ws module
	WSROWS=()
	if NODE_PATH=$NODEWS node -e 'require("ws")' 2>/dev/null; then
		WSROWS+=("ws library|env NODE_PATH=$NODEWS node wsc.js lib")
	else
		skip "ws library" "node-ws not installed (make deps)"
	fi
	if node --experimental-websocket -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null; then
		WSROWS+=("node's own WebSocket|node --experimental-websocket wsc.js native")
	else
		skip "node's own WebSocket" "node $(node --version) has no --experimental-websocket"
	fi
	for row in "${WSROWS[@]}"; do
		IFS='|' read -r what cmd <<<"$row"
		read -r -a argv <<<"$cmd"
		expect "$what: reaches the allowed origin by name, echoed" "echo hello $what" \
			"$(cap "${argv[@]}" "ws://origin.test:$WP/" "hello $what")"
		expect "... captured and decided by name" "captured origin.test $WP allow" "$(recs)"
		before=$(conns)
		OUT=$(cap "${argv[@]}" "ws://denied.test:$WP/" "hello $what")
		expect_match "$what to a denied name: fails" "^error " "$OUT"
		expect_match "... it does not resolve, halo-run says why" \
			"egress denied: lookup of denied.test \(deniedDomains\[0\] denied.test\)" "$(cat "$W/err")"
		expect "... never a connection" "" "$(recs)"
		expect "... the origin saw nothing" "$before" "$(conns)"
	done
	[ "${#WSROWS[@]}" -gt 0 ] && expect_match "the echo origin saw the WebSocket handshakes by name" \
		"^WS / origin\.test:$WP$" "$(cat "$W/ows.log")"
else
	skip "WebSocket clients" "node not installed"
fi

# A client that uses the proxy but resolves the name itself (curl --socks5, not
# --socks5-hostname) sends the fake address: the proxy decides the name behind it.
OUT=$(cap curl -sS --max-time 10 --socks5 127.0.0.1:1080 "http://origin.test:$P/hello")
expect "curl --socks5 (local lookup): the fake address is decided as its name" "hello from 127.0.0.1" "$OUT"
expect "... audited by name" "socks5 origin.test $P allow" "$(recs)"

# TLS to a captured name: the ClientHello's name is checked against it, as after a
# CONNECT (t_sni.sh has the CONNECT rows).
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/key.pem" -out "$WS/cert.pem" -days 2 \
		-subj /CN=origin.test -addext "subjectAltName=DNS:origin.test,DNS:evil.test" \
		>/dev/null 2>&1 || fail "make a throwaway certificate" "openssl req failed"
	chmod a+r "$W/key.pem" "$WS/cert.pem"
	timeout 280 python3 "$IT/tls_origin.py" "$WS/cert.pem" "$W/key.pem" 127.0.0.1 "$W/tls.port" \
		"$W/tls.log" 2>>"$W/tls.err" &
	pids+=($!)
	T=$(wait_port tls)
	cat >"$WS/tlsc.py" <<'EOF2'
import socket, ssl, sys
ctx = ssl.create_default_context(cafile="cert.pem")
ctx.check_hostname = False
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
    t = ctx.wrap_socket(s, server_hostname=sys.argv[3])
    print(t.recv(100).decode().strip())
except (ssl.SSLError, OSError) as e:
    print("tls error: %s" % getattr(e, "reason", e))
EOF2
	OUT=$(cap python3 tlsc.py origin.test "$T" origin.test)
	expect_match "TLS to a captured name, its own SNI: served" "^[^t]" "$OUT"
	expect "... captured" "captured origin.test $T allow" "$(recs)"
	OUT=$(cap python3 tlsc.py origin.test "$T" evil.test)
	expect_match "TLS to a captured name with another SNI: refused" "^tls error" "$OUT"
	expect "... the audit names the mismatch" "captured origin.test deny sni mismatch: evil.test" \
		"$(aud a.audit proto host decision rule | tr ';' '\n' | grep '^captured')"
else
	skip "TLS rows" "no openssl"
fi

# ------------------------------------------------------------ refusals
before=$(conns)
cap curl -sS --max-time 10 --noproxy '*' "http://denied.test:$P/hello"
OUT=$(cat "$W/err") # the command's stderr is halo-run's
expect_match "a denied name does not resolve" "Could not resolve host: denied.test" "$OUT"
expect_match "... halo-run says why" "egress denied: lookup of denied.test \(deniedDomains\[0\] denied.test\)" "$OUT"
expect "... only the stub's own records, never a connection" "" "$(recs)"
expect_match "... which are denials" '^(dns denied.test 0 deny;?)+$' "$(aud a.audit proto host port decision)"
cap curl -sS --max-time 10 --noproxy '*' "http://other.test:$P/hello"
OUT=$(cat "$W/err")
expect_match "a name no rule allows does not resolve (default deny)" "Could not resolve host: other.test" "$OUT"
cap curl -sS --max-time 10 --noproxy '*' "http://gitdeny.test:$P/hello"
OUT=$(cat "$W/err")
expect_match "a name allowed on another port: resolves, the connection is refused" "Empty reply|reset|refused" "$OUT"
expect "... decided by name and port" "captured gitdeny.test $P deny" "$(recs)"
expect_match "... and said" "egress denied: gitdeny.test:$P \(default deny\)" "$OUT"
cap curl -sS --max-time 10 --noproxy '*' "http://198.18.77.77:$P/hello"
expect "a fake address never handed out: refused" "captured 198.18.77.77 $P deny" "$(recs)"
expect_match "... naming why" "never handed out by halo-run's DNS" "$(aud a.audit rule)"
OUT=$(cap python3 cc.py sock 127.0.0.1 "$P")
expect_match "an IP literal is not captured (the sandbox's own loopback)" "ConnectionRefused" "$OUT"
expect "the origin saw none of the refused connections" "$before" "$(conns)"

# ------------------------------------------------------------ the DNS stub itself
while IFS='|' read -r name proto qname qtype want; do
	name=$(trim "$name")
	[ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
	read -r proto qname qtype <<<"$proto $qname $qtype"
	want=$(trim "$want")
	OUT=$(cap python3 cc.py dns "$proto" "$qname" "$qtype")
	expect_match "dns: $name" "$want" "$OUT"
done <<'ROWS'
denied A, udp          | udp denied.test A     | ^NXDOMAIN 0$
denied AAAA, udp       | udp denied.test AAAA  | ^NXDOMAIN 0$
denied TXT, udp        | udp denied.test TXT   | ^(NXDOMAIN|REFUSED) 0$
denied ANY, udp        | udp denied.test ANY   | ^(NXDOMAIN|REFUSED) 0$
denied A, tcp          | tcp denied.test A     | ^NXDOMAIN 0$
denied AAAA, tcp       | tcp denied.test AAAA  | ^NXDOMAIN 0$
denied TXT, tcp        | tcp denied.test TXT   | ^(NXDOMAIN|REFUSED) 0$
denied ANY, tcp        | tcp denied.test ANY   | ^(NXDOMAIN|REFUSED) 0$
unlisted A             | udp exfil-a1b2c3.other.test A | ^NXDOMAIN 0$
allowed A              | udp origin.test A     | ^NOERROR 1 198\.1[89]\.[0-9]+\.[0-9]+$
allowed A over tcp     | tcp origin.test A     | ^NOERROR 1 198\.1[89]\.[0-9]+\.[0-9]+$
allowed AAAA: empty    | udp origin.test AAAA  | ^NOERROR 0$
allowed TXT: refused   | udp origin.test TXT   | ^REFUSED 0$
allowed MX: refused    | tcp origin.test MX    | ^REFUSED 0$
ROWS
OUT=$(cap sh -c 'python3 cc.py dns udp origin.test A; python3 cc.py dns tcp origin.test A; python3 cc.py dns udp portonly.test A')
A1=$(sed -n 1p <<<"$OUT" | cut -d' ' -f3) A2=$(sed -n 2p <<<"$OUT" | cut -d' ' -f3) A3=$(sed -n 3p <<<"$OUT" | cut -d' ' -f3)
if [ -n "$A1" ] && [ "$A1" = "$A2" ] && [ "$A1" != "$A3" ]; then ok "one name, one address per run; two names, two"; else
	fail "one name, one address per run; two names, two" "$OUT"; fi
# Hostile packets (hex): a compression loop, a pointer out of range, a 64-byte label,
# two questions.
for row in "compression loop|123401000001000000000000c00c00010001|FORMERR" \
	"pointer out of range|123401000001000000000000c3ff00010001|FORMERR" \
	"label of 64|123401000001000000000000$(printf '40%0128d' 0)0000010001|FORMERR" \
	"two questions|1234010000020000000000000161000001000101610000010001|FORMERR"; do
	IFS='|' read -r what hex want <<<"$row"
	expect "dns: $what: $want" "$want" "$(cap python3 cc.py raw "$hex")"
done
if command -v dig >/dev/null; then
	OUT=$(cap sh -c 'dig +tries=1 +time=3 denied.test A; dig +tcp +tries=1 +time=3 denied.test ANY; dig +short +tries=1 +time=3 origin.test')
	expect_match "dig (resolv.conf's server): denied.test NXDOMAIN" "status: NXDOMAIN" "$OUT"
	expect_match "dig +tcp ANY: refused" "status: (REFUSED|NXDOMAIN)" "$(sed -n '/ANY/,$p' <<<"$OUT")"
	expect_match "dig +short origin.test: a fake address" "^198\.1[89]\." "$OUT"
else
	skip "dig rows" "dig not installed (dnsutils)"
fi

# ------------------------------------------------------------ a fake address through the proxy
# Plain http:// forwarding to the address the stub gave a rules host (review 21): the
# request is judged, denied and audited as the name, and the origin's Host names it.
cat >"$W/caprules.yaml" <<EOF2
egress:
  default: deny
  allowedDomains: [origin.test]
  allowPrivate: [127.0.0.1/32]
  requestRules: [{host: origin.test, methods: [GET], paths: ["/hello", "/echo/*"]}]
EOF2
chmod a+r "$W/caprules.yaml"
before=$(grep -c '^CONN' "$W/c1.log")
OUT=$(hr caprules.yaml cr.audit -- sh -c "A=\$(getent hosts origin.test | cut -d' ' -f1); echo \$A
	for r in 'POST /admin' 'GET /admin' 'GET /echo/x'; do set -- \$r
	curl -sS -i --max-time 10 -x http://127.0.0.1:3128 -X \$1 http://\$A:$P\$2 | tr -d '\r' |
		grep -a -i -E '^(HTTP/|X-Halo-Deny|host:)'; done")
expect_match "the stub's address for origin.test" "^198\.1[89]\." "$OUT"
expect "forwarding to it: denied as origin.test by its request rules, allowed GET's Host names it" \
	"HTTP/1.1 403 Forbidden
X-Halo-Deny: origin.test (requestRules for origin.test: no rule allows POST /admin)
HTTP/1.1 403 Forbidden
X-Halo-Deny: origin.test (requestRules for origin.test: no rule allows GET /admin)
HTTP/1.1 200 OK
Host: origin.test:$P" "$(sed 1d <<<"$OUT")"
expect "... the origin saw the allowed request only" "$((before + 1))" "$(grep -c '^CONN' "$W/c1.log")"
expect "... audited as the name" "http origin.test deny;http origin.test deny;http origin.test allow" \
	"$(aud cr.audit proto host decision | tr ';' '\n' | grep -v '^dns' | paste -sd';')"

# ------------------------------------------------------------ SSH refused, with the reason
if command -v ssh >/dev/null; then
	SSH=(ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
		-o ConnectTimeout=10)
	cap "${SSH[@]}" git@gitdeny.test true
	OUT=$(cat "$W/err")
	expect_match "ssh (captured) to a host allowed on 443 only: OpenSSH prints halo-run's reason" \
		"Received disconnect from .*: halo-run: egress denied: gitdeny.test:22 \(default deny\)" "$OUT"
	expect "... audited" "captured gitdeny.test 22 deny" "$(recs)"
	# ssh runs a ProxyCommand with $SHELL (nologin for uid 65534)
	cap env SHELL=/bin/sh "${SSH[@]}" -o "ProxyCommand=python3 cc.py sshproxy %h %p" git@gitdeny.test true
	OUT=$(cat "$W/err")
	expect_match "ssh through a CONNECT ProxyCommand: the reason after the 403" \
		"Received disconnect from .*: halo-run: egress denied: gitdeny.test:22 \(default deny\)" "$OUT"
	expect "... audited" "connect gitdeny.test 22 deny" "$(recs)"
	OUT=$(cap python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT gitdeny.test:8443 HTTP/1.1\r\nHost: gitdeny.test:8443\r\n\r\n')
d = b''
while True:
    b = s.recv(4096)
    if not b: break
    d += b
print('ssh' if b'SSH-2.0' in d else 'plain', d.split(b'\r\n')[0].decode())")
	expect "other ports keep the plain 403" "plain HTTP/1.1 403 Forbidden" "$OUT"
else
	skip "ssh rows" "no OpenSSH client (openssh-client)"
fi

# ------------------------------------------------------------ without nf_tables: fail closed
# it_nonft makes NETLINK_NETFILTER sockets fail as on a kernel without nf_tables: no
# redirect, no capture listener; every lookup inside is REFUSED (never an answer that
# would lead nowhere, never forwarded), and proxy-aware clients still get out.
if [ -x "$HELPERS/it_nonft" ]; then
	rm -f "$W/n.audit"
	OUT=$(cd "$WS" && timeout -k 5 60 "${WRAP[@]}" "$HELPERS/it_nonft" "$HALO" --policy "$W/cap.yaml" \
		--audit "$W/n.audit" -- "${NOPROXY[@]}" sh -c "python3 cc.py dns udp origin.test A; python3 cc.py dns tcp origin.test A;
		python3 cc.py sock 127.0.0.1 3129; curl -sS --max-time 10 --noproxy '*' http://origin.test:$P/hello;
		curl -sS --max-time 10 -x http://127.0.0.1:3128 http://origin.test:$P/hello" </dev/null 2>"$W/err")
	expect_match "no nf_tables: a lookup of an allowed name is REFUSED (udp)" "^REFUSED 0$" "$(sed -n 1p <<<"$OUT")"
	expect_match "... and over tcp" "^REFUSED 0$" "$(sed -n 2p <<<"$OUT")"
	expect_match "... no capture listener inside" "ConnectionRefused" "$(sed -n 3p <<<"$OUT")"
	expect_match "... a client by name cannot resolve" "Could not resolve host: origin.test" "$(cat "$W/err")"
	expect_match "... said on stderr" "name lookups inside the sandbox are refused: connection capture could not be set up" "$(cat "$W/err")"
	expect "... a proxy-aware client still gets out" "hello from 127.0.0.1" "$(sed -n 4p <<<"$OUT")"
	expect "... audited: every lookup denied, the proxy request allowed, nothing captured" \
		"dns origin.test deny;http origin.test allow" "$(aud n.audit proto host decision | tr ';' '\n' | uniq | paste -sd';')"
else
	fail "no nf_tables rows" "helper it_nonft missing"
fi

finish
