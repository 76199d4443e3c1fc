/* The workspace index: its file format against hostile bytes (truncated at every
 * length, wrong magic or version, bad checksum, malformed records), and the scan's use
 * of the file: replayed when valid, rebuilt when it is another user's, a symlink,
 * group-writable, another tree's, stale after `mv`, or kept inside a writable tree;
 * a .env planted deep after the index was built is masked on the next scan. */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <time.h>

/* Its trees where the index is used (scan_fixture.h). */
#define SCAN_FIXTURE_INDEX
#include "tests/unit/scan_fixture.h"

/* A small valid index: the top and a/b, one kept entry. */
static void *sample(size_t *len)
{
	struct linux_index_out o = {0};
	struct linux_index_dir top = {.dev = 1, .ino = 2, .nlink = 3, .size = 4096, .rel = ""};
	struct linux_index_dir ab = {.dev = 1, .ino = 9, .ctime_sec = 5, .rel = "a/b"};
	struct linux_index_key k = {1, 2, 42, "/work/ws"};
	void *buf;

	linux_index_out_begin(&o, &top);
	linux_index_out_entry(&o, DT_DIR, "a");
	linux_index_out_entry(&o, DT_REG, ".env");
	linux_index_out_end(&o, 0, 7);
	linux_index_out_begin(&o, &ab);
	linux_index_out_end(&o, LINUX_INDEX_BARE, 4);
	buf = linux_index_serialize(&k, &o, 1, len);
	linux_index_out_free(&o);
	ck_assert_ptr_nonnull(buf);
	return buf;
}

static int parse_copy(const void *b, size_t len, struct linux_index *ix, char *why)
{
	void *copy = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, b, len);
	return linux_index_parse(copy, len, ix, why, 128);
}

START_TEST(format_round_trip)
{
	size_t len;
	void *buf = sample(&len);
	struct linux_index ix;
	char why[128];
	const struct linux_index_dir *d;

	ck_assert_int_eq(parse_copy(buf, len, &ix, why), 0);
	ck_assert_uint_eq(ix.n, 2);
	ck_assert_str_eq(ix.key.root, "/work/ws");
	ck_assert_uint_eq(ix.key.rules, 42);
	d = linux_index_find(&ix, "", 0);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->n_entries, 2);
	ck_assert_uint_eq(d->n_total, 7);
	ck_assert_uint_eq(d->entries[0], DT_DIR);
	ck_assert_str_eq((const char *)d->entries + 1, "a");
	d = linux_index_find(&ix, "a/b/c", 3);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->ino, 9);
	ck_assert_uint_eq(d->flags, LINUX_INDEX_BARE);
	ck_assert_ptr_null(linux_index_find(&ix, "a", 1));
	linux_index_free(&ix);
	free(buf);
}
END_TEST

/* Cut short at every length: refused each time, never read past the end (ASan). */
START_TEST(format_truncated_everywhere)
{
	size_t len;
	unsigned char *buf = sample(&len);
	struct linux_index ix;
	char why[128];

	for (size_t n = 0; n < len; n++)
		ck_assert_msg(parse_copy(buf, n, &ix, why) == -EINVAL, "accepted at %zu", n);
	free(buf);
}
END_TEST

/* Each row damages one thing; every one is refused with its reason. */
static const struct {
	size_t off; /* from the start, or (when from_end) from the end */
	bool from_end;
	unsigned char byte;
	bool fix_sum; /* recompute the checksum: the record itself must be refused */
	const char *why;
} damage[] = {
    {0, false, 'X', false, "wrong magic"},
    {8, false, 0x7f, false, "another version"},
    {12, false, 0xff, false, "malformed header"},
    {48, false, 9, false, "truncated (its length"},
    {60, false, 0x55, false, "checksum mismatch"},
    {1, true, 'x', false, "checksum mismatch"},
    {64, false, 'w', true, "malformed root path"},
    {1, true, 'x', true, "malformed directory record"},
};

static void resum(unsigned char *b, size_t len)
{
	uint64_t sum = linux_index_checksum(b, len);

	memcpy(b + 56, &sum, 8);
}

/* SipHash-2-4's reference vectors (key 00..0f, message 00..n-1); the file's MAC is
 * that function over the file but its checksum field; another key, another MAC. */
START_TEST(format_mac)
{
	static const struct {
		size_t n;
		uint64_t want;
	} v[] = {
	    {0, 0x726fdb47dd0e0e31ULL}, {1, 0x74f839c593dc67fdULL}, {15, 0xa129ca6149be45e5ULL}};
	unsigned char key[16], msg[64], zero[16] = {0}, *buf, *joined;
	char why[128];
	struct linux_index ix;
	size_t len;

	for (int i = 0; i < 16; i++)
		key[i] = (unsigned char)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (unsigned char)i;
	linux_index_set_key(key);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_uint_eq(linux_index_siphash(msg, v[i].n), v[i].want);
	buf = sample(&len);
	ck_assert_ptr_nonnull(joined = malloc(len));
	memcpy(joined, buf, 56);
	memcpy(joined + 56, buf + 64, len - 64);
	ck_assert_uint_eq(linux_index_checksum(buf, len), linux_index_siphash(joined, len - 8));
	free(joined);
	/* written under one key: refused under another, believed under its own */
	linux_index_set_key(zero);
	ck_assert_int_ne(parse_copy(buf, len, &ix, why), 0);
	ck_assert_msg(strstr(why, "checksum mismatch"), "%s", why);
	linux_index_set_key(key);
	ck_assert_int_eq(parse_copy(buf, len, &ix, why), 0);
	linux_index_free(&ix);
	free(buf);
}
END_TEST

START_TEST(format_damaged)
{
	size_t len;
	unsigned char *buf = sample(&len);
	struct linux_index ix;
	char why[128];
	size_t at = damage[_i].from_end ? len - damage[_i].off : damage[_i].off;

	buf[at] = damage[_i].byte;
	if (damage[_i].fix_sum)
		resum(buf, len);
	ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
	ck_assert_msg(strstr(why, damage[_i].why), "row %d: %s", _i, why);
	free(buf);
}
END_TEST

/* Records that linux_index_serialize could not have written. */
static void expect_bad_record(const struct linux_index_dir *d, const char *entry_name,
			      unsigned char entry_type, uint32_t flags, uint32_t total)
{
	struct linux_index_out o = {0};
	struct linux_index_key k = {1, 2, 3, "/w"};
	struct linux_index ix;
	char why[128];
	size_t len;
	void *buf;

	linux_index_out_begin(&o, d);
	if (entry_name)
		linux_index_out_entry(&o, entry_type, entry_name);
	linux_index_out_end(&o, flags, total);
	buf = linux_index_serialize(&k, &o, 1, &len);
	linux_index_out_free(&o);
	ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
	free(buf);
}

START_TEST(format_bad_records)
{
	struct linux_index_dir d = {.rel = "a"};
	static char long_name[NAME_MAX + 3];
	const char *bad_rels[] = {"/a", "a/", "a//b", "../a", "a/./b", "a/..",
				  ".",	"..", "a/.",  "a/b/", "/",     long_name};

	memset(long_name, 'n', NAME_MAX + 1); /* one byte more than a name can hold */

	for (size_t i = 0; i < sizeof(bad_rels) / sizeof(bad_rels[0]); i++) {
		d.rel = bad_rels[i];
		expect_bad_record(&d, NULL, 0, 0, 0);
	}
	d.rel = "a";
	expect_bad_record(&d, "x/y", DT_REG, 0, 1);   /* a name with a slash */
	expect_bad_record(&d, "..", DT_DIR, 0, 1);    /* a name that climbs */
	expect_bad_record(&d, "", DT_REG, 0, 1);      /* an empty name */
	expect_bad_record(&d, "x", DT_UNKNOWN, 0, 1); /* a type never kept */
	expect_bad_record(&d, "x", DT_REG, 0, 0);     /* more kept than entries */
	expect_bad_record(&d, NULL, 0, 0x80, 0);      /* an unknown flag */
	d.ctime_nsec = 1000000000U;		      /* not a nanosecond count */
	expect_bad_record(&d, NULL, 0, 0, 0);
}
END_TEST

START_TEST(format_duplicate_and_count)
{
	struct linux_index_out o[2] = {{0}};
	struct linux_index_dir d = {.rel = "a"};
	struct linux_index_key k = {1, 2, 3, "/w"};
	struct linux_index ix;
	char why[128];
	size_t len;
	unsigned char *buf;
	uint64_t n = 5;

	for (int i = 0; i < 2; i++) {
		linux_index_out_begin(&o[i], &d);
		linux_index_out_end(&o[i], 0, 0);
	}
	buf = linux_index_serialize(&k, o, 2, &len);
	ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
	ck_assert_str_eq(why, "a directory listed twice");
	n = 1; /* n_dirs: one record more than it says */
	memcpy(buf + 40, &n, 8);
	resum(buf, len);
	ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
	ck_assert_str_eq(why, "malformed directory record");
	n = UINT64_MAX;
	memcpy(buf + 40, &n, 8);
	resum(buf, len);
	ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
	ck_assert_str_eq(why, "more directories than the file can hold");
	free(buf);
	linux_index_out_free(&o[0]);
	linux_index_out_free(&o[1]);
	/* Out of path order: a lookup by binary search could miss one. */
	{
		struct linux_index_out u = {0};
		struct linux_index_dir b = {.rel = "b"}, a = {.rel = "a"};
		linux_index_out_begin(&u, &b);
		linux_index_out_end(&u, 0, 0);
		linux_index_out_begin(&u, &a);
		linux_index_out_end(&u, 0, 0);
		buf = linux_index_serialize(&k, &u, 1, &len);
		ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
		ck_assert_str_eq(why, "directories out of order");
		free(buf);
		linux_index_out_free(&u);
	}
	/* Neighbours that differ past the first eight bytes (the comparison goes a word
	 * at a time), and '/' sorting below every other byte ("a/b" before "a-b"). */
	{
		static const char *const rels[][2] = {
		    {"node_modules/pkg007/d00157", "node_modules/pkg007/d00156"},
		    {"node_modules/pkg007-x", "node_modules/pkg007/y"},
		    {"abcdefghijklmnopq", "abcdefghijklmnop"},
		};
		for (size_t r = 0; r < sizeof(rels) / sizeof(rels[0]); r++) {
			struct linux_index_out u = {0};
			for (int i = 0; i < 2; i++) {
				struct linux_index_dir x = {.rel = rels[r][i]};
				linux_index_out_begin(&u, &x);
				linux_index_out_end(&u, 0, 0);
			}
			buf = linux_index_serialize(&k, &u, 1, &len);
			ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
			ck_assert_str_eq(why, "directories out of order");
			free(buf);
			linux_index_out_free(&u);
			/* The other way round is the order a walk writes. */
			memset(&u, 0, sizeof(u));
			for (int i = 1; i >= 0; i--) {
				struct linux_index_dir x = {.rel = rels[r][i]};
				linux_index_out_begin(&u, &x);
				linux_index_out_end(&u, 0, 0);
			}
			buf = linux_index_serialize(&k, &u, 1, &len);
			ck_assert_int_eq(parse_copy(buf, len, &ix, why), 0);
			ck_assert_ptr_nonnull(
			    linux_index_find(&ix, rels[r][0], strlen(rels[r][0])));
			ck_assert_ptr_nonnull(
			    linux_index_find(&ix, rels[r][1], strlen(rels[r][1])));
			ck_assert_ptr_null(linux_index_find(&ix, "node_modules", 12));
			linux_index_free(&ix);
			free(buf);
			linux_index_out_free(&u);
		}
	}
	/* One long record said to be two (the file could hold two). */
	d.rel = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	linux_index_out_begin(&o[0], &d);
	linux_index_out_end(&o[0], 0, 0);
	buf = linux_index_serialize(&k, o, 1, &len);
	n = 2;
	memcpy(buf + 40, &n, 8);
	resum(buf, len);
	ck_assert_int_eq(parse_copy(buf, len, &ix, why), -EINVAL);
	ck_assert_str_eq(why, "fewer directories than its header says");
	free(buf);
	linux_index_out_free(&o[0]);
}
END_TEST

/* --- the scan's use of the file ------------------------------------------------ */

static const char *ws_path(const char *rel)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", ws, rel);
	return buf;
}

static const char *root_path(const char *rel)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	return buf;
}

static void scan_again(void)
{
	linux_scan_free(&scan);
	run_scan_ok();
}

/* The index file of the workspace (there is one tree: ws). */
static void index_file(char *out)
{
	char pat[PATH_MAX];
	glob_t g;

	snprintf(pat, sizeof(pat), "%s/home/.local/state/halo-run/index/*.idx", root);
	ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
	ck_assert_uint_eq(g.gl_pathc, 1);
	snprintf(out, PATH_MAX, "%s", g.gl_pathv[0]);
	globfree(&g);
}

/* A tree of 30 directories, indexed; nothing counts as racy in these tests (the tree
 * is seconds old at most), so the next scan replays it all. */
static void indexed_tree(void)
{
	char name[64];

	linux_scan_racy_seconds = -1000;
	for (int i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "ws/p%d/d%d/f", i % 3, i);
		file(name, "");
	}
	file("ws/p1/d4/.env", "S=1");
	run_scan_ok();
	ck_assert_uint_eq(scan.dirs_replayed, 0);
	ck_assert_uint_eq(scan.dirs_listed, 34);
	scan_again();
	ck_assert_uint_eq(scan.dirs_listed, 0);
	ck_assert_uint_eq(scan.dirs_replayed, 34);
	ck_assert_str_eq(rel_list(&scan.masked), "ws/p1/d4/.env");
}

/* The index is used only on file systems whose directory ctimes it trusts: where the
 * fixture found none (scan_fixture.h), these say so and skip. */
#define NEED_INDEX()                                                                               \
	do {                                                                                       \
		if (!fixture_index_ok)                                                             \
			UNIT_SKIP("the index", "no file system here that the index trusts for "    \
					       "the test's tree (/var/tmp, /tmp, /dev/shm)");      \
	} while (0)

START_TEST(index_replays_and_sees_new_files)
{
	NEED_INDEX();
	indexed_tree();
	/* Planted deep after the index was built (a tick later: ctime is coarse). */
	usleep(20000);
	file("ws/p2/d5/.env.local", "T=1");
	scan_again();
	ck_assert_uint_eq(scan.dirs_listed, 1);
	ck_assert_str_eq(rel_list(&scan.masked), "ws/p1/d4/.env ws/p2/d5/.env.local");
	/* A new subtree: walked; a removed one: gone from the index. */
	usleep(20000);
	file("ws/p0/new/deeper/.env.x", "x");
	rm_rf(ws_path("p2/d5"));
	scan_again();
	ck_assert_str_eq(rel_list(&scan.masked), "ws/p0/new/deeper/.env.x ws/p1/d4/.env");
	ck_assert_uint_eq(scan.dirs_listed, 4); /* p0, p2, new, deeper */
	scan_again();
	ck_assert_uint_eq(scan.dirs_listed, 0);
	ck_assert_uint_eq(scan.dirs_replayed, 35);
}
END_TEST

/* What a replayed directory holds besides plain files acts as when listed: a socket
 * is masked, a protected link's target masked, a nested repository guarded. */
START_TEST(index_replays_sockets_links_repos)
{
	char target[PATH_MAX], masked[4096], guarded[4096];

	linux_scan_racy_seconds = -1000;
	file("outside/secret", "s");
	p(target, "outside/secret");
	mkdirs("ws/a/b");
	link_to(target, "ws/a/b/.env.link");
	unix_socket("ws/a/agent.sock");
	file("ws/a/sub/.git/config", "[core]\n");
	file("ws/a/sub/.git/hooks/pre-commit", "#!/bin/sh\n");
	run_scan_ok();
	snprintf(masked, sizeof(masked), "%s", rel_list(&scan.masked));
	snprintf(guarded, sizeof(guarded), "%s", rel_list(&scan.guarded));
	/* A tree under /tmp (a container's, scan_fixture.h): the link's target lies in
	 * the host's /tmp, which the sandbox never shows (its /tmp is its own), so there
	 * is nothing to mask. The rest is checked as anywhere. */
	if (strncmp(root, "/tmp/", 5) == 0) {
		printf("skip - %s: a protected link's target masked: the test's tree is in /tmp, "
		       "out of the sandbox's sight\n",
		       __FILE__);
		ck_assert_str_eq(masked, "ws/a/agent.sock");
	} else
		ck_assert_str_eq(masked, "outside/secret ws/a/agent.sock");
	ck_assert_ptr_nonnull(strstr(guarded, "ws/a/sub/.git/config"));
	scan_again();
	ck_assert_uint_eq(scan.dirs_listed, 0);
	ck_assert_str_eq(rel_list(&scan.masked), masked);
	ck_assert_str_eq(rel_list(&scan.guarded), guarded);
}
END_TEST

START_TEST(index_racy_directories_relisted)
{
	NEED_INDEX();
	char name[64];

	/* Just made: within the ctime granularity, so never replayed. */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "ws/d%d/f", i);
		file(name, "");
	}
	run_scan_ok();
	scan_again();
	ck_assert_uint_eq(scan.dirs_replayed, 0);
	ck_assert_uint_eq(scan.dirs_listed, 6);
}
END_TEST

/* Each way the file can be untrustworthy: the next scan lists everything again. */
static void expect_rebuilt(void)
{
	scan_again();
	ck_assert_uint_eq(scan.dirs_replayed, 0);
	ck_assert_uint_eq(scan.dirs_listed, 34);
	ck_assert_str_eq(rel_list(&scan.masked), "ws/p1/d4/.env");
}

START_TEST(index_hostile_files)
{
	NEED_INDEX();
	char f[PATH_MAX], copy[PATH_MAX + 8], cmd[3 * PATH_MAX];

	indexed_tree();
	index_file(f);
	snprintf(copy, sizeof(copy), "%s.good", f);
	snprintf(cmd, sizeof(cmd), "cp -p '%s' '%s'", f, copy);
	ck_assert_int_eq(system(cmd), 0);

	/* Truncated on disk. */
	ck_assert_int_eq(truncate(f, 100), 0);
	expect_rebuilt();
	/* Rebuilt: trusted again. */
	scan_again();
	ck_assert_uint_eq(scan.dirs_replayed, 34);

	/* Writable by the group. */
	ck_assert_int_eq(chmod(f, 0620), 0);
	expect_rebuilt();

	/* A symlink to a valid index. */
	ck_assert_int_eq(unlink(f), 0);
	ck_assert_int_eq(symlink(copy, f), 0);
	expect_rebuilt();

	/* Two links to it. */
	ck_assert_int_eq(unlink(f), 0);
	ck_assert_int_eq(link(copy, f), 0);
	expect_rebuilt();

	/* Another user's (root only can make one). */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(f, 65534, 65534), 0);
		expect_rebuilt();
	}
	unlink(copy);
}
END_TEST

START_TEST(index_wrong_tree)
{
	NEED_INDEX();
	char f[PATH_MAX], other[PATH_MAX], cmd[3 * PATH_MAX];
	struct stat st;

	indexed_tree();
	index_file(f);
	/* Another tree's index under this tree's name. */
	mkdirs("other");
	p(other, "other");
	ck_assert_int_eq(stat(other, &st), 0);
	snprintf(cmd, sizeof(cmd),
		 "mv '%s' '%s/home/.local/state/halo-run/index/%016llx-%016llx.idx'", f, root,
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	ck_assert_int_eq(system(cmd), 0);
	launch.workspace = other;
	linux_scan_free(&scan);
	run_scan_ok();
	ck_assert_uint_eq(scan.dirs_replayed, 0);
	launch.workspace = ws;
}
END_TEST

START_TEST(index_stale_after_mv)
{
	NEED_INDEX();
	char moved[PATH_MAX], again[PATH_MAX];

	indexed_tree();
	/* Same device and inode, another path: relative paths and path globs differ. */
	p(moved, "ws2");
	ck_assert_int_eq(rename(ws, moved), 0);
	launch.workspace = moved;
	linux_scan_free(&scan);
	run_scan_ok();
	ck_assert_uint_eq(scan.dirs_replayed, 0);
	ck_assert_str_eq(rel_list(&scan.masked), "ws2/p1/d4/.env");
	/* Moved back: its index was rewritten for ws2, so rebuilt again. */
	p(again, "ws");
	ck_assert_int_eq(rename(moved, again), 0);
	launch.workspace = ws;
	expect_rebuilt();
}
END_TEST

START_TEST(index_never_in_a_writable_tree)
{
	char state[PATH_MAX], probe[PATH_MAX + 32];

	/* XDG_STATE_HOME inside the workspace: no index at all, the scan is complete. */
	p(state, "ws/state");
	mkdirs("ws/state");
	setenv("XDG_STATE_HOME", state, 1);
	file("ws/.env", "x");
	run_scan_ok();
	scan_again();
	ck_assert_uint_eq(scan.dirs_replayed, 0);
	/* And the place itself masked whole: another launch, whose index lives there,
	 * must not find it written by this one's command. */
	ck_assert_str_eq(rel_list(&scan.masked), "ws/.env ws/state/halo-run/index");
	snprintf(probe, sizeof(probe), "%s/halo-run/index", state);
	DIR *d = opendir(probe);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			ck_assert_msg(de->d_name[0] == '.', "index written in the workspace: %s",
				      de->d_name);
		closedir(d);
	}
	unsetenv("XDG_STATE_HOME");
}
END_TEST

/* A directory whose entries changed is listed once, then replayed again. */
START_TEST(index_changed_dir_relisted_once)
{
	NEED_INDEX();
	indexed_tree();
	usleep(20000);
	file("ws/p1/d4/g", "");
	scan_again();
	ck_assert_uint_eq(scan.dirs_listed, 1);
	scan_again();
	ck_assert_uint_eq(scan.dirs_listed, 0);
}
END_TEST

/* No refusal for size: failIfUnavailable (the default) walks to the end whatever it
 * takes; false accepts a time budget, and the statement names where it stopped. */
START_TEST(budget_only_when_the_policy_accepts_it)
{
	char name[64];

	for (int i = 0; i < 4000; i++) {
		snprintf(name, sizeof(name), "ws/d%02d/e%04d", i % 40, i);
		mkdirs(name);
	}
	linux_scan_budget_ms = 1;
	run_scan_ok();
	ck_assert(!scan.truncated);
	ck_assert_uint_eq(scan.entries_scanned, 4040);
	pol.fail_if_unavailable = 0;
	linux_scan_free(&scan);
	rm_rf(root_path("home/.local"));
	run_scan_ok();
	ck_assert(scan.truncated);
	ck_assert_ptr_nonnull(scan.uncovered);
	ck_assert_ptr_nonnull(strstr(scan.uncovered, "(the scan's time budget ran out)"));
}
END_TEST

/* Masks, guards and pins are a mount each: past the bound the launch is refused,
 * naming the directory that holds most masks. */
START_TEST(mount_bound_names_the_directory)
{
	char name[64];
	struct linux_scan got;
	int rc;

	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "ws/many/.env.%02d", i);
		file(name, "");
	}
	file("ws/other/.env", "");
	linux_scan_max_mounts = 10;
	memset(&got, 0, sizeof(got));
	rc = linux_scan(&launch, &got, &err);
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "12 protected files in the directory of"));
	ck_assert_ptr_nonnull(strstr(err.msg, "ws/many/.env."));
	linux_scan_max_mounts = 1000;
	run_scan_ok();
	ck_assert_uint_eq(scan.masked.n, 13);
}
END_TEST

/* Where a watcher pays (scan_watch_client.c): a walk as long as the threshold, of a
 * tree of LINUX_WATCH_MIN_DIRS directories or more. A small tree whose walk was slow
 * (wall time: preempted on a loaded machine) gets none: asking a process that must be
 * woken costs it more than listing its few directories again. Forced, always. */
START_TEST(watcher_pays_only_for_a_large_tree)
{
	struct linux_scan_index ix = {.pays_us = LINUX_WATCH_PAYS_CALL_US};
	struct linux_scan_tree_index t = {0};
	bool forced = linux_scan_watch_forced;

	linux_scan_watch_forced = false;
	ix.walk_us = 850; /* an empty workspace's walk, preempted */
	t.in.n = 1;
	ck_assert(!linux_scan_watch_pays(&ix, &t));
	t.in.n = LINUX_WATCH_MIN_DIRS - 1;
	ck_assert(!linux_scan_watch_pays(&ix, &t));
	t.in.n = LINUX_WATCH_MIN_DIRS;
	ck_assert(linux_scan_watch_pays(&ix, &t));
	t.in.n = 552; /* the bench's 20k files */
	ix.walk_us = LINUX_WATCH_PAYS_CALL_US - 1;
	ck_assert(!linux_scan_watch_pays(&ix, &t));
	ix.walk_us = LINUX_WATCH_PAYS_CALL_US;
	ck_assert(linux_scan_watch_pays(&ix, &t));
	ix.pays_us = 0; /* a fresh launch: 5 ms */
	ck_assert(!linux_scan_watch_pays(&ix, &t));
	ix.walk_us = LINUX_WATCH_PAYS_US;
	ck_assert(linux_scan_watch_pays(&ix, &t));
	t.in.n = 0; /* a first walk: no index replayed */
	ck_assert(!linux_scan_watch_pays(&ix, &t));
	linux_scan_watch_forced = true;
	ck_assert(linux_scan_watch_pays(&ix, &t));
	linux_scan_watch_forced = forced;
}
END_TEST

/* The user's index key (scan_index_key.c) under a base of the test's own: made private
 * (0700 directory, 0600 file of 16 bytes) and read back; refused where the directory
 * is not the user's private one (another local user made it first, 0777) or is a
 * symlink to one that holds a key the test knows (review: a rename or a link put a
 * known key in place, and a forged index was believed). */
static char key_base[64];

static void key_setup(void)
{
	static struct linux_test_hooks h;

	strcpy(key_base, "/tmp/halo-keyt.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(key_base));
	h.key_base = key_base;
	linux_test_hooks_set(&h);
}

static void key_teardown(void)
{
	char cmd[128];

	linux_test_hooks_set(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", key_base);
	ck_assert_int_eq(system(cmd), 0);
}

static void key_paths(char *dir, char *file)
{
	snprintf(dir, 128, "%s/halo-run-%u", key_base, (unsigned)geteuid());
	snprintf(file, 160, "%s/index.key", dir);
}

START_TEST(key_made_private)
{
	char dir[128], file[160], why[256] = "";
	struct stat st;

	key_paths(dir, file);
	ck_assert_msg(linux_scan_index_key(why, sizeof(why)), "%s", why);
	ck_assert_int_eq(lstat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(lstat(file, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 16);
}
END_TEST

START_TEST(key_dir_not_private)
{
	char dir[128], file[160], why[256] = "";
	FILE *f;

	key_paths(dir, file);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fwrite("0123456789abcdef", 1, 16, f);
	fclose(f);
	ck_assert_int_eq(chmod(file, 0600), 0);
	ck_assert_int_eq(chmod(dir, 0777), 0); /* as another user's would be */
	ck_assert(!linux_scan_index_key(why, sizeof(why)));
	ck_assert_msg(strstr(why, "not a private directory"), "%s", why);
}
END_TEST

START_TEST(key_dir_a_link)
{
	char dir[128], file[160], real[160], why[256] = "";
	FILE *f;

	key_paths(dir, file);
	snprintf(real, sizeof(real), "%s/elsewhere", key_base);
	ck_assert_int_eq(mkdir(real, 0700), 0);
	ck_assert_int_eq(symlink(real, dir), 0);
	ck_assert_ptr_nonnull(f = fopen(file, "w")); /* through the link */
	fwrite("0123456789abcdef", 1, 16, f);
	fclose(f);
	ck_assert_int_eq(chmod(file, 0600), 0);
	ck_assert(!linux_scan_index_key(why, sizeof(why)));
}
END_TEST

static Suite *scan_index_suite(void)
{
	Suite *s = suite_create("scan_index");
	TCase *fmt = tcase_create("format");
	TCase *tc = tcase_create("file");

	tcase_add_test(fmt, format_round_trip);
	tcase_add_test(fmt, format_truncated_everywhere);
	tcase_add_test(fmt, format_mac);
	tcase_add_loop_test(fmt, format_damaged, 0, sizeof(damage) / sizeof(damage[0]));
	tcase_add_test(fmt, format_bad_records);
	tcase_add_test(fmt, format_duplicate_and_count);
	suite_add_tcase(s, fmt);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, index_replays_and_sees_new_files);
	tcase_add_test(tc, index_replays_sockets_links_repos);
	tcase_add_test(tc, index_racy_directories_relisted);
	tcase_add_test(tc, index_hostile_files);
	tcase_add_test(tc, index_wrong_tree);
	tcase_add_test(tc, index_stale_after_mv);
	tcase_add_test(tc, index_never_in_a_writable_tree);
	tcase_add_test(tc, index_changed_dir_relisted_once);
	tcase_add_test(tc, budget_only_when_the_policy_accepts_it);
	tcase_add_test(tc, mount_bound_names_the_directory);
	tcase_add_test(tc, watcher_pays_only_for_a_large_tree);
	suite_add_tcase(s, tc);
	TCase *key = tcase_create("key");
	tcase_add_checked_fixture(key, key_setup, key_teardown);
	tcase_add_test(key, key_made_private);
	tcase_add_test(key, key_dir_not_private);
	tcase_add_test(key, key_dir_a_link);
	suite_add_tcase(s, key);
	return s;
}

UNIT_MAIN(scan_index_suite)
