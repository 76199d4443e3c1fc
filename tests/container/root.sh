#!/bin/sh
# Run a command as in a container or a CI runner, root file system and all: `/` an
# overlay over the real root (its changes on a tmpfs, thrown away at the end), /var/tmp
# an overlay of its own, /tmp a fresh tmpfs, no systemd to be seen (/run/systemd and
# /run/user empty), /proc, /dev and /sys bound in, then pivot_root: not chroot, since
# the kernel refuses a chrooted process a user namespace and no container is chrooted.
# Everything happens in a
# private mount namespace that ends with the command: the host's mounts and files are
# never touched (the one host trace, an empty mount point in /tmp, is removed).
# Root only. Used by `make check-container`.
#   tests/container/root.sh CMD [ARGS...]     (run in the current directory's path)
# ROOT_SH_BIND="DIR..." binds those host directories in at the same paths (a test's
# staged binaries and scratch directory, which the fresh /tmp would hide).
set -eu
[ "$(id -u)" = 0 ] || { echo "root.sh: needs root (mounts in a private namespace)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: root.sh CMD [ARGS...]" >&2; exit 2; }
base=$(mktemp -d /tmp/halo-root.XXXXXX)
trap 'rmdir "$base"' EXIT
rc=0
unshare --mount --propagation private sh -c '
	b=$1 cwd=$2
	shift 2
	set -e
	# The layers live on a tmpfs of this namespace: nothing reaches the host disk.
	mount -t tmpfs -o mode=755 halo-root "$b"
	mkdir "$b/up" "$b/work" "$b/root" "$b/vlow" "$b/vup" "$b/vwork"
	chmod 1777 "$b/vup"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$b/up,workdir=$b/work" "$b/root"
	r=$b/root
	for d in proc dev sys; do mount --rbind "/$d" "$r/$d"; done
	mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
	mount -t overlay overlay -o "lowerdir=$b/vlow,upperdir=$b/vup,workdir=$b/vwork" "$r/var/tmp"
	# No systemd: its run-time directories, where they exist, are empty.
	for d in run/systemd run/user; do
		[ ! -d "$r/$d" ] || mount -t tmpfs -o mode=755 tmpfs "$r/$d"
	done
	for d in ${ROOT_SH_BIND:-}; do
		mkdir -p "$r$d"
		mount --rbind "$d" "$r$d"
	done
	echo "# /: $(stat -f -c %T "$r"), /var/tmp: $(stat -f -c %T "$r/var/tmp"), /tmp: $(stat -f -c %T "$r/tmp"), systemd: $(ls "$r/run/systemd" 2>/dev/null | wc -l) entries"
	cd "$r"
	pivot_root . .
	umount -l .
	cd "$cwd"
	exec "$@"' \
	sh "$base" "$PWD" "$@" || rc=$?
exit $rc
