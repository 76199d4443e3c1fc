/* Error and diagnostics helpers shared by every module. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

void halo_err_set(struct halo_err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

static void diags_push(char ***v, size_t *n, size_t *more, const char *fmt, va_list ap)
{
	char *s = NULL;
	char **grown;

	if (more && *n >= POLICY_DIAGS_MAX) {
		(*more)++;
		return;
	}

	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown || !s) {
		/* Out of memory while reporting: keep what we have, but never lose the
		 * fact that there was an error. */
		free(s);
		if (grown)
			*v = grown;
		if (*n == 0 && grown) {
			(*v)[0] = NULL;
			*n = 1;
		}
		return;
	}
	*v = grown;
	(*v)[(*n)++] = s;
}

void policy_diags_add_error(struct policy_diags *d, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	va_start(ap, fmt);
	diags_push(&d->errors, &d->n_errors, &d->n_errors_more, fmt, ap);
	va_end(ap);
}

void policy_diags_add_warning(struct policy_diags *d, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	va_start(ap, fmt);
	diags_push(&d->warnings, &d->n_warnings, NULL, fmt, ap);
	va_end(ap);
}

void policy_diags_free(struct policy_diags *d)
{
	for (size_t i = 0; i < d->n_errors; i++)
		free(d->errors[i]);
	for (size_t i = 0; i < d->n_warnings; i++)
		free(d->warnings[i]);
	free(d->errors);
	free(d->warnings);
	memset(d, 0, sizeof(*d));
}
