/* Loopback bring-up: a new network namespace starts with "lo" down, so without this
 * step even the in-sandbox proxy would be unreachable.
 *
 * One RTM_NEWLINK request naming "lo" with IFF_UP in the change mask, answered by one
 * acknowledgement: the link is not fetched first (the mask holds IFF_UP alone, so
 * the kernel keeps every other flag as it is).
 *
 * Then, best effort, BIG TCP on this loopback (it is the sandbox's own, in its own
 * namespace; the host's is never touched): GSO and GRO packets up to 512 KiB for IPv4
 * and IPv6 instead of 64 KiB, so a stream between the command and halo-run's proxy
 * (or a server of its own) costs a quarter of the packets. Direct loopback bulk in a
 * fresh namespace on the development machine (kernel 6.18, 2 cores): ~2.8 GiB/s with
 * the defaults, ~5.5 GiB/s with these. A kernel that lacks the attributes (IPv4 BIG
 * TCP came in 6.3, IPv6 in 5.19) refuses or ignores the request; the loopback stays
 * up with its defaults either way, and nothing else depends on it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "netns/netns.h"
#include "netns/nl_int.h"

/* Newer than some installed headers: the kernel's numbers (uapi/linux/if_link.h). */
#define NETNS_IFLA_GSO_IPV4_MAX_SIZE 63
#define NETNS_IFLA_GRO_IPV4_MAX_SIZE 64
#define NETNS_BIG_TCP_SIZE	     524280 /* GSO_MAX_SIZE: lo's tso_max_size */

static const uint16_t big_tcp_attrs[] = {IFLA_GSO_MAX_SIZE, IFLA_GRO_MAX_SIZE,
					 NETNS_IFLA_GSO_IPV4_MAX_SIZE,
					 NETNS_IFLA_GRO_IPV4_MAX_SIZE};

/* RTM_NEWLINK on lo: up (when `up`), with the first n BIG TCP sizes. */
static int lo_request(bool up, size_t n)
{
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC,
				.ifi_index = (int)netns_nl_lo_index(),
				.ifi_flags = up ? IFF_UP : 0,
				.ifi_change = up ? IFF_UP : 0};
	struct netns_nlbuf m = {.len = 0};
	size_t at = netns_nl_msg(&m, RTM_NEWLINK, NLM_F_ACK, 1, &ifi, sizeof(ifi));
	uint32_t size = NETNS_BIG_TCP_SIZE;

	for (size_t i = 0; i < n; i++)
		netns_nl_attr(&m, big_tcp_attrs[i], &size, sizeof(size));
	netns_nl_msg_end(&m, at);
	return netns_nl_request(NETLINK_ROUTE, &m, 1);
}

static void loopback_big_tcp(void)
{
	/* Two tries: all four sizes, then the IPv6 pair alone (a kernel between 5.19 and
	 * 6.3 may refuse what it does not know). */
	for (size_t n = 4; n >= 2 && netns_nl_lo_index() > 0; n -= 2)
		if (lo_request(false, n) == 0)
			return;
}

/* Then, best effort too, the most a TCP socket of this namespace may autotune its send
 * buffer to (net.ipv4.tcp_wmem is per network namespace; the host's stays as it is).
 * A command that writes to many connections whose far end never reads (a tunnel to an
 * origin that does not read) parks each socket's whole send buffer in kernel memory
 * that its memory limit does not cover: ~2.8 MiB a connection with the host's
 * defaults (issue 33). NETNS_TCP_WMEM_MAX keeps it to 256 KiB; bulk to the proxy
 * measured no slower (tests/bench/proxy, the sandbox rows; faster if anything). A
 * setsockopt(SO_SNDBUF) of the command's own is bounded by the host's net.core.wmem_max, as
 * everywhere. */
static void loopback_tcp_wmem(void)
{
	char v[96];
	unsigned long lo = 4096, def = 16384, hi = 0;
	int fd = open("/proc/sys/net/ipv4/tcp_wmem", O_RDWR | O_CLOEXEC), n;
	ssize_t got;

	if (fd < 0)
		return; /* a read-only /proc/sys (a container runtime's): the defaults stay */
	got = read(fd, v, sizeof(v) - 1);
	if (got > 0) {
		v[got] = '\0';
		if (sscanf(v, "%lu %lu %lu", &lo, &def, &hi) != 3)
			hi = 0;
	}
	if (hi > NETNS_TCP_WMEM_MAX) { /* lower only, the minimum and default as they were */
		if (def > NETNS_TCP_WMEM_MAX)
			def = NETNS_TCP_WMEM_MAX;
		n = snprintf(v, sizeof(v), "%lu %lu %d", lo, def, NETNS_TCP_WMEM_MAX);
		if (pwrite(fd, v, (size_t)n, 0) != n) {
			/* refused: the defaults stay */
		}
	}
	close(fd);
}

/* Up and BIG TCP in one request where the kernel takes all four sizes (6.3 and
 * later); else up alone, and the sizes after, as far as it takes them (lo is index 1
 * in every namespace: netns_nl_lo_index). */
int netns_loopback_up(void)
{
	int rc = lo_request(true, 4);

	if (rc < 0 && (rc = lo_request(true, 0)) == 0)
		loopback_big_tcp();
	if (rc == 0)
		loopback_tcp_wmem();
	return rc;
}
