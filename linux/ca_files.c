/* The run's CA files (TLS termination), from the supervisor to the sandbox's init.
 * The CA is made after the clone, so that init, a fork-like copy of the supervisor,
 * never holds its key (nor the leaf's): the supervisor makes it while init builds its
 * namespaces, and sends the public files over the listeners' socketpair once the
 * listeners are in, as sealed memfds (the bundle of system roots is ~200 KB, more than
 * a pipe holds). init copies them onto its /run with sendfile: nothing allocated in a
 * process cloned from a possibly multi-threaded one. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/launch_int.h"
#include "linux/mounts_int.h"

#define CA_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* In the order they travel; the JVM's store is last and optional. */
static const struct {
	const char *name; /* under the sandbox's /run */
	const char *path; /* as the command sees it */
} ca_files[LAUNCH_CA_FILES] = {
    {"halo/ca-bundle.pem", LINUX_CA_BUNDLE_PATH},
    {"halo/ca.pem", LINUX_CA_CERT_PATH},
    {"halo/ca-truststore.p12", LINUX_CA_JVM_PATH},
};

/* ------------------------------------------------------------------ supervisor */

static int sealed_memfd(const char *name, const char *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t w = write(fd, data + done, len - done);
		if (w <= 0) {
			int err = w < 0 ? errno : EIO;
			close(fd);
			return -err;
		}
		done += (size_t)w;
	}
	if (fcntl(fd, F_ADD_SEALS, CA_SEALS) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

void launch_ca_close(int fds[LAUNCH_CA_FILES])
{
	for (int i = 0; i < LAUNCH_CA_FILES; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

int launch_ca_make(const struct linux_launch *l, int fds[LAUNCH_CA_FILES], struct halo_err *e)
{
	struct linux_ca_files c = {0};
	int rc = l->ca_make(&c, e);
	const char *data[LAUNCH_CA_FILES] = {c.bundle, c.cert, c.jvm};
	size_t len[LAUNCH_CA_FILES] = {c.bundle_len, c.cert_len, c.jvm_len};

	for (int i = 0; i < LAUNCH_CA_FILES; i++)
		fds[i] = -1;
	if (rc < 0)
		return rc;
	if (!c.bundle || !c.cert) {
		halo_err_set(e, "TLS termination: the run's CA files are missing");
		return -EINVAL;
	}
	for (int i = 0; i < LAUNCH_CA_FILES && data[i]; i++)
		if ((fds[i] = sealed_memfd(ca_files[i].name + 5, data[i], len[i])) < 0) {
			rc = fds[i];
			fds[i] = -1;
			launch_ca_close(fds);
			halo_err_set(e, "TLS termination: memfd for %s: %s", ca_files[i].path,
				     strerror(-rc));
			return rc;
		}
	return 0;
}

int launch_ca_send(int sock, const int fds[LAUNCH_CA_FILES])
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * LAUNCH_CA_FILES)];
		struct cmsghdr align;
	} u;
	char tag = 'c';
	struct iovec iov = {&tag, 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf};
	struct cmsghdr *cm;
	int n = 0;

	while (n < LAUNCH_CA_FILES && fds[n] >= 0)
		n++;
	memset(&u, 0, sizeof(u));
	m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
	return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* ------------------------------------------------------------------------ init */

static int received[LAUNCH_CA_FILES] = {-1, -1, -1};

/* Only what the supervisor sends: 2 or 3 memfds, sealed, so that what init writes is
 * what was made, whatever else holds them. */
static bool sealed(int fd)
{
	int s = fcntl(fd, F_GET_SEALS);

	return s >= 0 && (s & CA_SEALS) == CA_SEALS;
}

void linux_ca_receive_or_die(int sock, int rfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * LAUNCH_CA_FILES)];
		struct cmsghdr align;
	} u;
	char tag = 0;
	struct iovec iov = {&tag, 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf};
	struct cmsghdr *cm;
	ssize_t r;
	size_t n = 0;

	memset(&u, 0, sizeof(u));
	m.msg_controllen = sizeof(u.buf);
	do
		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	cm = r == 1 ? CMSG_FIRSTHDR(&m) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len >= CMSG_LEN(0)) {
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		n = n < LAUNCH_CA_FILES ? n : LAUNCH_CA_FILES;
		memcpy(received, CMSG_DATA(cm), sizeof(int) * n);
	}
	if (r != 1 || tag != 'c' || (m.msg_flags & MSG_CTRUNC) || n < 2)
		linux_die(rfd, "TLS termination", r < 0 ? errno : EPROTO,
			  "receive the run's CA files from halo-run");
	for (size_t i = 0; i < n; i++)
		if (!sealed(received[i]))
			linux_die(rfd, "TLS termination", EPERM, "%s: not a sealed memfd",
				  ca_files[i].path);
}

static void copy_or_die(int rfd, int run, int src, size_t i)
{
	struct stat st;
	off_t off = 0;
	int fd = openat(run, ca_files[i].name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	int err = fd < 0 ? errno : fstat(src, &st) < 0 ? errno : 0;

	while (!err && off < st.st_size) {
		ssize_t w = sendfile(fd, src, &off, (size_t)(st.st_size - off));
		if (w <= 0)
			err = w < 0 ? errno : EIO;
	}
	if (fd >= 0)
		close(fd);
	close(src);
	if (err)
		linux_die(rfd, MNT_STEP, err, "write %s", ca_files[i].path);
}

void linux_ca_write_or_die(int rfd, int run)
{
	for (size_t i = 0; i < LAUNCH_CA_FILES; i++)
		if (received[i] >= 0) {
			copy_or_die(rfd, run, received[i], i);
			received[i] = -1;
		}
}
