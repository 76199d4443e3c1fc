/* libFuzzer target for the one-off flags (policy/oneoff.c): each input line is one
 * flag, its first byte choosing which ('a' --allow, 'w' --writable, 'e' --env, 'p'
 * --host-port, 'm' --mode: the last one counts), the rest its value. They are layered over the
 * embedded default and validated as a launch does; whenever that is accepted, what the flags added
 * holds the validation's rules (ports in range and not halo-run's own, no loader variable in
 * env.set, no bare '*' allowed). Every allocation is freed (LeakSanitizer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_int.h"
#include "tests/fuzz/fuzz_check.h"

#define MAX_FLAGS 32

static const struct policy_ctx base_ctx = {
    .pw_home = "/home/u", .env_home = "/home/env", .workspace = "/home/u/ws"};

static void holds(const struct halo_policy *p)
{
	for (size_t i = 0; i < p->host_ports.n; i++)
		CHECK(p->host_ports.items[i] >= 1 &&
		      p->host_ports.items[i] != POLICY_PROXY_HTTP_PORT);
	for (size_t i = 0; i < p->n_env_set; i++)
		CHECK(strncmp(p->env_set[i].key, "LD_", 3) != 0);
	for (size_t i = 0; i < p->allowed_domains.n; i++)
		CHECK(strcmp(p->allowed_domains.items[i], "*") != 0);
	CHECK(p->source && strstr(p->source, "command line"));
	CHECK(p->mode != POLICY_MODE_UNSET); /* the embedded default's, or --mode's */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *v[4][MAX_FLAGS];
	size_t n[4] = {0};
	const char *mode = NULL;
	char *text, *save = NULL;
	struct policy_oneoff o;
	struct policy_diags d = {0};
	struct halo_policy *p = NULL;

	if (size > 16384 || !(text = malloc(size + 1)))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		const char *kinds = "awep", *k = strchr(kinds, l[0]);
		if (l[0] == 'm') {
			mode = l + 1;
			continue;
		}
		if (!l[0] || !k || n[k - kinds] == MAX_FLAGS)
			continue;
		v[k - kinds][n[k - kinds]++] = l + 1;
	}
	o = (struct policy_oneoff){v[0], n[0], v[1], n[1], v[2], n[2], v[3], n[3], mode};
	if (policy_load_with(NULL, NULL, 0, &base_ctx, &o, &p, &d) == 0 && policy_oneoff_any(&o))
		holds(p);
	policy_free(p);
	policy_diags_free(&d);
	free(text);
	return 0;
}
