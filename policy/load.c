/* Reading policy files: the only place policy/ touches the file system.
 *
 * A policy path may name anything (a FIFO someone planted, a device, a directory),
 * so the file is checked with stat() before it is opened at all, opened without
 * blocking and without becoming a controlling terminal, and checked again with
 * fstat() on the descriptor actually read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy_int.h"

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	return "not a regular file";
}

static int check_stat(const char *path, const struct stat *st, struct policy_diags *d)
{
	if (!S_ISREG(st->st_mode)) {
		policy_diag(d, true, path, 0, NULL, "is %s, not a regular file",
			    file_kind(st->st_mode));
		return -EINVAL;
	}
	if (st->st_size > POLICY_MAX_FILE_BYTES) {
		policy_diag(d, true, path, 0, NULL,
			    "is too large (%lld bytes; a policy file may hold at most %d)",
			    (long long)st->st_size, POLICY_MAX_FILE_BYTES);
		return -EFBIG;
	}
	return 0;
}

/* Read the whole file; it may have grown since fstat(), so the cap is enforced on
 * what is actually read. */
static int read_all(const char *path, int fd, size_t hint, char **out, size_t *outlen,
		    struct policy_diags *d)
{
	size_t cap = hint + 1 > 4096 ? hint + 1 : 4096, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *grown;

			if (cap > POLICY_MAX_FILE_BYTES) {
				free(buf);
				policy_diag(d, true, path, 0, NULL,
					    "is too large (more than %d bytes)",
					    POLICY_MAX_FILE_BYTES);
				return -EFBIG;
			}
			cap = cap * 2 > POLICY_MAX_FILE_BYTES + 1 ? POLICY_MAX_FILE_BYTES + 1
								  : cap * 2;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			policy_diag(d, true, path, 0, NULL, "cannot read: %s", strerror(e));
			return -e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > POLICY_MAX_FILE_BYTES) {
		free(buf);
		policy_diag(d, true, path, 0, NULL, "is too large (more than %d bytes)",
			    POLICY_MAX_FILE_BYTES);
		return -EFBIG;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

static char format_from_name(const char *path)
{
	size_t n = strlen(path);

	if (n >= 5 && strcasecmp(path + n - 5, ".json") == 0)
		return 'j';
	if ((n >= 5 && strcasecmp(path + n - 5, ".yaml") == 0) ||
	    (n >= 4 && strcasecmp(path + n - 4, ".yml") == 0))
		return 'y';
	return 0;
}

int policy_parse_file(const char *path, struct halo_policy **out, struct policy_diags *d)
{
	_policy_close_ int fd = -1;
	_policy_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (!path || !*path) {
		policy_diag(d, true, "policy", 0, NULL, "empty file name");
		return -EINVAL;
	}
	if (stat(path, &st) < 0) {
		rc = -errno;
		policy_diag(d, true, path, 0, NULL, "cannot read: %s", strerror(-rc));
		return rc;
	}
	rc = check_stat(path, &st, d);
	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		policy_diag(d, true, path, 0, NULL, "cannot open: %s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		policy_diag(d, true, path, 0, NULL, "cannot stat: %s", strerror(-rc));
		return rc;
	}
	rc = check_stat(path, &st, d); /* it may have been swapped since stat() */
	if (rc < 0)
		return rc;
	rc = read_all(path, fd, (size_t)st.st_size, &buf, &len, d);
	if (rc < 0) {
		if (rc == -ENOMEM)
			policy_diag(d, true, path, 0, NULL, "out of memory");
		return rc;
	}
	return policy_parse_buffer(path, buf, len, format_from_name(path), out, d);
}

/* Strict UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF): both
 * parsers then see the same text, and names cannot hide in odd encodings. */
static size_t utf8_bad_offset(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n;
		unsigned cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (len - i <= n)
			return i;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return i;
		i += n + 1;
	}
	return len;
}

static unsigned line_of(const char *buf, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off; i++)
		line += buf[i] == '\n';
	return line;
}

/* Checks common to both formats, before either parser sees the bytes. */
static int precheck(const char *name, const char *buf, size_t len, struct policy_diags *d)
{
	const char *nul;
	size_t bad;
	bool blank = true;

	if (len > POLICY_MAX_FILE_BYTES) {
		policy_diag(d, true, name, 0, NULL,
			    "is too large (%zu bytes; a policy file may hold at most %d)", len,
			    POLICY_MAX_FILE_BYTES);
		return -EFBIG;
	}
	for (size_t i = 0; i < len && blank; i++)
		blank = buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n';
	if (blank) {
		policy_diag(d, true, name, 0, NULL, "the policy file is empty");
		return -EINVAL;
	}
	nul = memchr(buf, '\0', len);
	if (nul) {
		policy_diag(d, true, name, line_of(buf, (size_t)(nul - buf)), NULL,
			    "contains a NUL byte (binary file?)");
		return -EINVAL;
	}
	bad = utf8_bad_offset((const unsigned char *)buf, len);
	if (bad < len) {
		policy_diag(d, true, name, line_of(buf, bad), NULL, "invalid UTF-8 at byte %zu",
			    bad);
		return -EINVAL;
	}
	return 0;
}

static char guess_format(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')
			continue;
		return buf[i] == '{' ? 'j' : 'y';
	}
	return 'y';
}

static int parse_checked(const char *name, const char *buf, size_t len, char format,
			 struct halo_policy **out, struct policy_diags *d)
{
	struct pnode *root = NULL;
	int rc;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) { /* UTF-8 BOM */
		buf += 3;
		len -= 3;
	}
	rc = precheck(name, buf, len, d);
	if (rc < 0)
		return rc;
	if (!format)
		format = guess_format(buf, len);
	if (format == 'j')
		rc = policy_parse_json(name, buf, len, &root, d);
	else
		rc = policy_parse_yaml(name, buf, len, &root, d);
	if (rc < 0)
		return rc;
	if (pnode_check_dup_keys(name, root, d) > 0) {
		pnode_free(root);
		return -EINVAL;
	}
	rc = policy_model_from_tree(name, root, out, d);
	pnode_free(root);
	if (!*out)
		return rc;
	(*out)->source = strdup(name);
	if (!(*out)->source) {
		policy_free(*out);
		*out = NULL;
		policy_diag(d, true, name, 0, NULL, "out of memory");
		return -ENOMEM;
	}
	return rc; /* < 0 with a partial *out under d->keep_partial */
}

int policy_parse_file_partial(const char *path, struct halo_policy **out, struct policy_diags *d)
{
	int rc;

	if (!d)
		return policy_parse_file(path, out, d);
	d->keep_partial = true;
	rc = policy_parse_file(path, out, d);
	d->keep_partial = false;
	return rc;
}

int policy_parse_buffer(const char *name, const char *buf, size_t len, char format,
			struct halo_policy **out, struct policy_diags *d)
{
	struct policy_diags local = {0};
	int rc;

	*out = NULL;
	if (!name)
		name = "<buffer>";
	if (format != 0 && format != 'j' && format != 'y') {
		policy_diag(d ? d : &local, true, name, 0, NULL, "unknown format '%c'", format);
		policy_diags_free(&local);
		return -EINVAL;
	}
	rc = parse_checked(name, buf ? buf : "", buf ? len : 0, format, out, d ? d : &local);
	policy_diags_free(&local);
	return rc;
}

int policy_load(const char *const *paths, size_t n, const struct policy_ctx *ctx,
		struct halo_policy **out, struct policy_diags *d)
{
	return policy_load_oneoff(paths, n, ctx, NULL, out, d);
}

int policy_load_oneoff(const char *const *paths, size_t n, const struct policy_ctx *ctx,
		       const struct policy_oneoff *oneoff, struct halo_policy **out,
		       struct policy_diags *d)
{
	struct halo_policy *base = NULL;
	bool failed = false;
	int rc;

	*out = NULL;
	if (n == 0) {
		base = policy_embedded_default();
		if (!base) {
			policy_diag(d, true, "embedded default", 0, NULL, "cannot be loaded");
			return -ENOMEM;
		}
	}
	/* Every file is read even after a failure, and what a file with bad fields still
	 * says is layered and validated, so one run reports every error. */
	for (size_t i = 0; i < n; i++) {
		struct halo_policy *layer = NULL;

		if (policy_parse_file_partial(paths[i], &layer, d) < 0) {
			failed = true;
			if (!layer)
				continue;
		}
		if (!base) {
			base = layer;
			continue;
		}
		if (policy_layer(base, layer, paths[i], d) < 0)
			failed = true;
		policy_free(layer);
	}
	if (base && policy_layer_oneoff(base, oneoff, d) < 0)
		failed = true;
	if (failed) {
		if (base && d)
			policy_finalize(base, ctx, d); /* its errors too, then refused anyway */
		policy_free(base);
		return -EINVAL;
	}
	rc = policy_finalize(base, ctx, d);
	if (rc < 0) {
		policy_free(base);
		return rc;
	}
	*out = base;
	return 0;
}
