/* The credentials' expanded values and what responses are masked for: kept only in
 * this process's memory, wiped once the last request that needs them has gone (the
 * session's end), and never written anywhere. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

#ifdef PROXY_TLS

#include "proxy/tls_int.h"

bool tls_credential(const struct proxy_tls *t, const char *host, const char **header,
		    const char **value)
{
	size_t i;
	const struct policy_credential *c = policy_credential_for(t->policy, host, &i);

	if (!c || !t->values || !t->values[i])
		return false;
	*header = c->header;
	*value = t->values[i];
	return true;
}

bool tls_secret_patterns(const struct proxy_tls *t, const char *host, const char *const **pats,
			 const size_t **stems, size_t *n)
{
	size_t i;

	if (!policy_credential_for(t->policy, host, &i) || !t->secrets || !t->values[i])
		return false;
	*pats = t->secrets[i].pat;
	*stems = t->secrets[i].stem;
	*n = t->secrets[i].n;
	return true;
}

/* The ${VAR} parts of credential i worth masking on their own (see tls_secret). */
static int secret_parts(struct proxy_tls *t, size_t i, const char *(*lookup)(void *, const char *),
			void *arg)
{
	struct tls_secret *s = &t->secrets[i];
	size_t pos = 0;
	char name[128];

	const char *sp = strrchr(t->values[i], ' ');

	s->stem[s->n] = (sp ? (size_t)(sp - t->values[i]) + 1 : 0) + TLS_SECRET_PART_MIN;
	s->pat[s->n++] = t->values[i];
	while (s->n < PROXY_MASK_MAX_PATS &&
	       policy_credential_next_var(t->policy->creds[i].value, &pos, name, sizeof(name))) {
		const char *v = lookup(arg, name);

		if (!v || strlen(v) < TLS_SECRET_PART_MIN || strcmp(v, t->values[i]) == 0)
			continue;
		if (!(s->pat[s->n] = strdup(v)))
			return -ENOMEM;
		s->stem[s->n++] = TLS_SECRET_PART_MIN;
	}
	return 0;
}

int tls_values_expand(struct proxy_tls *t, const char *(*lookup)(void *, const char *), void *arg,
		      struct halo_err *e)
{
	const struct halo_policy *p = t->policy;
	char why[200], val[4096];

	t->values = calloc(p->n_creds ? p->n_creds : 1, sizeof(*t->values));
	t->secrets = calloc(p->n_creds ? p->n_creds : 1, sizeof(*t->secrets));
	if (!t->values || !t->secrets)
		return -ENOMEM;
	t->n_values = p->n_creds;
	for (size_t i = 0; i < p->n_creds; i++) {
		int rc = policy_credential_expand(p->creds[i].value, lookup, arg, val, sizeof(val),
						  why, sizeof(why));
		if (rc < 0) {
			halo_err_set(e, "egress.credentials[%zu] (%s): %s", i, p->creds[i].host,
				     why);
			return rc;
		}
		t->values[i] = strdup(val);
		explicit_bzero(val, sizeof(val));
		if (!t->values[i] || secret_parts(t, i, lookup, arg) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The owned parts of each secret (pat[0] is the value itself). */
static void wipe_parts(struct proxy_tls *t, bool release)
{
	for (size_t i = 0; t->secrets && i < t->n_values; i++)
		for (size_t k = 1; k < t->secrets[i].n; k++) {
			char *v = (char *)t->secrets[i].pat[k];

			explicit_bzero(v, strlen(v));
			if (release)
				free(v);
		}
}

void proxy_tls_wipe_values(struct proxy_tls *t)
{
	for (size_t i = 0; t && t->values && i < t->n_values; i++)
		if (t->values[i])
			explicit_bzero(t->values[i], strlen(t->values[i]));
	if (t)
		wipe_parts(t, false);
}

void tls_values_free(struct proxy_tls *t)
{
	wipe_parts(t, true);
	free(t->secrets);
	for (size_t i = 0; t->values && i < t->n_values; i++) {
		if (t->values[i])
			explicit_bzero(t->values[i], strlen(t->values[i]));
		free(t->values[i]);
	}
	free(t->values);
}

#endif
