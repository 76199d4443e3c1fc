#!/bin/bash
# Tool caches (sandbox.caches). isolated, the default: the tools' variables point at
# sandbox-only caches under $HOME/.cache/halo-run/caches, writable inside and kept
# across runs, while the host's own caches (~/.npm, ~/.cache/go-build...) stay
# read-only and unchanged; without a usable home, per-run caches and one line saying
# so. host: the real ones writable. off: neither. `halo-run cache` lists and clears,
# never following a link planted inside. Real npm (a tarball install) where present.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
# The user's home, apart from the workspace and outside /tmp (which the sandbox gets
# fresh, so a home there would be out of sight inside and prove nothing).
H=$(mktemp -d /var/tmp/halo-it-home.XXXXXX) || exit 1
trap 'rm -rf "$H"' EXIT
WS="$TMPDIR/ws"
mkdir -p "$H/.npm" "$H/.cache/go-build" "$H/go" "$WS"
echo host-marker >"$H/.npm/marker"
C=$(cd "$WS" && HOME=$H "$HALO" cache path)
case "$C" in "$H/.cache/halo-run/caches/ws-"*) ;; *) echo "not ok - $AS: cache path: $C" ;; esac

sbx() { # ARGS...: halo-run with HOME=$H in the workspace; sets OUT ERR RC
	OUT=$(cd "$WS" && HOME=$H timeout -k 2 "${BOUND:-30}" "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
snapshot() { (cd "$H" && find .npm .cache/go-build go -printf '%p %s\n' 2>/dev/null | sort); }

before=$(snapshot)
sbx -- sh -c 'echo "$npm_config_cache|$GOCACHE|$GOPATH|$CARGO_HOME|$PIP_CACHE_DIR|$XDG_CACHE_HOME"'
expect "isolated: exit 0" 0 "$RC"
expect "isolated: the tools' variables point at the sandbox's caches" \
	"$C/npm|$C/go-build|$C/go|$C/cargo|$C/pip|$C/xdg" "$OUT"
expect "isolated: no note on stderr" "" "$ERR"
sbx -- sh -c 'mkdir -p "$GOCACHE" && echo run1 > "$GOCACHE/entry" && echo wrote'
expect "isolated: the cache is writable inside" wrote "$OUT"
sbx -- cat "$C/go-build/entry"
expect "isolated: found again on the next run" run1 "$OUT"
sbx -- sh -c 'echo x > "$HOME/.npm/marker" 2>/dev/null && echo wrote || echo refused'
expect "isolated: the host's ~/.npm stays read-only" refused "$OUT"
sbx -- sh -c 'echo x > "$HOME/.cache/go-build/poison" 2>/dev/null && echo wrote || echo refused'
expect "isolated: the host's ~/.cache/go-build stays read-only" refused "$OUT"
sbx -- sh -c 'mkdir -p "$C/../../elsewhere" 2>/dev/null && echo wrote || echo refused'
expect "isolated: only the caches directory is writable, not ~/.cache" refused "$OUT"
expect "isolated: the host's own caches unchanged" "$before" "$(snapshot)"
expect "isolated: the root is private (0700)" 700 "$(stat -c %a "$C")"
sbx --dry-run -- true
expect_match "dry-run names the caches bind" "$C +tool caches \(sandbox.caches: isolated\)" "$OUT"

# Real npm: a tarball install writes npm's cache, which must land in the sandbox's.
if command -v npm >/dev/null; then
	mkdir -p "$WS/app/pkg"
	printf '{"name":"halo-demo","version":"1.0.0","main":"i.js"}\n' >"$WS/app/pkg/package.json"
	echo 'module.exports = 42' >"$WS/app/pkg/i.js"
	(cd "$WS/app/pkg" && HOME=$H npm_config_cache="$TMPDIR/npm-pack" npm pack --silent >/dev/null 2>&1)
	printf '{"name":"app","version":"1.0.0"}\n' >"$WS/app/package.json"
	OUT=$(cd "$WS/app" && HOME=$H timeout 120 "$HALO" -- sh -c \
		'npm install --no-audit --no-fund ./pkg/halo-demo-1.0.0.tgz >npm.log 2>&1 &&
		 node -e "console.log(require(\"halo-demo\"))"' 2>"$E" </dev/null)
	expect "npm install of a tarball under the default policy" 42 "$OUT"
	[ "$OUT" = 42 ] || { tail -n 5 "$WS/app/npm.log"; tail -n 5 "$E"; }
	CA=$(cd "$WS/app" && HOME=$H "$HALO" cache path)
	expect "npm's cache is the sandbox's (the app workspace's own)" yes \
		"$([ -d "$CA/npm/_cacache" ] && echo yes || echo no)"
	expect "the host's ~/.npm unchanged by npm" "$before" "$(snapshot)"
else
	skip "npm cache rows" "npm not installed"
fi

# Caches are the workspace's own: what one workspace's run plants (a .pth file that
# every later python would run) never reaches another workspace's runs.
mkdir -p "$TMPDIR/ws2"
sbx -- python3 -c 'import site, os
d = site.getusersitepackages(); os.makedirs(d, exist_ok=True)
open(os.path.join(d, "zz-h5.pth"), "w").write("import os; open(\"PLANTED-BY-WS\", \"w\")\n")
print("planted")'
expect "a .pth planted in this workspace's pip user base" planted "$OUT"
OUT=$(cd "$TMPDIR/ws2" && HOME=$H timeout 20 "$HALO" -- sh -c 'python3 -c "print(1)"; echo "$GOCACHE"' 2>/dev/null)
expect "another workspace: its own caches" no "$(grep -c "^$C" <<<"$OUT" | grep -q '^0$' && echo no || echo yes)"
expect "another workspace: the planted .pth never runs there" no \
	"$([ -e "$TMPDIR/ws2/PLANTED-BY-WS" ] && echo yes || echo no)"
# ...and cannot even be read there: the directory of every workspace's caches shows
# only the workspace's own (an empty read-only tmpfs beneath it).
sbx -- sh -c 'mkdir -p "$GOCACHE" && echo cache-secret > "$GOCACHE/other-ws-file" && echo made'
expect "a file in this workspace's cache" made "$OUT"
OUT=$(cd "$TMPDIR/ws2" && HOME=$H timeout 20 "$HALO" -- sh -c '
	cat "$1/go-build/other-ws-file" 2>/dev/null || echo unreadable
	ls "$2" 2>/dev/null | grep -c .
	touch "$2/planted" 2>/dev/null && echo planted || echo refused' sh "$C" "$(dirname "$C")" 2>/dev/null)
expect "another workspace's cache file is unreadable from inside" unreadable "$(sed -n 1p <<<"$OUT")"
expect "the caches directory shows only this workspace's own" 1 "$(sed -n 2p <<<"$OUT")"
expect "nothing can be created beside it" refused "$(sed -n 3p <<<"$OUT")"
OUT=$(cd "$TMPDIR/ws2" && HOME=$H "$HALO" --dry-run -- true 2>/dev/null)
expect_match "dry-run says other workspaces' caches are hidden" "other workspaces' caches hidden" "$OUT"
printf 'sandbox: {mode: read-only}\n' >"$TMPDIR/ro.yaml"
sbx --policy "$TMPDIR/ro.yaml" -- sh -c 'echo "$GOCACHE"'
expect "read-only: per-run caches (nothing outlives the run)" /tmp/halo-cache/go-build "$OUT"
expect "read-only: nothing said by default" "" "$ERR"
sbx --verbose --policy "$TMPDIR/ro.yaml" -- true
expect_match "read-only, --verbose: one line says so" "per-run.*read-only" "$ERR"
before_dry=$(ls "$H/.cache/halo-run/caches" | wc -l)
mkdir -p "$TMPDIR/ws3"
(cd "$TMPDIR/ws3" && HOME=$H "$HALO" --dry-run -- true >/dev/null 2>&1)
expect "--dry-run creates no cache directory" "$before_dry" "$(ls "$H/.cache/halo-run/caches" | wc -l)"

# cache list / clear; a link planted inside is removed, never followed.
echo keep >"$TMPDIR/outside-target"
sbx -- sh -c 'mkdir -p "$npm_config_cache" && ln -s '"$TMPDIR"'/outside-target "$npm_config_cache/link" &&
	ln -s '"$TMPDIR"' "$npm_config_cache/dirlink" && echo planted'
expect "a link planted in the npm cache" planted "$OUT"
OUT=$(cd "$WS" && HOME=$H "$HALO" cache list 2>&1)
expect_match "cache list: go's entry has a size" "^go +GOCACHE +[0-9.]+K +$C/go-build$" "$OUT"
OUT=$(cd "$WS" && HOME=$H "$HALO" cache clear npm 2>&1)
expect_match "cache clear npm" "^cleared npm" "$OUT"
expect "cache clear: the npm cache is gone" no "$([ -e "$C/npm" ] && echo yes || echo no)"
expect "cache clear: a link's target is untouched" keep "$(cat "$TMPDIR/outside-target")"
expect "cache clear: go's cache kept" yes "$([ -e "$C/go-build/entry" ] && echo yes || echo no)"
expect_rc "cache clear of an unknown tool: 125" 125 env HOME="$H" "$HALO" cache clear nosuch
sbx -- sh -c 'mkdir -p "$GOPATH/pkg/mod/x/sub" && touch "$GOPATH/pkg/mod/x/sub/f" && chmod -R a-w "$GOPATH/pkg/mod/x" && echo made'
expect "a read-only module cache, as Go makes it" made "$OUT"
OUT=$(cd "$WS" && HOME=$H "$HALO" cache clear go 2>&1)
expect "cache clear go: removes Go's read-only module cache" no "$([ -e "$C/go" ] && echo yes || echo no)"
OUT=$(cd "$WS" && HOME=$H "$HALO" cache clear all 2>&1)
expect "cache clear all: go's cache gone" no "$([ -e "$C/go-build" ] && echo yes || echo no)"
expect "cache path" "$C" "$(cd "$WS" && HOME=$H "$HALO" cache path)"

# No usable home: per-run caches in the sandbox's /tmp, and one line saying so.
OUT=$(cd "$WS" && HOME=/nonexistent timeout 20 "$HALO" -- sh -c \
	'mkdir -p "$GOCACHE" && echo "$GOCACHE"' 2>"$E" </dev/null)
expect "no home: per-run caches in /tmp" /tmp/halo-cache/go-build "$OUT"
expect "no home: nothing said by default" "" "$(cat "$E")"
OUT=$(cd "$WS" && HOME=/nonexistent timeout 20 "$HALO" --verbose -- true 2>"$E" </dev/null)
expect_match "no home, --verbose: one line says so" "tool caches are per-run" "$(cat "$E")"
expect "no home, --verbose: that line once" 1 "$(grep -c 'tool caches' "$E")"
OUT=$(cd "$WS" && HOME=/nonexistent timeout 20 "$HALO" --quiet -- true 2>&1)
expect "no home, --quiet: silent" "" "$OUT"

# caches: off and host.
printf 'sandbox: {caches: off}\n' >"$TMPDIR/off.yaml"
sbx --policy "$TMPDIR/off.yaml" -- sh -c 'echo "${GOCACHE:-unset}"'
expect "caches: off: no cache variables" unset "$OUT"
printf 'sandbox: {caches: host}\n' >"$TMPDIR/host.yaml"
sbx --policy "$TMPDIR/host.yaml" -- sh -c 'echo "${GOCACHE:-unset}"; echo in > "$HOME/.npm/from-sandbox" && echo wrote'
expect "caches: host: the tools' own defaults, the real ~/.npm writable" "unset
wrote" "$OUT"
expect "caches: host: the write landed on the host" in "$(cat "$H/.npm/from-sandbox" 2>/dev/null)"
sbx --policy "$TMPDIR/host.yaml" -- sh -c 'echo x > "$HOME/.bashrc" 2>/dev/null && echo wrote || echo refused'
expect "caches: host: the rest of the home stays read-only" refused "$OUT"
printf 'sandbox: {caches: shared}\n' >"$TMPDIR/bad.yaml"
sbx --policy "$TMPDIR/bad.yaml" -- true
expect "caches: an unknown value: 125" 125 "$RC"
expect_match "caches: the error names the field" "sandbox.caches: unknown value 'shared'" "$ERR"

# Review 20: with the home as the workspace, the host's own caches stay read-only too
# (they were writable: cargo's sources, go's module and build caches, maven's jars,
# pre-commit's hook repositories, npx's packages, which the host's next build runs),
# and the sandbox's own stay writable; `caches: host` binds them writable on purpose.
mkdir -p "$H/.cargo/registry/src/x" "$H/.m2/repository/o" "$H/.cache/pre-commit/r" "$H/go/pkg/mod/m"
home_sbx() { # ARGS...: halo-run with HOME=$H from the home
	OUT=$(cd "$H" && HOME=$H timeout -k 2 30 "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
}
home_sbx -- sh -c 'for d in .cargo/registry/src/x .m2/repository/o .cache/pre-commit/r go/pkg/mod/m .npm .cache/go-build; do
	echo x >"$d/planted" 2>/dev/null && echo "wrote $d"; done; mkdir -p "$GOCACHE" && echo x >"$GOCACHE/f" && echo own'
expect "home workspace: the host's caches read-only, the sandbox's writable" own "$OUT"
expect "home workspace: nothing planted in the host's caches" "" \
	"$(find "$H/.cargo" "$H/.m2" "$H/.cache/pre-commit" "$H/go" "$H/.npm" -name planted)"
home_sbx --policy "$TMPDIR/host.yaml" -- sh -c 'echo x >.m2/repository/o/planted && echo wrote'
expect "home workspace, caches: host: the host's caches writable" wrote "$OUT"
rm -f "$H/.m2/repository/o/planted"
# Review 22: more caches that hold code the host runs (corepack's package managers,
# NuGet's packages and their build targets, torch.hub's hubconf.py, nix's fetched
# sources) were writable from the home; pnpm's home (global packages, on PATH) stays
# read-only even under caches: host, its store beneath it is the cache's.
R22=".cache/node/corepack/v1 .nuget/packages/p .cache/torch/hub/r .cache/nix/gitv3 .cache/Cypress/1 .cache/pipx/x"
for d in $R22 .local/share/pnpm/store/v3 .local/share/pnpm/global/5; do mkdir -p "$H/$d"; done
home_sbx -- sh -c 'for d in '"$R22"' .local/share/pnpm/store/v3 .local/share/pnpm/global/5; do
	echo x >"$d/planted" 2>/dev/null && echo "wrote $d"; done; echo done'
expect "home workspace: review 22's caches and pnpm's home read-only" done "$OUT"
home_sbx --policy "$TMPDIR/host.yaml" -- sh -c 'for d in '"$R22"' .local/share/pnpm/store/v3 .local/share/pnpm/global/5; do
	echo x >"$d/planted" 2>/dev/null && echo "wrote $d"; done; echo done'
expect "home workspace, caches: host: those caches and pnpm's store writable, pnpm's global packages not" \
	"$(for d in $R22 .local/share/pnpm/store/v3; do echo "wrote $d"; done; echo done)" "$OUT"
for d in $R22 .local/share/pnpm/store/v3 .local/share/pnpm/global/5; do rm -f "$H/$d/planted"; done

# A home in /var/lib (a CI service account's, like jenkins'): its caches are still
# bound, only the operating system's own trees are never writable. Root: a private
# mount namespace with a tmpfs over /var/lib (the real one is never touched).
if [ "$AS" = root ]; then
	OUT=$(cd "$WS" && timeout -k 2 30 unshare --mount --propagation private sh -c \
		'mount -t tmpfs halo-test /var/lib && mkdir -p /var/lib/ci && HOME=/var/lib/ci exec "$@"' \
		sh "$HALO" -- sh -c 'mkdir -p "$GOCACHE" && echo x > "$GOCACHE/f" && echo "$GOCACHE"' 2>"$E")
	expect_match "caches of a home in /var/lib: bound and writable" "^/var/lib/ci/\.cache/halo-run/caches/" "$OUT"
fi
# Review 17: a host service's socket in another workspace's caches (hidden inside under
# an empty tmpfs) is out of sight, nothing to mask: the launch runs (it failed at the
# mount layout, ENOENT), in the home as the workspace too.
mkdir -p "$H/.cache/halo-run/caches/zz"
python3 -c "import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); time.sleep(20)" \
	"$H/.cache/halo-run/caches/zz/x.sock" halo-cache-sock-$$ &
SP=$!
for _ in $(seq 50); do [ -S "$H/.cache/halo-run/caches/zz/x.sock" ] && break; sleep 0.1; done
sbx -- echo ran
expect "a host socket in another workspace's caches: the launch runs" "0:ran" "$RC:$OUT${ERR:+ ($ERR)}"
OUT=$(cd "$H" && HOME=$H timeout -k 2 30 "$HALO" -- echo ran 2>"$E" </dev/null)
expect "... from the home as the workspace too" "0:ran" "$?:$OUT$(sed 's/^/ /' "$E" | grep -v 'is your home' | head -c 300)"
kill "$SP" 2>/dev/null
wait "$SP" 2>/dev/null
rm -rf "$H/.cache/halo-run/caches/zz"
finish
