#!/bin/bash
# Regenerate the rendering goldens: tests/golden/render/update.sh BUILD_DIR. Review
# the diff: a changed golden is a changed managed setting on every machine it lands.
set -eu
bin=$(cd "${1:?usage: update.sh BUILD_DIR}" && pwd)/halo-run
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" # the policy is named relatively: messages must not hold this checkout's path
for h in claude-code codex copilot gemini opencode cursor; do
	for os in linux macos windows; do
		out=$("$bin" policy render --harness "$h" --os "$os" --policy reference.yaml \
			2>"$here/.stderr") || { cat "$here/.stderr" >&2; exit 1; }
		{ printf '%s\n' "$out"; echo "---- stderr"; cat "$here/.stderr"; } >"$here/$h.$os.out"
	done
done
rm -f "$here/.stderr"
