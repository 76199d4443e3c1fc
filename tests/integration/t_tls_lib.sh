#!/bin/bash
# OpenSSL on first use (proxy/tls_lib.c, the Makefile's SSL_LAZY): a run whose policy
# terminates no TLS never loads libssl.so.3, even while its proxy forwards requests; a
# run that terminates some host loads it at launch; and where the library cannot be
# loaded (LD_LIBRARY_PATH naming an empty file, or a libssl.so.3 without OpenSSL's
# functions) the TLS run refuses with exit 125, naming the library, before the command
# runs, while a run that terminates nothing still runs. The loads are seen with the
# dynamic linker's own trace (LD_DEBUG=files: "file=libssl.so.3 ... dynamically loaded
# by .../halo-run"); halo-run does not pass LD_DEBUG on to the command.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

if [ "$(uname -m)" != x86_64 ]; then
	skip "OpenSSL on first use" "x86-64 only: other architectures link OpenSSL in"
	finish
	exit
fi
start_origin o1 echo 127.0.0.1
P=$(wait_port o1)
cat >"$W/tls.yaml" <<'EOF'
egress:
  default: deny
  allowedDomains: [origin.test]
  allowPrivate: [127.0.0.1/32]
  requestRules:
    - {host: origin.test, methods: [GET]}
EOF
chmod a+r "$W/tls.yaml"
unset HTTPS_PROXY https_proxy HTTP_PROXY http_proxy ALL_PROXY all_proxy
LOADED='file=libssl\.so\.3 .*dynamically loaded by .*halo-run'
loads() { grep -cE "$LOADED" "$W/err"; }

out=$(LD_DEBUG=files hr main.yaml a.audit -- curl -sS --max-time 10 "http://origin.test:$P/hello")
expect "no TLS terminated: the proxy forwards" "hello from 127.0.0.1" "$out"
expect "no TLS terminated: libssl.so.3 is never loaded" 0 "$(loads)"
out=$(LD_DEBUG=files hr main.yaml a.audit -- curl -sS --max-time 10 "http://denied.test:$P/")
expect "no TLS terminated: a refusal loads nothing either" 0 "$(loads)"

out=$(LD_DEBUG=files hr tls.yaml a.audit -- curl -sS --max-time 10 "http://origin.test:$P/hello")
expect "requestRules: the request goes through" "hello from 127.0.0.1" "$out"
expect "requestRules: libssl.so.3 is loaded, once" 1 "$(loads)"

# A library that cannot serve: an empty file, then a shared object of the right name
# without OpenSSL's functions, found first through LD_LIBRARY_PATH.
mkdir -p "$W/empty" "$W/hollow"
: >"$W/empty/libssl.so.3"
if ! echo 'int halo_not_openssl;' | cc -shared -fPIC -Wl,-soname,libssl.so.3 \
	-o "$W/hollow/libssl.so.3" -x c - 2>/dev/null; then
	rm -rf "$W/hollow"
fi
chmod -R a+rX "$W/empty" "$W/hollow" 2>/dev/null
for lib in empty hollow; do
	if [ ! -d "$W/$lib" ]; then
		skip "$lib libssl.so.3" "no C compiler to make it"
		continue
	fi
	rm -f "$WS/ran"
	LD_LIBRARY_PATH="$W/$lib" hr tls.yaml a.audit -- touch ran
	expect "$lib libssl.so.3: the TLS run refuses (125)" 125 "$?"
	expect "$lib libssl.so.3: the command never ran" no "$([ -e "$WS/ran" ] && echo yes || echo no)"
	want='^halo-run: TLS termination needs OpenSSL 3.*libssl\.so\.3'
	[ "$lib" = empty ] && want="$want.*could not be loaded: .*libssl\.so\.3"
	[ "$lib" = hollow ] && want="$want .*has no [A-Z][A-Za-z0-9_]+$"
	expect_match "$lib libssl.so.3: the error names the library" "$want" "$(cat "$W/err")"
	out=$(LD_LIBRARY_PATH="$W/$lib" hr main.yaml a.audit -- curl -sS --max-time 10 \
		"http://origin.test:$P/hello")
	expect "$lib libssl.so.3: a run that terminates nothing runs" "hello from 127.0.0.1" "$out"
	out=$(LD_LIBRARY_PATH="$W/$lib" timeout -k 5 20 "${WRAP[@]}" "$HALO" proxy \
		--policy "$W/tls.yaml" --listen 127.0.0.1:0 </dev/null 2>&1)
	expect "$lib libssl.so.3: halo-run proxy refuses too (125)" 125 "$?"
	expect_match "$lib libssl.so.3: halo-run proxy names the library" 'libssl\.so\.3' "$out"
done
finish
