#!/bin/bash
# The credential floor, through the real binary, as root and as an unprivileged user:
# under the README's agent policy (which names only ~/.ssh, ~/.aws, ~/.config/gcloud and
# .env*) every credential store of the floor planted in a home is unreadable inside;
# sandbox.allowRead carve-outs show exactly what they name, read-only, and are refused
# for secret stores, for paths outside every protected path and for symlinks that lead
# into a protected path; ~/.npmrc is shown with its registry and without its token.
#
# The home is under /var/tmp, not /tmp: the sandbox gets a fresh /tmp, so a home there
# would prove nothing. It is $HOME for halo-run, and `~` in a policy means both the
# password database's home and $HOME (opts/pwhome.c), so the planted files are the
# ones the floor names.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
W=$TMPDIR
E="$TMPDIR/_stderr"
H=$(mktemp -d /var/tmp/halo-floor.XXXXXX) || exit 1
H2=$(mktemp -d /var/tmp/halo-floor2.XXXXXX) || exit 1
trap 'rm -rf "$H" "$H2"' EXIT

# Every floor store, as a file holding a marker that must never be read inside.
FILES=(
	.ssh/id_ed25519 .aws/credentials .aws/sso/cache/t.json .azure/msal_token_cache.json
	.config/gcloud/credentials.db .kube/config .docker/config.json .netrc .git-credentials
	.config/gh/hosts.yml .gnupg/private-keys-v1.d/k.key .password-store/bank.gpg
	.local/share/keyrings/login.keyring .pypirc .cargo/credentials.toml .cargo/credentials
	.m2/settings.xml .gradle/gradle.properties .terraform.d/credentials.tfrc.json
	.claude/.credentials.json .codex/auth.json .mozilla/firefox/p/cookies.sqlite
	".config/google-chrome/Default/Cookies" ".config/chromium/Default/Login Data"
	# review 20: readable inside an ordinary workspace before
	.config/git/credentials .pip/pip.conf .pgpass .my.cnf .vault-token .config/glab-cli/config.yml
	.config/rclone/rclone.conf .gem/credentials .config/sops/age/keys.txt
	.cache/huggingface/token .huggingface/token .config/composer/auth.json .composer/auth.json
	.pulumi/credentials.json .databrickscfg .s3cfg .boto .config/doctl/config.yaml .oci/config
	.oci/oci_api_key.pem .local/share/atuin/key .config/hcloud/cli.toml
	.config/configstore/firebase-tools.json .config/helm/repositories.yaml
	# review 22: browsers and mail in snaps and flatpaks, chat apps, more CLIs' tokens
	snap/firefox/common/.mozilla/firefox/p/logins.json .var/app/org.mozilla.firefox/.mozilla/firefox/p/key4.db
	.thunderbird/p/logins.json .config/vivaldi/Default/Cookies .config/github-copilot/hosts.json
	.config/github-copilot/apps.json .fly/config.yml .config/containers/auth.json
	.nuget/NuGet/NuGet.Config .tsh/keys/proxy/user .config/Signal/config.json
	".config/discord/Local Storage/leveldb/000003.log" .local/share/com.vercel.cli/auth.json
	.cloudflared/cert.pem .cloudflared/0000-tunnel.json .config/.wrangler/config/default.toml
	.config/stripe/config.toml .sentryclirc .mc/config.json .config/ngrok/ngrok.yml
	.bitcoin/wallet.dat .bitcoin/wallets/w/wallet.dat .bunfig.toml
)
for f in "${FILES[@]}"; do
	mkdir -p "$H/$(dirname "$f")"
	echo "FLOORSECRET $f" >"$H/$f"
done
printf '[default]\nregion = eu-west-1\n' >"$H/.aws/config"
printf 'registry=https://npm.acme.example/\n//npm.acme.example/:_authToken=npm_FLOORSECRET\n' \
	>"$H/.npmrc"
mkdir -p "$H/.config/pnpm"
printf 'registry=https://npm.acme.example/\n//npm.acme.example/:_authToken=npm_FLOORSECRET\n' \
	>"$H/.config/pnpm/rc"
echo "FLOORSECRET dotenv" >"$W/.env"
echo "EXAMPLE=1" >"$W/.env.example"

AGENT='sandbox: {mode: workspace-write, protectedPaths: [~/.ssh, ~/.aws, ~/.config/gcloud, ".env*"]}'
echo "$AGENT" >agent.yaml
cat >carve.yaml <<EOF
sandbox:
  mode: workspace-write
  protectedPaths: [~/.ssh, ~/.aws, ~/.config/gcloud, ".env*"]
  allowRead: [~/.aws/config, ~/.ssh/known_hosts, $W/.env.example]
EOF
echo 'github.com ssh-ed25519 AAAA' >"$H/.ssh/known_hosts"

# in HOME POLICY CMD: run `sh -c CMD` in the sandbox; sets OUT ERR RC.
run_in() {
	OUT=$(HOME=$1 timeout -k 2 20 "$HALO" --policy "$2" -- sh -c "$3" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}

# ------------------------------------------------------------------ the floor holds
# One sandbox reads every planted file; each that can be read is named.
list=""
for f in "${FILES[@]}"; do list+="'$H/$f' "; done
run_in "$H" agent.yaml "for f in $list '$H/.npmrc' '$H/.config/pnpm/rc' '$W/.env'; do c=\$(cat \"\$f\" 2>/dev/null) && case \$c in *FLOORSECRET*) echo \"LEAK \$f\";; esac; done; echo done"
expect "agent policy runs" 0 "$RC"
expect_match "the run reached the end" '^done$' "$OUT"
for f in "${FILES[@]}" .npmrc .config/pnpm/rc; do
	if grep -qF "LEAK $H/$f" <<<"$OUT"; then fail "floor: ~/$f unreadable" "read inside"; else ok "floor: ~/$f unreadable"; fi
done
if grep -qF "LEAK $W/.env" <<<"$OUT"; then fail "floor: .env unreadable" "read"; else ok "floor: .env unreadable"; fi
# git's XDG credential store is masked inside its read-only-in-a-home directory, and
# git still reads its global config beside it.
printf '[user]\n\tname = floortest\n' >"$H/.config/git/config"
run_in "$H" agent.yaml "git config --global user.name; cat '$H/.config/git/credentials' 2>/dev/null || echo masked"
expect "floor: ~/.config/git/config read by git beside its masked credentials" "floortest
masked" "$OUT"
# The masks are not merely unlisted: the directory stores cannot be listed either.
run_in "$H" agent.yaml "ls '$H/.gnupg' '$H/.mozilla' '$H/.kube' 2>/dev/null | grep -c . || true"
expect "floor: directory stores list empty" 0 "$OUT"

# ------------------------------------------------------------------ sanitized .npmrc
run_in "$H" agent.yaml "cat '$H/.config/pnpm/rc'"
expect "pnpm rc: readable as a copy" 0 "$RC"
expect_match "pnpm rc: registry kept" '^registry=https://npm.acme.example/$' "$OUT"
if grep -q 'FLOORSECRET\|_authToken' <<<"$OUT"; then fail "pnpm rc: token removed" "$OUT"; else ok "pnpm rc: token removed"; fi
# The command's XDG_CONFIG_HOME mirror (/run/halo/config) shows no more than the
# original path: a policy that protects ~/.config/pnpm masks the settings there too,
# and an rc that is a symlink into a protected path gives none of that file.
run_in "$H" agent.yaml "cat /run/halo/config/pnpm/rc"
expect_match "pnpm rc mirror: registry kept" '^registry=https://npm.acme.example/$' "$OUT"
if grep -q 'FLOORSECRET\|_authToken' <<<"$OUT"; then fail "pnpm rc mirror: token removed" "$OUT"; else ok "pnpm rc mirror: token removed"; fi
printf 'sandbox: {protectedPaths: [~/.config/pnpm]}\n' >pnpm-own.yaml
run_in "$H" pnpm-own.yaml "cat /run/halo/config/pnpm/rc"
if grep -q 'npm.acme.example' <<<"$OUT"; then fail "pnpm rc mirror: protected by the policy, no settings" "$OUT"; else ok "pnpm rc mirror: protected by the policy, no settings"; fi
mv "$H/.config/pnpm/rc" "$H/.config/pnpm/rc.real"
ln -s "$H/.aws/config" "$H/.config/pnpm/rc"
run_in "$H" agent.yaml "cat /run/halo/config/pnpm/rc"
if grep -q 'eu-west-1' <<<"$OUT"; then fail "pnpm rc mirror: a symlink into ~/.aws shows nothing of it" "$OUT"; else ok "pnpm rc mirror: a symlink into ~/.aws shows nothing of it"; fi
rm "$H/.config/pnpm/rc" && mv "$H/.config/pnpm/rc.real" "$H/.config/pnpm/rc"
run_in "$H" agent.yaml "cat '$H/.npmrc'"
expect "npmrc: readable as a copy" 0 "$RC"
expect_match "npmrc: registry kept" '^registry=https://npm.acme.example/$' "$OUT"
if grep -q 'FLOORSECRET\|_authToken' <<<"$OUT"; then fail "npmrc: token removed" "$OUT"; else ok "npmrc: token removed"; fi
run_in "$H" agent.yaml "echo x >>'$H/.npmrc'"
if [ "$RC" -ne 0 ] && ! grep -q '^x$' "$H/.npmrc"; then ok "npmrc: the copy is read-only"; else fail "npmrc: the copy is read-only" "rc=$RC"; fi
# A policy that protects ~/.npmrc itself gets it masked whole.
printf 'sandbox: {protectedPaths: [~/.npmrc]}\n' >npm-own.yaml
run_in "$H" npm-own.yaml "cat '$H/.npmrc'"
if [ "$RC" -ne 0 ] && ! grep -q registry <<<"$OUT"; then ok "npmrc: protected by the policy, masked whole"; else fail "npmrc: protected by the policy, masked whole" "rc=$RC out=$OUT"; fi

# ------------------------------------------------------------------ allowRead
run_in "$H" carve.yaml "cat '$H/.aws/config'"
expect "allowRead: ~/.aws/config readable" 0 "$RC"
expect_match "allowRead: ~/.aws/config content" '^region = eu-west-1$' "$OUT"
expect_match "allowRead: reported as a loosening" "allowRead\\[0\\]: '~/.aws/config' loosens the protected path '~/.aws'" "$ERR"
run_in "$H" carve.yaml "cat '$H/.aws/credentials'"
if [ "$RC" -ne 0 ] && ! grep -q FLOORSECRET <<<"$OUT"; then ok "allowRead: ~/.aws/credentials still unreadable"; else fail "allowRead: ~/.aws/credentials still unreadable" "rc=$RC out=$OUT"; fi
run_in "$H" carve.yaml "ls -A '$H/.aws' | tr '\n' ' '"
expect "allowRead: only the carve-out is listed" "config " "$OUT"
run_in "$H" carve.yaml "cat '$H/.ssh/known_hosts' && ! cat '$H/.ssh/id_ed25519'"
expect "allowRead: known_hosts readable, the key not" 0 "$RC"
run_in "$H" carve.yaml "cat '$W/.env.example' && ! cat '$W/.env'"
expect "allowRead: .env.example readable, .env not" 0 "$RC"
run_in "$H" carve.yaml "echo x >>'$H/.aws/config'; touch '$H/.aws/new'; echo x >>'$W/.env.example'"
if [ "$RC" -ne 0 ] && ! grep -q '^x$' "$H/.aws/config" "$W/.env.example" && [ ! -e "$H/.aws/new" ]; then
	ok "allowRead: carve-outs are read-only, nothing can be added"
else
	fail "allowRead: carve-outs are read-only, nothing can be added" "rc=$RC"
fi

# Refused at validation: secret stores, paths outside every protected path.
for bad in "~/.ssh/id_ed25519" "~/.gnupg" "~/.local/share/keyrings/login.keyring" \
	"~/.cargo/credentials.toml" "~/.aws/credentials" "/etc/passwd" "~/.aws"; do
	printf 'sandbox: {allowRead: ["%s"]}\n' "$bad" >bad.yaml
	run_in "$H" bad.yaml "echo RAN"
	if [ "$RC" -eq 125 ] && [ -z "$OUT" ] && grep -q "sandbox.allowRead\[0\]" <<<"$ERR"; then
		ok "allowRead refused: $bad"
	else
		fail "allowRead refused: $bad" "rc=$RC out=$OUT err=$ERR"
	fi
done
printf 'sandbox: {mode: off, allowRead: [~/.aws/config]}\n' >off.yaml
run_in "$H" off.yaml "echo RAN"
expect "allowRead with mode off: refused" 125 "$RC"

# A carve-out that is a symlink into another protected path stops the launch.
mkdir -p "$H2/.aws" "$H2/.ssh"
echo "FLOORSECRET key2" >"$H2/.ssh/id_ed25519"
ln -s "$H2/.ssh/id_ed25519" "$H2/.aws/config"
printf 'sandbox: {allowRead: [~/.aws/config]}\n' >link.yaml
run_in "$H2" link.yaml "cat '$H2/.aws/config'"
if [ "$RC" -eq 125 ] && ! grep -q FLOORSECRET <<<"$OUT" && grep -q "symlink" <<<"$ERR"; then
	ok "allowRead: a symlink into a protected path is refused"
else
	fail "allowRead: a symlink into a protected path is refused" "rc=$RC out=$OUT err=$ERR"
fi

# ------------------------------------------------------------------ shown by policy
OUT=$(HOME=$H "$HALO" policy --policy agent.yaml 2>&1)
expect_match "policy: floor entries listed" '^#   floor ~/\.git-credentials +secret store' "$OUT"
expect_match "policy: sanitized copy named" "sanitized copy: $H/\\.npmrc" "$OUT"
OUT=$(HOME=$H "$HALO" policy --policy agent.yaml --json 2>&1)
expect_match "policy --json: floor block" '"floor":' "$OUT"

# Review 7: a socket at a known place (~/.1password/agent.sock) bound in another network
# namespace (so not in the host's /proc/net/unix), in a home whose name holds glob
# characters (h[1]): not reachable inside, as in any other home. Before, the known
# places were globbed with the home pasted in as a pattern, which matched only h1.
HBT=$(mktemp -d /var/tmp/halo-floor-sock.XXXXXX)
HB="$HBT/h[1]"
mkdir -p "$HB/.1password"
SOCK="$HB/.1password/agent.sock"
UN=(unshare -n)
[ "$AS" = user ] && UN=(unshare -rn)
"${UN[@]}" timeout 20 python3 -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); s.settimeout(0.5); t=time.time()
while time.time()-t<18:
    try: c,_=s.accept(); c.send(b"AGENT"); c.close()
    except socket.timeout: pass' "$SOCK" 2>/dev/null &
SP=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
if [ -S "$SOCK" ]; then
	OUT=$(cd "$TMPDIR" && HOME=$HB timeout -k 2 60 "$HALO" -- python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX)
try: s.connect(sys.argv[1]); print("reached", s.recv(8))
except OSError: print("refused")' "$SOCK" 2>&1)
	expect "a known place's socket, home named h[1], bound in another netns: refused" refused "$OUT"
else
	skip "a known place's socket in a home named h[1]" "no socket could be bound in another network namespace here"
fi
kill "$SP" 2>/dev/null
wait "$SP" 2>/dev/null
rm -rf "$HBT"
finish
