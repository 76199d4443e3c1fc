#!/bin/bash
# halo-run learn (issue 27): a run whose default denials are allowed and recorded, and
# the policy it writes. A real tool (npm ci) against a loopback registry named
# npm.test: learning under a policy that allows nothing writes npm.test:PORT, and the
# learned policy, run as a normal (default deny) run, lets the same command pass while
# a host the command did not use (other.test) stays denied. An explicit deny stays a
# deny while learning. A refused write in a directory outside the workspace is
# proposed as a writable root; one under a floor entry (~/.ssh) is listed as refused,
# never proposed. The output validates (halo-run validate) and learn exits with the
# command's status.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"
. "$IT/learn_lib.sh"

# ------------------------------------------------------------ hosts, explicit denies
start_origin o1 echo 127.0.0.1
P1=$(wait_port o1)
lr base.yaml l1.yaml -- sh -c "curl -s -o /dev/null -w '%{http_code} ' http://origin.test:$P1/; curl -s -o /dev/null -w '%{http_code} ' http://blocked.test:$P1/; exit 7"
expect "learn exits with the command's status" 7 "$RC"
expect_match "the default-denied host was allowed while learning" "^200 " "$(cat "$W/l1.yaml.stdout")"
expect_match "an explicit deny stays a deny while learning" " 403 $" "$(cat "$W/l1.yaml.stdout")"
expect_match "the learned entry names host:port (a port other than 80/443)" "^    - \"origin.test:$P1\"  # http port $P1, 1 connection" "$(cat "$W/l1.yaml" 2>/dev/null)"
expect_match "the explicit deny is listed as refused, not proposed" "blocked.test:$P1 \(http\): denied by deniedDomains" "$(cat "$W/l1.yaml" 2>/dev/null)"
if awk '/^  allowedDomains:/{f=1;next} /^  [a-zA-Z]/{f=0} f' "$W/l1.yaml" | grep -q blocked; then
	fail "the denied host is not in allowedDomains" "$(grep -n blocked "$W/l1.yaml")"
else ok "the denied host is not in allowedDomains"; fi
expect_match "the diff on stderr names the addition" "^\+     - \"origin.test:$P1\"" "$(cat "$W/l1.yaml.err")"
expect_rc "the learned policy validates" 0 "$HALO" validate "$W/l1.yaml"

# ------------------------------------------------------------ SOCKS5 (ALL_PROXY)
lr base.yaml socks.yaml -- sh -c 'curl -s -x "$ALL_PROXY" -o /dev/null -w "%{http_code}" "http://origin.test:$0/"' "$P1"
expect "learn: a SOCKS5 client passes (ALL_PROXY)" "0 200" "$RC $(cat "$W/socks.yaml.stdout")"
expect_match "learn: ... and its host is learned (socks5)" "^    - \"origin.test:$P1\"  # socks5 port $P1" "$(cat "$W/socks.yaml" 2>/dev/null)"

# ------------------------------------------------------------ a host loopback service
# Asked of the proxy (localhost:PORT through HTTP_PROXY) under a policy without
# allowPrivate: refused as loopback, proposed as egress.hostPorts (not a domain), and
# with it a client inside reaches the host's service at localhost:PORT directly.
printf 'egress:\n  default: deny\n' >"$W/nopriv.yaml"
chmod a+r "$W/nopriv.yaml"
lr nopriv.yaml hp.yaml -- sh -c 'curl -s --noproxy "" -x "$HTTP_PROXY" -o /dev/null http://localhost:$0/' "$P1"
expect_match "learn: a host loopback service tried is proposed as hostPorts" "^    - $P1  # localhost on the host's loopback" "$(cat "$W/hp.yaml" 2>/dev/null)"
if grep -q '"localhost' "$W/hp.yaml" 2>/dev/null; then fail "learn: ... not as an allowedDomains entry" "$(grep -n localhost "$W/hp.yaml" | head -3)"; else ok "learn: ... not as an allowedDomains entry"; fi
[ -f "$W/hp.yaml" ] && chmod a+r "$W/hp.yaml"
expect "learn: with it, localhost:PORT inside reaches the host's service" 200 \
	"$(HR_ERR="$W/hp2.err" hr hp.yaml hp2.audit curl -s -o /dev/null -w '%{http_code}' "http://localhost:$P1/")"

# ------------------------------------------------------------ a client ignoring the proxy
# Every proxy variable unset: the name goes to halo-run's DNS stub, which answers a name
# the default denies while learning, and the captured connection is learned by name.
lr base.yaml cap.yaml -- env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY \
	-u all_proxy -u ALL_PROXY curl --noproxy '*' -s -o /dev/null -w '%{http_code}' "http://origin.test:$P1/"
if grep -q "capture could not be set up" "$W/cap.yaml.err"; then
	skip "learn: a proxy-unaware client (DNS stub, capture)" "capture is unavailable here: $(grep -m1 capture "$W/cap.yaml.err")"
else
	expect "learn: a proxy-unaware client reaches the host (DNS stub, capture)" "0 200" "$RC $(cat "$W/cap.yaml.stdout")"
	expect_match "learn: ... and its host is learned" "^    - \"origin.test:$P1\"  # captured port $P1" "$(cat "$W/cap.yaml" 2>/dev/null)"
	lr base.yaml cap2.yaml -- env -u http_proxy -u HTTP_PROXY curl --noproxy '*' -s -o /dev/null \
		-w '%{http_code}' "http://blocked.test:$P1/"
	expect "learn: an explicitly denied name does not resolve while learning (DNS stub)" "6 000" "$RC $(cat "$W/cap2.yaml.stdout")"
fi

# ------------------------------------------------------------ npm ci, real tool
if need npm node; then
	start_registry npm
	P=$(wait_port npm)
	R="http://npm.test:$P"
	export npm_config_cache="$W/pack-cache" npm_config_update_notifier=false
	dirs=($(mkpkg wf-p1) $(mkpkg wf-p2))
	npm_registry "$W/npm.root" "$R" "${dirs[@]}" 2>"$W/pack.err" ||
		fail "registry tree built" "$(head -c 300 "$W/pack.err")"
	unset npm_config_cache npm_config_update_notifier
	npm_project "$WS/ci" '"wf-p1": "1.0.0", "wf-p2": "1.0.0"' "$R"
	npm_lock "$W/npm.root" "$WS/ci"
	chmod -R a+rwX "$WS" "$W"
	NPM='cd ci && rm -rf node_modules && timeout 60 npm ci && node -e "console.log(require(\"wf-p1\"), require(\"wf-p2\"))"'
	lr base.yaml npm.yaml -- sh -c "$NPM"
	expect "npm ci under learn passes" 0 "$RC"
	expect_match "npm: the registry is learned" "\"npm.test:$P\"  # " "$(cat "$W/npm.yaml" 2>/dev/null)"
	chmod a+r "$W/npm.yaml" 2>/dev/null
	HR_ERR="$W/npm2.err" hr npm.yaml npm2.audit sh -c "$NPM" >"$W/npm2.out"
	expect "npm ci under the learned policy (default deny) passes" 0 "$?"
	HR_ERR="$W/npm3.err" hr npm.yaml npm3.audit curl -s -o /dev/null -w '%{http_code}' "http://other.test:$P/" >"$W/npm3.out"
	expect "a host npm did not use stays denied under the learned policy" 403 "$(cat "$W/npm3.out")"
else
	skip "npm ci learned" "$MISSING is not installed (make deps)"
fi

# ------------------------------------------------------------ refused writes
mkdir -p "$HOME/learn-cache" "$HOME/.ssh"
chmod 777 "$HOME/learn-cache" "$HOME/.ssh"
lr base.yaml w.yaml -- sh -c "mkdir -p '$HOME/learn-cache/a/b'; echo x >'$HOME/.ssh/planted'; true"
expect "learn with refused writes exits 0 (the command's status)" 0 "$RC"
if grep -q 'no write was observed' "$W/w.yaml" 2>/dev/null; then
	skip "refused writes proposed" "the broker did not run here: $(grep -m1 'no write' "$W/w.yaml")"
else
	expect_match "a refused write outside the workspace is proposed as a writable root" \
		"^    - \"$HOME/learn-cache\"  # a refused write" "$(cat "$W/w.yaml" 2>/dev/null)"
	expect_match "a refused write under a floor entry is listed as refused" \
		"write $HOME/.ssh/planted.*(never|not) proposed" "$(cat "$W/w.yaml" 2>/dev/null)"
	if grep -qE "^    - \"$HOME/.ssh" "$W/w.yaml"; then
		fail "the floor entry is never proposed" "$(grep -n ssh "$W/w.yaml")"
	else ok "the floor entry is never proposed"; fi
	chmod a+r "$W/w.yaml" 2>/dev/null
	HR_ERR="$W/w2.err" hr w.yaml w2.audit sh -c "mkdir -p '$HOME/learn-cache/a/b' && echo made" >"$W/w2.out"
	expect "the learned writable root lets the same write pass" made "$(cat "$W/w2.out")"
fi
expect_rc "the learned policy with roots validates" 0 "$HALO" validate "$W/w.yaml"

# A refused write on the user's PATH (~/.local/bin) or in a directory holding one
# (~/.cargo holds ~/.cargo/bin and ~/.cargo/env): validation accepts such a root, and
# a run under it could plant a program the user runs later outside the sandbox. It is
# listed as refused, never proposed.
mkdir -p "$HOME/.local/bin" "$HOME/.cargo"
chmod 777 "$HOME/.local" "$HOME/.local/bin" "$HOME/.cargo"
lr base.yaml hs.yaml -- sh -c "echo x >'$HOME/.local/bin/planted'; mkdir '$HOME/.cargo/registry'; true"
if grep -q 'no write was observed' "$W/hs.yaml" 2>/dev/null; then
	skip "a home persistence entry is never proposed" "the broker did not run here"
elif [ ! -s "$W/hs.yaml" ]; then
	fail "a home persistence entry is never proposed" "no output: $(tail -c 300 "$W/hs.yaml.err")"
else
	if grep -qE "^    - \"$HOME/(\.local|\.cargo)" "$W/hs.yaml"; then
		fail "a PATH directory under the home is never proposed as a writable root" "$(grep -nE '^    - ' "$W/hs.yaml")"
	else ok "a PATH directory under the home is never proposed as a writable root"; fi
	expect_match "... it is listed as refused, naming the persistence set" \
		"write $HOME/.local/bin/planted.*home persistence set" "$(cat "$W/hs.yaml")"
	expect_match "... and so is a directory holding one (~/.cargo)" \
		"write $HOME/.cargo/registry.*holds ~/.cargo/" "$(cat "$W/hs.yaml")"
fi

# A write refused next to the workspace (../x): proposing its directory would make the
# workspace's parent writable, every sibling project with it. Listed, never proposed.
# (The workspace is under the home here: a parent under /tmp is the sandbox's own.)
mkdir -p "$HOME/proj/ws" && chmod 777 "$HOME/proj" "$HOME/proj/ws"
(cd "$HOME/proj/ws" && timeout -k 5 90 "${WRAP[@]}" "$HALO" learn --policy "$W/base.yaml" \
	--out "$W/par.yaml" -- sh -c 'touch ../sibling; true' </dev/null) >/dev/null 2>"$W/par.err"
if grep -q 'no write was observed' "$W/par.yaml" 2>/dev/null; then
	skip "the workspace's parent is never proposed" "the broker did not run here"
elif [ ! -s "$W/par.yaml" ]; then
	fail "the workspace's parent is never proposed" "no output: $(tail -c 300 "$W/par.err")"
else
	if grep -qE "^    - \"$HOME/proj\"" "$W/par.yaml"; then
		fail "the workspace's parent is never proposed as a writable root" "$(grep -nE '^    - ' "$W/par.yaml")"
	else ok "the workspace's parent is never proposed as a writable root"; fi
	expect_match "... it is listed as refused, naming the workspace" \
		"write $HOME/proj/sibling.*holds the workspace" "$(cat "$W/par.yaml")"
fi

# A guard target in the workspace (.vscode, existing at launch: a read-only mount, so
# the kernel refuses, not the gate): the guard keeps it read-only whatever the roots,
# so it is listed as refused, never proposed as a root that would change nothing.
mkdir -p "$WS/.vscode" && chmod 777 "$WS/.vscode"
lr base.yaml gt.yaml -- sh -c 'echo "{}" >.vscode/tasks.json; true'
if grep -q 'no write was observed' "$W/gt.yaml" 2>/dev/null; then
	skip "a guard target is never proposed as a root" "the broker did not run here"
else
	if grep -qE '^    - ".*/\.vscode"' "$W/gt.yaml" 2>/dev/null; then
		fail "a guard target is never proposed as a root" "$(grep -nE '^    - ' "$W/gt.yaml")"
	else ok "a guard target is never proposed as a root"; fi
	expect_match "... it is listed as refused" "write $WS/.vscode/tasks.json.*stays read-only in every run" \
		"$(cat "$W/gt.yaml" 2>/dev/null)"
fi
rm -rf "$WS/.vscode"

# ------------------------------------------------------------ a session
eg_one_ns # a session serves callers of its own user namespace only
SN=learn$$
lr base.yaml s.yaml --session "$SN" -- curl -s -o /dev/null -w '%{http_code}' "http://origin.test:$P1/"
expect "learn --session: the first call learns" "0 200" "$RC $(cat "$W/s.yaml.stdout")"
LR_KEEP=1 lr base.yaml s.yaml --session "$SN" -- curl -s -o /dev/null -w '%{http_code}' "http://other.test:$P1/x"
expect "learn --session: the second call learns too" "0 200" "$RC $(cat "$W/s.yaml.stdout")"
(cd "$WS" && timeout 30 "${WRAP[@]}" "$HALO" --policy "$W/base.yaml" --session "$SN" -- true) >/dev/null 2>"$W/s.plain.err"
expect "learn --session: a plain call into the learning session is refused" 125 "$?"
expect "learn --session: nothing is written before the session stops" 0 "$(stat -c %s "$W/s.yaml" 2>&1)"
(cd "$WS" && timeout 30 "${WRAP[@]}" "$HALO" learn --policy "$W/base.yaml" --out "$W/s.yaml" -- true) \
	>/dev/null 2>"$W/s.twice.err"
expect "learn --out: a file another learn (the session) is writing is refused" 125 "$?"
expect_match "... naming why" "another halo-run learn" "$(cat "$W/s.twice.err")"
expect "... and the session's file is left alone" 0 "$(stat -c %s "$W/s.yaml" 2>&1)"
timeout 30 "${WRAP[@]}" "$HALO" session stop "$SN" >/dev/null 2>&1
S_OUT=$(cat "$W/s.yaml" 2>/dev/null)
expect_match "session stop writes both calls' hosts" "\"origin.test:$P1\".*"$'\n'".*\"other.test:$P1\"" "$S_OUT"
expect "... and lists both calls" 2 "$(grep -c '^#   curl ' <<<"$S_OUT")"
expect_rc "... and it validates" 0 "$HALO" validate "$W/s.yaml"

# ------------------------------------------------------------ the output file
# Opened before the launch like --audit: masked inside (the command cannot write it),
# and a name with another hard link (one the command could have planted) is refused.
(cd "$WS" && timeout 60 "${WRAP[@]}" "$HALO" learn --policy "$W/base.yaml" --out "$WS/own.yaml" \
	-- sh -c 'echo forged >own.yaml; cat own.yaml; true') >"$W/own.out" 2>"$W/own.err"
expect "learn --out: the command cannot write the output (masked inside)" "# Learned by" \
	"$(head -c 12 "$WS/own.yaml" 2>/dev/null)"
echo "keep" >"$W/victim" && chmod a+rw "$W/victim" && ln -f "$W/victim" "$WS/linked.yaml" 2>/dev/null
(cd "$WS" && timeout 60 "${WRAP[@]}" "$HALO" learn --policy "$W/base.yaml" --out "$WS/linked.yaml" \
	-- true) >/dev/null 2>"$W/linked.err"
expect "learn --out: a file with another hard link is refused" "125 keep" "$? $(cat "$W/victim")"

# The name replaced during the run (by anything on the host: from inside, every
# ancestor is a mount point and a rename is refused): the file halo-run wrote is no
# longer what the name shows, so learn fails and says so, like --audit.
# (The command runs until the name was replaced, $WS/race.moved: 5 s at most.)
rm -f "$W/race.yaml" "$W/race.old" "$WS/race.moved"
(cd "$WS" && timeout -k 5 60 "${WRAP[@]}" "$HALO" learn --policy "$W/base.yaml" --out "$W/race.yaml" \
	-- sh -c 'i=0; while [ ! -e race.moved ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done' </dev/null) >/dev/null 2>"$W/race.err" &
RP=$!
for _ in $(seq 1 40); do [ -e "$W/race.yaml" ] && break; sleep 0.1; done
sleep 0.5
mv "$W/race.yaml" "$W/race.old" 2>/dev/null && printf 'egress:\n  default: allow\n' >"$W/race.yaml"
: >"$WS/race.moved"
wait "$RP"
expect "learn --out: a name replaced during the run fails the run" 125 "$?"
rm -f "$WS/race.moved"
expect_match "... saying the name no longer leads to the learned policy" \
	"no longer names the learned policy" "$(cat "$W/race.err")"

# Without --out the policy goes to stdout: stdout then carries it alone, the command's
# own stdout going to stderr. Before, a command printing an "env:" block put it in the
# file (valid YAML, env.pass with a secret's name), and the diff did not show it.
(cd "$WS" && timeout -k 5 60 "${WRAP[@]}" "$HALO" learn --policy "$W/base.yaml" \
	-- sh -c 'printf "env:\n  pass: [GITHUB_TOKEN]\n"' </dev/null) >"$W/so.yaml" 2>"$W/so.err"
expect "learn to stdout: the command's stdout is not part of the policy" "0 0" \
	"$? $(grep -v '^#' "$W/so.yaml" | grep -c GITHUB_TOKEN)"
expect "... stdout starts with the learned policy's header" "# Learned by" "$(head -c 12 "$W/so.yaml")"
expect_match "... the command's stdout went to stderr" "pass: \[GITHUB_TOKEN\]" "$(cat "$W/so.err")"

# ------------------------------------------------------------ usage errors
expect_rc "learn without a command is a usage error" 125 "$HALO" learn
expect_rc "learn --session without --out is refused" 125 "$HALO" learn --session x -- true
expect_rc "learn --out naming the --audit file is refused" 125 "$HALO" learn --out "$W/same.x" --audit "$W/same.x" -- true
expect_rc "learn --dry-run is refused (it runs nothing)" 125 "$HALO" learn --dry-run -- true
printf 'sandbox:\n  mode: "off"\n' >"$W/off.yaml" && chmod a+r "$W/off.yaml"
lr off.yaml off.out -- sh -c 'echo ran'
expect "learn under sandbox.mode off is refused (nothing would be seen), the command not run" \
	"125 0" "$RC $(grep -c ran "$W/off.out.stdout")"
expect_match "... naming why" "sandbox.mode is off" "$(cat "$W/off.out.err")"
finish
