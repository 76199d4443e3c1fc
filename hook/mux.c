/* tmux runs shell commands for several subcommands (new-session, new-window,
 * split-window, respawn-*, run-shell, display-popup) and types keys into a running
 * shell (send-keys): each is judged as the shell command it becomes. The server
 * may run outside the sandbox, so these are judged like the command itself. */
#include <string.h>

#include "hook/hook_int.h"

struct mux_sub {
	const char *names[2];
	const char *vals; /* its short options that take a value */
	bool keys;	  /* send-keys: the words are keys typed into a shell */
};

static const struct mux_sub subs[] = {
    {{"new-session", "new"}, "cefFnstxy", false},
    {{"new-window", "neww"}, "ceFnt", false},
    {{"split-window", "splitw"}, "ceFlt", false},
    {{"respawn-pane", "respawnp"}, "cet", false},
    {{"respawn-window", "respawnw"}, "cet", false},
    {{"run-shell", "run"}, "dt", false},
    {{"display-popup", "popup"}, "bcdehsStTwxy", false},
    {{"send-keys", "send"}, "NtT", true},
};

static const struct mux_sub *find_sub(const char *w)
{
	for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++)
		if (!strcmp(w, subs[k].names[0]) || !strcmp(w, subs[k].names[1]))
			return &subs[k];
	return NULL;
}

/* A key name (Enter, C-c, M-x, F1, BSpace), not text typed. */
static bool key_name(const char *w)
{
	if ((w[0] == 'C' || w[0] == 'M' || w[0] == 'S') && w[1] == '-' && w[2])
		return true;
	if (!(w[0] >= 'A' && w[0] <= 'Z') || !w[1])
		return false;
	for (size_t k = 1; w[k]; k++)
		if (!((w[k] >= 'a' && w[k] <= 'z') || (w[k] >= 'A' && w[k] <= 'Z') ||
		      (w[k] >= '0' && w[k] <= '9')))
			return false;
	return true;
}

bool hook_mux_check(struct hook_judge *j, const char *base, const struct hook_word *argv,
		    size_t argc)
{
	const struct mux_sub *sub;
	size_t i = 1, end = argc;

	if (strcmp(base, "tmux"))
		return false;
	for (; i < argc && argv[i].text[0] == '-' && argv[i].text[1]; i++) {
		const char *a = argv[i].text;
		if (!strcmp(a, "-c") && i + 1 < argc) /* tmux -c CMD: runs CMD in a shell */
			return hook_judge_text(j, "tmux", &argv[i + 1]), true;
		if (strchr("LSfT", a[1]) && !a[2])
			i++;
	}
	if (i >= argc || !(sub = find_sub(argv[i].text)))
		return true;
	for (i++; i < argc && argv[i].text[0] == '-' && argv[i].text[1]; i++) {
		const char *a = argv[i].text;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		size_t k = strcspn(a + 1, sub->vals) + 1;
		if (a[k] && !a[k + 1])
			i++; /* -t TARGET */
	}
	if (sub->keys) { /* each piece of text typed is judged as a command line */
		for (; i < end && !hook_decided(j); i++)
			if (!key_name(argv[i].text))
				hook_judge_text(j, "tmux send-keys", &argv[i]);
	} else if (i < end) {
		hook_judge_joined(j, "tmux", argv, i, end);
	}
	return true;
}
