#!/bin/bash
# Workflow: pip under halo-run. `python3 -m venv` in the workspace, then `pip install
# --index-url http://pypi.test:PORT/simple/ --trusted-host pypi.test wfpkg` (plain
# http) from a static PEP 503 index served on the host's loopback. wfpkg (which
# requires wfdep) is a wheel this test writes by hand (zipfile: METADATA, WHEEL,
# RECORD; no setuptools, no network). The default policy plus only pypi.test allowed.
# The host's ~/.cache/pip is unchanged afterwards.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

if ! need python3 || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
	skip "pip workflow" "python3 with venv and ensurepip is not installed (python3-venv)"
	finish
	exit
fi
start_registry pypi 200
P=$(wait_port pypi)
wf_policy pip.yaml pypi.test

pip_index "$W/pypi.root"
chmod -R a+rX "$W"
chmod -R a+rwX "$WS"
seed_caches "$HOME/.cache/pip"

row "python3 -m venv in the workspace" pip.yaml venv.log "^venv ok$" \
	sh -c 'timeout 60 python3 -m venv venv && echo venv ok'
row "pip install from the loopback PEP 503 index (with a dependency)" pip.yaml pip.log \
	"^wfpkg 1.0 \+ wfdep 1.0$" sh -c "timeout 60 venv/bin/pip install -q --disable-pip-version-check \
	--index-url http://pypi.test:$P/simple/ --trusted-host pypi.test wfpkg && venv/bin/python -c 'import wfpkg; print(wfpkg.VALUE)'"
caches_unchanged "pip"
finish
