/* libFuzzer target for the workspace index parser (linux/scan_index.c): whatever bytes
 * lie in an index file, the parser refuses them or returns directories that are all
 * inside the buffer, each with a relative path and names as a walk makes them, each
 * found again by its path; serialising what it returned parses to the same. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/scan_index.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_index.h"

static void check_dir(const struct linux_index *ix, const struct linux_index_dir *d,
		      struct linux_index_out *o)
{
	const unsigned char *e = d->entries;
	size_t rl = strlen(d->rel);

	CHECK(d->rel[0] != '/' && (rl == 0 || d->rel[rl - 1] != '/'));
	CHECK(!strstr(d->rel, "//"));
	CHECK(linux_index_find(ix, d->rel, rl) == d);
	CHECK(d->n_entries <= d->n_total);
	linux_index_out_begin(o, d);
	for (uint32_t i = 0; i < d->n_entries; i++) {
		const char *name = (const char *)e + 1;
		CHECK(e[0] != DT_UNKNOWN);
		CHECK(name[0] && !strchr(name, '/'));
		linux_index_out_entry(o, e[0], name);
		e += 2 + strlen(name);
	}
	linux_index_out_end(o, d->flags, d->n_total);
}

/* Parse `data` as it is; every invariant on what is accepted. */
static void one(const uint8_t *data, size_t size)
{
	struct linux_index ix, again;
	struct linux_index_out o = {0};
	char why[128];
	void *buf = malloc(size ? size : 1), *out;
	size_t len;

	if (!buf)
		return;
	memcpy(buf, data, size);
	if (linux_index_parse(buf, size, &ix, why, sizeof(why)) < 0) {
		CHECK(why[0] != '\0');
		return; /* buf freed by the parser */
	}
	for (size_t i = 0; i < ix.n; i++) {
		const unsigned char *r = (const unsigned char *)ix.dirs[i].rel;
		CHECK(r >= (const unsigned char *)ix.buf &&
		      r < (const unsigned char *)ix.buf + size);
		check_dir(&ix, &ix.dirs[i], &o);
	}
	out = linux_index_serialize(&ix.key, &o, 1, &len);
	CHECK(out != NULL);
	CHECK(len == size && memcmp(out, data, size) == 0);
	CHECK(linux_index_parse(out, len, &again, why, sizeof(why)) == 0);
	CHECK(again.n == ix.n);
	linux_index_free(&again);
	linux_index_out_free(&o);
	linux_index_free(&ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_index_twice(data, size, one);
	return 0;
}
