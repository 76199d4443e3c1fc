#!/bin/bash
# Workflow: a dev server started inside the sandbox and fetched from inside, under the
# default policy: `python3 -m http.server` in the background on 127.0.0.1 and on ::1,
# then curl (NO_PROXY keeps loopback direct) on the sandbox's own loopback, which
# reaches nothing but the sandbox itself (issue 9: the command owns its loopback).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

printf 'egress:\n  default: deny\n' >"$W/dev.yaml"
mkdir -p "$WS/site"
echo "served from inside" >"$WS/site/index.html"
chmod -R a+rX "$W"
chmod -R a+rwX "$WS"

# serve BIND PORT URL: start the server, poll it for up to 3 s, print the page, stop it
SERVE='python3 -m http.server "$2" --bind "$1" --directory site >/dev/null 2>&1 & s=$!
for i in $(seq 30); do curl -sS --noproxy "*" --max-time 2 "$3" 2>/dev/null && break; sleep 0.1; done
[ "$i" = 30 ] && curl -sS --noproxy "*" --max-time 2 "$3"; kill $s'
row "dev server on 127.0.0.1:8000 inside, fetched from inside" dev.yaml v4.log \
	"^served from inside$" timeout 30 sh -c "$SERVE" sh 127.0.0.1 8000 http://127.0.0.1:8000/
row "dev server on [::1]:8001 inside, fetched from inside" dev.yaml v6.log \
	"^served from inside$" timeout 30 sh -c "$SERVE" sh ::1 8001 "http://[::1]:8001/"
finish
