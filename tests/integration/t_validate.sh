#!/bin/bash
# halo-run validate (issue 24): every error of every file in one pass, each on its own
# line, whatever stage finds it (unknown keys and types while reading, paths, domains,
# presets and env names while validating).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
cat >bad.yaml <<'Y'
sandbox:
  mode: workspace-write
  writableRoots: [/etc/x, relative]
  bogusKey: 1
egress:
  allowedDomains: ["*", "Upper.example", "ok.example:0"]
  presets: [nope]
limits: {cpuSeconds: -1, memoryMB: abc}
env: {pass: [LD_PRELOAD]}
Y
printf '{"egress": {"deniedDomains": ["https://x.example/"]}, "limits": {"wallSeconds": "x"}}\n' >bad2.json
printf 'egress:\n  allowedDomains: [ok.example]\n' >good.yaml
OUT=$(timeout -k 2 20 "$HALO" validate bad.yaml good.yaml bad2.json 2>&1 </dev/null)
RC=$?
expect "invalid files: exit 1" 1 "$RC"
for want in "bad.yaml:4: sandbox: unknown key 'bogusKey'" \
	"bad.yaml:8: limits.cpuSeconds: must be a positive integer" \
	"bad.yaml:8: limits.memoryMB: expected a positive integer" \
	"bad.yaml: sandbox.writableRoots\[0\]: '/etc/x' is inside the system directory /etc" \
	"bad.yaml: sandbox.writableRoots\[1\]: 'relative' must be an absolute path" \
	"bad.yaml: egress.allowedDomains\[0\]: '\*': a bare" \
	"bad.yaml: egress.allowedDomains\[1\]: 'Upper.example': upper case" \
	"bad.yaml: egress.allowedDomains\[2\]: 'ok.example:0': port 0" \
	"bad.yaml: egress.presets\[0\]: unknown preset 'nope'" \
	"bad.yaml: env.pass\[0\]: 'LD_PRELOAD' is reserved" \
	"bad2.json:.*limits.wallSeconds" \
	"bad2.json: egress.deniedDomains\[0\]"; do
	expect_match "one pass: $want" "^halo-run: error: $want" "$OUT"
done
expect_match "the valid file beside them: valid" "^good.yaml: valid" "$OUT"
expect "each error on its own line" 0 "$(grep -c 'error: .*error: ' <<<"$OUT")"
finish
