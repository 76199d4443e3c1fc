/* Resource caps: from the policy, from --limit, applied with setrlimit().
 *
 * The --limit grammar, decided here once:
 *   spec  := item ("," item)*
 *   item  := key "=" value            no whitespace anywhere, no empty item
 *   key   := cpu | mem | fsize | nofile | nproc | wall
 *            Only these short spellings: the policy's long names (memoryMB, ...) carry
 *            a unit in their name that would clash with the suffixes below, so they are
 *            refused with a hint to the short key instead.
 *   value := digits [suffix]          decimal, no sign, no leading zero, > 0
 *            mem, fsize:  K, M, G (either case; powers of 1024); a bare number is bytes
 *            cpu, wall:   s, m, h (seconds, minutes, hours); a bare number is seconds
 *            nofile, nproc: no suffix
 * A key given twice in one spec is refused (which one was meant?). Each key has a
 * ceiling (see the table); mem has a floor of 1 MiB because a bare "mem=512" is almost
 * certainly a missing "M", and 512 bytes of memory cannot even exec.
 * Durations (cpu, wall, and --timeout) may combine units: "1h30m", "2m30s" (h, m, s in
 * that order, each once; a bare number is seconds and stands alone).
 * On the command line (rlimits_parse_cli, rlimits_parse_timeout) a value may only
 * tighten the policy's: one above the policy's value for the same limit is refused.
 * On any error nothing is changed. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "rlimits/rlimits.h"

#define KIB	       1024LL
#define MIB	       (1024LL * 1024)
#define GIB	       (1024LL * 1024 * 1024)
#define SPEC_MAX_BYTES 1024
#define SECONDS_MAX    31536000LL /* one year, as --timeout */
#define COUNT_MAX      1073741824LL

enum unit_kind {
	UNIT_BYTES,
	UNIT_SECONDS,
	UNIT_COUNT,
};

struct limit_key {
	const char *key;
	const char *policy_name; /* for the hint when someone writes the long name */
	enum unit_kind unit;
	long long min;
	long long max;
	size_t offset; /* into struct rlimits_set */
};

#define FIELD(f) offsetof(struct rlimits_set, f)

static const struct limit_key limit_keys[] = {
    {"cpu", "cpuSeconds", UNIT_SECONDS, 1, SECONDS_MAX, FIELD(cpu_seconds)},
    {"mem", "memoryMB", UNIT_BYTES, MIB, LLONG_MAX, FIELD(memory_bytes)},
    {"fsize", "fileSizeMB", UNIT_BYTES, 1, LLONG_MAX, FIELD(file_size_bytes)},
    {"nofile", "openFiles", UNIT_COUNT, 1, COUNT_MAX, FIELD(open_files)},
    {"nproc", "processes", UNIT_COUNT, 1, COUNT_MAX, FIELD(processes)},
    {"wall", "wallSeconds", UNIT_SECONDS, 1, SECONDS_MAX, FIELD(wall_seconds)},
};
#define N_KEYS (sizeof(limit_keys) / sizeof(limit_keys[0]))

static const char known_keys[] = "cpu, mem, fsize, nofile, nproc, wall";

static long long *field(struct rlimits_set *r, const struct limit_key *k)
{
	return (long long *)((char *)r + k->offset);
}

void rlimits_init(struct rlimits_set *r)
{
	r->cpu_seconds = RLIMITS_UNSET;
	r->memory_bytes = RLIMITS_UNSET;
	r->file_size_bytes = RLIMITS_UNSET;
	r->open_files = RLIMITS_UNSET;
	r->processes = RLIMITS_UNSET;
	r->wall_seconds = RLIMITS_UNSET;
	r->memory_via = RLIMITS_MEM_DATA;
}

/* Validation keeps the policy's limits positive; anything else means "not set". A
 * megabyte count too large for bytes saturates: the host's hard limit still applies. */
static long long positive_or_unset(long long v)
{
	return v > 0 ? v : RLIMITS_UNSET;
}

static long long mb_to_bytes(long long mb)
{
	if (mb <= 0)
		return RLIMITS_UNSET;
	if (mb > LLONG_MAX / MIB)
		return LLONG_MAX;
	return mb * MIB;
}

void rlimits_from_policy(const struct policy_limits *pl, struct rlimits_set *r)
{
	rlimits_init(r);
	r->cpu_seconds = positive_or_unset(pl->cpu_seconds);
	r->memory_bytes = mb_to_bytes(pl->memory_mb);
	r->file_size_bytes = mb_to_bytes(pl->file_size_mb);
	r->open_files = positive_or_unset(pl->open_files);
	r->processes = positive_or_unset(pl->processes);
	r->wall_seconds = positive_or_unset(pl->wall_seconds);
}

/* ---------------------------------------------------------------- parsing */

static const struct limit_key *key_find(const char *s, size_t n)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strlen(limit_keys[i].key) == n && memcmp(limit_keys[i].key, s, n) == 0)
			return &limit_keys[i];
	return NULL;
}

static const struct limit_key *key_find_policy_name(const char *s, size_t n)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strlen(limit_keys[i].policy_name) == n &&
		    memcmp(limit_keys[i].policy_name, s, n) == 0)
			return &limit_keys[i];
	return NULL;
}

static long long suffix_multiplier(enum unit_kind unit, char c)
{
	static const struct {
		enum unit_kind unit;
		char c;
		long long mult;
	} suffixes[] = {
	    {UNIT_BYTES, 'K', KIB}, {UNIT_BYTES, 'k', KIB},  {UNIT_BYTES, 'M', MIB},
	    {UNIT_BYTES, 'm', MIB}, {UNIT_BYTES, 'G', GIB},  {UNIT_BYTES, 'g', GIB},
	    {UNIT_SECONDS, 's', 1}, {UNIT_SECONDS, 'm', 60}, {UNIT_SECONDS, 'h', 3600},
	};

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (suffixes[i].unit == unit && suffixes[i].c == c)
			return suffixes[i].mult;
	return 0;
}

static const char *suffix_help(enum unit_kind unit)
{
	switch (unit) {
	case UNIT_BYTES:
		return "a byte count with an optional K, M or G suffix";
	case UNIT_SECONDS:
		return "seconds, or a number with an s, m or h suffix";
	case UNIT_COUNT:
	default:
		return "a plain count";
	}
}

/* The leading decimal digits of s[0..n): their count, the value in *v (saturated
 * flag in *overflow). */
static size_t read_digits(const char *s, size_t n, long long *v, bool *overflow)
{
	size_t i = 0;

	*v = 0;
	*overflow = false;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		int d = s[i] - '0';
		if (*v > (LLONG_MAX - d) / 10)
			*overflow = true;
		else
			*v = *v * 10 + d;
	}
	return i;
}

static const char *unit_word(enum unit_kind unit)
{
	return unit == UNIT_BYTES ? " bytes" : unit == UNIT_SECONDS ? " s" : "";
}

static int too_large(const struct limit_key *k, const char *what, struct halo_err *e)
{
	halo_err_set(e, "%s: too large (at most %lld%s)", what, k->max, unit_word(k->unit));
	return -EINVAL;
}

/* A duration: "90", "90s", "2m", "1h30m", "1h0m5s": number-unit pairs in the order h,
 * m, s, each unit at most once; a bare number (seconds) only on its own. */
static int parse_duration(const struct limit_key *k, const char *what, const char *s, size_t n,
			  long long *out, struct halo_err *e)
{
	static const char order[] = "hms";
	long long total = 0, v;
	size_t pos = 0, next_unit = 0;
	bool overflow;

	while (pos < n) {
		size_t digits = read_digits(s + pos, n - pos, &v, &overflow);
		const char *u = pos + digits < n ? strchr(order, s[pos + digits]) : NULL;
		long long mult;

		if (digits == 0 && pos == 0) {
			halo_err_set(e, "%s: not a number; expected %s", what,
				     suffix_help(k->unit));
			return -EINVAL;
		}
		if (digits == 0) {
			halo_err_set(e, "%s: unexpected '%.*s'; expected %s", what, (int)(n - pos),
				     s + pos, suffix_help(k->unit));
			return -EINVAL;
		}
		if (digits > 1 && s[pos] == '0') {
			halo_err_set(e, "%s: leading zero", what);
			return -EINVAL;
		}
		if (pos + digits == n && pos == 0) {
			mult = 1; /* a bare number: seconds */
		} else if (pos + digits == n) {
			halo_err_set(e, "%s: '%.*s' needs a unit (h, m or s)", what, (int)digits,
				     s + pos);
			return -EINVAL;
		} else if (!u || s[pos + digits] == '\0') {
			halo_err_set(e, "%s: unexpected '%.*s'; expected %s", what,
				     (int)(n - pos - digits), s + pos + digits,
				     suffix_help(k->unit));
			return -EINVAL;
		} else if ((size_t)(u - order) < next_unit) {
			halo_err_set(e, "%s: units must come in the order h, m, s, each once",
				     what);
			return -EINVAL;
		} else {
			mult = suffix_multiplier(k->unit, *u);
			next_unit = (size_t)(u - order) + 1;
		}
		if (overflow || v > k->max / mult || total > k->max - v * mult)
			return too_large(k, what, e);
		total += v * mult;
		pos += digits + (mult == 1 && pos + digits == n ? 0 : 1);
	}
	if (total == 0) {
		halo_err_set(e, "%s: must be greater than zero", what);
		return -EINVAL;
	}
	*out = total;
	return 0;
}

/* A size or a count: digits and at most one suffix. */
static int parse_amount(const struct limit_key *k, const char *what, const char *s, size_t n,
			long long *out, struct halo_err *e)
{
	long long v, mult = 1;
	bool overflow;
	size_t digits = read_digits(s, n, &v, &overflow);

	if (digits == 0) {
		halo_err_set(e, "%s: not a number; expected %s", what, suffix_help(k->unit));
		return -EINVAL;
	}
	if (digits > 1 && s[0] == '0') {
		halo_err_set(e, "%s: leading zero", what);
		return -EINVAL;
	}
	if (n - digits == 1)
		mult = suffix_multiplier(k->unit, s[digits]);
	if (n - digits > 1 || mult == 0) {
		halo_err_set(e, "%s: unexpected '%.*s'; expected %s", what, (int)(n - digits),
			     s + digits, suffix_help(k->unit));
		return -EINVAL;
	}
	if (v == 0 && !overflow) {
		halo_err_set(e, "%s: must be greater than zero", what);
		return -EINVAL;
	}
	if (overflow || v > k->max / mult)
		return too_large(k, what, e);
	v *= mult;
	if (v < k->min) {
		halo_err_set(e, "%s: below the minimum of %lld bytes%s%.*s%s", what, k->min,
			     digits == n ? " (did you mean " : "", digits == n ? (int)digits : 0, s,
			     digits == n ? "M?)" : "");
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* One value of `n` bytes at `s` (not NUL-terminated); `what` names it in messages. */
static int parse_value(const struct limit_key *k, const char *what, const char *s, size_t n,
		       long long *out, struct halo_err *e)
{
	if (n == 0) {
		halo_err_set(e, "%s: empty value; expected %s", what, suffix_help(k->unit));
		return -EINVAL;
	}
	return k->unit == UNIT_SECONDS ? parse_duration(k, what, s, n, out, e)
				       : parse_amount(k, what, s, n, out, e);
}

/* The command line may tighten the policy, never loosen it: a value above the one the
 * policy set for the same limit is refused. `what` is how the user wrote it. */
static int check_tightens(const struct limit_key *k, const char *flag, const char *what,
			  long long v, const struct rlimits_set *policy, struct halo_err *e)
{
	long long had = policy ? *field((struct rlimits_set *)policy, k) : RLIMITS_UNSET;

	if (had == RLIMITS_UNSET || v <= had)
		return 0;
	halo_err_set(e,
		     "%s%s exceeds the policy's limits.%s (%lld); the command line may only "
		     "tighten limits",
		     flag, what, k->policy_name, k->unit == UNIT_BYTES ? had / MIB : had);
	return -EPERM;
}

static int unknown_key(const char *s, size_t n, struct halo_err *e)
{
	const struct limit_key *hint = key_find_policy_name(s, n);

	if (hint)
		halo_err_set(e, "unknown key '%.*s': here it is spelled %s (known: %s)", (int)n, s,
			     hint->key, known_keys);
	else
		halo_err_set(e, "unknown key '%.*s' (known: %s)", (int)n > 64 ? 64 : (int)n, s,
			     known_keys);
	return -EINVAL;
}

static int parse_item(const char *s, size_t n, struct rlimits_set *r, bool *seen,
		      const struct rlimits_set *policy, struct halo_err *e)
{
	const char *eq = memchr(s, '=', n);
	const struct limit_key *k;
	char what[SPEC_MAX_BYTES + 8];
	long long v;
	int rc;

	if (n == 0) {
		halo_err_set(e, "empty item (stray comma?)");
		return -EINVAL;
	}
	if (!eq) {
		halo_err_set(e, "'%.*s': expected KEY=VALUE", (int)n > 64 ? 64 : (int)n, s);
		return -EINVAL;
	}
	if (eq == s) {
		halo_err_set(e, "'%.*s': missing key before '='", (int)n > 64 ? 64 : (int)n, s);
		return -EINVAL;
	}
	k = key_find(s, (size_t)(eq - s));
	if (!k)
		return unknown_key(s, (size_t)(eq - s), e);
	if (seen[k - limit_keys]) {
		halo_err_set(e, "%s given twice", k->key);
		return -EINVAL;
	}
	seen[k - limit_keys] = true;
	snprintf(what, sizeof(what), "%.*s", (int)n, s);
	rc = parse_value(k, eq + 1 == s + n ? k->key : what, eq + 1, n - (size_t)(eq + 1 - s), &v,
			 e);
	if (rc == 0 && policy)
		rc = check_tightens(k, "--limit ", what, v, policy, e);
	if (rc < 0)
		return rc;
	*field(r, k) = v;
	return 0;
}

/* Printable ASCII only, at most SPEC_MAX_BYTES: returns the length or -EINVAL. */
static long check_text(const char *text, const char *what, struct halo_err *e)
{
	size_t len = strnlen(text, SPEC_MAX_BYTES + 1);

	if (len > SPEC_MAX_BYTES) {
		halo_err_set(e, "%s longer than %d bytes", what, SPEC_MAX_BYTES);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] <= ' ' || (unsigned char)text[i] >= 0x7f) {
			halo_err_set(e, "whitespace, control or non-ASCII character at offset %zu",
				     i);
			return -EINVAL;
		}
	return (long)len;
}

static int parse_spec(const char *spec, struct rlimits_set *r, const struct rlimits_set *policy,
		      struct halo_err *e)
{
	struct rlimits_set tmp = *r;
	bool seen[N_KEYS] = {false};
	long len;

	if (!spec || !*spec) {
		halo_err_set(e, "empty limit list; expected KEY=VALUE[,KEY=VALUE...] with keys %s",
			     known_keys);
		return -EINVAL;
	}
	if ((len = check_text(spec, "limit list", e)) < 0)
		return (int)len;
	for (const char *p = spec;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		int rc = parse_item(p, n, &tmp, seen, policy, e);

		if (rc < 0)
			return rc;
		if (!comma)
			break;
		p = comma + 1;
	}
	*r = tmp;
	return 0;
}

int rlimits_parse_override(const char *spec, struct rlimits_set *r, struct halo_err *e)
{
	return parse_spec(spec, r, NULL, e);
}

int rlimits_parse_cli(const char *spec, const struct rlimits_set *policy, struct rlimits_set *r,
		      struct halo_err *e)
{
	return parse_spec(spec, r, policy, e);
}

int rlimits_parse_timeout(const char *text, const struct rlimits_set *policy, struct rlimits_set *r,
			  struct halo_err *e)
{
	const struct limit_key *wall = key_find("wall", 4);
	char what[SPEC_MAX_BYTES + 16];
	long long v;
	long len;
	int rc;

	if (!text || !*text) {
		halo_err_set(e, "--timeout: empty value; expected %s", suffix_help(UNIT_SECONDS));
		return -EINVAL;
	}
	if ((len = check_text(text, "--timeout value", e)) < 0) {
		char msg[sizeof(e->msg)];
		snprintf(msg, sizeof(msg), "%s", e->msg);
		halo_err_set(e, "--timeout: %s", msg);
		return (int)len;
	}
	snprintf(what, sizeof(what), "--timeout %s", text);
	rc = parse_value(wall, what, text, (size_t)len, &v, e);
	if (rc == 0)
		rc = check_tightens(wall, "", what, v, policy, e);
	if (rc < 0)
		return rc;
	/* Both --limit wall= and --timeout tighten: the shorter one holds. */
	if (r->wall_seconds == RLIMITS_UNSET || v < r->wall_seconds)
		r->wall_seconds = v;
	return 0;
}

/* ---------------------------------------------------------------- applying */

/* Memory is counted as what is used, never as address space: RLIMIT_AS kills runtimes
 * that reserve far more than they touch (V8's cage, the JVM's heap, Go's arenas, wasm
 * guard regions) at start. RLIMIT_DATA counts private writable mappings (heap, brk,
 * anonymous mmap) since Linux 4.7, and PROT_NONE reservations not at all. */
int rlimits_memory_resource(const struct rlimits_set *r)
{
	return r->memory_via == RLIMITS_MEM_CGROUP ? -1 : RLIMIT_DATA;
}

struct apply_row {
	int resource;
	const char *name;
	size_t offset;
};

static const struct apply_row apply_rows[] = {
    {RLIMIT_CPU, "RLIMIT_CPU", FIELD(cpu_seconds)},
    {RLIMIT_DATA, "RLIMIT_DATA", FIELD(memory_bytes)},
    {RLIMIT_FSIZE, "RLIMIT_FSIZE", FIELD(file_size_bytes)},
    {RLIMIT_NOFILE, "RLIMIT_NOFILE", FIELD(open_files)},
    {RLIMIT_NPROC, "RLIMIT_NPROC", FIELD(processes)},
};

static rlim_t min_rlim(rlim_t a, rlim_t b)
{
	/* RLIM_INFINITY is the largest rlim_t, so plain comparison is right. */
	return a < b ? a : b;
}

static int set_limit(int resource, const char *name, rlim_t soft, rlim_t hard, struct halo_err *e)
{
	struct rlimit cur = {0, 0}, want;

	/* Zero is never above what the host imposes: nothing to read first. */
	if ((soft != 0 || hard != 0) && getrlimit(resource, &cur) < 0) {
		int err = errno;
		halo_err_set(e, "getrlimit(%s): %s", name, strerror(err));
		errno = err; /* callers may report errno as well as the message */
		return -err;
	}
	/* Never above the hard limit the host already imposes: raising it needs
	 * CAP_SYS_RESOURCE, which the command no longer has, and would loosen the host. */
	want.rlim_max = min_rlim(hard, cur.rlim_max);
	want.rlim_cur = min_rlim(soft, want.rlim_max);
	if (setrlimit(resource, &want) < 0) {
		int err = errno;
		halo_err_set(e, "setrlimit(%s, %llu): %s", name, (unsigned long long)want.rlim_cur,
			     strerror(err));
		errno = err;
		return -err;
	}
	return 0;
}

int rlimits_apply(const struct rlimits_set *r, struct halo_err *e)
{
	int rc = set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, e);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < sizeof(apply_rows) / sizeof(apply_rows[0]); i++) {
		const struct apply_row *row = &apply_rows[i];
		long long v = *(const long long *)((const char *)r + row->offset);
		rlim_t soft = (rlim_t)v, hard = (rlim_t)v;

		if (v == RLIMITS_UNSET || v <= 0)
			continue;
		if (row->offset == FIELD(memory_bytes) && rlimits_memory_resource(r) < 0)
			continue; /* the launcher's memory cgroup holds it */
		/* CPU: the soft limit delivers SIGXCPU (catchable: a build tool can report
		 * it), the hard limit one second later SIGKILL, so a handler that ignores
		 * SIGXCPU cannot run on. */
		if (row->resource == RLIMIT_CPU)
			hard = soft + 1;
		rc = set_limit(row->resource, row->name, soft, hard, e);
		if (rc < 0)
			return rc;
	}
	return 0;
}
