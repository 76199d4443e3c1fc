#!/bin/bash
# The audit cannot be rewritten from inside: --audit FILE is opened by the supervisor
# before the launch and masked inside (one of halo-run's own output files), even in the
# workspace (the CI recipe's `--audit egress.jsonl`) or in a writable root. Inside,
# reading, truncating, appending, removing, renaming, linking and replacing it all
# fail; afterwards the file holds exactly the run's real records. A parent directory
# renamed from inside (the name redirected to a planted forgery) fails the run with
# 125 and a message. A FIFO, a device, a directory or a symlink is refused with 125.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
WS="$TMPDIR/ws"
mkdir -p "$WS/logs"
WR=$(mktemp -d /var/tmp/halo-audit-wr.XXXXXX) || exit 1
trap 'rm -rf "$WR"' EXIT
printf 'sandbox:\n  writableRoots: [%s]\n' "$WR" >"$TMPDIR/wr.yaml"

cat >"$WS/tamper.sh" <<'EOF'
A=$1
cat "$A" >/dev/null 2>&1 && echo "read: yes"
(: >"$A") 2>/dev/null && echo "truncate: yes"
(echo '{"forged":1}' >>"$A") 2>/dev/null && echo "append: yes"
rm -f "$A" 2>/dev/null && echo "rm: yes"
mv "$A" "$A.moved" 2>/dev/null && echo "mv: yes"
ln "$A" "$A.link" 2>/dev/null && echo "ln: yes"
echo '{"forged":2}' >"$A.new" && { mv "$A.new" "$A" 2>/dev/null && echo "replace: yes"; rm -f "$A.new"; }
python3 -c 'import os,sys; os.open(sys.argv[1], os.O_RDWR)' "$A" 2>/dev/null && echo "open rw: yes"
for h in one two; do curl -s -o /dev/null -w '%{http_code}\n' http://$h.invalid/; done
EOF
chmod -R a+rwX "$WS"

run() { # AUDIT [OPTS...]: run the tamper script from the workspace
	local a=$1
	shift
	(cd "$WS" && timeout -k 5 60 "$HALO" "$@" --audit "$a" -- sh tamper.sh "$a" </dev/null) 2>"$TMPDIR/err"
}
records() { python3 -c 'import json,sys; print(";".join("%s %s %s" % (r["host"], r["decision"], r["rule"]) for r in map(json.loads, open(sys.argv[1]))))' "$1" 2>&1; }
WANT="one.invalid deny default deny;two.invalid deny default deny"

for where in "workspace:egress.jsonl" "workspace subdir:logs/egress.jsonl" "writable root:$WR/egress.jsonl"; do
	name=${where%%:*} a=${where#*:}
	opts=()
	[ "$name" = "writable root" ] && opts=(--policy "$TMPDIR/wr.yaml")
	out=$(run "$a" "${opts[@]}")
	expect "$name: rc" 0 "$?"
	expect "$name: every tamper refused inside, the requests still audited" "403
403" "$out"
	f=$a
	[ "${a:0:1}" = / ] || f="$WS/$a"
	expect "$name: the file holds exactly the real records" "$WANT" "$(records "$f")"
	expect "$name: nothing left beside it" "" "$(ls "$f".* 2>/dev/null)"
	# A second run appends: earlier records are kept, and still nothing can be forged.
	run "$a" "${opts[@]}" >/dev/null
	expect "$name: a second run appends" "$WANT;$WANT" "$(records "$f")"
done

# The name redirected from inside: logs/ renamed, a forgery planted at the old name.
rm -rf "$WS/logs" "$WS/logs2"
mkdir -p "$WS/logs" && chmod a+rwx "$WS/logs"
(cd "$WS" && timeout 60 "$HALO" --audit logs/egress.jsonl -- sh -c \
	'mv logs logs2 && mkdir logs && echo "{\"forged\":1}" >logs/egress.jsonl' </dev/null) 2>"$TMPDIR/err"
rc=$?
if [ -d "$WS/logs2" ]; then
	expect "parent renamed from inside: the run fails" 125 "$rc"
	expect_match "parent renamed from inside: says so" "--audit logs/egress.jsonl no longer names the audit file" "$(cat "$TMPDIR/err")"
else
	ok "parent rename refused inside (ancestors pinned)"
fi
rm -rf "$WS/logs2"

# A second hard link is a name the mask does not cover: a command that planted one
# (in an earlier run, before the audit file existed) could forge records through it.
: >"$WS/planted.jsonl"
chmod a+rw "$WS/planted.jsonl"
ln -f "$WS/planted.jsonl" "$WS/hl-audit.jsonl"
out=$(cd "$WS" && timeout 60 "$HALO" --audit hl-audit.jsonl -- sh -c 'echo "{\"forged\":1}" >>planted.jsonl; echo ran' 2>&1 </dev/null)
rc=$?
expect "--audit a file with another hard link: 125, nothing ran" "125:no" "$rc:$(grep -qx ran <<<"$out" && echo ran || echo no)"
expect_match "--audit a file with another hard link: says so" "^halo-run: --audit hl-audit.jsonl: .*hard link" "$out"
expect "... nothing forged" "" "$(cat "$WS/hl-audit.jsonl")"
rm -f "$WS/planted.jsonl" "$WS/hl-audit.jsonl"

# The command's own stdout on the audit file (>>F): it could print forged records.
rm -f "$WS/out.jsonl"
out=$(cd "$WS" && timeout 60 "$HALO" --audit out.jsonl -- sh -c 'echo "{\"forged\":1}"; echo ran >&2' 2>&1 >>out.jsonl </dev/null)
rc=$?
expect "--audit F with the command's stdout on F: 125, nothing ran" "125:no" "$rc:$(grep -qx ran <<<"$out" && echo ran || echo no)"
expect_match "... says so" "^halo-run: --audit out.jsonl: .*same file or pipe as descriptor 1" "$out"
expect "... nothing forged" "" "$(cat "$WS/out.jsonl" 2>/dev/null)"
rm -f "$WS/out.jsonl"

# --dry-run shows the mask and creates nothing.
out=$(cd "$WS" && "$HALO" --dry-run --audit planned.jsonl -- true 2>&1)
expect_match "--dry-run: the audit file is in the masked list" "^  $WS/planned.jsonl$" "$out"
expect "--dry-run: nothing created" "" "$(ls "$WS/planned.jsonl" 2>/dev/null)"

# Not a regular file, or a link: refused before anything runs.
mkfifo "$TMPDIR/fifo"
ln -s "$WS/egress.jsonl" "$TMPDIR/link"
for bad in "FIFO:$TMPDIR/fifo:FIFO" "device:/dev/null:not a regular file" "directory:$WS/logs:Is a directory" "symlink:$TMPDIR/link:symbolic link"; do
	IFS=: read -r name path msg <<<"$bad"
	out=$(cd "$WS" && timeout 20 "$HALO" --audit "$path" -- sh -c 'echo ran' 2>&1 </dev/null)
	rc=$?
	expect "--audit a $name: 125" 125 "$rc"
	expect_match "--audit a $name: clear error" "^halo-run: --audit $path: .*$msg" "$out"
	[[ "$out" == *ran* ]] && fail "--audit a $name: the command did not run" "$out"
done

# --summary-md is one of halo-run's own outputs too: opened before the launch, masked
# inside, written through that descriptor. A forgery from inside, a chmod 444, a parent
# swapped for a link to elsewhere: none reaches the report; a report that cannot be
# written fails the run (125), never a silent 0.
SA="$TMPDIR/sum-audit.jsonl"
sum_run() { # SUMMARY SCRIPT: run SCRIPT in the workspace with --summary-md SUMMARY
	rm -f "$SA"
	(cd "$WS" && timeout -k 5 60 "$HALO" --audit "$SA" --summary-md "$1" -- sh -c "$2" </dev/null) 2>"$TMPDIR/err"
}
rm -f "$WS/summary.md"
out=$(sum_run summary.md 'echo "**0 denied**, all clear (forged)" >>summary.md 2>/dev/null && echo "append: yes"
echo forged >summary.md.new && { mv summary.md.new summary.md 2>/dev/null && echo "replace: yes"; rm -f summary.md.new; }
curl -s -o /dev/null http://one.invalid/; echo done')
expect "--summary-md forged from inside: rc 0, every forgery refused" "0:done" "$?:$out"
expect "... no forged line in the report" "" "$(grep -e '^forged' -e '^\*\*0 denied\*\*, all clear' "$WS/summary.md")"
expect_match "... the real report: 1 denied" '^\*\*1 denied\*\*' "$(cat "$WS/summary.md")"

rm -f "$WS/summary.md"
: >"$WS/summary.md"
chmod 644 "$WS/summary.md"
out=$(sum_run summary.md 'chmod 444 summary.md 2>/dev/null && echo "chmod: yes"; echo done')
expect "--summary-md made read-only from inside: rc 0, the chmod refused" "0:done" "$?:$out"
expect "... its mode unchanged" "644" "$(stat -c %a "$WS/summary.md")"
expect_match "... and the report written" '^\*\*0 denied\*\*' "$(cat "$WS/summary.md")"

ELSE="$TMPDIR/elsewhere"
rm -rf "$WS/out" "$WS/out.old" "$ELSE"
mkdir -p "$WS/out" "$ELSE"
chmod a+rwx "$WS/out" "$ELSE"
out=$(sum_run out/summary.md "mv out out.old 2>/dev/null && ln -s '$ELSE' out && echo swapped; echo done")
rc=$?
expect "--summary-md, parent swapped for a link: nothing written elsewhere" "" "$(ls -A "$ELSE")"
if [ -d "$WS/out.old" ]; then
	expect "... the run fails" "125" "$rc"
	expect_match "... says so" "--summary-md out/summary.md no longer names the report" "$(cat "$TMPDIR/err")"
	expect_match "... the report is in the file halo-run opened" '^\*\*0 denied\*\*' "$(cat "$WS/out.old/summary.md")"
else
	expect "... parent rename refused inside (ancestors pinned): rc 0" "0:done" "$rc:$out"
fi
rm -rf "$WS/out" "$WS/out.old"

# A report that cannot be written (a file-size limit; SIGXFSZ ignored, so write()
# says EFBIG): the run fails and says so.
head -c 4096 /dev/zero | tr '\0' x >"$WS/big.md"
out=$(
	trap '' XFSZ
	ulimit -f 2
	sum_run big.md 'echo done'
	echo "rc=$?"
)
expect "--summary-md that cannot be written: 125" "done rc=125" "$(tr '\n' ' ' <<<"$out" | sed 's/ $//')"
expect_match "... says why" "^halo-run: --summary-md big.md: could not write the report: File too large" "$(cat "$TMPDIR/err")"
rm -f "$WS/big.md"

out=$(cd "$WS" && timeout 20 "$HALO" --audit "$SA" --summary-md "$TMPDIR/./sum-audit.jsonl" -- sh -c 'echo ran' 2>&1 </dev/null)
expect "--summary-md the audit file by another spelling: 125, nothing ran" "125:no" "$?:$(grep -qx ran <<<"$out" && echo ran || echo no)"
expect_match "... says so" "the same file as --audit" "$out"
out=$(cd "$WS" && timeout 20 "$HALO" --audit "$SA" --summary-md nodir/summary.md -- sh -c 'echo ran' 2>&1 </dev/null)
expect "--summary-md in a directory that does not exist: 125 before the launch" "125:no" "$?:$(grep -qx ran <<<"$out" && echo ran || echo no)"
expect_match "... says why" "^halo-run: --summary-md nodir/summary.md: No such file or directory" "$out"
mkfifo "$TMPDIR/sumfifo"
out=$(cd "$WS" && timeout 20 "$HALO" --audit "$SA" --summary-md "$TMPDIR/sumfifo" -- sh -c 'echo ran' 2>&1 </dev/null)
expect "--summary-md a FIFO: 125 before the launch" "125:no" "$?:$(grep -qx ran <<<"$out" && echo ran || echo no)"

# Audit records the proxy cannot write (the same limit on a full audit file): the
# audit is incomplete, and the run fails (125) rather than pass as audited.
head -c 4096 /dev/zero | tr '\0' x >"$TMPDIR/full.jsonl"
out=$(
	trap '' XFSZ
	ulimit -f 2
	cd "$WS" && timeout 60 "$HALO" --audit "$TMPDIR/full.jsonl" -- sh -c 'curl -s -o /dev/null http://one.invalid/; echo done' </dev/null 2>"$TMPDIR/err"
	echo "rc=$?"
)
expect "--audit that cannot take the run's records: 125" "done rc=125" "$(tr '\n' ' ' <<<"$out" | sed 's/ $//')"
expect_match "... says so" "^halo-run: --audit .*full.jsonl: 1 record could not be written" "$(cat "$TMPDIR/err")"
rm -f "$TMPDIR/full.jsonl"

# --events FILE that cannot take the run's records (a full disk; here a size limit
# on a full file): the events are incomplete, the run fails (125) as the audit's does,
# rather than pass with the command's status.
head -c 4096 /dev/zero | tr '\0' x >"$TMPDIR/evfull.jsonl"
out=$(
	trap '' XFSZ
	ulimit -f 2
	cd "$WS" && timeout 60 "$HALO" --events "$TMPDIR/evfull.jsonl" -- sh -c 'curl -s -o /dev/null http://one.invalid/; echo done' </dev/null 2>"$TMPDIR/err"
	echo "rc=$?"
)
expect "--events that cannot take the run's records: 125" "done rc=125" "$(tr '\n' ' ' <<<"$out" | sed 's/ $//')"
expect_match "... says so" "^halo-run: --events .*evfull.jsonl: [0-9]+ records? could not be written" "$(cat "$TMPDIR/err")"
rm -f "$TMPDIR/evfull.jsonl"

# --events FILE: its name moved from inside fails the run as the audit's does.
rm -rf "$WS/elogs" "$WS/elogs2"
mkdir -p "$WS/elogs" && chmod a+rwx "$WS/elogs"
(cd "$WS" && timeout 60 "$HALO" --events elogs/ev.jsonl -- sh -c \
	'mv elogs elogs2 && mkdir elogs && echo "{\"forged\":1}" >elogs/ev.jsonl' </dev/null) 2>"$TMPDIR/err"
rc=$?
if [ -d "$WS/elogs2" ]; then
	expect "--events, parent renamed from inside: the run fails" 125 "$rc"
	expect_match "... says so" "--events elogs/ev.jsonl no longer names the events file" "$(cat "$TMPDIR/err")"
else
	ok "--events parent rename refused inside (ancestors pinned)"
fi
rm -rf "$WS/elogs" "$WS/elogs2"
finish
