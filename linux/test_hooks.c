/* linux/'s test hooks: the one place a test may change how the launcher behaves.
 * Production never calls linux_test_hooks_set; the defaults are what halo-run does. */
#include <stddef.h>

#include "linux/linux_int.h"

static const struct linux_test_hooks defaults = {
    .force_remount = false,
    .proc_net_unix = "/proc/net/unix",
    .key_base = "/tmp",
};

static struct linux_test_hooks current = defaults;

const struct linux_test_hooks *linux_test_hooks(void)
{
	return &current;
}

void linux_test_hooks_set(const struct linux_test_hooks *h)
{
	current = h ? *h : defaults;
	if (!current.proc_net_unix)
		current.proc_net_unix = defaults.proc_net_unix;
	if (!current.key_base)
		current.key_base = defaults.key_base;
}
