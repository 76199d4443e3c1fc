/* libFuzzer target for the workspace index's unordered path (linux/scan_index.c:
 * linux_index_sorted, what scan_index_file.c runs on the records a walk's workers
 * wrote, in whatever order they came): the file's bytes parsed without the order
 * check, sorted, serialised. fuzz_scan_index runs the ordered parse (the load); this
 * one the write. Invariants: bytes the unordered parse refuses give NULL; otherwise
 * the result is a file the ordered parse (the next launch's load) accepts, or refuses
 * only for a directory listed twice, with as many directories as the input, each of
 * them found by its path with the same fields and entries, entries in name order;
 * and sorting it again changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linux/scan_index.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_index.h"

static void *dup_of(const void *p, size_t n)
{
	void *q = malloc(n ? n : 1);

	if (q)
		memcpy(q, p, n);
	return q;
}

/* The entries of d as a multiset, compared with e's: same count, same bytes in name
 * order in e (the sorted one). */
static void same_dir(const struct linux_index_dir *d, const struct linux_index_dir *e)
{
	const unsigned char *p = e->entries;
	const char *prev = NULL;
	size_t total_d = 0, total_e = 0;

	CHECK(d->dev == e->dev && d->ino == e->ino && d->nlink == e->nlink && d->size == e->size);
	CHECK(d->ctime_sec == e->ctime_sec && d->ctime_nsec == e->ctime_nsec);
	CHECK(d->flags == e->flags && d->n_total == e->n_total && d->n_entries == e->n_entries);
	for (uint32_t i = 0; i < e->n_entries; i++) {
		const char *name = (const char *)p + 1;
		CHECK(!prev || strcmp(prev, name) <= 0);
		prev = name;
		total_e += 2 + strlen(name);
		p += 2 + strlen(name);
	}
	p = d->entries;
	for (uint32_t i = 0; i < d->n_entries; i++) {
		total_d += 2 + strlen((const char *)p + 1);
		p += 2 + strlen((const char *)p + 1);
	}
	CHECK(total_d == total_e);
}

static void one(const uint8_t *data, size_t size)
{
	struct linux_index in, out;
	char why[128];
	void *buf, *sorted, *again;
	size_t len = 0, len2 = 0;
	int rc;

	if (!(buf = dup_of(data, size)))
		return;
	sorted = linux_index_sorted(buf, size, &len); /* takes buf */
	if (!(buf = dup_of(data, size)))
		goto done;
	rc = linux_index_parse_unordered(buf, size, &in, why, sizeof(why)); /* takes buf */
	if (!sorted) {
		/* refused, or out of memory on the way */
		if (rc == 0)
			linux_index_free(&in);
		return;
	}
	CHECK(rc == 0);
	buf = dup_of(sorted, len);
	if (buf && linux_index_parse(buf, len, &out, why, sizeof(why)) == 0) {
		CHECK(out.n == in.n);
		for (size_t i = 0; i < in.n; i++) {
			const struct linux_index_dir *e =
			    linux_index_find(&out, in.dirs[i].rel, in.dirs[i].rel_len);
			CHECK(e != NULL);
			same_dir(&in.dirs[i], e);
		}
		linux_index_free(&out);
	} else if (buf) {
		CHECK(strstr(why, "listed twice") != NULL);
	}
	linux_index_free(&in);
	/* Sorted already: sorting again gives the same bytes. */
	if ((buf = dup_of(sorted, len)) && (again = linux_index_sorted(buf, len, &len2))) {
		CHECK(len2 == len && memcmp(again, sorted, len) == 0);
		free(again);
	}
done:
	free(sorted);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_index_twice(data, size, one);
	return 0;
}
