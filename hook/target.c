/* A host a tool or a command names, through policy_decide(), the one Decide(): the
 * sandbox's own loopback passes for a command (its own servers), a host's address the
 * proxy would refuse does not for a tool that runs on the host (a fetch). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hook/hook_int.h"

/* The sandbox's own loopback: a command talks to its own servers there without the
 * proxy, so neither does the hook ask Decide() about it. */
static bool is_loopback(const struct policy_host *h)
{
	if (h->kind == POLICY_HOST_NAME)
		return policy_loopback_name(h->text);
	return policy_addr_classify(h->kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6, h->addr) ==
	       POLICY_ADDR_LOOPBACK;
}

/* For a tool on the host (a fetch): an address the proxy would refuse after
 * resolution, or a name whose addresses are fixed and refused (localhost and the
 * names under it, the cloud metadata names). Its loopback is the host's own. */
static bool host_address_refused(const struct halo_policy *p, const struct policy_host *h,
				 enum policy_addr_class *cls)
{
	if (h->kind == POLICY_HOST_NAME)
		return policy_entry_address_refused(p, h->text, cls);
	return !policy_addr_permitted(p, h->kind == POLICY_HOST_IPV4 ? AF_INET : AF_INET6, h->addr,
				      cls);
}

void hook_target_text(struct hook_judge *j, const char *what, const char *text)
{
	const struct halo_policy *p = j->c->policy;
	struct policy_decision d;
	struct policy_host h;
	unsigned port;
	char why[160], rule[512], v6[POLICY_HOST_MAX + 3];

	if (hook_decided(j))
		return;
	/* A bare IPv6 address (/dev/tcp/::1/80, ssh ::1) is a host, not host:port. */
	if (strchr(text, ':') != strrchr(text, ':') && text[0] != '[' && !strstr(text, "://") &&
	    strlen(text) < sizeof(v6) - 2) {
		snprintf(v6, sizeof(v6), "[%s]", text);
		text = v6;
	}
	if (policy_target_parse(text, &h, &port, why, sizeof(why)) < 0) {
		hook_block(j, HOOK_BLOCK, "%s: '%.200s' is not a host that can be verified (%s)",
			   what, text, why);
		return;
	}
	if (policy_host_port_index(p, &h, port) >= 0)
		return;
	enum policy_addr_class cls = POLICY_ADDR_PUBLIC;
	if (j->host_side && host_address_refused(p, &h, &cls)) {
		hook_block(j, HOOK_BLOCK,
			   "%s -> %s: a %s address, which the proxy refuses (this tool runs on the "
			   "host, outside the sandbox; egress.hostPorts or allowPrivate would let "
			   "it)",
			   what, h.text, policy_addr_class_name(cls));
		return;
	}
	if (!j->host_side && is_loopback(&h))
		return;
	/* With the port when the text names one (host:port entries apply then); without,
	 * only the portless entries, as `halo-run check HOST` does. */
	policy_decide_port(p, h.text, strlen(h.text), port, &d);
	if (d.allow)
		return;
	policy_decision_rule(&d, rule, sizeof(rule));
	hook_block(j, HOOK_BLOCK, "%s -> %s: %s (egress policy; `halo-run check %s` explains)",
		   what, h.text, rule, h.text);
}

void hook_target(struct hook_judge *j, const char *what, const struct hook_word *w, size_t start,
		 size_t end)
{
	char *t;

	if (hook_decided(j) || end <= start)
		return;
	if (end > w->lit) {
		hook_block(j, HOOK_BLOCK,
			   "%s: the host in '%.200s' is not literal (a variable, a command "
			   "substitution or a glob), so it cannot be verified",
			   what, w->text);
		return;
	}
	if (!(t = strndup(w->text + start, end - start))) {
		hook_block(j, HOOK_CANNOT, "out of memory");
		return;
	}
	hook_target_text(j, what, t);
	free(t);
}
