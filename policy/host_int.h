/* Internal to policy/: the host grammar's helpers shared by host.c and pattern.c. */
#ifndef HALO_POLICY_HOST_INT_H
#define HALO_POLICY_HOST_INT_H

#include <stddef.h>

#include "policy/policy.h"

/* The reason into why (when given); returns -EINVAL. */
int policy_host_fail(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Refuse NUL, non-ASCII, whitespace and control bytes, naming the first and its offset. */
int policy_host_scan_bytes(const unsigned char *s, size_t len, char *why, size_t whylen);

/* A decimal port, 1-65535, no sign, no leading zero. */
int policy_host_parse_port(const char *p, size_t n, unsigned *port, char *why, size_t whylen);

#endif
