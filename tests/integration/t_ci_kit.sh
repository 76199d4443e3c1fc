#!/bin/bash
# The CI kit end to end: contrib/ci/halo-ci.sh runs verify, the build under --policy,
# --timeout and --audit (the audit outside the workspace), writes the markdown report
# (to $GITHUB_STEP_SUMMARY when set) and fails the job on denials (122) while keeping
# the build's own failures. The build talks to a loopback origin under test names
# (egress_lib.sh); a hostile SOCKS5 host name (escape sequences, markdown, a pipe)
# must not reach the report as anything but escaped text.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
CI="$IT/../contrib/ci/halo-ci.sh"
[ -x "$CI" ] || {
	fail "contrib/ci/halo-ci.sh is staged" "$CI"
	finish
	exit
}

start_origin o1 echo 127.0.0.1
O1=$(wait_port o1)

ci() { # ARGS... : halo-ci.sh under the test names, from the workspace; OUT, ERR, RC
	OUT=$(cd "$WS" && timeout -k 5 200 "${WRAP[@]}" env HALO_RUN="$HALO" TMPDIR="$TMPDIR" \
		${STEP:+GITHUB_STEP_SUMMARY=$STEP} sh "$CI" "$@" 2>"$W/ci.err" </dev/null)
	RC=$?
	ERR=$(cat "$W/ci.err")
}
audit_of() { sed -n 's/^halo-ci: build: .*(audit: \(.*\))$/\1/p' <<<"$ERR"; }
no_escape() { # NAME FILE: no byte outside printable ASCII, newline and tab
	if LC_ALL=C grep -q "[^[:print:]$(printf '\t')]" "$2"; then
		fail "$1" "$(LC_ALL=C grep -n "[^[:print:]$(printf '\t')]" "$2" | head -3 | od -c | head -5)"
	else
		ok "$1"
	fi
}

md_cells() { # NAME FILE: every table row has the header's number of cells
	local n
	n=$(grep '^|' "$2" | sed 's/\\\\//g; s/\\|//g; s/[^|]//g' | awk '{print length}' | sort -u | wc -l)
	expect "$1" 1 "$n"
}

# ------------------------------------------------------------------ a clean build
ci --policy "$W/main.yaml" --timeout 60 -- curl -sS --max-time 20 "http://origin.test:$O1/hello"
expect "clean build: exit 0" 0 "$RC"
expect_match "clean build: the origin answered" "^hello from" "$OUT"
expect_match "clean build: verify ran first" "^verify: [0-9]+ passed, 0 failed" "$ERR"
A=$(audit_of)
case "$A" in "$WS"/*) fail "clean build: audit outside the workspace" "$A" ;; /*) ok "clean build: audit outside the workspace" ;; *) fail "clean build: audit named" "$ERR" ;; esac
S="$(dirname "$A")/summary.md"
expect_match "clean build: summary table row" "^\| allow \| \`origin\.test:$O1\` \| 1 \| 0 \|" "$(cat "$S" 2>/dev/null)"
expect_match "clean build: summary says 0 denied" '^\*\*0 denied\*\*, 1 allowed' "$(cat "$S" 2>/dev/null)"
expect_match "clean build: text report in the log" "^allow +origin\.test:$O1 +1 +0 " "$ERR"
expect_match "clean build: says it passed" "^halo-ci: build passed, no egress denied" "$ERR"
# Issue 24: a clean run is short (verify's summary line, not its table), and verify's
# own probes (hooks planted on purpose) never print a warning meant for a build.
n=$(wc -l <<<"$ERR")
expect "clean build: at most 20 lines from halo-ci" yes "$([ "$n" -le 20 ] && echo yes || echo "no ($n)")"
expect "clean build: no verify table" "" "$(grep -E '^PROBE |  PASS$' <<<"$ERR" | head -2)"
expect "clean build: no warning caused by verify's probes" "" "$(grep -E 'git hooks or config|halo-run: egress denied' <<<"$ERR" | head -2)"
ci --policy "$W/main.yaml" --timeout 60 --verbose -- true
expect "--verbose: exit 0" 0 "$RC"
expect_match "--verbose: verify's table" "^PROBE +EXPECTED +GOT +RESULT" "$ERR"

# ------------------------------------------------------------------ a denial fails the job
STEP="$W/step-summary.md"
: >"$STEP"
ci --policy "$W/main.yaml" -- sh -c "curl -s --max-time 20 http://origin.test:$O1/hello; curl -s --max-time 20 http://denied.test:$O1/; exit 0"
expect "denied: exit 122" 122 "$RC"
expect_match "denied: halo-run says why" "^halo-run: --fail-on-deny: the command exited 0, but the run had 1 denied egress connection; exit status 122" "$ERR"
expect_match "denied: the job says so" "failing the job \(exit 122\)" "$ERR"
SUM=$(cat "$STEP")
expect_match "denied: report in \$GITHUB_STEP_SUMMARY" "^### halo-run egress report" "$SUM"
expect "denied: denials first" "| **deny** | \`denied.test:$O1\` | 0 | 1 |" "$(grep '^| ' <<<"$SUM" | sed -n 2p | cut -d'|' -f1-5)|"
expect_match "denied: the deciding rule" "\`deniedDomains\[0\] denied\.test\`" "$SUM"
expect_match "denied: exit status in the summary" "^Exit status: 122 \(--fail-on-deny: the command exited 0\)" "$SUM"
expect_match "denied: the command line" "^Command: \`sh -c 'curl -s --max-time 20 http://origin" "$SUM"
A=$(audit_of)
J=$("$HALO" report "$A" --format json)
expect "denied: json report" "1 1 denied.test" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["allowed"], d["denied"], d["hosts"][0]["host"])' <<<"$J")"
expect_rc "denied: report --fail-on-deny" 122 "$HALO" report "$A" --fail-on-deny
unset STEP

# ------------------------------------------------------------------ the build's own failure wins
ci --policy "$W/main.yaml" -- sh -c "curl -s --max-time 20 http://denied.test:$O1/ >/dev/null; exit 3"
expect "failing build with a denial: the build's 3" 3 "$RC"
expect_match "failing build: said" "the build failed \(exit 3\)" "$ERR"

# ------------------------------------------------------------------ hostile host names
# The proxy refuses a SOCKS5 name with control or non-ASCII bytes before deciding (no
# record); one of markdown and a pipe is decided, denied and recorded as sent.
ci --policy "$W/main.yaml" -- sh -c "python3 client.py socks domain '|\`x\`*<img/src=x>[a](b)' 80 >/dev/null; exit 0"
expect "hostile: exit 122" 122 "$RC"
A=$(audit_of)
S="$(dirname "$A")/summary.md"
expect_match "hostile: the SOCKS5 name is in the audit as sent" '"host":"\|`x`\*<img/src=x>\[a\]\(b\)"' "$(cat "$A")"
no_escape "hostile: the markdown summary holds no control or non-ASCII byte" "$S"
expect_match "hostile: the name is one code span, its pipe and backticks escaped" \
	'^\| \*\*deny\*\* \| `\\\|\\x60x\\x60\*<img/src=x>\[a\]\(b\):80` \| 0 \| 1 \|' "$(cat "$S")"
md_cells "hostile: summary rows keep the header's cells" "$S"

# An audit file from elsewhere (forged, or from another tool): control bytes, escape
# sequences, invalid UTF-8, bidi overrides, a line of 100000 bytes, junk lines.
python3 - "$W/forged.jsonl" <<'PY'
import json, sys
recs = [
    {"host": "\x1b[2J\x1b]0;pwn\x07|`x`*<img src=x>[a](b)\xff\xc3", "port": 443, "decision": "deny",
     "rule": "\x1b[31mred\r\nhalo-run: egress allowed", "command": ["sh", "-c", "a | `b`\x1b"]},
    {"host": "\u202egnp.exe", "port": 80, "decision": "deny", "rule": "r", "time": "2026-12-01T00:00:00.000Z\x1b"},
    {"host": "ok.example", "port": 443, "decision": "allow", "rule": "allowedDomains[0]", "bytes_up": 1e300},
]
with open(sys.argv[1], "wb") as f:
    for r in recs:
        f.write(json.dumps(r).encode() + b"\n")
    f.write(b'{"host":"raw\xff\xfe\xc3\x28\x1b[1m","decision":"deny","port":1}\n')
    f.write(b'{"host":"' + b"a" * 100000 + b'","decision":"deny"}\n')
    f.write(b"not json\n[1,2]\n{\"host\":1,\"decision\":\"deny\"}\n\x1b[2J\n")
PY
for f in text markdown json; do
	"$HALO" report "$W/forged.jsonl" --format $f >"$W/forged.$f" 2>"$W/forged.err"
	expect "forged audit, $f: exit 0" 0 "$?"
	no_escape "forged audit, $f: no control or non-ASCII byte" "$W/forged.$f"
done
md_cells "forged audit: markdown rows keep the header's cells" "$W/forged.markdown"
expect_match "forged audit: skipped lines counted" "^skipped lines: 1 over 65536 bytes, 3 not a JSON object, 1 not an egress record" "$(cat "$W/forged.text")"
expect_match "forged audit: escapes shown as text" '\\x1b\[2J\\x1b\]0;pwn\\x07' "$(cat "$W/forged.text")"
expect_match "forged audit: invalid UTF-8 shown escaped" 'raw\\xff\\xfe\\xc3\(\\x1b\[1m' "$(cat "$W/forged.text")"
expect_match "forged audit: bidi override shown escaped" '\\u\{202e\}gnp\.exe' "$(cat "$W/forged.markdown")"
expect "forged audit: json parses, 3 denied first" "1 3 deny" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["allowed"], d["denied"], d["hosts"][0]["decision"])' "$W/forged.json" 2>&1)"

# ------------------------------------------------------------------ refusals
ci --policy "$W/main.yaml" --audit "$WS/egress.jsonl" -- true
expect "audit in the workspace: 125" 125 "$RC"
expect_match "audit in the workspace: says why" "is inside the workspace" "$ERR"
ci --policy "$W/nope.yaml" -- true
expect "missing policy: 125" 125 "$RC"
ci --policy "$W/main.yaml"
expect "no command: 125" 125 "$RC"
OUT=$(HALO_RUN=/nonexistent/halo-run sh "$CI" --policy "$W/main.yaml" -- true 2>&1)
expect "no halo-run: 125" 125 "$?"
expect_match "no halo-run: names the install step" "apt-get install" "$OUT"

finish
