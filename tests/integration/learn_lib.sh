# Shared by t_learn*.sh (source after lib.sh, egress_lib.sh and wf_lib.sh): the input
# policy that allows nothing but loopback addresses (so that the loopback registries
# are reachable once a name is allowed), `halo-run learn` under the test names, and
# one real-tool row: learn, then run again under the learned policy.
echo "127.0.0.1 other.test blocked.test" >>"$W/etc/hosts"
cat >"$W/base.yaml" <<'EOF2'
egress:
  default: deny
  deniedDomains: [blocked.test]
  allowPrivate: [127.0.0.0/8]
EOF2
chmod a+r "$W/base.yaml"

# lr POLICY OUT [LEARN OPTIONS] -- CMD...: halo-run learn under the test names, the
# learned policy in $W/OUT; stdout in $W/OUT.stdout, stderr in $W/OUT.err, status $RC
lr() {
	local pol=$1 out=$2
	shift 2
	[ -n "${LR_KEEP:-}" ] || rm -f "$W/$out" # LR_KEEP: a session's file, opened at its start
	(cd "$WS" && timeout -k 5 "${HR_BOUND:-90}" "${WRAP[@]}" "$HALO" learn --policy "$W/$pol" \
		--out "$W/$out" "$@" </dev/null) >"$W/$out.stdout" 2>"$W/$out.err"
	RC=$?
}

# learn_row NAME REGISTRY WANT CMD: CMD learned under base.yaml (nothing allowed); its
# stdout matches WANT; REGISTRY's name is learned with its port; the same CMD (which
# starts from nothing: it removes what the first run made) passes under the learned
# policy, asking the registry again; other.test stays denied under it.
learn_row() {
	local name=$1 reg=$2 want=$3 cmd=$4 before other
	lr base.yaml "$name.yaml" -- sh -c "$cmd"
	if [ "$RC" = 0 ] && grep -qE -- "$want" "$W/$name.yaml.stdout"; then
		ok "$name: passes under learn"
	else fail "$name: passes under learn" "exit $RC: $(tail -c 500 "$W/$name.yaml.err")"; fi
	expect_match "$name: the registry's name is learned, with its port" \
		"^    - \"$reg.test:$(cat "$W/$reg.port")\"  # " "$(cat "$W/$name.yaml" 2>/dev/null)"
	[ -f "$W/$name.yaml" ] && chmod a+r "$W/$name.yaml"
	before=$(reqs "$reg")
	HR_ERR="$W/$name.2.err" hr "$name.yaml" "$name.2.audit" sh -c "$cmd" >"$W/$name.2.out"
	RC=$?
	if [ "$RC" = 0 ] && grep -qE -- "$want" "$W/$name.2.out"; then
		ok "$name: passes under the learned policy (default deny)"
	else fail "$name: passes under the learned policy" "exit $RC: $(tail -c 500 "$W/$name.2.err")"; fi
	expect "$name: ... asking the registry again" yes "$([ "$(reqs "$reg")" -gt "$before" ] && echo yes)"
	other=$(HR_ERR="$W/$name.3.err" hr "$name.yaml" "$name.3.audit" \
		curl -s -o /dev/null -w '%{http_code}' "http://other.test:$(cat "$W/$reg.port")/")
	expect "$name: a host it did not use stays denied under the learned policy" 403 "$other"
}
