# Shared by t_egress.sh and t_egress_bypass.sh (source after lib.sh, from $TMPDIR).
#
# Test names: halo-run runs inside a mount namespace of its own where /etc/hosts,
# /etc/nsswitch.conf ("hosts: files") and /etc/resolv.conf are bind-mounted from $W/etc,
# so the supervisor's getaddrinfo (and everything in the sandbox) sees the test names
# and no lookup can ever become a DNS query. The machine's files are never touched.
# As root: unshare --mount. As the unprivileged user: unshare --user
# --map-current-user --mount, with capabilities kept only for the bind mounts and
# cleared (setpriv) before halo-run starts: halo-run runs with the caller's uid and no
# capability, nested in that outer user namespace.
#
# Origins (egress_origin.py) listen on 127.0.0.1, 127.0.0.2 and ::1, ports picked by
# the kernel. Nothing here ever sends a packet beyond loopback: the private-range names
# exist only so that the proxy can refuse them after resolution, before any connect.
W="$TMPDIR/eg"
WS="$W/ws" # the sandbox's workspace (and cwd); the in-sandbox client lives here
mkdir -p "$WS" "$W/etc"
cp "$IT/egress_client.py" "$WS/client.py"
pids=()
eg_cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap eg_cleanup EXIT

L63=$(printf 'a%.0s' {1..63})
L64=$(printf 'a%.0s' {1..64})
N253="$L63.$L63.$L63.$(printf 'b%.0s' {1..51}).long.test" # 253 bytes
N254="$L63.$L63.$L63.$(printf 'b%.0s' {1..52}).long.test" # 254 bytes

cat >"$W/etc/hosts" <<EOF
127.0.0.1 localhost
::1 localhost
127.0.0.1 origin.test git.test $L63.long.test $N253
127.0.0.2 two.test
::1 v6.test rebind6.test
::ffff:127.0.0.1 rebindmapped.test
::127.0.0.1 rebindcompat.test
0.0.0.0 rebindzero.test
127.0.0.2 mixed.test mixed6.test
127.0.0.1 mixed.test
::1 mixed6.test
169.254.169.254 meta.test
10.0.0.1 ten.test
100.64.0.1 cgnat.test
fd00::1 ula.test
fd00:ec2::254 imds6.test
EOF
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >"$W/etc/nsswitch.conf"
printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$W/etc/resolv.conf"

cat >"$W/main.yaml" <<'EOF'
egress:
  default: deny
  allowedDomains: [origin.test, two.test, v6.test, git.test, "*.long.test",
                   127.0.0.1, "::1", "::127.0.0.1"]
  deniedDomains: [denied.test]
  allowPrivate: [127.0.0.1/32, 127.0.0.2/32, "::1/128"]
EOF
cat >"$W/nopriv.yaml" <<'EOF'
egress:
  default: deny
  allowedDomains: [origin.test, two.test, v6.test, rebind6.test, rebindmapped.test,
                   rebindcompat.test, rebindzero.test, 127.0.0.1, "::1",
                   meta.test, ten.test, cgnat.test, ula.test, imds6.test]
  deniedDomains: [denied.test]
EOF
cat >"$W/mixed.yaml" <<'EOF'
egress:
  default: deny
  allowedDomains: [two.test, mixed.test, mixed6.test]
  allowPrivate: [127.0.0.2/32]
EOF
chmod -R a+rX "$W"

# ------------------------------------------------------------------ origins
start_origin() { # NAME KIND BIND [ROOT]
	timeout 280 python3 "$IT/egress_origin.py" "$2" "$3" "$W/$1.port" "$W/$1.log" ${4:+"$4"} \
		2>>"$W/$1.err" &
	pids+=($!)
}
wait_port() { # NAME: its port, waiting up to 5 s
	for _ in $(seq 50); do
		[ -s "$W/$1.port" ] && {
			cat "$W/$1.port"
			return 0
		}
		sleep 0.1
	done
	fail "origin $1 listening" "$(head -c 300 "$W/$1.err" 2>/dev/null)"
	echo 0
}
conns() { cat "$W"/o*.log 2>/dev/null | grep -c '^CONN'; } # connections the origins saw

# ---------------------------------------------------------------- halo-run
BIND='for f in hosts nsswitch.conf resolv.conf; do mount --bind "$0/$f" "/etc/$f" || exit 125; done'
if [ "$AS" = root ]; then
	WRAP=(unshare --mount --propagation private sh -c "$BIND; exec \"\$@\"" "$W/etc")
else
	WRAP=(unshare --user --map-current-user --mount --propagation private --keep-caps
		sh -c "$BIND; exec setpriv --inh-caps=-all --ambient-caps=-all -- \"\$@\"" "$W/etc")
fi
# eg_one_ns: from here on every WRAP'd call enters one held user and mount namespace
# with the test's names, instead of a new one per call (as a user; root's WRAP keeps
# the caller's user namespace anyway). Sessions need it: a session serves only callers
# in its own user namespace, so that a sandboxed process can never join one.
eg_one_ns() {
	[ "$AS" != root ] || return 0
	"${WRAP[@]}" sleep 900 &
	local holder=$!
	pids+=("$holder")
	for _ in $(seq 100); do
		[ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	# (A script, not a function: timeout runs it. Joining a mount namespace resets the
	# directory: keep the caller's.)
	printf '#!/bin/sh\nexec nsenter -t %s -U -m --preserve-credentials --wd="$PWD" setpriv --inh-caps=-all --ambient-caps=-all -- "$@"\n' \
		"$holder" >"$W/ns_wrap"
	chmod 755 "$W/ns_wrap"
	WRAP=("$W/ns_wrap")
}
hr() { # POLICY AUDIT [HALO OPTIONS] -- CMD...: halo-run under the test names, stderr in $HR_ERR
	local pol=$1 aud=$2
	shift 2
	rm -f "$W/$aud"
	(cd "$WS" && timeout -k 5 "${HR_BOUND:-60}" "${WRAP[@]}" "$HALO" --policy "$W/$pol" \
		--audit "$W/$aud" "$@" </dev/null) 2>"${HR_ERR:-$W/err}"
}

# aud AUDIT [FIELD...]: each decision record's FIELDs ("-" when absent; default proto
# host port decision address class), records joined by ';'. Empty when there is none.
# Refusal records (a "code": clients refused before any decision, issue 31) are left
# out: refusal_codes lists them.
aud() {
	python3 - "$W/$1" "${@:2}" <<'EOF'
import json, os, sys
path, fields = sys.argv[1], sys.argv[2:] or ["proto", "host", "port", "decision", "address", "class"]
recs = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
print(";".join(" ".join(str(r.get(f, "-")) for f in fields) for r in recs if "code" not in r))
EOF
}
# refusal_codes AUDIT: the "code" of each refusal record (times its count), space-separated.
refusal_codes() {
	python3 - "$W/$1" <<'EOF'
import json, os, sys
recs = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
print(" ".join(" ".join([r["code"]] * r.get("count", 1)) for r in recs if "code" in r))
EOF
}
# aud_row AUDIT: both at once, for the tables' rows: sets AUD (as aud prints) and
# REFUSALS (as refusal_codes prints). One python3 answers every row (a start of
# python3 a row was a tenth of the tables' time): started at the first row, given one
# path a line, it answers two lines. A file it cannot read, or no answer within 30 s,
# sets AUD to a line no row expects.
aud_row() {
	if [ -z "${AUDP_PID:-}" ]; then
		coproc AUDP { exec python3 -u -c '
import json, os, sys
fields = ["proto", "host", "port", "decision", "address", "class"]
for path in sys.stdin:
    try:
        p = path.rstrip("\n")
        recs = [json.loads(l) for l in open(p)] if os.path.exists(p) else []
        a = ";".join(" ".join(str(r.get(f, "-")) for f in fields) for r in recs if "code" not in r)
        b = " ".join(" ".join([r["code"]] * r.get("count", 1)) for r in recs if "code" in r)
    except Exception as e:
        a, b = "(audit unreadable: %r)" % e, ""
    print(a.replace("\n", " ")); print(b.replace("\n", " "))
' 2>>"$W/aud_row.err"; }
		pids+=("$AUDP_PID")
	fi
	if ! { printf '%s\n' "$W/$1" >&"${AUDP[1]}" &&
		IFS= read -r -t 30 AUD <&"${AUDP[0]}" &&
		IFS= read -r -t 30 REFUSALS <&"${AUDP[0]}"; }; then
		AUD="(no answer from the audit reader: $(tail -c 300 "$W/aud_row.err" 2>/dev/null))" REFUSALS=""
	fi
}

trim() {
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}
subst() { # expand the table placeholders
	local s=$1
	s=${s//@O1@/$O1}
	s=${s//@O2@/$O2}
	s=${s//@O6@/$O6}
	s=${s//@P1@/$((O1 + 1))}
	s=${s//@N253@/$N253}
	s=${s//@N254@/$N254}
	s=${s//@L63@/$L63}
	s=${s//@L64@/$L64}
	printf '%s' "$s"
}

expand_req() { # "get H:P" and "connect H:P" shorthands, Host naming the target
	case $1 in
	"get "*) printf 'GET http://%s/hello HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' "${1#get }" "${1#get }" ;;
	"connect "*) printf 'CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' "${1#connect }" "${1#connect }" ;;
	*) printf '%s' "$1" ;;
	esac
}

# http_rows: a table on stdin, one row a line:
#   name | policy | raw request(s) (Python escapes, ';;' between pipelined ones)
#        | codes | X-Halo-Deny (403) or first body line | audit records
# A row answered other than 200 must also leave every origin untouched, and an answer
# of the proxy's own other than a denial must carry X-Halo-Error, which the body names.
http_rows() {
	local name pol req code line audit before out got want
	while IFS='|' read -r name pol req code line audit; do
		name=$(trim "$name")
		[ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
		pol=$(trim "$pol") code=$(trim "$code")
		req=$(subst "$(trim "$req")") line=$(subst "$(trim "$line")")
		audit=$(subst "$(trim "$audit")")
		before=$(conns)
		local -a reqs=()
		while [ -n "$req" ]; do
			reqs+=("$(expand_req "$(trim "${req%%;;*}")")")
			[ "$req" = "${req#*;;}" ] && break
			req=${req#*;;}
		done
		out=$(hr "$pol.yaml" row.audit -- python3 client.py http "${reqs[@]}")
		expect "$name: answer $code" "$code" "$(sed -n 1p <<<"$out")"
		if [ "${code##* }" = 403 ]; then got=$(sed -n 2p <<<"$out") want="X-Halo-Deny"; else
			got=$(sed -n 3p <<<"$out") want="body"; fi
		expect "$name: $want" "$line" "$got"
		case "${code##* }" in 200 | 403 | EOF) ;; *)
			got=$(sed -n 2p <<<"$out")
			if [ -n "${got#error: }" ] && [ "${got:0:7}" = "error: " ] && [[ "$line" == *"${got#error: }" ]]; then
				ok "$name: X-Halo-Error"
			else fail "$name: X-Halo-Error" "header [$got], body [$line]"; fi
			;;
		esac
		aud_row row.audit
		expect "$name: audit" "$audit" "$AUD"
		# An answer of the proxy's own with no decision behind it is a refusal record.
		case "${code##* }" in 200 | 403 | EOF) ;; *)
			[ -n "$audit" ] || expect "$name: refusal record" "${code##* }" "$REFUSALS" ;;
		esac
		case " $code " in *" 200 "*) ;; *) expect "$name: origin never connected" "$before" "$(conns)" ;; esac
	done
}

# socks_rows: name | policy | ATYP HOST PORT [CMD] | reply | first body line | audit
socks_rows() {
	local name pol args rep line audit before out
	while IFS='|' read -r name pol args rep line audit; do
		name=$(trim "$name")
		[ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
		pol=$(trim "$pol") rep=$(trim "$rep") line=$(subst "$(trim "$line")")
		audit=$(subst "$(trim "$audit")")
		read -r -a av <<<"$(subst "$args")"
		before=$(conns)
		out=$(hr "$pol.yaml" row.audit -- python3 client.py socks "${av[@]}")
		expect "$name: reply $rep" "$rep" "$(sed -n 1p <<<"$out")"
		expect "$name: body" "$line" "$(sed -n 2p <<<"$out")"
		aud_row row.audit
		expect "$name: audit" "$audit" "$AUD"
		[ "$rep" = 00 ] || expect "$name: origin never connected" "$before" "$(conns)"
	done
}
