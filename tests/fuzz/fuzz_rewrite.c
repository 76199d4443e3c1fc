/* libFuzzer target for `hook --wrap`'s rewrite (hook/rewrite.c): for any command, the
 * rewritten line read back as a shell reads it gives exactly the prefix words and the
 * command, byte for byte; a command holding a NUL is refused. Two readers check it:
 * an independent inverse of POSIX single quoting written here (the grammar bash
 * applies: '...' keeps every byte, \' outside quotes is a quote, an unquoted space
 * ends a word), and the hook's own shell reader (hook_shell_parse). The integration
 * test t_hook_wrap.sh feeds tricky commands through the real bash. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook.h"
#include "tests/fuzz/fuzz_check.h"

/* Prefix words with what a path or a name may hold. */
static const char *const pool[] = {
    "/usr/local/bin/halo-run",
    "--session",
    "hook-a.b_c",
    "--workspace",
    "/home/u/it's here",
    "/tmp/a b\nc",
    "$HOME",
    "`id`",
    "\\",
    "'",
    "--",
    "-c",
};

/* Read back one word starting at s[*i]; *out gets its bytes. 0, or -1 when the
 * text is not made of single-quoted runs and \' (what hook_wrap_line writes). */
static int unquote(const char *s, size_t n, size_t *i, char *out, size_t *olen)
{
	size_t k = 0, j = *i;

	if (j >= n)
		return -1;
	while (j < n && s[j] != ' ') {
		if (s[j] == '\'') {
			const char *q = memchr(s + j + 1, '\'', n - j - 1);
			if (!q)
				return -1;
			size_t len = (size_t)(q - (s + j + 1));
			memcpy(out + k, s + j + 1, len);
			k += len;
			j += len + 2;
		} else if (s[j] == '\\' && j + 1 < n && s[j + 1] == '\'') {
			out[k++] = '\'';
			j += 2;
		} else {
			return -1; /* an unquoted byte: the shell would interpret it */
		}
	}
	*olen = k;
	*i = j < n ? j + 1 : j;
	return 0;
}

/* The hook's reader takes a quoted NAME=value as an assignment (shell.c's
 * is_assignment counts quoted bytes as literal; bash does not): the words are
 * compared in order whichever list the reader put them in. */
static const struct hook_word *nth(const struct hook_cmd *c, size_t i)
{
	return i < c->n_assigns ? &c->assigns[i] : &c->words[i - c->n_assigns];
}

static void check_reader(const char *line, const char *const *pre, size_t np, const char *cmd,
			 size_t len)
{
	struct hook_script s = {0};

	if (hook_shell_parse(line, strlen(line), 0, &s) == 0) {
		CHECK(s.n == 1);
		const struct hook_cmd *c = &s.cmds[0];
		CHECK(c->n_redirs == 0 && c->n_assigns + c->n_words == np + 1);
		for (size_t i = 0; i < np; i++)
			CHECK(strcmp(nth(c, i)->text, pre[i]) == 0);
		CHECK(strlen(nth(c, np)->text) == len);
		CHECK(memcmp(nth(c, np)->text, cmd, len) == 0);
		CHECK(hook_word_literal(nth(c, np)));
	} else {
		CHECK(s.err[0] != 0);
	}
	hook_script_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *pre[4];
	size_t np = 0, i = 0, olen;
	char *line = NULL, *word;

	if (size > 0) { /* the first byte picks up to three prefix words */
		np = data[0] % 4;
		for (size_t k = 0; k < np; k++)
			pre[k] = pool[(data[0] / 4 + k * 5) % (sizeof(pool) / sizeof(pool[0]))];
		data++, size--;
	}
	const char *cmd = (const char *)data;
	int rc = hook_wrap_line(pre, np, cmd, size, &line);
	if (memchr(cmd, 0, size)) {
		CHECK(rc == -EINVAL && line == NULL);
		return 0;
	}
	if (rc == -ENOMEM)
		return 0;
	CHECK(rc == 0 && line);
	size_t n = strlen(line);
	CHECK(n >= size + 2);
	word = malloc(n + 1);
	CHECK(word);
	for (size_t k = 0; k < np; k++) {
		CHECK(unquote(line, n, &i, word, &olen) == 0);
		CHECK(olen == strlen(pre[k]) && memcmp(word, pre[k], olen) == 0);
	}
	CHECK(unquote(line, n, &i, word, &olen) == 0);
	CHECK(olen == size && memcmp(word, cmd, size) == 0);
	CHECK(i == n); /* nothing after the command's word */
	free(word);
	check_reader(line, pre, np, cmd, size);
	free(line);
	return 0;
}
