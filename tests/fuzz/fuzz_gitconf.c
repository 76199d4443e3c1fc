/* libFuzzer target for the check of git configs written inside the sandbox
 * (linux/gitconf.c): whatever the bytes, the check returns 0, -EACCES or -EINVAL with
 * a reason, and a config it accepts cannot hide what follows it: the same bytes with
 * an [alias] section appended are never accepted. The check of a change to a config
 * that existed at launch (linux_gitconf_check_change): the same bytes again are a
 * change it accepts whenever they are readable, and the bytes with the [alias]
 * section appended never are. The reader of what a config names
 * (policy_git_config_refs, the scan's and the hook's) cannot be made to miss a
 * core.hooksPath that follows any bytes either. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/gitconf.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz_check.h"

#define TAIL  "\n[alias]\n\tx = !sh\n"
#define HOOKS "\n\n[core]\n\thooksPath = /zz-fuzz\n"

static void last_hooks(void *ctx, int kind, const char *value)
{
	if (kind == POLICY_GITREF_HOOKS)
		snprintf(ctx, 64, "%s", value);
}

static void refs_cannot_hide(const uint8_t *data, size_t size)
{
	char last[64] = "", *more = malloc(size + sizeof(HOOKS));

	CHECK(more != NULL);
	policy_git_config_refs((const char *)data, size, last_hooks, last);
	memcpy(more, data, size);
	memcpy(more + size, HOOKS, sizeof(HOOKS) - 1);
	last[0] = '\0';
	policy_git_config_refs(more, size + sizeof(HOOKS) - 1, last_hooks, last);
	CHECK(strcmp(last, "/zz-fuzz") == 0);
	free(more);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[160], *more;
	const char *in = (const char *)data;
	int rc = linux_gitconf_check(in, size, why, sizeof(why));
	int same = linux_gitconf_check_change(in, size, in, size, why, sizeof(why), NULL, NULL);

	refs_cannot_hide(data, size);
	CHECK(rc == 0 || rc == -EACCES || rc == -EINVAL);
	CHECK(same == 0 || same == -EACCES);
	CHECK(rc != 0 || same == 0);
	CHECK(same == 0 ? why[0] == '\0' : why[0] != '\0');
	rc = linux_gitconf_check(in, size, why, sizeof(why));
	CHECK(rc == 0 ? why[0] == '\0' : why[0] != '\0');
	more = malloc(size + sizeof(TAIL));
	CHECK(more != NULL);
	memcpy(more, data, size);
	memcpy(more + size, TAIL, sizeof(TAIL) - 1);
	CHECK(linux_gitconf_check_change(in, size, more, size + sizeof(TAIL) - 1, why, sizeof(why),
					 NULL, NULL) != 0);
	if (rc == 0)
		CHECK(linux_gitconf_check(more, size + sizeof(TAIL) - 1, why, sizeof(why)) != 0);
	free(more);
	return 0;
}
