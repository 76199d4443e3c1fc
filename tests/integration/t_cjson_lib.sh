#!/bin/bash
# libcjson on first use (runner/cjson_lib.c, the Makefile's CJSON_LAZY): a launch that
# reads and writes no JSON never loads libcjson.so.1; a JSON policy or --events loads
# it, once, and works as before; and where the library cannot be loaded (an empty
# file, or a libcjson.so.1 without cJSON's functions, found first through
# LD_LIBRARY_PATH) a run that needs it stops with exit 125, naming the library, before
# the command runs, while a run that needs none still runs. The loads are seen with
# the dynamic linker's own trace (LD_DEBUG=files).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
sbx() { # ARGS...: sets OUT ERR RC
	OUT=$(timeout -k 2 30 "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
LOADED='file=libcjson\.so\.1 .*dynamically loaded by .*halo-run'
loads() { grep -cE "$LOADED" <<<"$ERR"; }

if [ "$(uname -m)" != x86_64 ] || readelf -d "$HALO" 2>/dev/null | grep -q 'libcjson'; then
	skip "libcjson on first use" "this build links libcjson (x86-64 Linux only loads it lazily)"
	finish
	exit
fi
printf '{"sandbox": {"mode": "workspace-write"}}\n' >p.json
printf 'sandbox: {mode: workspace-write}\n' >p.yaml

LD_DEBUG=files sbx -- echo hello
expect "no JSON: the command runs" "hello 0" "$OUT $RC"
expect "no JSON: libcjson.so.1 is never loaded" 0 "$(loads)"
LD_DEBUG=files sbx --policy p.yaml -- echo hello
expect "a YAML policy: libcjson.so.1 is never loaded" "hello 0" "$OUT $(loads)"

LD_DEBUG=files sbx --policy p.json -- echo hello
expect "a JSON policy: the command runs" "hello 0" "$OUT $RC"
expect "a JSON policy: libcjson.so.1 is loaded, once" 1 "$(loads)"
LD_DEBUG=files sbx --events ev.jsonl -- true
expect "--events: exit 0" 0 "$RC"
expect "--events: libcjson.so.1 is loaded, once" 1 "$(loads)"
expect "--events: the records are JSON, start to exit" "start exit" \
	"$(python3 -c 'import json,sys; r=[json.loads(l)["type"] for l in open(sys.argv[1])]; print(r[0], r[-1])' ev.jsonl 2>&1)"

mkdir -p lib-empty lib-hollow
: >lib-empty/libcjson.so.1
if ! echo 'int halo_not_cjson;' | cc -shared -fPIC -Wl,-soname,libcjson.so.1 \
	-o lib-hollow/libcjson.so.1 -x c - 2>/dev/null; then
	rm -rf lib-hollow
fi
for lib in empty hollow; do
	if [ ! -d "lib-$lib" ]; then
		skip "$lib libcjson.so.1" "no C compiler to make it"
		continue
	fi
	rm -f ran
	LD_LIBRARY_PATH="$PWD/lib-$lib" sbx --policy p.json -- touch ran
	expect "$lib libcjson.so.1: a JSON policy's run stops (125)" 125 "$RC"
	expect "$lib libcjson.so.1: the command never ran" no "$([ -e ran ] && echo yes || echo no)"
	want='^halo-run needs libcjson\.so\.1'
	[ "$lib" = empty ] && want="$want .*could not be loaded: "
	[ "$lib" = hollow ] && want="$want, which has no cJSON_[A-Za-z]+$"
	expect_match "$lib libcjson.so.1: the error names the library" "$want" "$ERR"
	LD_LIBRARY_PATH="$PWD/lib-$lib" sbx -- echo hello
	expect "$lib libcjson.so.1: a run that needs no JSON runs" "hello 0" "$OUT $RC"
done
finish
