/* The system lookup run on the resolver threads; see resolve.h for the choice of
 * flags and how names are kept absolute. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#ifdef __GLIBC__
#include <arpa/nameser.h>
#include <resolv.h>
#endif

#include "proxy/resolve.h"

static int map_gai(int rc)
{
	switch (rc) {
	case EAI_NONAME:
#ifdef EAI_NODATA
	case EAI_NODATA:
#endif
#ifdef EAI_ADDRFAMILY
	case EAI_ADDRFAMILY:
#endif
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	default:
		return -EIO;
	}
}

static bool seen(const struct proxy_addr *out, size_t n, const struct proxy_addr *a)
{
	for (size_t i = 0; i < n; i++)
		if (out[i].family == a->family && memcmp(out[i].addr, a->addr, 16) == 0)
			return true;
	return false;
}

/* Keep the name absolute. glibc: the resolver state is per thread, and res_init()
 * reloads resolv.conf only when it changed, so doing this before every lookup also
 * covers a resolv.conf rewritten while we run. */
static const char *absolute(const char *name, char *buf, size_t len)
{
#ifdef __GLIBC__
	(void)buf;
	(void)len;
	if (res_init() == 0)
		_res.options &= ~(unsigned long)(RES_DNSRCH | RES_DEFNAMES);
	return name;
#else
	snprintf(buf, len, "%s.", name);
	return buf;
#endif
}

int proxy_lookup_system(const char *name, struct proxy_addr *out, size_t max, size_t *n)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	char buf[260];
	int rc;

	*n = 0;
	errno = 0;
	rc = getaddrinfo(absolute(name, buf, sizeof(buf)), NULL, &hints, &res);
	if (rc)
		return map_gai(rc);
	for (struct addrinfo *a = res; a && *n < max; a = a->ai_next) {
		struct proxy_addr pa = {0};

		if (a->ai_family == AF_INET && a->ai_addrlen >= sizeof(struct sockaddr_in)) {
			pa.family = AF_INET;
			memcpy(pa.addr, &((struct sockaddr_in *)a->ai_addr)->sin_addr, 4);
		} else if (a->ai_family == AF_INET6 &&
			   a->ai_addrlen >= sizeof(struct sockaddr_in6)) {
			pa.family = AF_INET6;
			memcpy(pa.addr, &((struct sockaddr_in6 *)a->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		if (!seen(out, *n, &pa))
			out[(*n)++] = pa;
	}
	freeaddrinfo(res);
	return *n ? 0 : -ENOENT;
}
