#!/bin/bash
# seccomp, capabilities and no_new_privs inside the real sandbox: the probe helper tries
# one thing per deny-table row (each attempt harmless even unfiltered) and must get the
# errno the table says; allowed calls must still work; /proc/self/status must show
# NoNewPrivs 1, Seccomp 2 and no capability in any set.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
sbx() { timeout -k 2 60 "$HALO" "$@" </dev/null 2>&1; }

# The stage dir and $HELPERS live under the host's /tmp, which the sandbox replaces with
# a private tmpfs: run the probe from the workspace (the current directory) instead.
cp "$HELPERS/probe" ./probe || { fail "copy the probe into the workspace"; finish; exit; }

declare -A want=(
	[unshare_user]=errno=EPERM [setns]=errno=EPERM
	[clone_newns]=errno=EPERM [clone_newuser]=errno=EPERM [clone_newnet]=errno=EPERM
	[clone3]=errno=ENOSYS [fork]=ok [thread]=ok
	[mount]=errno=EPERM [umount2]=errno=EPERM
	[fsopen]=errno=ENOSYS [fsconfig]=errno=ENOSYS [fsmount]=errno=ENOSYS
	[fspick]=errno=ENOSYS [move_mount]=errno=ENOSYS [open_tree]=errno=ENOSYS
	[mount_setattr]=errno=ENOSYS
	[pivot_root]=errno=EPERM [chroot]=errno=EPERM
	[ptrace_attach]=errno=EPERM [process_vm_readv]=errno=EPERM [process_vm_writev]=errno=EPERM
	[bpf]=errno=EPERM [perf_event_open]=errno=EPERM
	[keyctl]=errno=EPERM [add_key]=errno=EPERM [request_key]=errno=EPERM
	[userfaultfd]=errno=EPERM
	[io_uring_setup]=errno=EPERM [io_uring_enter]=errno=EPERM [io_uring_register]=errno=EPERM
	[open_by_handle_at]=errno=EPERM
	[kexec_load]=errno=EPERM [kexec_file_load]=errno=EPERM
	[init_module]=errno=EPERM [finit_module]=errno=EPERM [delete_module]=errno=EPERM
	[reboot]=errno=EPERM [swapon]=errno=EPERM [swapoff]=errno=EPERM
	[settimeofday]=errno=EPERM [clock_settime]=errno=EPERM [clock_adjtime]=errno=EPERM
	[adjtimex]=errno=EPERM [acct]=errno=EPERM
	[quotactl]=errno=EPERM [quotactl_fd]=errno=EPERM
	[personality]=errno=EPERM [personality_query]=ok
	[x32_syscall]=killed=SIGSYS
	[tiocsti]=errno=EPERM [tiocsti_hibits]=errno=EPERM [tioclinux]=errno=EPERM
	[setlease]=errno=EPERM [getlease]=ok
	[chmod_setuid]=errno=EPERM [fchmod_setgid]=errno=EPERM [fchmodat_setuid]=errno=EPERM
	[fchmodat2_setuid]=errno=EPERM [open_setuid]=errno=EPERM [openat_setgid]=errno=EPERM
	[creat_setuid]=errno=EPERM [mknod_setuid]=errno=EPERM [mknodat_setgid]=errno=EPERM
	[chmod_plain]=ok [openat2]=errno=ENOSYS
	[socket_packet]=errno=EAFNOSUPPORT [socket_ax25]=errno=EAFNOSUPPORT
	[socket_raw]=errno=EPERM [socket_raw6]=errno=EPERM [socket_inet_packet]=errno=EPERM
	[socket_netlink_audit]=errno=EAFNOSUPPORT [socket_netlink_route]=ok
	[socket_inet_stream]=ok [socket_inet6_dgram]=ok [socket_unix]=ok
	[socketpair_inet]=errno=EAFNOSUPPORT
)

# Every probe the helper knows has an expectation here, and the other way round.
names=$(./probe list)
for n in $names; do
	[ -n "${want[$n]+x}" ] || fail "probe $n has no expectation in t_seccomp.sh"
done
expect "probe count" "${#want[@]}" "$(wc -w <<<"$names")"

out=$(sbx -- ./probe all)
expect "halo-run -- probe all exit status" 0 "$?"
declare -A got=()
while read -r name result; do
	[ -n "$name" ] && got[$name]=$result
done <<<"$out"
for n in "${!want[@]}"; do
	expect "probe $n" "${want[$n]}" "${got[$n]:-<missing>}"
done

status=$(sbx -- ./probe status)
field() { awk -v f="$1" '$1 == f { print $2 }' <<<"$status"; }
expect "status NoNewPrivs" 1 "$(field NoNewPrivs)"
expect "status Seccomp" 2 "$(field Seccomp)"
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
	expect "status $c" 0000000000000000 "$(field $c)"
done

# halo-run's own init runs under the same filter: a command cannot trace it.
init_status=$(sbx -- sh -c 'grep -E "^(Seccomp|NoNewPrivs):" /proc/1/status')
expect_match "init (pid 1) under seccomp" 'Seccomp:[[:space:]]+2' "$init_status"

plan=$(sbx --dry-run -- true)
expect_match "dry-run lists the deny table" 'clone3: ENOSYS' "$plan"
expect_match "dry-run names the socket rule" 'socket \(family other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK\): EAFNOSUPPORT' "$plan"
expect_match "dry-run names the architecture rule" 'any other architecture.*killed' "$plan"

finish
