/* Loopback bring-up: a new network namespace starts with "lo" down, so without this
 * step even the in-sandbox proxy would be unreachable. */
#include <errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <net/if.h>

#include "netns/netns.h"

int netns_loopback_up(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *lo = NULL, *change = NULL;
	int rc;

	if (!sk)
		return -ENOMEM;
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc < 0)
		goto out;
	rc = rtnl_link_get_kernel(sk, 0, "lo", &lo);
	if (rc < 0)
		goto out;
	change = rtnl_link_alloc();
	if (!change) {
		rc = -NLE_NOMEM;
		goto out;
	}
	rtnl_link_set_flags(change, IFF_UP);
	rc = rtnl_link_change(sk, lo, change, 0);
out:
	if (change)
		rtnl_link_put(change);
	if (lo)
		rtnl_link_put(lo);
	nl_socket_free(sk);
	/* libnl errors are its own small negative codes; map to one errno for callers. */
	return rc < 0 ? -EIO : 0;
}
