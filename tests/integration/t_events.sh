#!/bin/bash
# --events FILE | fd:N: one JSON object per line (type, ts, session, pid), start with
# the policy digest, limit records from the kernel's evidence, fs_denied from the
# broker's count, exit with how it ended. The file is halo-run's own output: masked
# inside the sandbox (no read, no write) wherever it lies; fd:N is never the command's.
# The egress and decider records are checked in t_decider.sh (it has the origins).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
mkdir -p ws && cd ws || exit 1
cp "$HELPERS/it_sup" ./it_sup 2>/dev/null || true
EV="$TMPDIR/ev.jsonl"
E="$TMPDIR/_stderr"
run() { OUT=$(timeout -k 2 60 "$HALO" "$@" 2>"$E" </dev/null); RC=$?; ERR=$(cat "$E"); }
# ev [FILE] TYPE FIELD...: the FIELDs of every TYPE record, ';'-joined; "invalid" when
# a line is not a JSON object with the common fields.
ev() {
	python3 - "$@" <<'PY'
import json, sys
path, typ, fields = sys.argv[1], sys.argv[2], sys.argv[3:]
out = []
for line in open(path):
    r = json.loads(line)
    if not (isinstance(r, dict) and isinstance(r.get("type"), str) and
            isinstance(r.get("ts"), str) and r["ts"].endswith("Z") and
            isinstance(r.get("session"), str) and isinstance(r.get("pid"), int)):
        print("invalid: " + line.strip()); sys.exit()
    if r["type"] == typ:
        out.append(" ".join(json.dumps(r[f]) if not isinstance(r.get(f), str) else r[f]
                            for f in fields if f in r) or "-")
print(";".join(out))
PY
}

# ---------------------------------------------------------------- start and exit
rm -f "$EV"
printf 'egress: {default: deny}\n' >"$TMPDIR/p.yaml"
run --policy "$TMPDIR/p.yaml" --events "$EV" -- sh -c 'exit 3'
expect "exit status passes with --events" 3 "$RC"
expect "the records, in order" "start;exit" "$(python3 -c 'import json,sys; print(";".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$EV")"
expect "start: layers (the floor first), workspace, command" "[\"builtin:floor\", \"$TMPDIR/p.yaml\"] $PWD [\"sh\", \"-c\", \"exit 3\"]" "$(ev "$EV" start layers workspace command)"
D1=$(ev "$EV" start policy_digest)
expect_match "start: the policy digest is sha256:HEX" '^sha256:[0-9a-f]{64}$' "$D1"
expect "... of what 'halo-run policy --json' prints" "$D1" "sha256:$("$HALO" policy --policy "$TMPDIR/p.yaml" --json | sha256sum | cut -d' ' -f1)"
expect "exit: outcome status code" "exited 3 3" "$(ev "$EV" exit outcome status code)"
expect_match "exit: a duration" '^[0-9]+$' "$(ev "$EV" exit duration_ms)"
run --policy "$TMPDIR/p.yaml" --events "$EV" -- true
expect "the file is appended to (a session's calls follow each other)" 4 "$(wc -l <"$EV")"
expect "the same policy, the same digest" "$D1;$D1" "$(ev "$EV" start policy_digest)"
printf 'egress: {default: deny, allowedDomains: [a.example]}\n' >"$TMPDIR/p2.yaml"
rm -f "$EV"
run --policy "$TMPDIR/p2.yaml" --events "$EV" -- true
expect "another policy, another digest" yes "$([ "$(ev "$EV" start policy_digest)" != "$D1" ] && echo yes || echo no)"
rm -f "$EV"
run --events "$EV" -- sh -c 'kill -TERM $$'
expect "exit: a signal" "signaled 143 15" "$(ev "$EV" exit outcome status signal)"
rm -f "$EV"
run --events "$EV" -- no-such-command-e14
expect "exit: command not found" "notfound 127" "$(ev "$EV" exit outcome status)"
rm -f "$EV"
run --policy /nonexistent/e14.yaml --events "$EV" -- true
expect "a policy that cannot load: 125 before any record (nothing started)" "125:no file" "$RC:$([ -e "$EV" ] && echo file || echo no file)"

# ---------------------------------------------------------------- limits
rm -f "$EV"
run --timeout 1 --events "$EV" -- sleep 30
expect "wall clock: limit record, then exit timeout" "wall 1 wall clock;timeout 124" "$(ev "$EV" limit limit value evidence);$(ev "$EV" exit outcome status)"
rm -f "$EV"
run --limit cpu=1 --events "$EV" -- sh -c 'while :; do :; done'
expect "cpu: SIGXCPU is the evidence" "cpu 1 SIGXCPU" "$(ev "$EV" limit limit value evidence)"
rm -f "$EV"
run --limit fsize=64K --events "$EV" -- dd if=/dev/zero of=big bs=64K count=4
expect "file size: SIGXFSZ is the evidence" "fsize 65536 SIGXFSZ" "$(ev "$EV" limit limit value evidence)"
rm -f "$EV" big
run --limit fsize=64K --events "$EV" -- sh -c 'trap "" XFSZ; dd if=/dev/zero of=big bs=64K count=4 2>/dev/null; exit 0'
expect "file size with SIGXFSZ ignored: no evidence, no record (said in the README)" "" "$(ev "$EV" limit limit)"
rm -f big
if [ -x ./it_sup ] && "$HALO" --dry-run --limit mem=100M -- true 2>/dev/null | grep -q "memory 100 MiB (memory cgroup"; then
	rm -f "$EV"
	run --limit mem=100M --events "$EV" -- ./it_sup alloc 300
	expect "memory: the cgroup's oom_kill is the evidence" "memory 104857600 1 memory cgroup oom_kill" "$(ev "$EV" limit limit value processes_killed evidence)"
else
	skip "memory limit record" "no memory cgroup for this user here (RLIMIT_DATA leaves no evidence)"
fi
if [ -x ./it_sup ] && "$HALO" --dry-run --limit nproc=20 -- true 2>/dev/null | grep -q "processes 20 .*pids cgroup"; then
	rm -f "$EV"
	run --limit nproc=20 --events "$EV" -- ./it_sup forkmany 200
	OUTL=$(ev "$EV" limit limit value evidence)
	if [ -n "$OUTL" ]; then
		expect "processes: the pids cgroup's max count is the evidence" "processes 20 pids cgroup max" "$OUTL"
	else
		skip "processes limit record" "RLIMIT_NPROC refused the forks before pids.max (per-uid count), no cgroup evidence"
	fi
else
	skip "processes limit record" "no pids cgroup for this user here"
fi

# ---------------------------------------------------------------- filesystem denials
if command -v git >/dev/null; then
	rm -f "$EV"
	run --events "$EV" -- sh -c 'git init -q r && printf "#!/bin/sh\n" > r/.git/hooks/pre-commit; exit 0'
	expect_match "fs_denied: the broker's refusals of git hooks, counted, the first named" "^broker git hooks or config [1-9][0-9]* .*pre-commit" "$(ev "$EV" fs_denied source what count first)"
else
	skip "fs_denied record" "no git"
fi

# ---------------------------------------------------------------- the channel itself
WEV="$PWD/in-ws.jsonl" # the workspace is writable: the file must still be out of reach
run --events "$WEV" -- sh -c 'cat '"$WEV"' >/dev/null 2>&1 && echo read; echo forged >>'"$WEV"' 2>/dev/null && echo wrote; mv '"$WEV"' x 2>/dev/null && echo moved; rm -f '"$WEV"' 2>/dev/null && echo removed; echo done'
expect "FILE inside the workspace: the command can neither read, write, move nor remove it" done "$OUT"
expect "... and the records are intact" "start;exit" "$(python3 -c 'import json,sys; print(";".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$WEV")"
OUT=$(timeout -k 2 30 "$HALO" --events fd:7 -- sh -c 'ls /proc/self/fd/7 >/dev/null 2>&1 && echo inherited || echo not-inherited' 7>"$TMPDIR/fd7.jsonl" 2>/dev/null)
expect "fd:N: the descriptor is not the command's" not-inherited "$OUT"
expect "fd:N: the records arrive there" "start;exit" "$(python3 -c 'import json,sys; print(";".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$TMPDIR/fd7.jsonl")"
# A pipe whose reader is already gone: the records are lost, the run is not (halo-run
# is not killed by SIGPIPE before the launch).
OUT=$(python3 - "$HALO" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([sys.argv[1], "--events", "fd:%d" % w, "--", "sh", "-c", "echo ran; exit 3"],
                   pass_fds=[w], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
print(p.returncode, p.stdout.strip())
PY
)
expect "fd:N, the reader gone before the start record: the command runs, its status kept" "3 ran" "$OUT"
OUT=$(timeout -k 2 30 "$HALO" --events fd:8 -- true 8>&1 >/dev/null | python3 -c 'import json,sys; print(";".join(json.loads(l)["type"] for l in sys.stdin))')
expect "fd:N: a pipe works" "start;exit" "$OUT"
for bad in fd:0 fd:1 fd:2 fd:-3 fd:x fd: "fd:99"; do
	run --events "$bad" -- echo ran
	expect "--events $bad refused (125), nothing ran" "125:" "$RC:$OUT"
done
expect_match "... fd:1 says why" "0-2 are the command's own" "$(timeout 10 "$HALO" --events fd:1 -- true 2>&1)"
# fd:N that is the command's stdout under another number is the same channel.
OUT=$(timeout -k 2 30 "$HALO" --events fd:3 -- sh -c 'echo "{\"type\":\"exit\",\"forged\":3}"' 3>&1 2>"$E")
expect "--events fd:3 3>&1 (the command's stdout) refused (125), nothing ran" "125:" "$?:$OUT"
expect_match "... says why" "same file or pipe as descriptor 1" "$(cat "$E")"
OUT=$(timeout -k 2 30 "$HALO" --events fd:3 -- echo ran 3>/dev/null </dev/null 2>/dev/null >/dev/null; echo $?)
expect "--events fd:3 on /dev/null with stdio on /dev/null too: runs" 0 "$OUT"
ln -sf "$TMPDIR/elsewhere" "$TMPDIR/link.jsonl"
run --events "$TMPDIR/link.jsonl" -- echo ran
expect "a symbolic link refused" "125:" "$RC:$OUT"
expect_match "... named" "symbolic link" "$ERR"
mkfifo "$TMPDIR/fifo.jsonl"
run --events "$TMPDIR/fifo.jsonl" -- echo ran
expect "a FIFO refused (use fd:N)" "125:" "$RC:$OUT"
run --events "$TMPDIR" -- echo ran
expect "a directory refused" "125:" "$RC:$OUT"
run --events "$TMPDIR/a.jsonl" --audit "$TMPDIR/a.jsonl" -- echo ran
expect "--events and --audit on one file refused" "125:" "$RC:$OUT"
# The same file by another spelling, or as fd:N: still one file.
(cd "$TMPDIR" && timeout -k 2 30 "$HALO" --events ./b.jsonl --audit b.jsonl -- echo ran >"$E.out" 2>"$E")
expect "--events ./F --audit F (one file, two spellings) refused" "125:" "$?:$(cat "$E.out")"
expect_match "... named" "same file" "$(cat "$E")"
OUT=$(timeout -k 2 30 "$HALO" --events fd:5 --audit "$TMPDIR/c.jsonl" -- echo ran 5>>"$TMPDIR/c.jsonl" 2>"$E")
expect "--events fd:N open on the --audit file refused" "125:" "$?:$OUT"

# A regular file behind fd:N in the writable workspace is masked like FILE: the
# command cannot append forged records to it by its name.
FEV="$PWD/fd-in-ws.jsonl"
: >"$FEV"
chmod a+rw "$FEV"
OUT=$(timeout -k 2 30 "$HALO" --events fd:6 -- sh -c 'echo "{\"type\":\"exit\",\"forged\":1}" >>'"$FEV"' 2>/dev/null && echo wrote; cat '"$FEV"' >/dev/null 2>&1 && echo read; echo done' 6>>"$FEV" 2>"$E")
expect "fd:N on a workspace file: the command can neither write nor read it by name" done "$OUT"
expect "... and the records are intact" "start;exit" "$(python3 -c 'import json,sys; print(";".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$FEV")"

# A named FIFO behind fd:N (a harness reading ws/ev.fifo): masked too, the command can
# neither write forged lines into it nor open it to read.
rm -f "$PWD/ev.fifo"
mkfifo "$PWD/ev.fifo"
chmod a+rw "$PWD/ev.fifo"
timeout 30 cat "$PWD/ev.fifo" >"$TMPDIR/fifo.out" &
CATP=$!
OUT=$(timeout -k 2 30 "$HALO" --events fd:6 -- sh -c 'timeout 5 sh -c "echo \"{\\\"type\\\":\\\"exit\\\"}\" >ev.fifo" 2>/dev/null && echo wrote; echo done' 6>"$PWD/ev.fifo" 2>"$E")
wait "$CATP"
expect "fd:N on a named FIFO in the workspace: the command cannot write it by name" done "$OUT"
expect "... the reader gets exactly the records" "start;exit" "$(python3 -c 'import json,sys; print(";".join(json.loads(l)["type"] + ("!" if len(json.loads(l)) < 4 else "") for l in open(sys.argv[1])))' "$TMPDIR/fifo.out")"
rm -f "$PWD/ev.fifo"

# Another hard link to the file would be a second, unmasked name: refused (FILE and
# fd:N alike), before anything runs.
: >"$TMPDIR/hl.jsonl"
ln -f "$TMPDIR/hl.jsonl" "$PWD/hl-link"
run --events "$TMPDIR/hl.jsonl" -- echo ran
expect "a FILE with another hard link refused" "125:" "$RC:$OUT"
expect_match "... named" "hard link" "$ERR"
OUT=$(timeout -k 2 30 "$HALO" --events fd:6 -- echo ran 6>>"$TMPDIR/hl.jsonl" 2>"$E")
expect "fd:N on a file with another hard link refused" "125:" "$?:$OUT"
rm -f "$PWD/hl-link" "$TMPDIR/hl.jsonl"
finish
