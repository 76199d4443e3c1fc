/* Netlink requests as the sandbox's init makes them (rtnetlink for the loopback and
 * the routes, nf_tables for the capture and the explanations): a message built
 * attribute by attribute in a fixed buffer, sent on one socket per protocol that
 * stays open for the whole bring-up (netns_setup_done closes them). No libnl: the
 * handful of requests here do not need it, and every library costs the launch. */
#ifndef HALO_NETNS_NL_INT_H
#define HALO_NETNS_NL_INT_H

#include <stddef.h>
#include <stdint.h>

struct netns_nlbuf {
	_Alignas(4) uint8_t b[4096]; /* the explanations' batch is the longest */
	size_t len;
	int overflow; /* a request that did not fit is never sent (-E2BIG) */
};

/* Each returns the offset of what it started (for the _end calls). */
size_t netns_nl_attr(struct netns_nlbuf *m, uint16_t type, const void *data, size_t n);
void netns_nl_attr_be32(struct netns_nlbuf *m, uint16_t type, uint32_t v);
void netns_nl_attr_str(struct netns_nlbuf *m, uint16_t type, const char *s);
size_t netns_nl_nest(struct netns_nlbuf *m, uint16_t type);
void netns_nl_nest_end(struct netns_nlbuf *m, size_t at);
size_t netns_nl_msg(struct netns_nlbuf *m, uint16_t type, uint16_t flags, uint32_t seq,
		    const void *fam, size_t fam_len);
void netns_nl_msg_end(struct netns_nlbuf *m, size_t at);

/* Send m on the protocol's socket and wait for `acks` acknowledgements (each message
 * asked for one): 0 or the first error the kernel reports (-errno). A request that
 * failed leaves its socket closed, so that no late acknowledgement of it is read as
 * the next request's. */
int netns_nl_request(int proto, const struct netns_nlbuf *m, unsigned acks);

/* The index of "lo" in this namespace (asked once), 0 when there is none. */
unsigned netns_nl_lo_index(void);

#endif
