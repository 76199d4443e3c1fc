#!/bin/bash
# The command's environment: secrets planted in the caller's environment never reach
# it; the allowlist passes; env.pass and env.set from a policy; HALO_SANDBOX=1,
# TMPDIR=/tmp, PATH present.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"

sbx() { # ARGS...: bounded halo-run, stdin /dev/null; sets OUT ERR RC
	OUT=$(timeout -k 2 "${BOUND:-20}" "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
var() { # NAME: its value in OUT (an `env` listing), or <unset>
	local line
	line=$(grep -m1 "^$1=" <<<"$OUT") || {
		echo "<unset>"
		return
	}
	echo "${line#*=}"
}

SECRET=h5-secret-$RANDOM$RANDOM
secrets=(AWS_SECRET_ACCESS_KEY AWS_ACCESS_KEY_ID AWS_SESSION_TOKEN GITHUB_TOKEN GH_TOKEN
	OPENAI_API_KEY ANTHROPIC_API_KEY NPM_TOKEN SSH_AUTH_SOCK GPG_AGENT_INFO DOCKER_HOST
	KUBECONFIG BASH_ENV ENV PYTHONPATH PROMPT_COMMAND LD_LIBRARY_PATH)
planted=()
for n in "${secrets[@]}"; do planted+=("$n=$SECRET-$n"); done

# ------------------------------------------- CI markers and registry settings
OUT=$(env CI=true GITHUB_ACTIONS=true GITHUB_TOKEN=$SECRET CI_JOB_TOKEN=$SECRET \
	GOPROXY="https://u:$SECRET@goproxy.corp.example,direct" GOFLAGS=-mod=mod \
	PIP_INDEX_URL="https://$SECRET@pypi.corp.example/simple/" \
	npm_config_registry=http://localhost:4873/ CARGO_REGISTRIES_CORP_TOKEN=$SECRET \
	timeout -k 2 20 "$HALO" -- env 2>"$E" </dev/null)
ERR=$(cat "$E")
expect "CI=true passes" true "$(var CI)"
expect "GITHUB_ACTIONS passes" true "$(var GITHUB_ACTIONS)"
expect "GOPROXY passes without its userinfo" "https://goproxy.corp.example,direct" "$(var GOPROXY)"
expect "PIP_INDEX_URL passes without its userinfo" "https://pypi.corp.example/simple/" \
	"$(var PIP_INDEX_URL)"
expect "GOFLAGS passes" -mod=mod "$(var GOFLAGS)"
expect "npm_config_registry passes" http://localhost:4873/ "$(var npm_config_registry)"
expect "no token of any CI or registry inside" 0 "$(grep -c "$SECRET" <<<"$OUT")"
expect_match "warning names GOPROXY" "warning: GOPROXY: credentials removed" "$ERR"
expect_match "warning names PIP_INDEX_URL" "warning: PIP_INDEX_URL: credentials removed" "$ERR"
expect "the warning never shows the secret" 0 "$(grep -c "$SECRET" <<<"$ERR")"

# ------------------------------------------- issue 24: the editor and the pager pass
OUT=$(env EDITOR=vi VISUAL="code --wait" PAGER=less LESS=-FRX \
	timeout -k 2 20 "$HALO" -- env 2>"$E" </dev/null)
expect "EDITOR passes" vi "$(var EDITOR)"
expect "VISUAL passes, with its arguments" "code --wait" "$(var VISUAL)"
expect "PAGER passes" less "$(var PAGER)"
expect "LESS passes" -FRX "$(var LESS)"

# ------------------------------------- issue 33: no secret in by name or by value
GHP=ghp_h5${SECRET//-/}abcdefghijklmnopqrstuvwxyz
OUT=$(env LC_SECRET_TOKEN=$SECRET LC_GH_TOKEN=$SECRET LC_TIME=C.UTF-8 CI=$GHP TERM=xterm \
	PIP_INDEX_URL="https://pypi.corp.example/simple/?token=$SECRET" \
	PIP_EXTRA_INDEX_URL="https://pypi.fury.io/$SECRET/acme/" \
	YARN_REGISTRY="https://u:pa/$SECRET@r.corp.example/" \
	GOFLAGS="-mod=mod -toolexec=/tmp/h5-$SECRET -exec=/tmp/x -trimpath" \
	npm_config_registry="https://npm.corp.example/simple/@scope" \
	UV_INDEX_URL="https://u:p@pypi.corp.example/@team/simple/" \
	UV_EXTRA_INDEX_URL="https://pypi.fury.io./$SECRET/acme/" \
	YARN_NPM_REGISTRY_SERVER="https://pkgs.dev.azure.com/acme/_packaging/feed@Local/npm/registry/" \
	UV_DEFAULT_INDEX="https://r.corp.example/ghp%5F${SECRET//-/}abcdefghijklmnopqrstuvwxyz/simple/" \
	timeout -k 2 20 "$HALO" -- env 2>"$E" </dev/null)
ERR=$(cat "$E")
expect "LC_SECRET_TOKEN absent (not a locale category)" "<unset>" "$(var LC_SECRET_TOKEN)"
expect "LC_GH_TOKEN absent" "<unset>" "$(var LC_GH_TOKEN)"
expect "LC_TIME passes" C.UTF-8 "$(var LC_TIME)"
expect "CI holding a GitHub token is not passed" "<unset>" "$(var CI)"
expect "TERM beside it passes" xterm "$(var TERM)"
expect_match "warning names CI and the shape" "warning: CI: not passed: its value looks like a GitHub token" "$ERR"
expect "PIP_INDEX_URL loses its ?token= query" "https://pypi.corp.example/simple/" "$(var PIP_INDEX_URL)"
expect "Gemfury path token removed" "https://pypi.fury.io/acme/" "$(var PIP_EXTRA_INDEX_URL)"
expect "a userinfo holding '/' (ambiguous host) is not passed" "<unset>" "$(var YARN_REGISTRY)"
expect_match "warning names the ambiguous YARN_REGISTRY" "warning: YARN_REGISTRY: not passed: a URL in it has an ambiguous host" "$ERR"
expect "an '@' in a registry URL's path keeps its host" "https://npm.corp.example/simple/@scope" \
	"$(var npm_config_registry)"
expect "Gemfury path token removed, trailing-dot host too" "https://pypi.fury.io./acme/" \
	"$(var UV_EXTRA_INDEX_URL)"
expect "an Azure Artifacts view (feed@Local) in the path passes" \
	"https://pkgs.dev.azure.com/acme/_packaging/feed@Local/npm/registry/" "$(var YARN_NPM_REGISTRY_SERVER)"
expect "a percent-encoded token (ghp%5F...) is not passed" "<unset>" "$(var UV_DEFAULT_INDEX)"
expect "userinfo cut, '@' in the path kept" "https://pypi.corp.example/@team/simple/" "$(var UV_INDEX_URL)"
expect "GOFLAGS keeps only allowed flags" "-mod=mod -trimpath" "$(var GOFLAGS)"
expect_match "warning names GOFLAGS -toolexec" "warning: GOFLAGS: -toolexec dropped" "$ERR"
expect_match "warning names the query cut" "warning: PIP_INDEX_URL: its URL's query removed" "$ERR"
expect "issue 33: no secret inside" 0 "$(grep -c "$SECRET" <<<"$OUT")"
expect "issue 33: no secret in the warnings" 0 "$(grep -c "$SECRET" <<<"$ERR")"
printf 'env:\n  pass: [CI]\n  set: {T_SET_TOK: "%s"}\n' "$GHP" >tokpol.yaml
OUT=$(env CI=$GHP timeout -k 2 20 "$HALO" --policy tokpol.yaml -- env 2>"$E" </dev/null)
expect "env.pass: the policy author's choice passes a token value" "$GHP" "$(var CI)"
expect "env.set: the policy author's token value is set" "$GHP" "$(var T_SET_TOK)"

# ------------------------------------- Node: no warning from halo-run's settings
if command -v node >/dev/null; then
	OUT=$(timeout 20 "$HALO" -- node -e 'process.emitWarning("agent", {code: "UNDICI-EHPA"});
		process.emitWarning("kept", {code: "H5-OTHER"}); console.log("ran")' 2>"$E" </dev/null)
	ERR=$(cat "$E")
	expect "node: runs with halo-run's NODE_OPTIONS" ran "$OUT"
	expect "node: the EnvHttpProxyAgent warning (UNDICI-EHPA) is dropped" 0 \
		"$(grep -c UNDICI-EHPA <<<"$ERR")"
	expect "node: any other warning still shows" 1 "$(grep -c "H5-OTHER" <<<"$ERR")"
	# --quiet: the workspace is also $HOME here, and halo-run says so on stderr.
	OUT=$(timeout 20 "$HALO" --quiet -- sh -c '{ echo x >> /run/halo/node-preload.cjs; } 2>/dev/null && echo wrote || echo refused' 2>&1)
	expect "node: the preload cannot be changed inside" refused "$OUT"
else
	skip "Node warning rows" "node not installed"
fi

# --------------------------------------------------------- planted secrets
sbx_env() { # run `env` inside with the secrets planted plus ARGS as env assignments
	OUT=$(env "${planted[@]}" "$@" timeout -k 2 20 "$HALO" -- env 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
sbx_env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-h5 TZ=Europe/Paris NO_COLOR=1 CI=false
expect "env runs: exit 0" 0 "$RC"
for n in "${secrets[@]}"; do
	expect "planted $n absent inside" "<unset>" "$(var "$n")"
done
expect "no planted secret value anywhere in the environment" 0 "$(grep -c "$SECRET" <<<"$OUT")"
expect "CI passes by default (a marker, not a secret)" false "$(var CI)"

# --------------------------------------------------------- always set / kept
expect "HALO_SANDBOX=1" 1 "$(var HALO_SANDBOX)"
# (review 27) oh-my-zsh's compinit dump in the sandbox's /tmp, not the home's
expect "ZSH_COMPDUMP in the sandbox's /tmp" /tmp/.zcompdump "$(var ZSH_COMPDUMP)"
expect "TMPDIR=/tmp (not the caller's $TMPDIR)" /tmp "$(var TMPDIR)"
expect "PATH is the caller's" "$PATH" "$(var PATH)"
expect "HOME is the caller's" "$HOME" "$(var HOME)"
expect "LANG passes" C.UTF-8 "$(var LANG)"
expect "LC_ALL passes (LC_*)" C.UTF-8 "$(var LC_ALL)"
expect "TERM passes" xterm-h5 "$(var TERM)"
expect "TZ passes" Europe/Paris "$(var TZ)"
expect "NO_COLOR passes" 1 "$(var NO_COLOR)"
expect "every name appears once" "" "$(sed 's/=.*//' <<<"$OUT" | sort | uniq -d)"

# LD_PRELOAD: a harmless missing object. ld.so warns once for halo-run itself; a
# second warning would come from the command if the variable leaked.
OUT=$(timeout -k 2 20 env LD_PRELOAD=/nonexistent-h5-preload.so "$HALO" -- env 2>"$E" </dev/null)
RC=$?
ERR=$(cat "$E")
expect "LD_PRELOAD: the command ran" 0 "$RC"
expect "LD_PRELOAD absent inside" "<unset>" "$(var LD_PRELOAD)"
expect "LD_PRELOAD: ld.so warned only for halo-run itself" 1 "$(grep -c 'nonexistent-h5-preload' <<<"$ERR")"

# No PATH at all in the caller: the command still gets one.
OUT=$(env -u PATH "$(command -v timeout)" -k 2 20 "$HALO" -- /usr/bin/env 2>"$E" </dev/null)
expect_match "caller without PATH: PATH still set inside" "^PATH=.*/usr/bin" "$(grep '^PATH=' <<<"$OUT")"
expect "caller without PATH: HALO_SANDBOX=1" 1 "$(var HALO_SANDBOX)"

# An empty caller environment.
OUT=$(env -i "$(command -v timeout)" -k 2 20 "$HALO" -- /usr/bin/env 2>"$E" </dev/null)
RC=$?
expect "empty caller environment: runs" 0 "$RC"
expect "empty caller environment: TMPDIR=/tmp" /tmp "$(var TMPDIR)"

# --------------------------------------------------------- env.pass / env.set
cat >envpol.yaml <<'EOF'
env:
  pass: [MY_PASSED, GITHUB_TOKEN, NOT_IN_CALLER]
  set: {CI: "true", T_SET_H5: "v1", LANG: "C"}
EOF
OUT=$(env "${planted[@]}" MY_PASSED=abc CI=false LANG=C.UTF-8 timeout -k 2 20 "$HALO" --policy envpol.yaml -- env 2>"$E" </dev/null)
RC=$?
ERR=$(cat "$E")
expect "env policy: exit 0" 0 "$RC"
expect "env.pass: MY_PASSED passes" abc "$(var MY_PASSED)"
expect "env.pass: a named secret passes (GITHUB_TOKEN)" "$SECRET-GITHUB_TOKEN" "$(var GITHUB_TOKEN)"
expect "env.pass: the other secrets stay out (AWS_SECRET_ACCESS_KEY)" "<unset>" "$(var AWS_SECRET_ACCESS_KEY)"
expect "env.pass: a name not in the caller's environment stays unset" "<unset>" "$(var NOT_IN_CALLER)"
expect "env.set: CI=true overrides the caller's CI=false" true "$(var CI)"
expect "env.set: T_SET_H5=v1" v1 "$(var T_SET_H5)"
expect "env.set: LANG=C overrides an allowlisted value" C "$(var LANG)"
expect "env policy: HALO_SANDBOX=1 still" 1 "$(var HALO_SANDBOX)"

# SSH_AUTH_SOCK is never passed, even when named: refused by validation or dropped.
printf 'env: {pass: [SSH_AUTH_SOCK]}\n' >sshpol.yaml
OUT=$(env SSH_AUTH_SOCK=/tmp/h5-agent.sock timeout -k 2 20 "$HALO" --policy sshpol.yaml -- env 2>"$E" </dev/null)
RC=$?
expect "env.pass SSH_AUTH_SOCK: refused (125) or dropped" yes \
	"$({ [ $RC = 125 ] || { [ $RC = 0 ] && [ "$(var SSH_AUTH_SOCK)" = "<unset>" ]; }; } && echo yes || echo "no (rc $RC, $(var SSH_AUTH_SOCK))")"

# env.set cannot undo HALO_SANDBOX or TMPDIR: refused by validation or overridden.
printf 'env: {set: {HALO_SANDBOX: "0", TMPDIR: /var/tmp}}\n' >setpol.yaml
sbx --policy setpol.yaml -- env
expect "env.set of HALO_SANDBOX/TMPDIR: refused (125) or without effect" yes \
	"$({ [ $RC = 125 ] || { [ $RC = 0 ] && [ "$(var HALO_SANDBOX):$(var TMPDIR)" = 1:/tmp ]; }; } && echo yes || echo "no (rc $RC, $(var HALO_SANDBOX):$(var TMPDIR))")"

# --------------------------------------------------------- --dry-run
OUT=$(env "${planted[@]}" timeout -k 2 20 "$HALO" --dry-run --policy envpol.yaml -- true 2>"$E" </dev/null)
expect "--dry-run: exit 0" 0 "$?"
expect "--dry-run: no secret value printed" 0 "$(grep -c "$SECRET" <<<"$OUT")"
expect_match "--dry-run: the environment lists HALO_SANDBOX" "^ *HALO_SANDBOX" "$OUT"
expect_match "--dry-run: the environment lists a passed name" "^ *GITHUB_TOKEN" "$OUT"

finish
