/* Loopback bring-up: a new network namespace starts with "lo" down, so without this
 * step even the in-sandbox proxy would be unreachable.
 *
 * One RTM_NEWLINK request naming "lo" with IFF_UP in the change mask, answered by one
 * acknowledgement: the link is not fetched first (libnl only needs the old flags to
 * keep the bits outside the mask, and the mask holds IFF_UP alone). */
#include <errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <net/if.h>

#include "netns/netns.h"

int netns_loopback_up(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *lo = rtnl_link_alloc(), *change = rtnl_link_alloc();
	int rc = -NLE_NOMEM;

	if (!sk || !lo || !change)
		goto out;
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc < 0)
		goto out;
	/* No index: the kernel finds the link by the name the change carries. */
	rtnl_link_set_name(change, "lo");
	rtnl_link_set_flags(change, IFF_UP);
	rc = rtnl_link_change(sk, lo, change, 0);
out:
	if (change)
		rtnl_link_put(change);
	if (lo)
		rtnl_link_put(lo);
	if (sk)
		nl_socket_free(sk);
	/* libnl errors are its own small negative codes; map to one errno for callers. */
	return rc < 0 ? -EIO : 0;
}
