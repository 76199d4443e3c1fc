/* libFuzzer target for the creation broker's request path (linux/broker_admit.c): the
 * production parse half of the gate, broker_parse, on a notification made of the
 * input (a trapped call or not, any arguments) and a caller memory made of the rest
 * of it, read through the same reader interface production reads /proc/<tid>/mem
 * with. Whatever the bytes: one of the gate's errnos; a request it accepts has its row,
 * every string terminated within PATH_MAX and equal to the caller's bytes (or their
 * /proc/self rewrite), a unix socket's name that fits a sockaddr_un; and parsing again
 * gives the same request.
 *
 * Input: [row] [pointer mask] [6 x 8 bytes of arguments] [memory...]. Row n picks
 * broker_rows[n % (rows + 1)], the last being a call the table does not hold; a bit
 * set in the mask makes that argument an address inside the memory. */
#include <errno.h>
#include <linux/audit.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "linux/broker_emul_int.h"
#include "tests/fuzz/fuzz_check.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#else
#define ARCH AUDIT_ARCH_AARCH64
#endif

#define BASE 0x7f0000000000ULL
#define TID  4242

struct mem {
	const uint8_t *p;
	size_t n;
};

static ssize_t mem_read(void *ctx, uint64_t addr, void *out, size_t n)
{
	const struct mem *m = ctx;

	if (addr < BASE || addr - BASE >= m->n)
		return 0;
	if (n > m->n - (addr - BASE))
		n = m->n - (addr - BASE);
	memcpy(out, m->p + (addr - BASE), n);
	return (ssize_t)n;
}

/* The string at addr in the caller's memory is what the request holds, or the
 * /proc/self (/proc/thread-self) rewrite of it. */
static void same_string(const struct mem *m, uint64_t addr, const char *got)
{
	char want[PATH_MAX + 64];
	size_t off = (size_t)(addr - BASE), n;

	CHECK(addr >= BASE && off < m->n);
	n = strnlen((const char *)m->p + off, m->n - off);
	CHECK(n < PATH_MAX && off + n < m->n);
	memcpy(want, m->p + off, n);
	want[n] = '\0';
	if (strcmp(want, got) == 0)
		return;
	CHECK(strncmp(want, "/proc/self", 10) == 0 || strncmp(want, "/proc/thread-self", 17) == 0);
	CHECK(strncmp(got, "/proc/4242", 10) == 0);
}

static void check_accepted(const struct mem *m, const struct seccomp_data *d,
			   const struct broker_req *r)
{
	const struct broker_layout *l = &r->row->a;

	CHECK(r->row == broker_row_find(d->arch, (int)d->nr));
	CHECK(strnlen(r->path, sizeof(r->path)) < sizeof(r->path));
	CHECK(strnlen(r->old, sizeof(r->old)) < sizeof(r->old));
	CHECK(r->base < 0 && r->obase < 0 && r->src < 0 && r->nn.pfd < 0);
	if (l->path != BROKER_NO) {
		CHECK(r->has_name);
		same_string(m, d->args[l->path], r->path);
	}
	if (l->old != BROKER_NO)
		same_string(m, d->args[l->old], r->old);
	if (l->addr != BROKER_NO) {
		CHECK(r->len >= sizeof(sa_family_t) && r->len <= sizeof(r->sa));
		CHECK(!r->has_name ||
		      (r->sa.ss_family == AF_UNIX && r->path[0] != '\0' &&
		       strlen(r->path) <= sizeof(((struct sockaddr_un *)0)->sun_path)));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct broker_req r, again;
	struct seccomp_data d = {.arch = ARCH};
	struct mem m;
	struct broker_mem bm = {mem_read, &m};
	size_t pick;
	uint8_t ptrs;
	int rc;

	if (size < 2 + 6 * 8)
		return 0;
	pick = data[0] % (broker_n_rows + 1);
	ptrs = data[1];
	m.p = data + 2 + 6 * 8;
	m.n = size - 2 - 6 * 8;
	d.nr = pick < broker_n_rows ? broker_rows[pick].nr : 0x7fff;
	for (int i = 0; i < 6; i++) {
		uint64_t v;
		memcpy(&v, data + 2 + 8 * i, 8);
		d.args[i] = (ptrs >> i) & 1 && m.n ? BASE + v % m.n : v;
	}
	if (ptrs & 0x80)
		d.arch = ARCH ^ 1;
	rc = broker_parse(&bm, TID, &d, &r);
	free(r.value); /* (setxattr's value: broker_req_release's in production) */
	r.value = NULL;
	/* (setxattr's name and value: ERANGE and E2BIG as the kernel answers them) */
	CHECK(rc == 0 || rc == -EFAULT || rc == -ENAMETOOLONG || rc == -EINVAL || rc == -ENOSYS ||
	      rc == -ERANGE || rc == -E2BIG || rc == -ENOMEM);
	CHECK((rc == -ENOSYS) == (broker_row_find(d.arch, (int)d.nr) == NULL));
	if (rc == 0)
		check_accepted(&m, &d, &r);
	CHECK(broker_parse(&bm, TID, &d, &again) == rc);
	free(again.value);
	again.value = NULL;
	if (rc == 0)
		CHECK(strcmp(r.path, again.path) == 0 && strcmp(r.old, again.old) == 0 &&
		      r.dfd == again.dfd && r.odfd == again.odfd && r.flags == again.flags &&
		      r.has_name == again.has_name);
	return 0;
}
