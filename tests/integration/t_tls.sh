#!/bin/bash
# TLS termination for egress.credentials and egress.requestRules, end to end. An HTTPS
# origin on 127.0.0.1 (tls_term_origin.py) with a certificate from a test CA made here
# (openssl), named secure.test, api.test and plain.test through the /etc/hosts trick of
# egress_lib.sh; egress.trustedCAs names the test CA, so the proxy verifies the origin,
# and the tools inside trust the run's CA with no CA flag at all (the bundle on /run
# and the variables). A second origin with a certificate from another CA (bad.test)
# must give 502 with the reason. The token lives in the caller's environment only (made
# at random here, never written to a file) and must be nowhere inside.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

if ! command -v openssl >/dev/null; then
	skip "tls termination" "no openssl"
	finish
	exit
fi
TOKEN="tok$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export HALO_TEST_TOKEN="$TOKEN"
printf '127.0.0.1 secure.test api.test plain.test bad.test\n' >>"$W/etc/hosts"

# --------------------------------------------------------------- certificates
mkca() { # NAME: a CA key and certificate
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=halo test $1" -keyout "$W/$1.key" -out "$W/$1.pem" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
		>/dev/null 2>&1
}
mkleaf() { # CA NAME SANS
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
		-keyout "$W/$2.key" -out "$W/$2.csr" >/dev/null 2>&1 &&
		openssl x509 -req -in "$W/$2.csr" -CA "$W/$1.pem" -CAkey "$W/$1.key" \
			-CAcreateserial -days 2 -out "$W/$2.pem" \
			-extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$3") \
			>/dev/null 2>&1
}
mkca testca && mkca otherca && mkleaf testca good "DNS:secure.test,DNS:api.test,DNS:plain.test" &&
	mkleaf otherca bad "DNS:bad.test" || {
	fail "make the test certificates" "openssl failed"
	finish
	exit
}
chmod a+r "$W"/*.pem "$W"/*.key

# A bare repository to clone over smart HTTP.
git init -q --bare "$W/git/repo.git" && git -C "$W/git/repo.git" config http.receivepack false
git init -q "$W/src" && git -C "$W/src" -c user.email=t@t -c user.name=t commit -q --allow-empty -m one &&
	git -C "$W/src" push -q "$W/git/repo.git" HEAD:refs/heads/main 2>/dev/null
git -C "$W/git/repo.git" symbolic-ref HEAD refs/heads/main
chmod -R a+rX "$W/git"

start_tls_origin() { # NAME CERT
	timeout 280 python3 "$IT/tls_term_origin.py" "$W/$2.pem" "$W/$2.key" "$W/$1.port" \
		"$W/$1.log" "$W/git" 2>>"$W/$1.err" &
	pids+=($!)
}
start_tls_origin good good
start_tls_origin bad bad
P=$(wait_port good)
B=$(wait_port bad)

cat >"$W/tls.yaml" <<EOF
egress:
  default: deny
  allowedDomains: [secure.test, api.test, plain.test, bad.test]
  allowPrivate: [127.0.0.1/32]
  trustedCAs: [$W/testca.pem]
  credentials:
    - {host: secure.test, header: Authorization, value: "Bearer \${HALO_TEST_TOKEN}"}
  requestRules:
    - {host: api.test, methods: [GET, HEAD], paths: ["/repos/acme/*"]}
    - {host: plain.test}
    - {host: bad.test, methods: [GET]}
EOF
chmod a+r "$W/tls.yaml"
unset HTTPS_PROXY https_proxy HTTP_PROXY http_proxy ALL_PROXY all_proxy
CURL=(curl -sS --max-time 20)

# ------------------------------------------------------------------ credentials
out=$(hr tls.yaml a.audit -- "${CURL[@]}" "https://secure.test:$P/echo")
expect "curl, no CA flag: the credential is injected" "auth=ok n_auth=1 method=GET path=/echo" "$out"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -H "Authorization: Bearer forged" \
	-H "authorization: second" "https://secure.test:$P/echo")
expect "curl: the command's own Authorization is replaced (one field)" \
	"auth=ok n_auth=1 method=GET path=/echo" "$out"
expect "audit: the tunnel is terminated, the request recorded with method and path" \
	"connect secure.test allow terminated - -;https secure.test allow terminated GET /echo" \
	"$(aud a.audit proto host decision tls method path | tr ';' '\n' | sort | tr '\n' ';' | sed 's/;$//')"
if grep -q "$TOKEN" "$W/a.audit" "$W/err"; then
	fail "the token is never in the audit or on stderr"
else
	ok "the token is never in the audit or on stderr"
fi

out=$(hr tls.yaml a.audit -- python3 -c "
import urllib.request
print(urllib.request.urlopen('https://secure.test:$P/echo-urllib', timeout=20).read().decode().strip())")
expect "python urllib, no CA flag" "auth=ok n_auth=1 method=GET path=/echo-urllib" "$out"
if python3 -c 'import requests' 2>/dev/null; then
	out=$(hr tls.yaml a.audit -- python3 -c "
import requests
print(requests.get('https://secure.test:$P/echo-requests', timeout=20).text.strip())")
	expect "python requests, no CA flag" "auth=ok n_auth=1 method=GET path=/echo-requests" "$out"
else
	skip "python requests" "not installed"
fi

out=$(hr tls.yaml a.audit -- "${CURL[@]}" -X POST -H "Transfer-Encoding: chunked" \
	--data-binary @/etc/services "https://secure.test:$P/upload")
expect "curl: a chunked upload is re-framed and arrives whole" "got $(wc -c </etc/services) bytes" "$out"

out=$(hr tls.yaml a.audit -- sh -c 'head -c 3000000 /dev/zero >big.bin &&
	curl -sS --max-time 20 -X POST --data-binary @big.bin https://secure.test:'"$P"'/upload')
expect "curl: a 3 MB upload with Expect: 100-continue" "got 3000000 bytes" "$out"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -w '%{http_code} %{num_connects}\n' \
	"https://secure.test:$P/chunked" "https://secure.test:$P/chunked")
expect "keep-alive over chunked responses" "one two three
200 1
one two three
200 0" "$out"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -o /dev/null -o /dev/null -w '%{http_code} %{num_connects}\n' -I \
	"https://secure.test:$P/echo-head" "https://secure.test:$P/chunked")
expect "keep-alive after HEAD responses (no body despite their framing fields)" "200 1
200 0" "$out"

# Keep-alive: two requests on one connection, both with the credential.
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -w '%{http_code} %{num_connects}\n' -o /dev/null \
	-o /dev/null "https://secure.test:$P/echo1" "https://secure.test:$P/echo2")
expect "curl keep-alive: two requests, one connection" "200 1
200 0" "$out"

# A Host field ending in a dot in a terminated tunnel (review 21): refused (400) with
# the reason, as the SNI's dot is, and never sent to the origin with the credential.
for hv in "secure.test." "SECURE.TEST.:$P"; do
	out=$(hr tls.yaml a.audit -- "${CURL[@]}" -i -H "Host: $hv" "https://secure.test:$P/echo-dot" |
		tr -d '\r' | grep -e '^HTTP' -e '^X-Halo' | grep -v ' Connection established$')
	expect "Host: $hv in a terminated tunnel: 400 with the reason" \
		"HTTP/1.1 400 Bad Request
X-Halo-Error: Host header ends with a dot (write the name without it inside a tunnel the proxy terminates)" "$out"
done
expect "... it never reached the origin" "0" "$(grep -c ' /echo-dot ' "$W/good.log")"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -H "Host: secure.test" "https://secure.test:$P/echo-nodot")
expect "Host without the dot: the credential is injected" "auth=ok n_auth=1 method=GET path=/echo-nodot" "$out"

# A redirect to another host: followed by the client; the other host gets no token.
before=$(grep -c 'auth=ok' "$W/good.log")
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -L "https://secure.test:$P/redirect")
expect "redirect to plain.test: followed, and no credential sent there" \
	"auth=none n_auth=0 method=GET path=/echo" "$out"

if command -v git >/dev/null; then
	rm -rf "$WS/clone"
	out=$(hr tls.yaml a.audit -- env GIT_TERMINAL_PROMPT=0 git clone -q \
		"https://secure.test:$P/git/repo.git" clone 2>&1)
	expect "git clone over https with the injected token (no CA flag, no credential inside)" \
		"one" "$(git -C "$WS/clone" log --format=%s 2>/dev/null | head -1)$out"
else
	skip "git clone" "no git"
fi

if command -v npm >/dev/null; then
	out=$(hr tls.yaml a.audit -- npm view halo-private-pkg version \
		--registry "https://secure.test:$P/npm/" 2>&1 | tail -1)
	expect "npm view from a private registry that requires the token (no token, no CA inside)" \
		"1.2.3" "$out"
else
	skip "npm" "no npm"
fi

if command -v node >/dev/null; then
	cat >"$WS/nodeget.js" <<'EOF'
// A CONNECT through the proxy by hand, then https over it: no CA option anywhere.
const http = require('http'), https = require('https');
const [host, port] = [process.argv[2], +process.argv[3]];
http.request({host: '127.0.0.1', port: 3128, method: 'CONNECT', path: `${host}:${port}`,
              headers: {host: `${host}:${port}`}})
  .on('connect', (res, socket) => {
    https.get({host, port, path: '/echo-node', socket, agent: false}, (r) => {
      let b = ''; r.on('data', (d) => b += d); r.on('end', () => console.log(b.trim()));
    }).on('error', (e) => console.log('error ' + e.code));
  }).on('error', (e) => console.log('error ' + e.code)).end();
EOF
	chmod a+r "$WS/nodeget.js"
	out=$(hr tls.yaml a.audit -- node nodeget.js secure.test "$P")
	expect "node https (NODE_EXTRA_CA_CERTS, no CA option)" \
		"auth=ok n_auth=1 method=GET path=/echo-node" "$out"
	if node -e 'process.exit(+process.versions.node.split(".")[0] >= 24 ? 0 : 1)'; then
		out=$(hr tls.yaml a.audit -- node -e "
fetch('https://secure.test:$P/echo-fetch').then(r => r.text()).then(t => console.log(t.trim()),
  e => console.log('error ' + e.cause))")
		expect "node fetch (NODE_USE_ENV_PROXY)" "auth=ok n_auth=1 method=GET path=/echo-fetch" "$out"
	else
		skip "node fetch" "node $(node --version) ignores the proxy variables"
	fi
else
	skip "node" "no node"
fi

if command -v java >/dev/null && java -version 2>&1 | grep -q 'version "\(1[1-9]\|[2-9][0-9]\)'; then
	cat >"$WS/Get.java" <<'EOF'
import java.net.URI;
import java.net.http.*;
public class Get {
  public static void main(String[] a) throws Exception {
    HttpClient c = HttpClient.newBuilder().proxy(java.net.ProxySelector.getDefault()).build();
    HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(a[0])).build(),
        HttpResponse.BodyHandlers.ofString());
    System.out.println(r.body().trim());
  }
}
EOF
	chmod a+r "$WS/Get.java"
	out=$(HR_BOUND=120 hr tls.yaml a.audit -- java Get.java "https://secure.test:$P/echo-java" 2>/dev/null)
	expect "java HttpClient (the run's PKCS#12 trust store via JAVA_TOOL_OPTIONS, no flag)" \
		"auth=ok n_auth=1 method=GET path=/echo-java" "$out"
else
	skip "java" "no JDK 11 or later"
fi

# Proxy-unaware clients: the name resolves to a fake address inside, the connection is
# captured and decided by name, and a terminated host's TLS is terminated all the same.
NOPROXY=(env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy -u ALL_PROXY -u all_proxy
	-u NODE_USE_ENV_PROXY -u npm_config_proxy -u npm_config_https_proxy)
out=$(hr tls.yaml a.audit -- "${NOPROXY[@]}" "${CURL[@]}" --noproxy '*' "https://secure.test:$P/echo-captured")
expect "curl ignoring the proxy (captured): the credential is injected" \
	"auth=ok n_auth=1 method=GET path=/echo-captured" "$out"
if command -v node >/dev/null && node -e 'process.exit(typeof fetch === "function" ? 0 : 1)'; then
	out=$(hr tls.yaml a.audit -- "${NOPROXY[@]}" node -e "
fetch('https://secure.test:$P/echo-fetch').then(r => r.text()).then(t => console.log(t.trim()),
  e => console.log('error ' + (e.cause && e.cause.code)))")
	expect "node fetch (captured, NODE_EXTRA_CA_CERTS, no CA option)" \
		"auth=ok n_auth=1 method=GET path=/echo-fetch" "$out"
else
	skip "node fetch (captured)" "no node with fetch"
fi

eg_one_ns # (a session serves callers in its own user namespace only)
# A session: the CA is made when the session starts and lives in its supervisor; calls
# that join it are terminated by that supervisor.
out=$(hr tls.yaml a.audit --session tls-t -- "${CURL[@]}" "https://secure.test:$P/echo-s1")
out="$out
$(hr tls.yaml a.audit --session tls-t -- "${CURL[@]}" "https://secure.test:$P/echo-s2")"
(cd "$WS" && timeout 20 "${WRAP[@]}" "$HALO" session stop tls-t >/dev/null 2>&1)
expect "--session: two calls, both terminated with the credential" \
	"auth=ok n_auth=1 method=GET path=/echo-s1
auth=ok n_auth=1 method=GET path=/echo-s2" "$out"

# --events: the same records, never the token.
rm -f "$W/ev.jsonl"
hr tls.yaml a.audit --events "$W/ev.jsonl" -- "${CURL[@]}" -o /dev/null "https://secure.test:$P/echo-ev"
expect_match "--events: the request recorded with method and path" \
	'"proto":"https".*"method":"GET","path":"/echo-ev"' "$(cat "$W/ev.jsonl" 2>/dev/null)"
if grep -q "$TOKEN" "$W/ev.jsonl" 2>/dev/null; then fail "--events never holds the token"; else ok "--events never holds the token"; fi

# ------------------------------------------------- the credential never comes back
# Origins that echo requests (tls_term_origin.py's echo endpoints) would hand the token
# to the command: TRACE/TRACK are refused, every other echo is masked byte for byte.
VSTARS=$(printf '%*s' $((${#TOKEN} + 7)) '' | sed 's/ /\\*/g') # "Bearer " + the token, as a regex
leaks() { # NAME OUTPUT: the token must not be in it
	if grep -q "$TOKEN" <<<"$2"; then fail "$1: the token is not in the answer" "$(head -c 300 <<<"$2")"; else ok "$1: the token is not in the answer"; fi
}
for m in TRACE TRACK trace; do
	out=$(hr tls.yaml a.audit -- "${CURL[@]}" -D - -X "$m" "https://secure.test:$P/echo-$m" | tr -d '\r')
	leaks "$m" "$out"
	expect_match "$m to a host with a credential: 403 naming why" \
		"^X-Halo-Deny: secure.test \(egress.credentials for secure.test: $m is refused \(the origin would echo the credential back\)\)$" "$out"
done
expect "TRACE/TRACK never reached the origin" "0" "$(grep -ci '^trac[ek] ' "$W/good.log")"
expect "audit: the refused TRACE is a denial with its reason" \
	"https deny TRACE egress.credentials for secure.test: TRACE is refused (the origin would echo the credential back)" \
	"$(hr tls.yaml t.audit -- "${CURL[@]}" -o /dev/null -X TRACE "https://secure.test:$P/echo"
		aud t.audit proto decision method rule | tr ';' '\n' | grep '^https')"
out=$("$HALO" check --policy "$W/tls.yaml" -X TRACE "https://secure.test:$P/echo" 2>&1; echo "rc=$?")
expect_match "halo-run check -X TRACE: the proxy's answer, from the same function" \
	"^rule: egress.credentials for secure.test: TRACE is refused \(the origin would echo the credential back\)$" "$out"
expect_match "halo-run check -X TRACE: exit 1" "^rc=1$" "$out"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -X TRACE "https://plain.test:$P/echo-trace" | tr -d '\r')
expect_match "TRACE to a host without a credential: passed (nothing to leak)" "^TRACE /echo-trace HTTP/1.1$" "$out"

for ep in reflect reflect-chunked?7 reflect-chunked?1 reflect-eof; do
	out=$(hr tls.yaml a.audit -- "${CURL[@]}" -D - "https://secure.test:$P/$ep" | tr -d '\r')
	leaks "/$ep" "$out"
	expect_match "/$ep: the value in the body is masked, length kept" "^Authorization: $VSTARS$" "$out"
	expect_match "/$ep: ... and in a response header" "^X-Echo-Auth: $VSTARS$" "$out"
	expect_match "/$ep: the rest is intact" "^Host: secure.test:$P$" "$out"
done
# An origin that quotes the request cut at N bytes of the value: a cut of 8 bytes of the
# token or more is masked too (as far as it agrees), so no usable prefix leaks.
for n in 15 19 $((${#TOKEN} + 6)); do
	out=$(hr tls.yaml a.audit -- "${CURL[@]}" "https://secure.test:$P/reflect-cut?$n" | tr -d '\r')
	if grep -qF "${TOKEN:0:8}" <<<"$out"; then
		fail "/reflect-cut?$n: no prefix of the token comes back" "$out"
	else
		expect_match "/reflect-cut?$n: no prefix of the token comes back, length kept" \
			"^bad request: Authorization: \*{$n}\.\.\.$" "$out"
	fi
done
out=$(hr tls.yaml a.audit -- "${CURL[@]}" "https://secure.test:$P/reflect-cut?14" | tr -d '\r')
expect "/reflect-cut?14: a cut under the stem (\"Bearer \" and 7 bytes) is left as it came" \
	"bad request: Authorization: Bearer ${TOKEN:0:7}..." "$out"
# The body's length is the origin's: framing holds, byte for byte.
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -o /dev/null -w '%{size_download}\n' "https://secure.test:$P/reflect")
expect "/reflect: as many bytes as the origin sent" "$(grep -o 'sent [0-9]* bytes' "$W/good.log" | tail -1 | awk '{print $2}')" "$out"
# 3 x 16 KiB: the value straddles the proxy's reads and the TLS records.
rm -f "$WS/big.out"
hr tls.yaml a.audit -- "${CURL[@]}" -o big.out "https://secure.test:$P/reflect-big?3" >/dev/null
expect "/reflect-big: 3 x (16380 dots + the value) comes back with the value masked, same length" "ok" \
	"$(python3 -c "
import sys
want = (b'.' * 16380 + b'*' * int(sys.argv[2])) * 3
got = open(sys.argv[1], 'rb').read()
print('ok' if got == want else 'got %d bytes, want %d, first difference at %s' % (len(got), len(want),
      next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))))" \
		"$WS/big.out" $((${#TOKEN} + 7)) 2>&1)"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" --compressed "https://secure.test:$P/accept-encoding")
expect "a credential's host is asked for identity, whatever the client accepts" "identity" "$out"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -D - --compressed "https://secure.test:$P/gzip" | tr -d '\r')
leaks "/gzip" "$out"
expect_match "a compressed answer from a credential's host: 502 naming why" \
	"^X-Halo-Error: the origin sent a compressed or encoded body to a host with a credential \(asked for identity\): it cannot be scanned for the credential$" "$out"
# A byte range of an echo cuts the value where no mask can know it (bytes 20- of
# "auth=Bearer tok..." is the token without its first 8 bytes): a credential's host is
# never asked for a range, and a 206 it sends anyway is refused.
TAIL=${TOKEN:8}
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -D - -r 20- "https://secure.test:$P/reflect-range" | tr -d '\r')
if grep -q "$TAIL" <<<"$out"; then fail "Range on an echo: no piece of the token comes back" "$(head -c 300 <<<"$out")"; else ok "Range on an echo: no piece of the token comes back"; fi
expect_match "Range to a credential's host: dropped, the whole body comes back masked" \
	"^auth=$VSTARS$" "$out"
expect "... the origin never saw the Range" "range=-" "$(grep '^range=' "$W/good.log" | tail -1)"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -r 0-3 "https://plain.test:$P/reflect-range")
expect "Range to a host without a credential: passed" "auth" "$out"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -D - "https://secure.test:$P/reflect-206?20" | tr -d '\r')
if grep -q "$TAIL" <<<"$out"; then fail "a 206 nobody asked for: no piece of the token" "$(head -c 300 <<<"$out")"; else ok "a 206 nobody asked for: no piece of the token"; fi
expect_match "a 206 from a credential's host: 502 naming why" \
	"^X-Halo-Error: the origin sent a partial body \(206\) to a host with a credential: a piece of the credential cannot be recognised$" "$out"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -D - -H "Upgrade: websocket" -H "Connection: Upgrade" \
	-H "Sec-WebSocket-Version: 13" -H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" \
	"https://secure.test:$P/ws" | tr -d '\r')
expect_match "a WebSocket upgrade to a terminated host: 501 naming why" \
	"^HTTP/1.1 501 .*
X-Halo-Error: a protocol upgrade \(WebSocket...\) to a host whose TLS the proxy terminates is not supported" "$(grep -e '^HTTP' -e '^X-Halo' <<<"$out")"
expect "... and the origin never saw it" "0" "$(grep -c ' /ws ' "$W/good.log")"
expect "... audited as refused, with why" \
	"https deny GET /ws2 secure.test: a protocol upgrade (WebSocket...) to a host whose TLS the proxy terminates is not supported: its requests are judged one by one" \
	"$(hr tls.yaml w.audit -- "${CURL[@]}" -o /dev/null -H "Upgrade: websocket" -H "Connection: Upgrade" "https://secure.test:$P/ws2"
		aud w.audit proto decision method path rule | tr ';' '\n' | grep '^https')"

# ------------------------------------------------------- the token is nowhere inside
out=$(hr tls.yaml a.audit -- sh -c '
	env; cat /proc/self/environ; for p in /proc/[0-9]*; do cat $p/environ $p/cmdline; done
	timeout 60 grep -rsI -e "'"${TOKEN:0:4}[${TOKEN:4:1}]${TOKEN:5}"'" /run /tmp /etc "$HOME" . 2>/dev/null' 2>/dev/null | tr '\0' '\n')
if grep -q "$TOKEN" <<<"$out"; then
	fail "the token is not inside (env, /proc/*/environ and cmdline, /run, /tmp, /etc, HOME, workspace)" \
		"$(grep -m3 "$TOKEN" <<<"$out" | head -c 300)"
else
	ok "the token is not inside (env, /proc/*/environ and cmdline, /run, /tmp, /etc, HOME, workspace)"
fi
out=$(hr tls.yaml a.audit -- sh -c 'echo "$SSL_CERT_FILE $NODE_EXTRA_CA_CERTS"; ls -l /run/halo/ca-bundle.pem | cut -c1-10; echo x >>/run/halo/ca-bundle.pem && echo writable' 2>&1)
expect_match "the bundle is on the sealed /run, read-only" \
	"^/run/halo/ca-bundle.pem /run/halo/ca.pem
-r--r--r--" "$out"
if grep -q '^writable' <<<"$out"; then fail "the bundle cannot be written inside"; else ok "the bundle cannot be written inside"; fi

# A missing variable stops the launch, naming it.
( unset HALO_TEST_TOKEN; hr tls.yaml m.audit -- true; echo "rc=$?" ) >"$W/missing.out"
expect "a missing \${NAME}: 125" "rc=125" "$(cat "$W/missing.out")"
expect_match "a missing \${NAME}: named" "HALO_TEST_TOKEN is not set" "$(cat "$W/err")"

# ---------------------------------------------------------------- request rules
code() { # URL [CURL ARGS]: status and X-Halo-Deny
	hr tls.yaml r.audit -- "${CURL[@]}" -o /dev/null -D - "${@:2}" "$1" |
		tr -d '\r' | awk '/^HTTP/{s=$2} /^[Xx]-[Hh]alo-[Dd]eny:/{sub(/^[^:]*: /,""); d=$0} END{print s, d}'
}
expect "requestRules: GET /repos/acme/x allowed" "200 " "$(code "https://api.test:$P/repos/acme/x")"
expect "requestRules: GET /repos/other denied, X-Halo-Deny names the rule set" \
	"403 api.test (requestRules for api.test: no rule allows GET /repos/other/x)" \
	"$(code "https://api.test:$P/repos/other/x")"
expect "requestRules: POST /repos/acme/x denied" \
	"403 api.test (requestRules for api.test: no rule allows POST /repos/acme/x)" \
	"$(code "https://api.test:$P/repos/acme/x" -X POST -d x)"
# (X-Halo-Deny shows the rule printably: its '\' is written '\\', policy_printable)
expect "requestRules: an encoded dot segment is denied" \
	"403 api.test (requestRules for api.test: an encoded '.', '/', '\\\\' or control byte in the path)" \
	"$(code "https://api.test:$P/repos/acme/%2e%2e/other" --path-as-is)"
# A field some origins take as the method or the path instead of the request line's:
# the rule checked GET, the origin would run DELETE (or another path).
for f in "X-HTTP-Method-Override: DELETE" "x-method-override: DELETE" "X-HTTP-Method: PUT" \
	"X-Original-URL: /admin" "X-Rewrite-URL: /admin"; do
	expect "requestRules: GET with '$f' denied, the field named" \
		"403 api.test (requestRules for api.test: the ${f%%:*} field would let the origin run another method or path than the one checked)" \
		"$(code "https://api.test:$P/repos/acme/x" -H "$f")"
done
expect "audit: the denied request with method and path" \
	"https deny POST /repos/acme/x requestRules for api.test: no rule allows POST /repos/acme/x" \
	"$(hr tls.yaml r.audit -- "${CURL[@]}" -o /dev/null -X POST -d x "https://api.test:$P/repos/acme/x"
		aud r.audit proto decision method path rule | tr ';' '\n' | grep '^https')"
expect "requestRules: a double-encoded dot segment is denied" \
	"403 api.test (requestRules for api.test: a double-encoded '.', '/', '\\\\', ';', '%', space or control byte in the path)" \
	"$(code "https://api.test:$P/repos/acme/%252e%252e/other" --path-as-is)"
expect "requestRules: a double-encoded slash is denied" \
	"403 api.test (requestRules for api.test: a double-encoded '.', '/', '\\\\', ';', '%', space or control byte in the path)" \
	"$(code "https://api.test:$P/repos/acme/x%252f..%252fother" --path-as-is)"
# Overlong UTF-8 and fullwidth spellings of '.' and '/' (review 21): every escape of
# a byte %80-%FF is refused, in either layer.
for pth in "%c0%ae%c0%ae/other" "..%c0%afother" "%ef%bc%8e%ef%bc%8e/other" "caf%C3%A9"; do
	expect "requestRules: /repos/acme/$pth is denied" \
		"403 api.test (requestRules for api.test: a percent-encoded non-ASCII byte (%80-%FF) in the path (an overlong or fullwidth '.' or '/' to some origins))" \
		"$(code "https://api.test:$P/repos/acme/$pth" --path-as-is)"
done
expect "requestRules: a double-encoded non-ASCII byte is denied" \
	"403 api.test (requestRules for api.test: a double-encoded non-ASCII byte (%2580-%25FF) in the path)" \
	"$(code "https://api.test:$P/repos/acme/%25c0%25ae%25c0%25ae/other" --path-as-is)"
expect "... none reached the origin" "0" "$(grep -ci -e '%c0' -e '%ef%bc' -e 'caf%c3' "$W/good.log")"
expect "requestRules: a ';' parameter is denied" \
	"403 api.test (requestRules for api.test: a ';' parameter in the path (literal or encoded))" \
	"$(code "https://api.test:$P/repos/acme;x/y" --path-as-is)"
expect "requestRules: a GET with a body is refused (400)" \
	"400 api.test (requestRules for api.test: a GET request with a body (refused under requestRules: an origin that ignores its length would read the body as another request))" \
	"$(code "https://api.test:$P/repos/acme/body-get" -X GET -d 'GET /gists HTTP/1.1')"
expect "requestRules: a chunked HEAD body is refused (400)" \
	"400 api.test (requestRules for api.test: a HEAD request with a body (refused under requestRules: an origin that ignores its length would read the body as another request))" \
	"$(code "https://api.test:$P/repos/acme/body-head" -X HEAD -H 'Transfer-Encoding: chunked' -d x)"
expect "requestRules: a DELETE with a body to a rules host without methods (plain.test) is refused" \
	"400 plain.test (requestRules for plain.test: a DELETE request with a body (refused under requestRules: an origin that ignores its length would read the body as another request))" \
	"$(code "https://plain.test:$P/body-delete" -X DELETE -d x)"
expect "requestRules: plain http:// forwarding refuses a GET body too" "400 " \
	"$(code "http://api.test:$P/repos/acme/body-plain" -X GET -d x)"
expect "the refused bodies never reached the origin" "0" "$(grep -c ' /[a-z/]*body-' "$W/good.log")"
expect "a GET without a body still passes" "200 " "$(code "https://api.test:$P/repos/acme/x" -H 'Content-Length: 0')"
out=$(hr tls.yaml r.audit -- "${CURL[@]}" -w '%{http_code} %{num_connects}\n' -o /dev/null \
	-o /dev/null "https://api.test:$P/repos/acme/one" "https://api.test:$P/gists")
expect "keep-alive: the second request on the same connection is denied" "200 1
403 0" "$out"
expect "the denied request never reached the origin" "0" "$(grep -c ' /gists ' "$W/good.log")"

expect "curl ignoring the proxy: a denied request is denied" \
	"403 api.test (requestRules for api.test: no rule allows GET /gists)" \
	"$(code "https://api.test:$P/gists" --noproxy '*')"
expect "plain http:// forwarding obeys the same rules" \
	"403 api.test (requestRules for api.test: no rule allows GET /gists)" \
	"$(code "http://api.test:$P/gists")"
expect "plain http:// forwarding: an allowed GET with X-HTTP-Method-Override denied too" \
	"403 api.test (requestRules for api.test: the X-HTTP-Method-Override field would let the origin run another method or path than the one checked)" \
	"$(code "http://api.test:$P/repos/acme/x" -H "X-HTTP-Method-Override: DELETE")"
out=$(hr tls.yaml a.audit -- "${CURL[@]}" -x socks5h://127.0.0.1:1080 "https://secure.test:$P/echo-socks")
expect "SOCKS5 to a terminated host: terminated too (credential injected)" \
	"auth=ok n_auth=1 method=GET path=/echo-socks" "$out"
expect "SOCKS5: denied requests too" \
	"403 api.test (requestRules for api.test: no rule allows GET /gists)" \
	"$(code "https://api.test:$P/gists" -x socks5h://127.0.0.1:1080)"

# ----------------------------------------------------------- origin verification
out=$(hr tls.yaml b.audit -- "${CURL[@]}" -D - -o /dev/null "https://bad.test:$B/echo" | tr -d '\r')
expect_match "an origin with a certificate from an untrusted CA: 502" "^HTTP/1.1 502" "$out"
expect_match "... with the reason in X-Halo-Error" \
	"X-Halo-Error: TLS to the origin failed: certificate verify failed: (unable to get local issuer certificate|self.signed)" "$out"
expect "... and the bad origin never saw a request" "0" "$(cat "$W/bad.log" 2>/dev/null | wc -l)"

# ------------------------------------------ the run's keys only in the supervisor
# Root reads each process's memory from outside (the command cannot: init is not
# dumpable). The supervisor holds the CA's and the leaf's keys, which also proves the
# scan finds them; no process inside the sandbox may hold either, its init included
# (a fork-like copy of the supervisor: the keys must be made after the clone).
descendants() { # PID: its descendants, parents first
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}
if [ "$AS" != root ]; then
	skip "the run's private keys are only in the supervisor's memory" "reading init's memory needs root"
else
	rm -f "$W/keys" "$WS/ready" "$WS/done"
	HALO_TEST_TLS_KEY_DIGESTS="$W/keys" hr tls.yaml k.audit -- sh -c '
		curl -sS --max-time 20 -o /dev/null https://secure.test:'"$P"'/echo-keys; : >ready
		i=0; while [ ! -e done ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' &
	hpid=$!
	for _ in $(seq 150); do [ -e "$WS/ready" ] && break; sleep 0.1; done
	sup=$(awk '$1 == "pid" {print $2}' "$W/keys" 2>/dev/null)
	inside=$([ -n "$sup" ] && descendants "$sup")
	init=""
	for q in $inside; do
		[ "$(awk '/^NSpid:/ {print $NF}' /proc/"$q"/status 2>/dev/null)" = 1 ] && init=$q && break
	done
	scan=$([ -n "$sup" ] && [ -n "$init" ] && timeout 120 python3 "$IT/key_scan.py" "$W/keys" "$sup" $inside)
	: >"$WS/done"
	wait "$hpid"
	expect "the scan finds the run's keys in the supervisor's memory" \
		"$sup ca=found leaf=found" "$(grep "^$sup " <<<"$scan")"
	expect_match "init (pid 1 inside) was scanned" "^$init ca=" "$(grep "^${init:-none} " <<<"$scan")"
	expect "neither key is in the memory of any process inside, init included" "" \
		"$(grep -v "^$sup " <<<"$scan" | grep -v -e 'ca=absent leaf=absent$' -e 'unreadable: No such file or directory$')"
fi

# ------------------------------------- a body the origin ignores, then a judged request
# tls_term_origin.py never reads a PUT's body (as origins that ignore a body do: "CL.0"):
# what the command put there is the start of the origin's next request. On a kept
# connection the proxy's next head (a request the rules allow, with the credential)
# would complete it: the origin would run the smuggled method and path with the
# credential, past requestRules. After a request with a body to a host with a
# credential, the connection is not kept.
cat >"$W/tlsbody.yaml" <<EOF
egress:
  default: deny
  allowedDomains: [secure.test]
  allowPrivate: [127.0.0.1/32]
  trustedCAs: [$W/testca.pem]
  credentials:
    - {host: secure.test, header: Authorization, value: "Bearer \${HALO_TEST_TOKEN}"}
  requestRules:
    - {host: secure.test, methods: [GET, PUT], paths: ["/echo*"]}
EOF
chmod a+r "$W/tlsbody.yaml"
: >"$W/good.log"
out=$(hr tlsbody.yaml sb.audit -- python3 -c "
import http.client, ssl
c = http.client.HTTPSConnection('secure.test', $P, timeout=20, context=ssl.create_default_context())
c.request('PUT', '/echo-put', body=b'GET /smuggled-denied HTTP/1.1\r\nX-Pad: ')
r = c.getresponse(); r.read()
print(r.status, r.getheader('Connection'))
try:
    c.request('GET', '/echo-after')
    r = c.getresponse(); r.read(); print('second', r.status)
except (http.client.HTTPException, OSError) as e:
    print('second', type(e).__name__)
c.close()
" 2>&1)
expect_match "a PUT with a body to a host with a credential: answered, Connection: close" "^200 close$" "$out"
expect "... the origin never runs a request the rules did not judge, with the credential" "" \
	"$(grep -v -e '^PUT /echo-put ' -e '^GET /echo-after ' "$W/good.log")"
out=$(hr tlsbody.yaml sb.audit -- "${CURL[@]}" -w '%{http_code} %{num_connects}\n' -o /dev/null \
	-o /dev/null "https://secure.test:$P/echo1" "https://secure.test:$P/echo2")
expect "... requests without a body still share one connection" "200 1
200 0" "$out"

# -------------------------------------------------- no CA for a policy without rules
out=$(hr main.yaml n.audit -- sh -c 'echo "[${SSL_CERT_FILE-unset}]"; ls /run/halo | grep -v "^config$"')
expect "a policy without credentials or requestRules: no CA, no variables" "[unset]
node-preload.cjs" "$out"
finish
