#!/bin/bash
# Uploads through the real sandbox: chunked request bodies sent by real clients inside
# (curl -T -, python requests with a generator body, http.client with chunked
# encoding) cross halo-run's proxy to a loopback origin on the host
# (egress_origin.py upload) that records exactly what it received: every byte of a
# 3 MB body, in the proxy's canonical chunked framing; the connection is kept for the
# next request; a broken chunk is answered 400 with X-Halo-Error and one stderr line.
# Before chunked bodies were forwarded every row here got 501.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

start_origin up upload 127.0.0.1
U=$(wait_port up)
head -c 3145728 /dev/urandom >"$WS/blob"
chmod a+r "$WS/blob"
WANT="got 3145728 $(sha256sum "$WS/blob" | cut -d' ' -f1) chunked-canonical"
URL="http://origin.test:$U"
AUD="http origin.test $U allow 127.0.0.1 -"
body_same() { # NAME: the origin kept exactly the blob
	if cmp -s "$W/up.log.body" "$WS/blob"; then ok "$1: the origin's copy is byte for byte the blob"; else
		fail "$1: the origin's copy is byte for byte the blob" "$(ls -l "$W/up.log.body" 2>&1)"; fi
	rm -f "$W/up.log.body"
}

# ------------------------------------------------------------------- curl
OUT=$(hr main.yaml u.audit -- sh -c "curl -sS --max-time 60 -T - -H 'Transfer-Encoding: chunked' $URL/up <blob")
expect "curl -T - chunked: exit 0" 0 "$?"
expect "curl -T - chunked: the origin got every byte, re-chunked canonically" "$WANT" "$OUT"
body_same "curl -T - chunked"
expect "curl -T - chunked: audit" "$AUD" "$(aud u.audit)"
expect "curl -T - chunked: nothing on stderr" "" "$(cat "$W/err")"

# Keep-alive after a chunked request: curl reuses the connection for the next URL.
OUT=$(hr main.yaml u.audit -- sh -c "curl -sS -v --max-time 60 -T - -H 'Transfer-Encoding: chunked' $URL/up $URL/hello <blob 2>curl.err; grep -c 'Re-using existing connection' curl.err")
expect "curl: chunked upload, then GET on the same connection" "$WANT
hello from upload
1" "$OUT"
expect "curl keep-alive: both requests decided and audited" "$AUD;$AUD" "$(aud u.audit)"

# ------------------------------------------------------------------ python
cat >"$WS/up.py" <<'EOF'
import http.client, os, sys, urllib.parse
url = sys.argv[2]
def gen():
    with open("blob", "rb") as f:
        while True:
            b = f.read(40000)
            if not b:
                return
            yield b
if sys.argv[1] == "requests":
    import requests  # honours http_proxy, which halo-run sets
    r = requests.put(url + "/up", data=gen(), timeout=60)
    print(r.status_code, r.text.strip())
else:  # http.client on one proxy connection: chunked PUT, then GET on the same socket
    p = urllib.parse.urlsplit(os.environ["http_proxy"])
    c = http.client.HTTPConnection(p.hostname, p.port, timeout=60)
    c.request("PUT", url + "/up", body=gen(), encode_chunked=True)
    r = c.getresponse()
    print(r.status, r.read().decode().strip())
    port = c.sock.getsockname()[1]
    c.request("GET", url + "/hello")
    r = c.getresponse()
    print(r.status, r.read().decode().strip(), "same connection" if c.sock and c.sock.getsockname()[1] == port else "new connection")
EOF
chmod a+r "$WS/up.py"
if python3 -c 'import requests' 2>/dev/null; then
	OUT=$(hr main.yaml u.audit -- python3 up.py requests "$URL")
	expect "python requests, generator body: the origin got every byte" "200 $WANT" "$OUT"
	body_same "python requests"
	expect "python requests: audit" "$AUD" "$(aud u.audit)"
else
	skip "python requests" "python3-requests is not installed (http.client below)"
fi
OUT=$(hr main.yaml u.audit -- python3 up.py client "$URL")
expect "python http.client encode_chunked, then GET kept" "200 $WANT
200 hello from upload same connection" "$OUT"
body_same "python http.client"

# ------------------------------------------------------ a broken chunk: 400
BAD="PUT $URL/up HTTP/1.1\r\nHost: origin.test:$U\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabcX\r\n0\r\n\r\n"
WHY="chunked body: chunk data longer than its chunk size"
OUT=$(hr main.yaml u.audit -- python3 client.py http "$BAD")
expect "broken chunk: 400, X-Halo-Error and body say why" "400
error: $WHY
halo-run proxy: origin.test:$U: $WHY" "$OUT"
expect "broken chunk: stderr line" "halo-run: egress error: origin.test:$U: $WHY (400)" "$(cat "$W/err")"
expect "broken chunk: audit carries the error" "http origin.test $U allow $WHY" \
	"$(aud u.audit proto host port decision error)"
for _ in $(seq 50); do grep -qs '^UP truncated$' "$W/up.log" && break; sleep 0.1; done
expect "broken chunk: the origin saw a truncated body, never the bad bytes" "UP truncated" \
	"$(tail -1 "$W/up.log" 2>/dev/null)"
OUT=$(hr main.yaml u.audit --quiet -- python3 client.py http "$BAD")
expect "broken chunk, --quiet: still 400" 400 "$(sed -n 1p <<<"$OUT")"
expect "broken chunk, --quiet: nothing on stderr" "" "$(cat "$W/err")"
finish
