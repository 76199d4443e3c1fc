#!/bin/bash
# Workflow: npm under halo-run against a registry served on the host's loopback (a
# static tree: a packument at /<name> with dist.tarball and a sha512 integrity, the
# .tgz files made by `npm pack`), named npm.test in the project's .npmrc; the default
# policy plus only npm.test allowed. `npm ci` from a lockfile twice (the second from the
# warm cache: faster, no registry request), `npm install NAME` resolving a dependency,
# `npm install ./local.tgz`. The host's ~/.npm is unchanged afterwards.
# A host registry reached through egress.hostPorts is t_wf_hostports.sh.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

if ! need npm node; then
	skip "npm workflow" "$MISSING is not installed (make deps)"
	finish
	exit
fi
start_registry npm 200
P=$(wait_port npm)
R="http://npm.test:$P"
wf_policy npm.yaml npm.test

# ------------------------------------------------------------ the registry
# npm pack writes its logs into the cache: a throwaway one, never the host's ~/.npm
export npm_config_cache="$W/pack-cache" npm_config_update_notifier=false
dirs=($(mkpkg wf-left) $(mkpkg wf-right wf-left) $(for i in 1 2 3 4 5 6 7 8; do mkpkg "wf-p$i"; done))
npm_registry "$W/npm.root" "$R" "${dirs[@]}" 2>"$W/pack.err" ||
	fail "registry tree built" "$(head -c 300 "$W/pack.err")"
mkpkg wf-local >/dev/null
(cd "$W/src" && npm pack --silent ./wf-local >/dev/null 2>>"$W/pack.err")
unset npm_config_cache npm_config_update_notifier
chmod -R a+rX "$W"
seed_caches "$HOME/.npm"

# ------------------------------------------------------------ the projects
deps=$(for i in 1 2 3 4 5 6 7 8; do printf '"wf-p%s": "1.0.0",' "$i"; done)
npm_project "$WS/ci" "${deps%,}" "$R"
npm_lock "$W/npm.root" "$WS/ci"
npm_project "$WS/inst" "" "$R"
npm_project "$WS/tarball" "" "$R"
cp "$W/src/wf-local-1.0.0.tgz" "$WS/tarball/"
chmod -R a+rwX "$WS"

N=(timeout 60 npm)
CHECK='console.log([1,2,3,4,5,6,7,8].map(i => require("wf-p" + i)).join(" "))'
WANT="wf-p1 wf-p2 wf-p3 wf-p4 wf-p5 wf-p6 wf-p7 wf-p8"

row "npm ci from the loopback registry (cold cache)" npm.yaml ci1.log "^$WANT$" \
	sh -c "cd ci && ${N[*]} ci && node -e '$CHECK'"
ci1_ms=$MS ci1_rc=$RC
[ "$ci1_rc" = 0 ] || diag "npm ci with npm_config_cache in the workspace" npm.yaml diag.log \
	sh -c "export npm_config_cache=\$PWD/.diag-npm; cd ci && ${N[*]} ci && node -e '$CHECK'"
before=$(reqs npm)
row "npm ci again (warm cache)" npm.yaml ci2.log "^$WANT$" \
	sh -c "cd ci && ${N[*]} ci && node -e '$CHECK'"
faster "npm ci" "$ci1_ms" "$ci1_rc" "$MS" "$RC"
no_requests "npm ci again" npm "$before"
row "npm install NAME (packument, dependency resolved)" npm.yaml inst.log "^wf-right\+wf-left$" \
	sh -c "cd inst && ${N[*]} install wf-right && node -e 'console.log(require(\"wf-right\"))'"
expect "npm install NAME: lockfile written" yes "$([ -s "$WS/inst/package-lock.json" ] && echo yes)"
row "npm install ./local.tgz" npm.yaml tgz.log "^wf-local$" \
	sh -c "cd tarball && ${N[*]} install ./wf-local-1.0.0.tgz && node -e 'console.log(require(\"wf-local\"))'"

caches_unchanged "npm"
finish
