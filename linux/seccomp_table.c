/* seccomp: a default-allow filter with a deny table, loaded last, right before exec.
 *
 * The table is the policy; seccomp_build.c only turns rows into libseccomp rules, once,
 * at build time (seccomp_int.h says why). Each row names a syscall (with the x86_64
 * number to use when this libseccomp does not know the name), the errno the caller
 * gets, at most two argument conditions and the reason.
 *
 * Choices made here:
 *  - EPERM for nearly everything: it is what an unprivileged process gets anyway, so
 *    programs already handle it.
 *  - ENOSYS for clone3, openat2 and the new mount API: their interesting arguments live
 *    in memory seccomp cannot read, and "not implemented" makes glibc and util-linux
 *    fall back to clone(), openat() and mount(), which are filtered on their flags.
 *  - EAFNOSUPPORT for socket families outside AF_UNIX, AF_INET, AF_INET6 and
 *    AF_NETLINK/NETLINK_ROUTE: "this kernel has no such family", which libaudit and
 *    friends treat as "feature absent" rather than as an error.
 *  - EPERM for SOCK_RAW and SOCK_PACKET on AF_INET/AF_INET6, as without CAP_NET_RAW.
 *  - personality: PER_LINUX, PER_LINUX32, UNAME26, both together, and the 0xffffffff
 *    query stay allowed (what container runtimes allow); anything else (notably
 *    READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE) is EPERM.
 *  - unshare is denied whatever its flags (CLONE_FILES/CLONE_FS alone are harmless but
 *    rare, and a blanket rule also covers namespace flags added later); clone is denied
 *    only with a CLONE_NEW* flag, since every fork() and pthread_create() goes through it.
 *  - fcntl(F_SETLEASE) is EPERM (what a caller that does not own the file gets): a
 *    lease holds every opener of the file, other processes of the sandbox and
 *    halo-run's creation broker among them, for the lease-break time (45 s by default).
 *    F_GETLEASE and every other fcntl stay allowed.
 *  - name_to_handle_at stays allowed: a handle is useless without open_by_handle_at.
 *  - Setuid/setgid bits: chmod, fchmod, fchmodat and fchmodat2 as asked, and also the
 *    calls that create a file with a mode (open, openat, creat, mknod, mknodat) since
 *    open(path, O_CREAT, 04755) leaves a setuid file just the same (openat2 carries its
 *    mode in memory: ENOSYS, see above). A known cost: `chmod g+s` on a directory is
 *    refused too, since seccomp cannot tell a directory from a file.
 *
 * Argument comparisons: values the kernel reads as 32-bit (ioctl's request) are matched
 * on the low 32 bits, so high garbage bits cannot sneak past. Allowlists ("anything but
 * these families") compare all 64 bits, so garbage in the high bits is denied. As
 * libseccomp 2.5 takes one comparison per argument in a rule, "any of these bits" is
 * expanded into one rule per bit and "not in this set" into ranges covered by masked
 * comparisons (like a CIDR decomposition).
 *
 * Architectures: only the native one is in the filter and every other (i386, x32
 * syscall numbers on x86_64) hits the bad-architecture action, which kills the process:
 * its syscall numbers would mean other calls. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "linux/linux_int.h"
#include "linux/seccomp_int.h"

#ifdef __x86_64__
#define X86_64(n) (n)
#else
#define X86_64(n) (-1)
#endif

/* clang-format off */
#define ALWAYS             {{0}}
#define EQ(i, v)           {COND_EQ, i, v, 0, NULL, 0}
#define NE(i, v)           {COND_NE, i, v, 0, NULL, 0}
#define MASKED_EQ(i, m, v) {COND_MASKED_EQ, i, m, v, NULL, 0}
#define LOW32_EQ(i, v)     MASKED_EQ(i, 0xffffffffULL, v)
#define ANY_BIT(i, bits)   {COND_ANY_BIT, i, bits, 0, NULL, 0}
#define NOT_IN(i, set)     {COND_NOT_IN, i, 0, 0, set, sizeof(set) / sizeof((set)[0])}
#define ONE(c)             {c}
#define BOTH(c1, c2)       {c1, c2}
/* clang-format on */

#define CLONE_NEW_ANY                                                                              \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
	 CLONE_NEWPID | CLONE_NEWNET)
#define SETID_BITS (S_ISUID | S_ISGID)
#define TYPE_MASK  0xfULL /* SOCK_TYPE_MASK: the type without SOCK_NONBLOCK/CLOEXEC */

static const uint64_t personality_ok[] = {0x0, 0x0008, 0x20000, 0x20008, 0xffffffff};
static const uint64_t socket_families_ok[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
static const uint64_t socketpair_families_ok[] = {AF_UNIX};

#define SETID_WHEN " (mode with S_ISUID or S_ISGID)"
#define SETID_WHY  "would leave a setuid/setgid file, owned by host root for a root caller"
#define NS_WHY	   "nested namespaces"
#define NEWMNT_WHY "new mount API; callers fall back to mount(2)"

const struct linux_seccomp_row linux_seccomp_table[] = {
    {"unshare", -1, EPERM, ALWAYS, "", NS_WHY},
    {"setns", -1, EPERM, ALWAYS, "", NS_WHY},
    {"clone", -1, EPERM, ONE(ANY_BIT(0, CLONE_NEW_ANY | CLONE_PARENT)),
     " (flags with a CLONE_NEW* bit or CLONE_PARENT)",
     "nested namespaces; a sibling of its parent (a session's call is judged by its start)"},
    {"clone3", X86_64(435), ENOSYS, ALWAYS, "",
     "flags unreadable by seccomp; glibc falls back to clone()"},
    {"mount", -1, EPERM, ALWAYS, "", "mounts"},
    {"umount2", -1, EPERM, ALWAYS, "", "mounts"},
    {"fsopen", X86_64(430), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"fsconfig", X86_64(431), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"fsmount", X86_64(432), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"fspick", X86_64(433), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"move_mount", X86_64(429), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"open_tree", X86_64(428), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"mount_setattr", X86_64(442), ENOSYS, ALWAYS, "", NEWMNT_WHY},
    {"pivot_root", -1, EPERM, ALWAYS, "", "changing the root"},
    {"chroot", -1, EPERM, ALWAYS, "", "changing the root"},
    {"ptrace", -1, EPERM, ALWAYS, "", "tracing other processes"},
    {"process_vm_readv", -1, EPERM, ALWAYS, "", "reading another process's memory"},
    {"process_vm_writev", -1, EPERM, ALWAYS, "", "writing another process's memory"},
    {"bpf", -1, EPERM, ALWAYS, "", "kernel attack surface"},
    {"perf_event_open", -1, EPERM, ALWAYS, "", "kernel attack surface, side channels"},
    {"keyctl", -1, EPERM, ALWAYS, "", "kernel keyrings are not namespaced"},
    {"add_key", -1, EPERM, ALWAYS, "", "kernel keyrings are not namespaced"},
    {"request_key", -1, EPERM, ALWAYS, "", "kernel keyrings are not namespaced"},
    {"userfaultfd", -1, EPERM, ALWAYS, "", "stalls kernel paths: exploit primitive"},
    {"io_uring_setup", X86_64(425), EPERM, ALWAYS, "", "bypasses seccomp, attack surface"},
    {"io_uring_enter", X86_64(426), EPERM, ALWAYS, "", "bypasses seccomp, attack surface"},
    {"io_uring_register", X86_64(427), EPERM, ALWAYS, "", "bypasses seccomp, attack surface"},
    {"open_by_handle_at", -1, EPERM, ALWAYS, "", "opens files outside the mount layout"},
    {"kexec_load", -1, EPERM, ALWAYS, "", "replacing the kernel"},
    {"kexec_file_load", -1, EPERM, ALWAYS, "", "replacing the kernel"},
    {"init_module", -1, EPERM, ALWAYS, "", "kernel modules"},
    {"finit_module", -1, EPERM, ALWAYS, "", "kernel modules"},
    {"delete_module", -1, EPERM, ALWAYS, "", "kernel modules"},
    {"reboot", -1, EPERM, ALWAYS, "", "rebooting"},
    {"swapon", -1, EPERM, ALWAYS, "", "swap"},
    {"swapoff", -1, EPERM, ALWAYS, "", "swap"},
    {"settimeofday", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"clock_settime", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"clock_adjtime", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"adjtimex", -1, EPERM, ALWAYS, "", "setting the clock"},
    {"acct", -1, EPERM, ALWAYS, "", "process accounting"},
    {"quotactl", -1, EPERM, ALWAYS, "", "disk quotas"},
    {"quotactl_fd", X86_64(443), EPERM, ALWAYS, "", "disk quotas"},
    {"personality", -1, EPERM, ONE(NOT_IN(0, personality_ok)),
     " (other than PER_LINUX, PER_LINUX32, UNAME26 and the query)",
     "READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE weaken exploit mitigations"},
    {"ioctl", -1, EPERM, ONE(LOW32_EQ(1, TIOCSTI)), " (TIOCSTI, low 32 bits)",
     "typing into the terminal of the caller"},
    {"ioctl", -1, EPERM, ONE(LOW32_EQ(1, TIOCLINUX)), " (TIOCLINUX, low 32 bits)",
     "console injection"},
    {"fcntl", -1, EPERM, ONE(LOW32_EQ(1, F_SETLEASE)), " (F_SETLEASE, low 32 bits)",
     "a lease makes every other opener of the file wait out the lease-break time"},
    {"chmod", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"fchmod", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"fchmodat", -1, EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"fchmodat2", X86_64(452), EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"open", -1, EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"openat", -1, EPERM, ONE(ANY_BIT(3, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"creat", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"mknod", -1, EPERM, ONE(ANY_BIT(1, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"mknodat", -1, EPERM, ONE(ANY_BIT(2, SETID_BITS)), SETID_WHEN, SETID_WHY},
    {"openat2", X86_64(437), ENOSYS, ALWAYS, "",
     "mode unreadable by seccomp; callers fall back to openat()"},
    {"socket", -1, EAFNOSUPPORT, ONE(NOT_IN(0, socket_families_ok)),
     " (family other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)", "network attack surface"},
    {"socket", -1, EAFNOSUPPORT, BOTH(EQ(0, AF_NETLINK), NE(2, NETLINK_ROUTE)),
     " (AF_NETLINK other than NETLINK_ROUTE)", "audit, netfilter and other kernel interfaces"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET), MASKED_EQ(1, TYPE_MASK, SOCK_RAW)),
     " (AF_INET, SOCK_RAW)", "raw packets"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET6), MASKED_EQ(1, TYPE_MASK, SOCK_RAW)),
     " (AF_INET6, SOCK_RAW)", "raw packets"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET), MASKED_EQ(1, TYPE_MASK, SOCK_PACKET)),
     " (AF_INET, SOCK_PACKET)", "raw packets"},
    {"socket", -1, EPERM, BOTH(EQ(0, AF_INET6), MASKED_EQ(1, TYPE_MASK, SOCK_PACKET)),
     " (AF_INET6, SOCK_PACKET)", "raw packets"},
    {"socketpair", -1, EAFNOSUPPORT, ONE(NOT_IN(0, socketpair_families_ok)),
     " (family other than AF_UNIX)", "network attack surface"},
};
const size_t linux_seccomp_n_rows = sizeof(linux_seccomp_table) / sizeof(linux_seccomp_table[0]);

void linux_seccomp_describe(void (*line)(void *arg, const char *text), void *arg)
{
	char buf[256];

	for (size_t i = 0; i < linux_seccomp_n_rows; i++) {
		const struct linux_seccomp_row *r = &linux_seccomp_table[i];
		const char *err = strerrorname_np(r->err);
		snprintf(buf, sizeof(buf), "%s%s: %s (%s)", r->name, r->when, err ? err : "?",
			 r->why);
		line(arg, buf);
	}
	line(arg, "any other architecture, x32 syscalls included: process killed");
	line(arg, "everything else: allowed");
}

int linux_seccomp_errno(const char *name, const char *match)
{
	for (size_t i = 0; i < linux_seccomp_n_rows; i++) {
		const struct linux_seccomp_row *r = &linux_seccomp_table[i];
		if (strcmp(r->name, name) == 0 && strstr(r->when, match))
			return r->err;
	}
	return 0;
}
