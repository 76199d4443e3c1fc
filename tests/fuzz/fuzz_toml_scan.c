/* libFuzzer target for doctor's reading of Codex's config.toml (render_toml_scan, the
 * one TOML reader in its scan mode): whatever the input, 0 or -EINVAL with a reason
 * that names a line; every value shown has a whole path of real segments. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "render/render.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_kv(void *arg, const char *const *path, size_t n, unsigned line, const char *str)
{
	unsigned *lines = arg;

	CHECK((path == NULL) == (n == 0));
	for (size_t i = 0; i < n; i++)
		CHECK(path[i] != NULL);
	CHECK(line >= 1 && line <= *lines);
	if (str)
		(void)strlen(str);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct halo_err e = {{0}};
	unsigned lines = 1;
	int rc;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	rc = render_toml_scan((const char *)data, size, on_kv, &lines, &e);
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc < 0)
		CHECK(strncmp(e.msg, "line ", 5) == 0);
	return 0;
}
