/* Who a client is, for the records of `halo-run proxy` (o.audit_peers): the address
 * and port it connected from, or for a unix socket the credentials the kernel took at
 * connect() (SO_PEERCRED: uid, gid, pid; the pid as it was then). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "proxy/proxy_int.h"

void proxy_peer_text(int fd, char *out, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN];

	out[0] = '\0';
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(out, n, "unknown");
		return;
	}
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)&ss;
		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(out, n, "%s:%u", a, ntohs(s->sin_port));
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)&ss;
		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(out, n, "[%s]:%u", a, ntohs(s->sin6_port));
	} else if (ss.ss_family == AF_UNIX) {
#ifdef SO_PEERCRED
		struct ucred uc;
		socklen_t ul = sizeof(uc);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) == 0) {
			snprintf(out, n, "unix:uid=%u,gid=%u,pid=%d", (unsigned)uc.uid,
				 (unsigned)uc.gid, (int)uc.pid);
			return;
		}
#endif
		snprintf(out, n, "unix");
	} else {
		snprintf(out, n, "family %d", (int)ss.ss_family);
	}
}
