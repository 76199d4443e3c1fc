/* The workspace index (scan_index.c: the file format, pure; scan_index_file.c: where
 * it lives and who may have written it). One index per walked tree, keyed by the
 * tree's (st_dev, st_ino): for every directory, what identifies its list of entries
 * (device, inode, ctime, nlink, size) and the entries of that list a rule is about
 * (subdirectories, sockets, dot files, glob matches), so that a launch re-lists only
 * the directories whose ctime moved and replays the rest. Outside input: a file that
 * fails any check is rebuilt, never trusted. */
#ifndef HALO_LINUX_SCAN_INDEX_H
#define HALO_LINUX_SCAN_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINUX_INDEX_MAGIC   "HALOIDX\n"
#define LINUX_INDEX_VERSION 4 /* 3: BARE is any git dir by content; 4: the checksum a MAC */
#define LINUX_INDEX_MAX	    (512U * 1024 * 1024) /* bytes of a file we read at all */

/* Record flags. */
enum {
	LINUX_INDEX_RACY = 1, /* listed within the ctime granularity, or on a device whose
			       * ctime is not trusted: re-listed next time, never replayed */
	LINUX_INDEX_BARE = 2, /* holds HEAD, config, objects and refs: a bare repository */
};

/* One directory as the index holds it. rel is relative to the tree ("" for its top,
 * else "a/b"); entries are n_entries times (type byte, NUL-terminated name). */
struct linux_index_dir {
	uint64_t dev, ino, nlink, size;
	int64_t ctime_sec;
	uint32_t ctime_nsec;
	uint32_t flags;
	uint32_t n_total; /* every entry of the directory, counted as scanned */
	uint32_t n_entries;
	uint32_t rel_len; /* set by the parser */
	const char *rel;
	const unsigned char *entries;
};

/* What the header says besides the directories. */
struct linux_index_key {
	uint64_t dev, ino; /* of the tree's top */
	uint64_t rules;	   /* linux_index_hash of what decides the kept entries */
	const char *root;  /* the tree's absolute path when the index was written */
};

/* A parsed index: dirs point into buf (owned), sorted by path ('/' lowest). */
struct linux_index {
	struct linux_index_key key;
	struct linux_index_dir *dirs;
	size_t n;
	uint64_t sum; /* the header's checksum: names this version of the file */
	void *buf;
	size_t len;
	void (*release)(void *buf, size_t len); /* how buf goes back; NULL: free() */
};

/* Parse len bytes (taken: freed by linux_index_free, also on failure). 0, or -EINVAL
 * with why set (truncated, wrong magic or version, bad checksum, malformed record,
 * directories out of order or listed twice). */
int linux_index_parse(void *buf, size_t len, struct linux_index *ix, char *why, size_t n);
/* The same without the order check (linux_index_find is then unusable): records as
 * the workers of a walk wrote them, to be sorted by linux_index_out_sorted. */
int linux_index_parse_unordered(void *buf, size_t len, struct linux_index *ix, char *why, size_t n);
/* The same for a buffer that goes back through release (a mapping's munmap) rather
 * than free(): the parser itself makes no system call. */
int linux_index_parse_with(void *buf, size_t len, void (*release)(void *, size_t),
			   struct linux_index *ix, char *why, size_t n);
void linux_index_free(struct linux_index *ix);
const struct linux_index_dir *linux_index_find(const struct linux_index *ix, const char *rel,
					       size_t len);
/* The same, trying *next first: a walk in the order the file is written (directories
 * sorted by path, '/' lowest: each one right before what is beneath it, entries sorted
 * by name) finds each record right after the one before, with no hashing and in
 * memory order. *next is left after the record found. */
const struct linux_index_dir *linux_index_find_near(const struct linux_index *ix, const char *rel,
						    size_t len, size_t *next);

/* The records a walk produces (one buffer per worker and tree, concatenated). */
struct linux_index_out {
	unsigned char *buf;
	size_t len, cap;
	size_t n_dirs;
	bool oom;
	/* The record being built: its start, and where its entry count goes. */
	size_t open_at;
};
void linux_index_out_begin(struct linux_index_out *o, const struct linux_index_dir *d);
void linux_index_out_entry(struct linux_index_out *o, unsigned char type, const char *name);
/* Close the open record with its final fields (flags, counts). */
void linux_index_out_end(struct linux_index_out *o, uint32_t flags, uint32_t n_total);
/* Copy a whole record (a replayed directory). */
void linux_index_out_copy(struct linux_index_out *o, const struct linux_index_dir *d);
/* Append the closed records of `from` (a directory's own, built while its
 * subdirectories were walked into o). */
void linux_index_out_append(struct linux_index_out *o, const struct linux_index_out *from);
void linux_index_out_free(struct linux_index_out *o);
/* Sorted copies of every record of ix (path order) with their entries (name order):
 * the order linux_index_find_near expects. */
void linux_index_out_sorted(struct linux_index_out *o, const struct linux_index *ix);

/* The file's bytes in walk order from a file's bytes in any order (as the workers of
 * a walk wrote them): parsed without the order check (which checks everything else),
 * sorted, serialised. Takes buf (freed); a malloc'd buffer (*out_len set), or NULL
 * when buf does not parse or memory ran out. */
void *linux_index_sorted(void *buf, size_t len, size_t *out_len);

/* The file's bytes: header for key, then the bodies of outs[0..n) in order.
 * Returns a malloc'd buffer (*len set) or NULL. */
void *linux_index_serialize(const struct linux_index_key *key, const struct linux_index_out *outs,
			    size_t n, size_t *len);

/* 64-bit hash (FNV-1a) to chain over the rules. */
uint64_t linux_index_hash(uint64_t h, const void *p, size_t n);
#define LINUX_INDEX_HASH_SEED 0xcbf29ce484222325ULL
/* The file's checksum: SipHash-2-4 under the key last set (all zeros until then) of
 * the whole file but its checksum field (bytes 56..63); 0 for a file shorter than its
 * header. linux_index_siphash is the plain function, for its test vectors. */
void linux_index_set_key(const unsigned char key[16]);
uint64_t linux_index_checksum(const void *file, size_t len);
uint64_t linux_index_siphash(const void *p, size_t n);

#endif
