/* Capabilities: the command keeps none, in any set, and can never regain one.
 *
 * Order matters. Dropping the bounding set and setting securebits need CAP_SETPCAP, so
 * they come first, while the process still has its (user-namespace) capabilities. The
 * bounding set is what keeps a uid 0 command from being handed a full permitted set
 * again at its next execve(); SECBIT_NOROOT says the same a second way. Then the
 * effective, permitted and inheritable sets are emptied, ambient with them, and
 * no_new_privs closes setuid binaries and file capabilities. Everything is read back
 * afterwards: a set that did not change is a setup failure, not a warning.
 *
 * One exception, for the degraded launch without a user namespace: a process that
 * holds no capability at all (empty permitted set, so no CAP_SETPCAP) cannot shrink its
 * bounding set, and does not need to: under no_new_privs execve() never grants more than
 * the old permitted set, which is empty, and ambient capabilities can only be raised
 * from permitted. Then the bounding set and securebits are left as they are (CapBnd
 * stays non-zero in /proc/self/status); in every other case they must go. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "linux/linux_int.h"

#define STEP "capabilities"

/* The sets straight from the kernel (capget/capset, version 3: two 32-bit words per
 * set): one call each, where libcap's cap_get_proc()/cap_compare() and its probing of
 * the last capability made a dozen. */
struct caps3 {
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
};

static int caps_get(struct caps3 *c)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};

	return (int)syscall(SYS_capget, &h, c->d);
}

static uint64_t caps_word(const struct caps3 *c, size_t field)
{
	const __u32 *lo = (const __u32 *)&c->d[0], *hi = (const __u32 *)&c->d[1];

	return (uint64_t)lo[field] | (uint64_t)hi[field] << 32;
}

#define CAPS_EFFECTIVE 0 /* offsets in __user_cap_data_struct */
#define CAPS_PERMITTED 1

/* Dropping a capability that is not in the set succeeds and changes nothing, so there
 * is nothing to read first: the numbers are dropped from 0 up until the kernel says
 * EINVAL, past its last capability (the kernel may be newer or older than these
 * headers); verify_or_die reads the result back. */
static void drop_bounding_or_die(int rfd)
{
	for (int c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL && c > 0)
			return;
		linux_die(rfd, STEP, errno, "drop bounding capability %d", c);
	}
}

/* Setting the value they already have is allowed even when locked. */
static void lock_securebits_or_die(int rfd)
{
	unsigned bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		linux_die(rfd, STEP, errno, "set securebits 0x%x", bits);
}

static void clear_sets_or_die(int rfd)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct caps3 none = {0};

	/* Ambient first: the kernel drops ambient capabilities that leave permitted or
	 * inheritable anyway, but an explicit clear does not depend on that. EINVAL
	 * means a kernel without ambient capabilities, which has none to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		linux_die(rfd, STEP, errno, "clear the ambient set");
	if (syscall(SYS_capset, &h, none.d) < 0)
		linux_die(rfd, STEP, errno, "empty the effective, permitted and inheritable sets");
}

/* One field of /proc/self/status: "NAME:\t" and 16 hex digits, at a line's start. */
static int status_field(const char *text, const char *name, uint64_t *out)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char *end;
		if (strncmp(l, name, n) != 0 || l[n] != ':' || l[n + 1] != '\t')
			continue;
		l += n + 2;
		if (strspn(l, "0123456789abcdef") != 16 || (l[16] != '\n' && l[16] != '\0'))
			return -EINVAL;
		*out = strtoull(l, &end, 16);
		return 0;
	}
	return -ENOENT;
}

int linux_caps_parse_status(const char *text, uint64_t *bnd, uint64_t *amb)
{
	int rc = status_field(text, "CapBnd", bnd);

	return rc < 0 ? rc : status_field(text, "CapAmb", amb);
}

int linux_status_sigign(const char *text, uint64_t *ign)
{
	return status_field(text, "SigIgn", ign);
}

/* The bounding and ambient sets in one read (three calls) instead of two calls per
 * capability, and the ignored signals from the same text (UINT64_MAX when it does not
 * say). False when the file cannot be read or parsed: the caller asks per capability
 * instead. */
static bool sets_from_status(uint64_t *bnd, uint64_t *amb, uint64_t *ign)
{
	char buf[8192];
	size_t n = 0;
	ssize_t k;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (n < sizeof(buf) - 1 && (k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	if (linux_status_sigign(buf, ign) < 0)
		*ign = UINT64_MAX;
	return linux_caps_parse_status(buf, bnd, amb) == 0;
}

/* The slow way, two calls per capability, where /proc is not there to read. */
static void sets_from_prctl(uint64_t *bnd, uint64_t *amb)
{
	*bnd = *amb = 0;
	for (int c = 0; c < 64; c++) {
		int b = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (b < 0)
			return; /* past the kernel's last capability */
		if (b > 0)
			*bnd |= 1ULL << c;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0)
			*amb |= 1ULL << c;
	}
}

static void verify_or_die(int rfd, bool bounding_kept, uint64_t *ign)
{
	struct caps3 now;
	uint64_t bnd, amb;

	if (caps_get(&now) < 0)
		linux_die(rfd, STEP, errno, "read back the capability sets");
	for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (now.d[i].effective || now.d[i].permitted || now.d[i].inheritable)
			linux_die(rfd, STEP, EPERM, "capabilities remain after dropping them");
	*ign = UINT64_MAX;
	if (!sets_from_status(&bnd, &amb, ign))
		sets_from_prctl(&bnd, &amb);
	if (!bounding_kept && bnd != 0)
		linux_die(rfd, STEP, EPERM, "bounding capabilities remain (0x%llx)",
			  (unsigned long long)bnd);
	if (amb != 0)
		linux_die(rfd, STEP, EPERM, "ambient capabilities remain (0x%llx)",
			  (unsigned long long)amb);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		linux_die(rfd, STEP, EPERM, "no_new_privs is not set");
}

void linux_caps_drop_or_die(int report_fd, uint64_t *sig_ignored)
{
	struct caps3 now;
	bool keep_bounding;
	uint64_t ign;

	if (caps_get(&now) < 0)
		linux_die(report_fd, STEP, errno, "read the capability sets");
	/* See the top comment: only a process without any capability may keep them. */
	keep_bounding = !(caps_word(&now, CAPS_EFFECTIVE) & (1ULL << CAP_SETPCAP)) &&
			caps_word(&now, CAPS_PERMITTED) == 0;
	if (!keep_bounding) {
		drop_bounding_or_die(report_fd);
		lock_securebits_or_die(report_fd);
	}
	clear_sets_or_die(report_fd);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		linux_die(report_fd, STEP, errno, "PR_SET_NO_NEW_PRIVS");
	verify_or_die(report_fd, keep_bounding, &ign);
	if (sig_ignored)
		*sig_ignored = ign;
}
