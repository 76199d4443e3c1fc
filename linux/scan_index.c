/* The workspace index's file format (see scan_index.h). Pure: bytes in, bytes out, no
 * system calls, so that the parser can be fuzzed (tests/fuzz/fuzz_scan_index.c).
 *
 *   header (64 bytes, little-endian as the host writes it; the file never leaves it):
 *     magic[8] "HALOIDX\n", u32 version, u32 header_len (64 + the root's bytes),
 *     u64 dev, u64 ino (of the tree's top), u64 rules, u64 n_dirs, u64 body_len,
 *     u64 checksum (linux_index_checksum: a MAC under the user's key of everything
 *     but itself)
 *   root: the tree's absolute path, NUL-terminated
 *   body: n_dirs records: u64 dev, ino, nlink, size; i64 ctime_sec; u32 ctime_nsec,
 *     flags, n_total, n_entries; rel NUL-terminated; n_entries x (u8 type, name NUL)
 *
 * Every field is checked: a file that is short, long, mis-summed or holds one record
 * that could not have been written by linux_index_serialize is refused whole. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/scan_index.h"

#define HEADER_LEN 64
#define RECORD_MIN 56 /* the fixed fields */

uint64_t linux_index_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void put(unsigned char *at, const void *v, size_t n)
{
	memcpy(at, v, n);
}

static bool grow(struct linux_index_out *o, size_t more)
{
	if (o->oom)
		return false;
	if (o->len + more > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->len + more)
			cap *= 2;
		unsigned char *b = realloc(o->buf, cap);
		if (!b) {
			o->oom = true;
			return false;
		}
		o->buf = b;
		o->cap = cap;
	}
	return true;
}

static void put_fixed(unsigned char *at, const struct linux_index_dir *d)
{
	uint64_t u[4] = {d->dev, d->ino, d->nlink, d->size};
	uint32_t w[4] = {d->ctime_nsec, d->flags, d->n_total, d->n_entries};

	put(at, u, 32);
	put(at + 32, &d->ctime_sec, 8);
	put(at + 40, w, 16);
}

void linux_index_out_begin(struct linux_index_out *o, const struct linux_index_dir *d)
{
	size_t rl = strlen(d->rel) + 1;
	struct linux_index_dir empty = *d;

	empty.n_entries = 0; /* counted by linux_index_out_entry */
	o->open_at = o->len;
	if (!grow(o, RECORD_MIN + rl))
		return;
	put_fixed(o->buf + o->len, &empty);
	memcpy(o->buf + o->len + RECORD_MIN, d->rel, rl);
	o->len += RECORD_MIN + rl;
}

void linux_index_out_entry(struct linux_index_out *o, unsigned char type, const char *name)
{
	size_t nl = strlen(name) + 1;
	uint32_t k;

	if (!grow(o, 1 + nl))
		return;
	o->buf[o->len] = type;
	memcpy(o->buf + o->len + 1, name, nl);
	o->len += 1 + nl;
	memcpy(&k, o->buf + o->open_at + 52, 4);
	k++;
	memcpy(o->buf + o->open_at + 52, &k, 4);
}

void linux_index_out_end(struct linux_index_out *o, uint32_t flags, uint32_t n_total)
{
	if (o->oom)
		return;
	memcpy(o->buf + o->open_at + 44, &flags, 4);
	memcpy(o->buf + o->open_at + 48, &n_total, 4);
	o->n_dirs++;
}

void linux_index_out_copy(struct linux_index_out *o, const struct linux_index_dir *d)
{
	const unsigned char *e = d->entries;

	linux_index_out_begin(o, d);
	for (uint32_t i = 0; i < d->n_entries; i++) {
		const char *name = (const char *)e + 1;
		linux_index_out_entry(o, e[0], name);
		e += 2 + strlen(name);
	}
	linux_index_out_end(o, d->flags, d->n_total);
}

void linux_index_out_append(struct linux_index_out *o, const struct linux_index_out *from)
{
	if (from->oom) {
		o->oom = true;
		return;
	}
	if (!from->len || !grow(o, from->len))
		return;
	memcpy(o->buf + o->len, from->buf, from->len);
	o->len += from->len;
	o->n_dirs += from->n_dirs;
}

void linux_index_out_free(struct linux_index_out *o)
{
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

void *linux_index_serialize(const struct linux_index_key *key, const struct linux_index_out *outs,
			    size_t n, size_t *len)
{
	size_t rl = strlen(key->root) + 1, body = 0, n_dirs = 0, off;
	unsigned char *b;
	uint32_t version = LINUX_INDEX_VERSION, hlen;
	uint64_t u[6];

	for (size_t i = 0; i < n; i++) {
		if (outs[i].oom)
			return NULL;
		body += outs[i].len;
		n_dirs += outs[i].n_dirs;
	}
	if (rl > PATH_MAX || HEADER_LEN + rl + body > LINUX_INDEX_MAX ||
	    !(b = malloc(HEADER_LEN + rl + body)))
		return NULL;
	hlen = (uint32_t)(HEADER_LEN + rl);
	memcpy(b, LINUX_INDEX_MAGIC, 8);
	put(b + 8, &version, 4);
	put(b + 12, &hlen, 4);
	memcpy(b + HEADER_LEN, key->root, rl);
	off = hlen;
	for (size_t i = 0; i < n; i++) {
		if (outs[i].len)
			memcpy(b + off, outs[i].buf, outs[i].len);
		off += outs[i].len;
	}
	u[0] = key->dev;
	u[1] = key->ino;
	u[2] = key->rules;
	u[3] = n_dirs;
	u[4] = body;
	u[5] = 0;
	put(b + 16, u, sizeof(u));
	u[5] = linux_index_checksum(b, off);
	put(b + 56, &u[5], 8);
	*len = off;
	return b;
}

static int bad(char *why, size_t n, const char *what)
{
	snprintf(why, n, "%s", what);
	return -EINVAL;
}

/* A name as a directory entry can be, given that the caller found no '/' in it: not
 * empty, not "." nor "..". */
static bool good_name(const char *s, size_t len)
{
	return len > 0 && len <= NAME_MAX &&
	       !(s[0] == '.' && (len == 1 || (len == 2 && s[1] == '.')));
}

/* The relative path that starts at s, up to its NUL before end: "" or names joined by
 * single slashes, shorter than PATH_MAX. Its length into *len; false when malformed or
 * not terminated. One pass: a million-entry tree has tens of thousands of them. */
static bool scan_rel(const char *s, const char *end, size_t *len)
{
	const char *p = s, *comp = s;

	for (; p < end && *p; p++) {
		if (*p != '/')
			continue;
		if (!good_name(comp, (size_t)(p - comp)))
			return false;
		comp = p + 1;
	}
	if (p == end || (p > s && !good_name(comp, (size_t)(p - comp))))
		return false;
	*len = (size_t)(p - s);
	return *len < PATH_MAX;
}

/* An entry's name at s, up to its NUL before end; its length into *len. */
static bool scan_name(const char *s, const char *end, size_t *len)
{
	const char *p = s;

	while (p < end && *p && *p != '/')
		p++;
	if (p == end || *p)
		return false;
	*len = (size_t)(p - s);
	return good_name(s, *len);
}

static bool good_type(unsigned char t)
{
	return t == DT_DIR || t == DT_REG || t == DT_LNK || t == DT_SOCK || t == DT_FIFO ||
	       t == DT_CHR || t == DT_BLK;
}

/* One record at b[*off..len) into d; false when malformed. */
static bool parse_record(const unsigned char *b, size_t len, size_t *off, struct linux_index_dir *d)
{
	size_t o = *off, rl;
	uint64_t u[4];
	uint32_t w[4];

	if (len - o < RECORD_MIN)
		return false;
	memcpy(u, b + o, 32);
	memcpy(&d->ctime_sec, b + o + 32, 8);
	memcpy(w, b + o + 40, 16);
	d->dev = u[0], d->ino = u[1], d->nlink = u[2], d->size = u[3];
	d->ctime_nsec = w[0], d->flags = w[1], d->n_total = w[2], d->n_entries = w[3];
	o += RECORD_MIN;
	if (d->ctime_nsec >= 1000000000U || (d->flags & ~(uint32_t)3) ||
	    d->n_entries > d->n_total || !scan_rel((const char *)b + o, (const char *)b + len, &rl))
		return false;
	d->rel = (const char *)b + o;
	d->rel_len = (uint32_t)rl;
	o += rl + 1;
	d->entries = b + o;
	for (uint32_t i = 0; i < d->n_entries; i++) {
		if (len - o < 2 || !good_type(b[o]) ||
		    !scan_name((const char *)b + o + 1, (const char *)b + len, &rl))
			return false;
		o += rl + 2;
	}
	*off = o;
	return true;
}

const struct linux_index_dir *linux_index_find_near(const struct linux_index *ix, const char *rel,
						    size_t len, size_t *next)
{
	const struct linux_index_dir *d;

	if (ix && *next < ix->n) {
		d = &ix->dirs[*next];
		if (d->rel_len == len && memcmp(d->rel, rel, len) == 0) {
			(*next)++;
			return d;
		}
	}
	if ((d = linux_index_find(ix, rel, len)) != NULL)
		*next = (size_t)(d - ix->dirs) + 1;
	return d;
}

/* Path order with '/' lowest (as linux_paths_sort_unique): a directory, then what is
 * beneath it, then its next sibling. */
static int path_key(unsigned char ch)
{
	return ch == '\0' ? 0 : ch == '/' ? 1 : ch + 1;
}

static int dir_cmp(const void *a, const void *b)
{
	const unsigned char *x =
	    (const unsigned char *)(*(const struct linux_index_dir *const *)a)->rel;
	const unsigned char *y =
	    (const unsigned char *)(*(const struct linux_index_dir *const *)b)->rel;

	for (; *x && *x == *y; x++, y++)
		;
	return path_key(*x) - path_key(*y);
}

/* How many leading bytes a[0..n) and b[0..n) share: eight at a time, since sorted
 * neighbours share most of their path. */
static size_t common_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return i + (size_t)(__builtin_ctzll(x ^ y) >> 3);
	}
#endif
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* rel (len bytes) against a record's path, in the order of dir_cmp. */
static int rel_cmp(const char *rel, size_t len, const struct linux_index_dir *d)
{
	size_t i = common_prefix(rel, d->rel, len < d->rel_len ? len : d->rel_len);

	return path_key(i < len ? (unsigned char)rel[i] : 0) -
	       path_key(i < d->rel_len ? (unsigned char)d->rel[i] : 0);
}

/* The records are sorted (the parser refuses a file that is not): a binary search. */
const struct linux_index_dir *linux_index_find(const struct linux_index *ix, const char *rel,
					       size_t len)
{
	size_t lo = 0, hi = ix ? ix->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = rel_cmp(rel, len, &ix->dirs[mid]);
		if (c == 0)
			return &ix->dirs[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a + 1, *(const char *const *)b + 1);
}

static void out_sorted_dir(struct linux_index_out *o, const struct linux_index_dir *d)
{
	const char **e = calloc(d->n_entries + 1, sizeof(char *));
	const unsigned char *p = d->entries;

	if (!e) {
		o->oom = true;
		return;
	}
	for (uint32_t i = 0; i < d->n_entries; i++) {
		e[i] = (const char *)p;
		p += 2 + strlen((const char *)p + 1);
	}
	qsort(e, d->n_entries, sizeof(*e), name_cmp);
	linux_index_out_begin(o, d);
	for (uint32_t i = 0; i < d->n_entries; i++)
		linux_index_out_entry(o, (unsigned char)e[i][0], e[i] + 1);
	linux_index_out_end(o, d->flags, d->n_total);
	free(e);
}

void linux_index_out_sorted(struct linux_index_out *o, const struct linux_index *ix)
{
	const struct linux_index_dir **v = calloc(ix->n + 1, sizeof(*v));

	if (!v) {
		o->oom = true;
		return;
	}
	for (size_t i = 0; i < ix->n; i++)
		v[i] = &ix->dirs[i];
	qsort(v, ix->n, sizeof(*v), dir_cmp);
	for (size_t i = 0; i < ix->n; i++)
		out_sorted_dir(o, v[i]);
	free(v);
}

static int parse_header(const unsigned char *b, size_t len, struct linux_index *ix,
			uint64_t *n_dirs, char *why, size_t n)
{
	uint32_t version, hlen;
	uint64_t u[6];

	if (len < HEADER_LEN)
		return bad(why, n, "truncated (shorter than its header)");
	if (memcmp(b, LINUX_INDEX_MAGIC, 8) != 0)
		return bad(why, n, "not an index (wrong magic)");
	memcpy(&version, b + 8, 4);
	memcpy(&hlen, b + 12, 4);
	if (version != LINUX_INDEX_VERSION)
		return bad(why, n, "written by another version");
	memcpy(u, b + 16, sizeof(u));
	if (hlen < HEADER_LEN + 2 || hlen > HEADER_LEN + PATH_MAX || hlen > len)
		return bad(why, n, "truncated or malformed header");
	if (u[4] != len - hlen)
		return bad(why, n, "truncated (its length does not match its header)");
	if (linux_index_checksum(b, len) != u[5])
		return bad(why, n, "checksum mismatch (another key, or not written by halo-run)");
	if (b[HEADER_LEN] != '/' ||
	    memchr(b + HEADER_LEN, '\0', hlen - HEADER_LEN) != (const void *)(b + hlen - 1))
		return bad(why, n, "malformed root path");
	ix->key.dev = u[0];
	ix->key.ino = u[1];
	ix->key.rules = u[2];
	ix->key.root = (const char *)b + HEADER_LEN;
	ix->sum = u[5];
	*n_dirs = u[3];
	return (int)hlen;
}

static int parse(void *buf, size_t len, struct linux_index *ix, char *why, size_t n, bool ordered);

int linux_index_parse(void *buf, size_t len, struct linux_index *ix, char *why, size_t n)
{
	return linux_index_parse_with(buf, len, NULL, ix, why, n);
}

int linux_index_parse_with(void *buf, size_t len, void (*release)(void *, size_t),
			   struct linux_index *ix, char *why, size_t n)
{
	memset(ix, 0, sizeof(*ix));
	ix->release = release;
	return parse(buf, len, ix, why, n, true);
}

int linux_index_parse_unordered(void *buf, size_t len, struct linux_index *ix, char *why, size_t n)
{
	memset(ix, 0, sizeof(*ix));
	return parse(buf, len, ix, why, n, false);
}

static int parse(void *buf, size_t len, struct linux_index *ix, char *why, size_t n, bool ordered)
{
	const unsigned char *b = buf;
	uint64_t n_dirs;
	size_t off;
	int rc;

	ix->buf = buf;
	ix->len = len;
	if ((rc = parse_header(b, len, ix, &n_dirs, why, n)) < 0)
		goto fail;
	off = (size_t)rc;
	if (n_dirs > (len - off) / RECORD_MIN) {
		rc = bad(why, n, "more directories than the file can hold");
		goto fail;
	}
	if (n_dirs && !(ix->dirs = calloc((size_t)n_dirs, sizeof(*ix->dirs)))) {
		rc = bad(why, n, "out of memory");
		goto fail;
	}
	while (off < len) {
		if (ix->n == n_dirs || !parse_record(b, len, &off, &ix->dirs[ix->n])) {
			rc = bad(why, n, "malformed directory record");
			goto fail;
		}
		ix->n++;
	}
	if (ix->n != n_dirs) {
		rc = bad(why, n, "fewer directories than its header says");
		goto fail;
	}
	for (size_t i = 1; ordered && i < ix->n; i++) {
		int c = rel_cmp(ix->dirs[i].rel, ix->dirs[i].rel_len, &ix->dirs[i - 1]);
		if (c <= 0) {
			rc = bad(why, n,
				 c ? "directories out of order" : "a directory listed twice");
			goto fail;
		}
	}
	return 0;
fail:
	linux_index_free(ix);
	return rc;
}

void *linux_index_sorted(void *buf, size_t len, size_t *out_len)
{
	struct linux_index ix;
	struct linux_index_out o = {0};
	char why[128];
	void *out;

	if (!buf || linux_index_parse_unordered(buf, len, &ix, why, sizeof(why)) < 0)
		return NULL;
	linux_index_out_sorted(&o, &ix);
	out = linux_index_serialize(&ix.key, &o, 1, out_len); /* before ix (key.root) goes */
	linux_index_out_free(&o);
	linux_index_free(&ix);
	return out;
}

void linux_index_free(struct linux_index *ix)
{
	free(ix->dirs);
	if (ix->release && ix->buf)
		ix->release(ix->buf, ix->len);
	else
		free(ix->buf);
	memset(ix, 0, sizeof(*ix));
}
