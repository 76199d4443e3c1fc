/* Harness posture: the per-user settings with which coding-agent harnesses switch their
 * own sandbox off. halo-run does not depend on them, but a security team asking "is
 * this machine's agent sandboxed?" wants to see them next to halo-run's layers.
 *
 * The files belong to the user and may be anything: a FIFO (which must not hang
 * doctor), a symlink planted to make doctor read a secret, a huge file. So a file is
 * read only when lstat says regular and at most 1 MiB, it is opened O_NONBLOCK and
 * O_NOFOLLOW, the opened file is checked again, it is never written, and no finding
 * quotes what it contains — not even a parse error, which names a line only. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust/trust.h"

int posture_read(const char *path, char **buf, size_t *len, char *why, size_t whylen)
{
	struct stat st, fst;
	size_t got = 0;
	char *b;
	int fd;

	*buf = NULL;
	*len = 0;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return -ENOENT;
		snprintf(why, whylen, "cannot be examined: %s", strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, whylen, "is a symbolic link: not followed, not read");
		return -ELOOP;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "is not a regular file: not read");
		return -EINVAL;
	}
	if (st.st_size > POSTURE_MAX_FILE_BYTES) {
		snprintf(why, whylen, "is larger than 1 MiB: not read");
		return -EFBIG;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		snprintf(why, whylen, "cannot be opened: %s", strerror(err));
		return -err;
	}
	/* Replaced between lstat and open: judge what was opened. */
	if (fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode) || fst.st_ino != st.st_ino ||
	    fst.st_dev != st.st_dev) {
		close(fd);
		snprintf(why, whylen, "changed while being examined: not read");
		return -EAGAIN;
	}
	b = malloc(POSTURE_MAX_FILE_BYTES + 2);
	if (!b) {
		close(fd);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = read(fd, b + got, POSTURE_MAX_FILE_BYTES + 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			close(fd);
			free(b);
			snprintf(why, whylen, "cannot be read: %s", strerror(err));
			return -err;
		}
		got += (size_t)r;
		if (r == 0 || got > POSTURE_MAX_FILE_BYTES)
			break;
	}
	close(fd);
	if (got > POSTURE_MAX_FILE_BYTES) {
		free(b);
		snprintf(why, whylen, "grew past 1 MiB while being read: not read");
		return -EFBIG;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

/* ---------------------------------------------------------------- JSON with comments */

static unsigned line_of(const char *buf, const char *at)
{
	unsigned line = 1;

	for (const char *p = buf; p < at; p++)
		line += *p == '\n';
	return line;
}

/* Blank out // and block comments outside strings (newlines kept, so line numbers
 * stay right). Returns a heap copy, or NULL with why set. */
static char *strip_comments(const char *buf, size_t len, char *why, size_t whylen)
{
	char *s = malloc(len + 1);
	bool in_str = false;

	if (!s) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	memcpy(s, buf, len);
	s[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\' && i + 1 < len)
				i++;
			else if (s[i] == '"')
				in_str = false;
		} else if (s[i] == '"') {
			in_str = true;
		} else if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
			while (i < len && s[i] != '\n')
				s[i++] = ' ';
		} else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
			size_t start = i;
			s[i++] = ' ';
			s[i++] = ' ';
			while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/')) {
				if (s[i] != '\n')
					s[i] = ' ';
				i++;
			}
			if (i + 1 >= len) {
				snprintf(why, whylen, "line %u: unterminated comment",
					 line_of(buf, buf + start));
				free(s);
				return NULL;
			}
			s[i] = s[i + 1] = ' ';
			i++;
		}
	}
	return s;
}

static cJSON *parse_jsonc(const char *buf, size_t len, char *why, size_t whylen)
{
	const char *end = NULL;
	char *s = strip_comments(buf, len, why, whylen);
	cJSON *root;

	if (!s)
		return NULL;
	root = cJSON_ParseWithLengthOpts(s, len, &end, false);
	if (!root)
		snprintf(why, whylen, "line %u: not valid JSON",
			 end && end >= s ? line_of(s, end) : 1);
	free(s);
	return root;
}

int posture_gemini_scan(const char *buf, size_t len, unsigned *found, char *why, size_t whylen)
{
	cJSON *root = parse_jsonc(buf, len, why, whylen);
	const cJSON *tools;

	*found = 0;
	if (!root)
		return -EINVAL;
	tools = cJSON_GetObjectItemCaseSensitive(root, "tools");
	if (cJSON_IsObject(tools) &&
	    cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(tools, "sandbox")))
		*found |= POSTURE_GEMINI_TOOLS_SANDBOX_OFF;
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "sandbox")))
		*found |= POSTURE_GEMINI_LEGACY_SANDBOX_OFF;
	cJSON_Delete(root);
	return 0;
}

int posture_cursor_scan(const char *buf, size_t len, bool *off, char *why, size_t whylen)
{
	cJSON *root = parse_jsonc(buf, len, why, whylen);
	const cJSON *type;

	*off = false;
	if (!root)
		return -EINVAL;
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	*off = cJSON_IsString(type) && strcmp(type->valuestring, "insecure_none") == 0;
	cJSON_Delete(root);
	return 0;
}

/* ---------------------------------------------------------------- the checks */

struct ctx {
	posture_emit_fn emit;
	void *arg;
	size_t n;
	const char *harness;
	const char *file; /* as shown: "~/.codex/config.toml" or an absolute path */
};

static void found(struct ctx *c, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void found(struct ctx *c, const char *fix, const char *fmt, ...)
{
	char problem[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(problem, sizeof(problem), fmt, ap);
	va_end(ap);
	c->emit(c->arg, c->harness, problem, fix);
	c->n++;
}

/* Read one settings file; NULL when absent, or when unreadable (then reported). */
static char *read_setting(struct ctx *c, const char *path, size_t *len)
{
	char why[256], *buf;
	int rc = posture_read(path, &buf, len, why, sizeof(why));

	if (rc == -ENOENT)
		return NULL;
	if (rc < 0) {
		found(c,
		      rc == -ELOOP ? "replace the link by the file itself, or remove it"
				   : "make it a regular file of at most 1 MiB, or remove it",
		      "%s %s, so its sandbox setting was not checked", c->file, why);
		return NULL;
	}
	return buf;
}

static void unparsable(struct ctx *c, const char *why)
{
	found(c, "fix the file's syntax (the harness cannot read it reliably either)",
	      "%s could not be parsed (%s), so its sandbox setting was not checked", c->file, why);
}

static void codex_hit(void *arg, unsigned line, bool in_profile)
{
	struct ctx *c = arg;

	if (in_profile)
		found(c, "remove the line, or set sandbox_mode = \"workspace-write\"",
		      "sandbox_mode = \"danger-full-access\" in a [profiles.NAME] table of %s "
		      "(line %u): codex runs that profile's commands without its sandbox",
		      c->file, line);
	else
		found(c, "remove the line, or set sandbox_mode = \"workspace-write\"",
		      "sandbox_mode = \"danger-full-access\" at the top level of %s (line %u): "
		      "codex runs commands without its sandbox",
		      c->file, line);
}

static void check_codex(struct ctx *c, const char *home, const char *(*get)(const char *))
{
	const char *ch = get("CODEX_HOME");
	char dir[4096], path[4200], shown[4200], why[256];
	size_t len;
	char *buf;

	c->harness = "codex";
	snprintf(dir, sizeof(dir), "%s/.codex", home ? home : "");
	if (ch && *ch && strcmp(ch, dir) != 0) {
		found(c, "unset CODEX_HOME unless you set it on purpose",
		      "CODEX_HOME is set to %s: codex reads its settings from there instead of "
		      "~/.codex (checked below)",
		      ch);
		snprintf(dir, sizeof(dir), "%s", ch);
		snprintf(shown, sizeof(shown), "$CODEX_HOME/config.toml");
	} else if (home) {
		snprintf(shown, sizeof(shown), "~/.codex/config.toml");
	} else {
		return;
	}
	snprintf(path, sizeof(path), "%s/config.toml", dir);
	c->file = shown;
	if (!(buf = read_setting(c, path, &len)))
		return;
	if (posture_codex_scan(buf, len, codex_hit, c, why, sizeof(why)) < 0)
		unparsable(c, why);
	free(buf);
}

static void check_gemini(struct ctx *c, const char *home, const char *(*get)(const char *))
{
	const char *env = get("GEMINI_SANDBOX");
	char path[4200], why[256];
	unsigned bits = 0;
	size_t len;
	char *buf;

	c->harness = "gemini";
	if (env && (strcasecmp(env, "false") == 0 || strcmp(env, "0") == 0))
		found(c, "unset GEMINI_SANDBOX, or set it to true, docker or podman",
		      "GEMINI_SANDBOX is false in the environment: gemini runs its tools without "
		      "its sandbox");
	if (!home)
		return;
	snprintf(path, sizeof(path), "%s/.gemini/settings.json", home);
	c->file = "~/.gemini/settings.json";
	if (!(buf = read_setting(c, path, &len)))
		return;
	if (posture_gemini_scan(buf, len, &bits, why, sizeof(why)) < 0)
		unparsable(c, why);
	if (bits & POSTURE_GEMINI_TOOLS_SANDBOX_OFF)
		found(c, "remove it, or set \"tools\": {\"sandbox\": true}",
		      "\"tools\": {\"sandbox\": false} in %s: gemini runs its tools without its "
		      "sandbox",
		      c->file);
	if (bits & POSTURE_GEMINI_LEGACY_SANDBOX_OFF)
		found(c, "remove it, or set \"tools\": {\"sandbox\": true}",
		      "\"sandbox\": false at the top level of %s (older settings layout): gemini "
		      "runs its tools without its sandbox",
		      c->file);
	free(buf);
}

static void check_cursor_file(struct ctx *c, const char *path, const char *shown)
{
	char why[256];
	bool off = false;
	size_t len;
	char *buf;

	c->file = shown;
	if (!(buf = read_setting(c, path, &len)))
		return;
	if (posture_cursor_scan(buf, len, &off, why, sizeof(why)) < 0)
		unparsable(c, why);
	if (off)
		found(c, "remove it, or set \"type\": \"workspace_readwrite\"",
		      "\"type\": \"insecure_none\" in %s: cursor runs agent commands without its "
		      "sandbox",
		      shown);
	free(buf);
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static void check_cursor(struct ctx *c, const char *home, const char *cwd)
{
	char user[4200], repo[4200];

	c->harness = "cursor";
	if (!home)
		return;
	snprintf(user, sizeof(user), "%s/.cursor/sandbox.json", home);
	check_cursor_file(c, user, "~/.cursor/sandbox.json");
	/* A repository's own sandbox.json takes priority over the user's. */
	if (!cwd)
		return;
	snprintf(repo, sizeof(repo), "%s/.cursor/sandbox.json", cwd);
	if (!same_file(user, repo))
		check_cursor_file(c, repo, "./.cursor/sandbox.json (this repository)");
}

static void check_opencode(struct ctx *c, const char *(*get)(const char *))
{
	const char *v = get("OPENCODE_PERMISSION");

	c->harness = "opencode";
	/* Its content is a permission policy and may hold anything: never shown. */
	if (v && *v)
		found(c, "unset it, or make sure it does not allow bash and edit without asking",
		      "OPENCODE_PERMISSION is set in the environment (content not shown): it "
		      "overrides opencode's permission settings");
}

size_t posture_check(const char *home, const char *cwd, const char *(*get)(const char *name),
		     posture_emit_fn emit, void *arg)
{
	struct ctx c = {emit, arg, 0, "", ""};

	if (home && home[0] != '/')
		home = NULL;
	check_codex(&c, home, get);
	check_gemini(&c, home, get);
	check_cursor(&c, home, cwd);
	check_opencode(&c, get);
	return c.n;
}
