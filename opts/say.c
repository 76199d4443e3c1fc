/* halo-run's own line on stderr (opts/opts.h): every subcommand says through it. */
#include <stdarg.h>
#include <stdio.h>

#include "opts/opts.h"

/* A whole line of ours may hold names from inside, some escaped already by the module
 * that made the message (policy_printable: a backslash doubled): here only what could
 * forge a line or drive the terminal (control bytes, DEL, bytes past ASCII) becomes
 * \xNN, so an escaped name is not escaped twice. */
void runner_say(const char *fmt, ...)
{
	char text[2048], out[4 * sizeof(text) + 1];
	size_t k = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (const unsigned char *s = (const unsigned char *)text; *s; s++)
		if (*s >= 0x20 && *s < 0x7f)
			out[k++] = (char)*s;
		else
			k += (size_t)snprintf(out + k, sizeof(out) - k, "\\x%02x", *s);
	out[k] = '\0';
	fprintf(stderr, "halo-run: %s\n", out);
}
