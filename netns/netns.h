/* netns/ — network namespace bring-up inside the sandbox: loopback up, and (egress
 * issue) the in-namespace proxy listeners passed to the supervisor. */
#ifndef HALO_NETNS_H
#define HALO_NETNS_H

/* Bring "lo" up in the current network namespace through rtnetlink (libnl-route-3).
 * Returns 0 or -errno. */
int netns_loopback_up(void);

#endif
