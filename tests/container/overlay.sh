#!/bin/sh
# Run a command as in a container or a CI runner: /var/tmp on overlayfs, /tmp on a
# fresh tmpfs (no systemd, nothing else changed), in a private mount namespace of its
# own; the host's mounts are never touched. Root only. Used by `make check-overlay`.
#   tests/container/overlay.sh CMD [ARGS...]
set -eu
[ "$(id -u)" = 0 ] || { echo "overlay.sh: needs root (mounts in a private namespace)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: overlay.sh CMD [ARGS...]" >&2; exit 2; }
layers=$(mktemp -d /var/tmp/halo-overlay.XXXXXX)
trap 'rm -rf "$layers"' EXIT
mkdir -p "$layers/lower" "$layers/upper" "$layers/work"
chmod 1777 "$layers/upper"
unshare --mount --propagation private sh -c '
	mount -t overlay overlay -o "lowerdir=$1/lower,upperdir=$1/upper,workdir=$1/work" /var/tmp &&
	mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 125
	echo "# /var/tmp: $(stat -f -c %T /var/tmp), /tmp: $(stat -f -c %T /tmp)"
	shift
	exec "$@"' sh "$layers" "$@"
