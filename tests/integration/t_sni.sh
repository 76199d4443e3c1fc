#!/bin/bash
# One name per tunnel, end to end: a TLS origin on 127.0.0.1 (tls_origin.py, a
# throwaway self-signed certificate made here with openssl) behind the allowed name
# allowed.test; clients INSIDE the sandbox (python ssl, openssl s_client) tunnel to it
# through halo-run's proxy (CONNECT, and SOCKS5 by name). A ClientHello naming
# evil.test is refused with a TLS alert and the origin sees a TCP connection with zero
# bytes ("CONN 0"), and so is a ClientHello without a name; the matching name and a
# non-TLS first flight go through.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

if ! command -v openssl >/dev/null; then
	skip "tls tunnels" "no openssl"
	finish
	exit
fi
printf '127.0.0.1 allowed.test evil.test\n' >>"$W/etc/hosts"
cat >"$W/sni.yaml" <<'EOF2'
egress:
  default: deny
  allowedDomains: [allowed.test, 127.0.0.1]
  allowPrivate: [127.0.0.1/32]
EOF2
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/key.pem" -out "$WS/cert.pem" -days 2 \
	-subj /CN=allowed.test -addext "subjectAltName=DNS:allowed.test,DNS:evil.test" \
	>/dev/null 2>&1 || fail "make a throwaway certificate" "openssl req failed"
chmod a+r "$W/key.pem" "$WS/cert.pem"
timeout 280 python3 "$IT/tls_origin.py" "$WS/cert.pem" "$W/key.pem" 127.0.0.1 "$W/tls.port" \
	"$W/tls.log" 2>>"$W/tls.err" &
pids+=($!)
T=$(wait_port tls)

# The in-sandbox client: tunnel (connect | socks) to TARGET, then TLS with SNI (or
# "-" for none), or a plain line for "plain". Prints the first line it reads or the
# TLS error's reason.
cat >"$WS/tlsc.py" <<'EOF2'
import socket, ssl, sys
mode, host, port, sni = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if mode == "connect":
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    print(head.split(b"\r\n")[0].decode())
else:
    s = socket.create_connection(("127.0.0.1", 1080), timeout=10)
    s.sendall(b"\x05\x01\x00")
    s.recv(2)
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + port.to_bytes(2, "big"))
    print("socks %02x" % s.recv(10)[1])
if sni == "plain":
    s.sendall(b"PING\r\n")
    print("plain: %r" % s.recv(100))
    sys.exit(0)
ctx = ssl.create_default_context(cafile="cert.pem")
ctx.check_hostname = False
try:
    t = ctx.wrap_socket(s, server_hostname=None if sni == "-" else sni)
    print(t.recv(100).decode().strip())
except ssl.SSLError as e:
    print("tls error: %s" % e.reason)
EOF2
chmod a+r "$WS/tlsc.py"

logn() { cat "$W/tls.log" 2>/dev/null | wc -l; }
last_log() { tail -n1 "$W/tls.log" 2>/dev/null; }
wait_log() { # N: wait until the origin logged N lines (up to 3 s)
	for _ in $(seq 30); do [ "$(logn)" -ge "$1" ] && return; sleep 0.1; done
}
row() { # NAME MODE SNI WANT-OUTPUT WANT-ORIGIN-LOG WANT-AUDIT
	local n out
	n=$(logn)
	out=$(hr sni.yaml sni.audit -- python3 tlsc.py "$2" allowed.test "$T" "$3")
	expect "$1: client" "$4" "$out"
	wait_log $((n + 1))
	expect "$1: what the origin saw" "$5" "$(last_log)"
	expect "$1: audit" "$6" "$(aud sni.audit proto host decision rule)"
}
row "CONNECT, matching SNI" connect allowed.test "HTTP/1.1 200 Connection established
hello over tls allowed.test" "TLS sni=allowed.test" "connect allowed.test allow allowedDomains[0] allowed.test"
row "CONNECT, SNI evil.test" connect evil.test "HTTP/1.1 200 Connection established
tls error: TLSV1_ALERT_ACCESS_DENIED" "CONN 0" "connect allowed.test deny sni mismatch: evil.test"
expect_match "CONNECT, SNI evil.test: one stderr line" \
	"^halo-run: egress denied: allowed.test:$T \(sni mismatch: evil.test\)$" "$(cat "$W/err")"
row "CONNECT, SNI Allowed.Test (any case)" connect Allowed.Test "HTTP/1.1 200 Connection established
hello over tls Allowed.Test" "TLS sni=Allowed.Test" "connect allowed.test allow allowedDomains[0] allowed.test"
row "CONNECT, SNI allowed.test. (refused: an origin that keeps the dot serves its default site)" connect allowed.test. "HTTP/1.1 200 Connection established
tls error: TLSV1_ALERT_ACCESS_DENIED" "CONN 0" "connect allowed.test deny tls: SNI ends with a dot: allowed.test. (an origin that keeps the dot serves its default site)"
row "CONNECT, no SNI (refused: the origin would pick its default site)" connect - "HTTP/1.1 200 Connection established
tls error: TLSV1_ALERT_ACCESS_DENIED" "CONN 0" "connect allowed.test deny tls: ClientHello without SNI for a host allowed by name"
row "SOCKS5 by name, SNI evil.test" socks evil.test "socks 00
tls error: TLSV1_ALERT_ACCESS_DENIED" "CONN 0" "socks5 allowed.test deny sni mismatch: evil.test"
row "SOCKS5 by name, matching SNI" socks allowed.test "socks 00
hello over tls allowed.test" "TLS sni=allowed.test" "socks5 allowed.test allow allowedDomains[0] allowed.test"
row "CONNECT, not TLS (plain bytes)" connect plain "HTTP/1.1 200 Connection established
plain: b''" "BAD SSLError" "connect allowed.test allow allowedDomains[0] allowed.test"

# openssl s_client through the proxy (-proxy: HTTP CONNECT)
if openssl s_client -help 2>&1 | grep -q -- '-proxy '; then
	S="openssl s_client -proxy 127.0.0.1:3128 -connect allowed.test:$T -CAfile cert.pem"
	n=$(logn)
	out=$(hr sni.yaml sni.audit -- sh -c "echo | $S -servername evil.test 2>&1")
	expect_match "openssl s_client -servername evil.test: alert" "alert access denied" "$out"
	wait_log $((n + 1))
	expect "openssl s_client -servername evil.test: the origin saw no byte" "CONN 0" "$(last_log)"
	n=$(logn)
	out=$(hr sni.yaml sni.audit -- sh -c "echo | $S -servername allowed.test 2>&1")
	expect_match "openssl s_client -servername allowed.test: verified" "Verify return code: 0 \(ok\)" "$out"
	wait_log $((n + 1))
	expect "openssl s_client -servername allowed.test: origin handshake" "TLS sni=allowed.test" "$(last_log)"
else
	skip "openssl s_client rows" "this openssl has no -proxy"
fi
finish
