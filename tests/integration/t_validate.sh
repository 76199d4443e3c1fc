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
# A hostile file (a 900 kB run of duplicate keys, a list of 50 000 bad entries): one
# pass, a bounded report (the first errors and a count of the rest), never a crash.
python3 -c 'print("{\"sandbox\": {" + ",".join("\"mode\":1" for i in range(100000)) + "}}")' >dup.json
OUT=$(timeout -k 2 30 "$HALO" validate dup.json 2>&1 </dev/null)
RC=$?
expect "100 000 duplicate keys: exit 1" 1 "$RC"
expect "... at most 101 lines of errors" yes "$([ "$(grep -c '^halo-run: error: ' <<<"$OUT")" -le 101 ] && echo yes || echo "no: $(grep -c '^halo-run: error: ' <<<"$OUT")")"
expect_match "... the rest counted" "^halo-run: error: 99[0-9]{3} more errors not shown" "$OUT"
python3 -c 'print("egress:\n  deniedDomains: [" + ",".join("U%d" % i for i in range(50000)) + "]")' >many.yaml
OUT=$(timeout -k 2 30 "$HALO" validate many.yaml 2>&1 </dev/null)
expect "50 000 bad entries: exit 1, a bounded report" "1:yes" "$?:$([ "$(wc -l <<<"$OUT")" -le 110 ] && echo yes || echo "no: $(wc -l <<<"$OUT") lines")"
finish
