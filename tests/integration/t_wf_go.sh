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

go_fixture "$W/goproxy.root" "$WS/app"
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
