#!/bin/bash
# Workflow: a registry on the HOST's loopback reached through `egress.hostPorts: [PORT]`
# (issue 9): no allowedDomains, no allowPrivate; listing the port is the permission.
# Inside, localhost:PORT, 127.0.0.1:PORT and [::1]:PORT reach the host's 127.0.0.1:PORT
# directly (NO_PROXY keeps loopback off the proxy), each connection audited; then
# `npm install` with `registry=http://localhost:PORT/` in the project's .npmrc. The
# host's ~/.npm is unchanged afterwards.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

start_registry hp 0
P=$(wait_port hp)
printf 'egress:\n  hostPorts: [%s]\n' "$P" >"$W/hp.yaml"
echo "host registry" >"$W/hp.root/probe"
chmod -R a+rX "$W"

row "hostPorts: localhost, 127.0.0.1 and [::1] reach the host's port" hp.yaml probe.log \
	"^localhost 127.0.0.1 \[::1\]$" sh -c "for h in localhost 127.0.0.1 '[::1]'; do
		[ \"\$(curl -sS --max-time 10 http://\$h:$P/probe)\" = 'host registry' ] && printf '%s ' \$h
	done | sed 's/ \$//'; echo"
n=$(grep -c "\"port\":$P" "$W/probe.log.audit" 2>/dev/null)
if [ "${n:-0}" -ge 3 ]; then ok "hostPorts: each connection audited ($n records)"; else
	fail "hostPorts: each connection audited" "${n:-0} audit records for port $P, want 3"; fi

if ! need npm node; then
	skip "hostPorts: npm install" "$MISSING is not installed (make deps)"
	finish
	exit
fi
export npm_config_cache="$W/pack-cache" npm_config_update_notifier=false
npm_registry "$W/hp.root" "http://localhost:$P" "$(mkpkg wf-left)" "$(mkpkg wf-right wf-left)" \
	2>"$W/pack.err" || fail "registry tree built" "$(head -c 300 "$W/pack.err")"
unset npm_config_cache npm_config_update_notifier
mkdir -p "$WS/app"
echo '{"name": "app", "version": "1.0.0", "private": true}' >"$WS/app/package.json"
printf 'registry=http://localhost:%s/\naudit=false\nfund=false\nupdate-notifier=false\n' "$P" >"$WS/app/.npmrc"
chmod -R a+rX "$W"
chmod -R a+rwX "$WS"
seed_caches "$HOME/.npm"
row "hostPorts: npm install with registry=http://localhost:PORT/" hp.yaml npm.log "^wf-right\+wf-left$" \
	sh -c "cd app && timeout 60 npm install wf-right && node -e 'console.log(require(\"wf-right\"))'"
[ "$RC" = 0 ] || diag "the same with npm_config_cache in the workspace" hp.yaml npmdiag.log \
	sh -c "cd app && export npm_config_cache=\$PWD/.diag-npm && timeout 60 npm install wf-right"
caches_unchanged "hostPorts npm"
finish
