#!/bin/bash
# Quiet by default (issue 25, item 4): a run that went as planned prints nothing of
# halo-run's on stderr; what was refused, loosened or degraded still says so. The
# caches' place and the home-as-workspace note are --verbose and --dry-run news.
# (The runner makes the scratch directory both the workspace and HOME: every launch
# here is a home-as-workspace launch.)
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
sbx() { # ARGS...: sets OUT ERR RC
	OUT=$(timeout -k 2 30 "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
printf 'sandbox: {mode: read-only}\n' >ro.yaml
printf 'sandbox: {guardPersistence: false}\n' >noguard.yaml

sbx --policy ro.yaml -- echo hello
expect "read-only: echo hello prints hello" hello "$OUT"
expect "read-only: exit 0" 0 "$RC"
expect "read-only: nothing on stderr (no cache line)" "" "$ERR"

sbx -- echo hello
expect "workspace-write, the home as the workspace: hello" hello "$OUT"
expect "workspace-write, the home as the workspace: nothing on stderr" "" "$ERR"

sbx --verbose --policy ro.yaml -- true
expect_match "--verbose: the per-run cache line" "^halo-run: tool caches are per-run" "$ERR"
sbx --verbose -- true
expect_match "--verbose: the home line" "^halo-run: .* is your home \(or holds it\)" "$ERR"
sbx --dry-run --policy ro.yaml -- true
expect_match "--dry-run: the per-run cache line" "^halo-run: tool caches are per-run" "$ERR"
sbx --dry-run -- true
expect_match "--dry-run: the home line" "^halo-run: .* is your home \(or holds it\)" "$ERR"
sbx --quiet --verbose --policy ro.yaml -- true
expect "--quiet wins over --verbose for the cache line" 0 "$(grep -c 'tool caches' <<<"$ERR")"

# Loosened: still said.
sbx --policy noguard.yaml -- true
expect_match "guardPersistence false (a loosening): still warned" \
	"^halo-run: warning: .* is your home .*sandbox\\.guardPersistence is false" "$ERR"
# Refused: still said (the proxy refuses by name: no address is dialled).
sbx -- sh -c 'curl -s -o /dev/null -w "%{http_code}" http://blocked.example.test/'
expect "egress refused: the command sees 403" 403 "$OUT"
expect_match "egress refused: one line says so" \
	"^halo-run: egress denied: blocked\.example\.test:80" "$ERR"
# Bad input: a clear error, as always.
sbx --policy /nonexistent.yaml -- true
expect "a missing policy file: 125" 125 "$RC"
expect_match "... and says why" "nonexistent\.yaml" "$ERR"
finish
