/* libFuzzer target for the /proc/net/unix line parser (linux/unix_line.c): whatever a
 * local process binds a socket as, the parser returns NULL or an absolute path that
 * lies inside the line, holds no newline, and parses the same when given alone as the
 * Path column of a well-formed line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/unix_line.h"
#include "tests/fuzz/fuzz_check.h"

#define PREFIX "0000000000000000: 00000002 00000000 00010000 0001 01 1234 "

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), *again;
	const char *p, *q;
	size_t n;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	n = strlen(line);
	p = linux_unix_line_path(line);
	if (p) {
		CHECK(p >= line && p < line + n + 1);
		CHECK(p[0] == '/');
		CHECK(!strchr(p, '\n'));
		again = malloc(strlen(PREFIX) + strlen(p) + 2);
		CHECK(again != NULL);
		sprintf(again, "%s%s\n", PREFIX, p);
		q = linux_unix_line_path(again);
		CHECK(q && strcmp(q, p) == 0);
		free(again);
	}
	free(line);
	return 0;
}
