/* The sockets a session keeps (sup_calls.c judges each call's walk with them): those
 * its own commands bound, and host sockets that appeared since its start, masked in
 * its mount namespace there and then (linux_session_mask_sockets). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/sup_int.h"

/* A socket the session's own commands bound in the workspace since it started (a dev
 * server's): no way out, since what answers on it is inside. A fresh launch masks it
 * like any, not knowing who bound it; a session knows, by its namespace's socket table
 * (linux_session_own_socket): one dump per call, read at most once and only when an
 * entry is new, within a time budget. Once known a socket is kept, file and all:
 * nothing else can ever be bound to that inode. Kept up to a bound; past it, and for
 * a call with more new entries than that, refused as before (a command that left
 * thousands of dead sockets costs each call one bounded look, no more). */
#define SOCK_TABLE_MS 1000

/* Kept from now on: its own commands' socket, or a host's masked inside (one bound
 * there again is another inode, masked at the next call in turn). */
static bool keep(struct sup *s, const char *entry)
{
	char *e = strdup(entry), **g;

	if (!e || !(g = realloc(s->own_socks, (s->n_own_socks + 1) * sizeof(*g)))) {
		free(e);
		return false;
	}
	s->own_socks = g;
	s->own_socks[s->n_own_socks++] = e;
	return true;
}

bool sup_sock_known(const struct sup *s, const char *entry)
{
	for (size_t i = 0; i < s->n_own_socks; i++)
		if (strcmp(s->own_socks[i], entry) == 0)
			return true;
	return false;
}

bool sup_sock_own(struct sup *s, struct sock_check *k, const char *entry)
{
	if (sup_sock_known(s, entry))
		return true;
	if (s->n_own_socks >= SUP_MAX_OWN_SOCKETS)
		return false;
	if (!k->read) {
		int fd = linux_sandbox_diag_fd(s->sb);

		k->read = true;
		if (fd < 0 || netns_unix_files(fd, &k->bound, SOCK_TABLE_MS) < 0)
			return false;
	}
	if (!linux_session_own_socket(&k->bound, entry))
		return false;
	return keep(s, entry);
}

/* A host service's socket that appeared since the session started (a dev server
 * started on the host with its socket in the workspace, Docker Desktop's in the home)
 * is masked in the session, as a fresh launch masks it, and the call goes on (review
 * 9 S4: every call was refused until it was removed). Only one bound in the host's
 * own socket table (the supervisor's network namespace, read like the session's):
 * a socket its own commands bound is theirs (sup_sock_own), and one nobody holds (a
 * command's that ended, or bound elsewhere) is refused as before, since a mask over
 * it would leave the session's commands unable to remove it (EBUSY) and bind there
 * again. (Not a directory named halo-run/index made since, which a fresh launch masks
 * whole: a mask laid now leaves a process already in it free to use what the host
 * puts there later, unseen; review 18. It ends the session.) What cannot be masked
 * (not that file any more, past LINUX_SESSION_MASK_MAX a call, a kernel that
 * refuses) is refused as before. */
void sup_host_sockets_mask(struct sup *s, struct sock_check *k, char *const *prot, size_t n_prot)
{
	char *want[LINUX_SESSION_MASK_MAX];
	bool masked[LINUX_SESSION_MASK_MAX];
	struct netns_unix_files host = {NULL, 0};
	size_t n = 0;
	int fd = -1;
	bool looked = false;

	for (size_t i = 0; i < n_prot && n < LINUX_SESSION_MASK_MAX; i++) {
		if (!strstr(prot[i], LINUX_SESSION_SOCKET ":/") || sup_held(s->id, prot[i]) ||
		    sup_sock_own(s, k, prot[i]))
			continue;
		if (!looked) { /* (a table that cannot be read is empty: none masked) */
			looked = true;
			if ((fd = netns_diag_open()) >= 0)
				(void)netns_unix_files(fd, &host, SOCK_TABLE_MS);
		}
		if (linux_session_own_socket(&host, prot[i]))
			want[n++] = prot[i];
	}
	if (fd >= 0)
		close(fd);
	netns_unix_files_free(&host);
	if (!n || s->n_own_socks + n > SUP_MAX_OWN_SOCKETS ||
	    linux_session_mask_sockets(s->sb, want, n, masked) <= 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (masked[i])
			keep(s, want[i]);
}
