/* PLACEHOLDER (to be replaced by the address-classifier work). */
#include <errno.h>
#include <stdio.h>

#include "policy/policy.h"

enum policy_addr_class policy_addr_classify(int family, const uint8_t *addr)
{
	(void)family; (void)addr;
	return POLICY_ADDR_RESERVED;
}

const char *policy_addr_class_name(enum policy_addr_class c)
{
	(void)c;
	return "reserved";
}

int policy_cidr_parse(const char *text, struct policy_cidr *out, char *why, size_t whylen)
{
	(void)text; (void)out;
	snprintf(why, whylen, "not implemented");
	return -ENOSYS;
}

bool policy_cidr_match(const struct policy_cidr *c, int family, const uint8_t *addr)
{
	(void)c; (void)family; (void)addr;
	return false;
}

bool policy_addr_permitted(const struct halo_policy *p, int family, const uint8_t *addr,
			   enum policy_addr_class *cls)
{
	(void)p; (void)family; (void)addr;
	*cls = POLICY_ADDR_RESERVED;
	return false;
}
