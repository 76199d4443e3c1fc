/* libFuzzer target for learn/: the broker's notes as the sandbox sends them (the
 * paths come from inside), and a host from the first line. Invariants: every write
 * taken is absolute; the learned policy's YAML never breaks out of its quotes — when
 * it does not validate, only a writable root's value is at fault (the fuzzer's roots
 * are all accepted here, the real check being the validator itself). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/learn.h"
#include "tests/fuzz/fuzz_check.h"

static int accept_all(void *ctx, const char *root, char *why, size_t n)
{
	(void)ctx;
	(void)root;
	(void)why;
	(void)n;
	return 0;
}

static const char base[] = "egress:\n  default: deny\n  deniedDomains: [bad.test]\n";
static const struct policy_ctx pctx = {"/home/u", "/home/u", "/home/u/ws", NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct halo_policy *p;
	struct policy_managed m = {"base", base, sizeof(base) - 1, 'y'};
	struct learn_opts o = {size % 2 == 0, accept_all, NULL, "com\nco.uk\n*.ck\n!www.ck\n"};
	struct policy_diags d = {0};
	struct learn_record r;
	struct learn_plan pl;
	struct policy_host h;
	const char *nl = memchr(data, '\n', size);
	char *text = NULL;
	size_t len = 0;

	if (!p)
		CHECK(policy_load_managed(&m, NULL, 0, &pctx, &p, &d) == 0);
	learn_record_init(&r);
	if (nl && policy_host_parse((const char *)data, (size_t)(nl - (const char *)data), true, &h,
				    NULL, 0) == 0)
		learn_record_host(&r, LEARN_HOST_ALLOWED, h.text, (unsigned)(size % 65535) + 1,
				  "http", "", "", "");
	learn_record_writes_parse(&r, (const char *)data, size);
	for (size_t i = 0; i < r.n_writes; i++)
		CHECK(r.writes[i].path[0] == '/');
	if (learn_propose(p, &r, &o, &pl) == 0) {
		if (learn_emit(p, &r, &pl, &text, &len) == 0) {
			if (learn_validate(text, len, &pctx, &d) < 0)
				for (size_t i = 0; i < d.n_errors; i++)
					CHECK(strstr(d.errors[i], "writableRoots") != NULL);
			free(text);
		}
		learn_plan_free(&pl);
	}
	policy_diags_free(&d);
	learn_record_free(&r);
	return 0;
}
