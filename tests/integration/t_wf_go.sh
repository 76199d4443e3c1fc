#!/bin/bash
# Workflow: Go under halo-run. A small module with one dependency fetched from a module
# proxy served on the host's loopback (GOPROXY=http://goproxy.test:PORT, GOSUMDB=off,
# GOFLAGS=-mod=mod, set inside the command: nothing depends on which variables pass),
# the default policy plus only goproxy.test allowed. `go build` twice (the second from
# the warm build and module caches: faster, no proxy request) and `go test ./...` whose
# test serves with httptest.NewServer on the sandbox's own loopback. The host's
# ~/.cache/go-build and ~/go/pkg/mod are unchanged afterwards.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

if ! need go; then
	skip "go workflow" "$MISSING is not installed (make deps: golang-go)"
	finish
	exit
fi
start_registry goproxy 200
P=$(wait_port goproxy)
wf_policy go.yaml goproxy.test

# The module proxy protocol as files: list, .info, .mod and the zip of example.com/greet.
python3 - "$W/goproxy.root" <<'EOF'
import os, sys, zipfile
root, mod, ver = sys.argv[1], "example.com/greet", "v1.0.0"
d = os.path.join(root, mod, "@v")
os.makedirs(d)
gomod = "module %s\n\ngo 1.19\n" % mod
src = 'package greet\n\nfunc Hello(who string) string { return "hello, " + who }\n'
open(os.path.join(d, "list"), "w").write(ver + "\n")
open(os.path.join(d, ver + ".info"), "w").write('{"Version":"%s","Time":"2024-01-01T00:00:00Z"}' % ver)
open(os.path.join(d, ver + ".mod"), "w").write(gomod)
with zipfile.ZipFile(os.path.join(d, ver + ".zip"), "w") as z:
    z.writestr("%s@%s/go.mod" % (mod, ver), gomod)
    z.writestr("%s@%s/greet.go" % (mod, ver), src)
EOF

A="$WS/app"
mkdir -p "$A/web"
cat >"$A/go.mod" <<'EOF'
module wf.test/app

go 1.19

require example.com/greet v1.0.0
EOF
cat >"$A/main.go" <<'EOF'
package main

import (
	"fmt"

	"example.com/greet"
	"wf.test/app/web"
)

func main() { fmt.Println(greet.Hello("sandbox"), web.Path) }
EOF
cat >"$A/web/web.go" <<'EOF'
package web

import (
	"fmt"
	"net/http"

	"example.com/greet"
)

const Path = "/hello"

func Handler(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, greet.Hello(r.URL.Query().Get("who"))) }
EOF
cat >"$A/web/web_test.go" <<'EOF'
package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A server on the sandbox's own loopback, as most Go HTTP tests do.
func TestServe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(Handler))
	defer srv.Close()
	res, err := http.Get(srv.URL + Path + "?who=test")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if string(body) != "hello, test" {
		t.Fatalf("got %q", body)
	}
}
EOF
chmod -R a+rX "$W"
chmod -R a+rwX "$WS"
seed_caches "$HOME/.cache/go-build" "$HOME/go/pkg/mod"

GO="cd app && env GOPROXY=http://goproxy.test:$P GOSUMDB=off GOFLAGS=-mod=mod timeout 60 go"
B="$GO build -o app . && ./app"
row "go build, a dependency from the loopback module proxy (cold caches)" go.yaml b1.log \
	"^hello, sandbox /hello$" sh -c "$B"
b1_ms=$MS b1_rc=$RC
[ "$b1_rc" = 0 ] || diag "go build and go test with GOCACHE and GOPATH in the workspace" go.yaml diag.log \
	sh -c "export GOCACHE=\$PWD/.diag/cache GOPATH=\$PWD/.diag/gopath; ($B) && $GO test -count=1 ./..."
before=$(reqs goproxy)
row "go build again (warm caches)" go.yaml b2.log "^hello, sandbox /hello$" sh -c "$B"
faster "go build" "$b1_ms" "$b1_rc" "$MS" "$RC"
no_requests "go build again" goproxy "$before"
row "go test ./... with an httptest server on the sandbox's loopback" go.yaml t.log \
	"^ok .*wf.test/app/web" sh -c "$GO test -count=1 ./..."

caches_unchanged "go"
finish
