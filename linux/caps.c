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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "linux/linux_int.h"

#define STEP "capabilities"

static void cap_freep(cap_t *c)
{
	if (*c)
		cap_free(*c);
}
#define _cleanup_cap_ __attribute__((cleanup(cap_freep)))

/* The kernel's last capability: cap_get_bound() fails past it, whatever this libcap's
 * CAP_LAST_CAP says (the kernel may be newer or older than the headers). The valid
 * numbers are 0..last, so a binary search finds it in six reads. */
static int last_cap(void)
{
	int lo = 0, hi = 63;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (cap_get_bound((cap_value_t)mid) >= 0)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Does the process hold capability `c` in `flag`? */
static bool has_cap(cap_flag_t flag, int c)
{
	_cleanup_cap_ cap_t now = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	return now && cap_get_flag(now, (cap_value_t)c, flag, &v) == 0 && v == CAP_SET;
}

static bool permitted_empty(int last)
{
	for (int c = 0; c <= last; c++)
		if (has_cap(CAP_PERMITTED, c))
			return false;
	return true;
}

/* Dropping a capability that is not in the set succeeds and changes nothing, so there
 * is nothing to read first; verify_or_die reads the result back. */
static void drop_bounding_or_die(int rfd, int last)
{
	for (int c = 0; c <= last; c++)
		if (cap_drop_bound((cap_value_t)c) < 0)
			linux_die(rfd, STEP, errno, "drop bounding capability %d", c);
}

static void lock_securebits_or_die(int rfd)
{
	unsigned bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	if ((unsigned)cap_get_secbits() == bits)
		return;
	if (cap_set_secbits(bits) < 0)
		linux_die(rfd, STEP, errno, "set securebits 0x%x", bits);
}

static void clear_sets_or_die(int rfd)
{
	_cleanup_cap_ cap_t none = cap_init();

	/* Ambient first: the kernel drops ambient capabilities that leave permitted or
	 * inheritable anyway, but an explicit clear does not depend on that. EINVAL
	 * means a kernel without ambient capabilities, which has none to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		linux_die(rfd, STEP, errno, "clear the ambient set");
	if (!none)
		linux_die(rfd, STEP, errno, "cap_init");
	if (cap_set_proc(none) < 0)
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

/* The bounding and ambient sets in one read (three calls) instead of two calls per
 * capability. False when the file cannot be read or parsed: the caller asks per
 * capability instead. */
static bool sets_from_status(uint64_t *bnd, uint64_t *amb)
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
	return linux_caps_parse_status(buf, bnd, amb) == 0;
}

static void verify_or_die(int rfd, int last, bool bounding_kept)
{
	_cleanup_cap_ cap_t now = cap_get_proc();
	_cleanup_cap_ cap_t none = cap_init();
	bool ambient = CAP_AMBIENT_SUPPORTED();
	uint64_t bnd, amb;

	if (!now || !none)
		linux_die(rfd, STEP, errno, "read back the capability sets");
	if (cap_compare(now, none) != 0)
		linux_die(rfd, STEP, EPERM, "capabilities remain after dropping them");
	if (sets_from_status(&bnd, &amb)) {
		if (!bounding_kept && bnd != 0)
			linux_die(rfd, STEP, EPERM, "bounding capabilities remain (0x%llx)",
				  (unsigned long long)bnd);
		if (amb != 0)
			linux_die(rfd, STEP, EPERM, "ambient capabilities remain (0x%llx)",
				  (unsigned long long)amb);
		last = -1; /* read: no per-capability questions */
	}
	for (int c = 0; c <= last; c++) {
		if (!bounding_kept && cap_get_bound((cap_value_t)c) != 0)
			linux_die(rfd, STEP, EPERM, "bounding capability %d remains", c);
		if (ambient && cap_get_ambient((cap_value_t)c) > 0)
			linux_die(rfd, STEP, EPERM, "ambient capability %d remains", c);
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		linux_die(rfd, STEP, EPERM, "no_new_privs is not set");
}

void linux_caps_drop_or_die(int report_fd)
{
	int last = last_cap();
	/* See the top comment: only a process without any capability may keep them. */
	bool keep_bounding = !has_cap(CAP_EFFECTIVE, CAP_SETPCAP) && permitted_empty(last);

	if (!keep_bounding) {
		drop_bounding_or_die(report_fd, last);
		lock_securebits_or_die(report_fd);
	}
	clear_sets_or_die(report_fd);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		linux_die(report_fd, STEP, errno, "PR_SET_NO_NEW_PRIVS");
	verify_or_die(report_fd, last, keep_bounding);
}
