#!/bin/bash
# Every ClientHello is checked (issues 31 and 32), against three TLS stacks as origins:
# Go's crypto/tls (tls_go_origin.go, built here offline; it logs the name it served),
# OpenSSL (`openssl s_server` hosting good.test and, with -servername/-cert2, evil.test;
# it prints every ClientHello's name, and "Switching server context." when it switches
# to evil.test) and GnuTLS
# (`gnutls-serv`). The in-sandbox client (tls_hello_client.py) shapes its bytes: a
# warning alert before a ClientHello naming evil.test (the stacks drop the alert and
# read the hello), the hello cut into 40-byte records or 7-byte TCP segments, no
# name, a hello carrying encrypted_client_hello (ECH) with the outer name good.test,
# and after a HelloRetryRequest (s_server -groups P-384, the client offering
# X25519 first) a second ClientHello naming evil.test; a name with a trailing dot
# (another s_server, whose default site is evil.test, serves that for good.test.).
# Through CONNECT, SOCKS5 and the captured path (a plain connection to the name) to a
# tunnel allowed for good.test.
#
# gnutls-serv cannot be told to listen on loopback only, so every origin and every
# halo-run here lives in a network namespace this script creates (only lo, up): no
# port is opened on the machine's interfaces, and fixed ports cannot collide.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

for t in openssl python3 nsenter ip; do
	command -v "$t" >/dev/null || {
		skip "every ClientHello is checked" "no $t"
		finish
		exit
	}
done
# The private network namespace, its lo up (as the user: inside a user namespace of
# our own, where unshare --keep-caps lends `ip` the capability).
if [ "$AS" = root ]; then NS=(unshare --net) IN_OPTS=(-n); else
	NS=(unshare --user --map-current-user --net --keep-caps) IN_OPTS=(-U -n --preserve-credentials); fi
"${NS[@]}" sh -c 'ip link set lo up 2>"$0" && exec sleep 900' "$W/ns.err" &
holder=$!
pids+=("$holder")
for _ in $(seq 100); do
	[ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] && break
	sleep 0.05
done
if [ "$(cat "/proc/$holder/comm" 2>/dev/null)" != sleep ]; then
	skip "every ClientHello is checked" "no private network namespace: $(head -c 200 "$W/ns.err")"
	finish
	exit
fi
IN=(nsenter -t "$holder" "${IN_OPTS[@]}")
WRAP=("${IN[@]}" "${WRAP[@]}")

printf '127.0.0.1 good.test evil.test\n' >>"$W/etc/hosts"
cat >"$W/tls.yaml" <<'EOF2'
egress:
  default: deny
  allowedDomains: [good.test]
  allowPrivate: [127.0.0.1/32]
EOF2
for n in good evil; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/$n.key" \
		-out "$W/$n.pem" -days 2 -subj "/CN=$n.test" -addext "subjectAltName=DNS:$n.test" \
		>/dev/null 2>&1 || fail "make a throwaway certificate" "openssl req failed"
done
cat "$W/good.pem" "$W/evil.pem" >"$WS/certs.pem"
cp "$IT/tls_hello_client.py" "$WS/thc.py"
chmod a+r "$W"/*.key "$W"/*.pem "$WS"/*

# ------------------------------------------------------------------ origins
ORIGINS=()
if command -v go >/dev/null; then
	mkdir -p "$W/go"
	if (cd "$W/go" && GOCACHE="$W/go/cache" GOPATH="$W/go/path" HOME="$W/go" GO111MODULE=off \
		GOFLAGS= GOPROXY=off timeout 120 go build -o "$W/go/origin" "$IT/tls_go_origin.go") \
		>"$W/go.err" 2>&1; then
		"${IN[@]}" timeout 280 "$W/go/origin" "$W/good.pem" "$W/good.key" "$W/evil.pem" \
			"$W/evil.key" "$W/go.port" "$W/go.log" 2>>"$W/go.err" &
		pids+=($!)
		GO_PORT=$(wait_port go)
		ORIGINS+=(go)
	else
		fail "build the Go origin (offline, standard library only)" "$(head -c 300 "$W/go.err")"
	fi
else
	skip "Go crypto/tls origin rows" "no go (golang-go)"
fi
OSSL_PORT=44330
"${IN[@]}" timeout 280 stdbuf -oL openssl s_server -accept "127.0.0.1:$OSSL_PORT" -cert "$W/good.pem" \
	-key "$W/good.key" -servername evil.test -cert2 "$W/evil.pem" -key2 "$W/evil.key" \
	-groups P-384 -www >"$W/ossl.log" 2>&1 </dev/null &
pids+=($!)
ORIGINS+=(ossl)
# The same, its default site evil.test: a name it does not match (good.test. with the
# dot RFC 6066 forbids) gets evil.test's certificate and pages.
OSSLD_PORT=44332
"${IN[@]}" timeout 280 openssl s_server -accept "127.0.0.1:$OSSLD_PORT" -cert "$W/evil.pem" \
	-key "$W/evil.key" -servername good.test -cert2 "$W/good.pem" -key2 "$W/good.key" \
	-www >"$W/ossld.log" 2>&1 </dev/null &
pids+=($!)
if command -v gnutls-serv >/dev/null; then
	GNU_PORT=44331
	"${IN[@]}" timeout 280 gnutls-serv -p "$GNU_PORT" --x509certfile "$W/good.pem" \
		--x509keyfile "$W/good.key" --echo -q >"$W/gnu.log" 2>&1 </dev/null &
	pids+=($!)
	ORIGINS+=(gnu)
else
	skip "GnuTLS origin rows" "no gnutls-serv (gnutls-bin)"
fi
port_of() { case $1 in go) echo "$GO_PORT" ;; ossl) echo "$OSSL_PORT" ;; ossld) echo "$OSSLD_PORT" ;; gnu) echo "$GNU_PORT" ;; esac; }
for _ in $(seq 50); do # s_server and gnutls-serv: listening once a direct hello is served
	"${IN[@]}" python3 -c 'import socket,sys
for p in sys.argv[1:]: socket.create_connection(("127.0.0.1", int(p)), timeout=1).close()' \
		"$OSSL_PORT" "$OSSLD_PORT" ${GNU_PORT:+"$GNU_PORT"} 2>/dev/null && break
	sleep 0.1
done

# Go's origin reads a hello behind a warning alert (no proxy): the bypass is real.
# (OpenSSL 3.0 and GnuTLS 3.7 answer such an alert with unexpected_message themselves;
# their rows below check the proxy all the same.)
if [ -n "${GO_PORT:-}" ]; then
	out=$(cd "$WS" && "${IN[@]}" python3 "$WS/thc.py" direct 127.0.0.1 "$GO_PORT" alert evil.test 2>&1)
	expect "go origin, directly: a hello behind a warning alert is read and evil.test served" \
		"served CN=evil.test" "$(sed -n 1p <<<"$out")"
fi
# s_server prints each ClientHello's name (line-buffered by stdbuf), and switches to
# evil.test's certificate for that name.
switches() { grep -c 'Hostname in TLS extension: "evil.test"' "$W/ossl.log"; }
s0=$(switches)
out=$(cd "$WS" && "${IN[@]}" python3 "$WS/thc.py" direct 127.0.0.1 "$OSSL_PORT" plain good.test evil.test 2>&1)
expect "ossl origin, directly: HelloRetryRequest, then a hello naming evil.test: s_server reads it" \
	"hrr $((s0 + 1))" "$(sed -n 1p <<<"$out") $(switches)"
expect_match "... and switches to evil.test's certificate" "Switching server context" "$(cat "$W/ossl.log")"

out=$(cd "$WS" && "${IN[@]}" python3 "$WS/thc.py" direct 127.0.0.1 "$OSSLD_PORT" plain good.test. 2>&1)
expect "s_server defaulting to evil.test, directly: the name good.test. gets evil.test" \
	"served CN=evil.test" "$(sed -n 1p <<<"$out")"

# thc VIA ORIGIN SHAPE SNI [SNI2]: the client's output in the sandbox, lines joined by |
thc() {
	local via=$1 o=$2 host=good.test
	shift 2
	hr tls.yaml t.audit -- "${NOPROXY[@]}" python3 thc.py "$via" "$host" "$(port_of "$o")" "$@" |
		grep -v '^HTTP/1.1 200\|^socks 00' | paste -sd'|'
}
NOPROXY=(env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy -u ALL_PROXY -u all_proxy)
rule() { aud t.audit proto decision rule | tr ';' '\n' | grep -v '^dns ' | tail -n1 | cut -d' ' -f2-; }
go_served() { grep -c "^TLS sni=$1\$" "$W/go.log" 2>/dev/null; }

# ------------------------------------------------------------------ rows
for via in connect socks direct; do
	for o in "${ORIGINS[@]}"; do
		r="$via, $o origin"
		g0=$(go_served evil.test) s0=$(switches)
		out=$(thc "$via" "$o" alert evil.test)
		expect_match "$r: warning alert, then a hello naming evil.test: refused" "^tls error: " "$out"
		expect "$r: ... audited as the record before the hello" \
			"deny tls: record before ClientHello (alert)" "$(rule)"
		[ "$o" = go ] && expect "$r: ... the Go origin never served evil.test" "$g0" "$(go_served evil.test)"
		[ "$o" = ossl ] && expect "$r: ... s_server never read evil.test" "$s0" "$(switches)"

		for shape in records segments; do
			g0=$(go_served good.test)
			out=$(thc "$via" "$o" "$shape" good.test)
			expect_match "$r: good.test hello cut into $shape: served" "(^|\|)served CN=good.test" "$out"
			[ "$o" = go ] && expect "$r: ... the Go origin served good.test" "$((g0 + 1))" \
				"$(go_served good.test)"
			out=$(thc "$via" "$o" "$shape" evil.test)
			expect_match "$r: evil.test hello cut into $shape: refused" "^tls error: .*ACCESS_DENIED" "$out"
			expect "$r: ... audited" "deny sni mismatch: evil.test" "$(rule)"
		done

		# ECH: an origin with ECH keys serves the encrypted inner name (Go >= 1.24's
		# crypto/tls, CDNs), whatever the outer one; the proxy cannot read it.
		b0=$(grep -c '^BAD ' "$W/go.log" 2>/dev/null)
		out=$(thc "$via" "$o" ech good.test)
		expect_match "$r: a hello with encrypted_client_hello, outer name good.test: refused" \
			"^tls error: .*ACCESS_DENIED" "$out"
		expect "$r: ... audited as ECH" "deny tls: encrypted_client_hello (ECH): the origin may serve the encrypted inner name, which cannot be checked" "$(rule)"
		[ "$o" = go ] && expect "$r: ... the Go origin never read the hello" "$b0" \
			"$(grep -c '^BAD ' "$W/go.log" 2>/dev/null)"

		g0=$(go_served -)
		out=$(thc "$via" "$o" plain -)
		expect_match "$r: a hello without a name: refused" "^tls error: .*ACCESS_DENIED" "$out"
		expect "$r: ... audited" "deny tls: ClientHello without SNI for a host allowed by name" "$(rule)"
		[ "$o" = go ] && expect "$r: ... the Go origin served no default site" "$g0" "$(go_served -)"
	done

	# A trailing dot: Decide() ignores it, s_server does not and serves its default.
	out=$(thc "$via" ossld plain good.test.)
	expect_match "$via, ossld origin: a hello naming good.test. (trailing dot): refused" \
		"^tls error: .*ACCESS_DENIED" "$out"
	expect "$via, ossld origin: ... audited" "deny tls: SNI ends with a dot: good.test. (an origin that keeps the dot serves its default site)" "$(rule)"
	out=$(thc "$via" ossld plain good.test)
	expect_match "$via, ossld origin: good.test itself: served" "(^|\|)served CN=good.test" "$out"

	# HelloRetryRequest: s_server takes only P-384, the client offers X25519 first.
	r="$via, ossl origin"
	out=$(thc "$via" ossl plain good.test)
	expect "$r: HelloRetryRequest, the same name again: served" "hrr|served CN=good.test" \
		"$(cut -d'|' -f1-2 <<<"$out")"
	s0=$(switches)
	out=$(thc "$via" ossl plain good.test evil.test)
	expect_match "$r: HelloRetryRequest, then a hello naming evil.test: refused" \
		"^hrr\|tls error: .*ACCESS_DENIED" "$out"
	expect "$r: ... audited as the changed name" \
		"deny tls: SNI changed after HelloRetryRequest: evil.test" "$(rule)"
	expect "$r: ... s_server never read evil.test" "$s0" "$(switches)"
done
finish
