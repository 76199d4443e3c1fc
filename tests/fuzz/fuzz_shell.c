/* libFuzzer target for the hook's shell-grammar reader and judge, its event reader and
 * its file tools' judgment of a path or a search glob:
 * any bytes must give a script whose words are consistent (the literal prefix within
 * the text, pipes pointing backwards), or a refusal with a reason; judging must end
 * with a verdict and a one-line reason. Everything is freed (LeakSanitizer watches). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook.h"
#include "tests/fuzz/fuzz_check.h"

static char *allowed[] = {"github.com", "*.github.com", "ok.example"};
static char *denied[] = {"pastebin.com"};
static char *protected_abs[] = {"/home/u/.ssh"};
static char *globs[] = {".env*"};
static const char *const guards[] = {".bashrc", ".vscode"};

/* The same policy from a session whose cwd is the home: its persistence set applies
 * (policy_home_set_hit, with a PATH naming directories under the home). */
static const struct hook_ctx *home_ctx(const struct hook_ctx *base)
{
	static struct hook_ctx c;

	c = *base;
	c.cwd = "/home/u";
	c.path_env = "/home/u/.local/bin:/usr/bin:/home/u/../x::rel";
	return &c;
}

static const struct hook_ctx *ctx(void)
{
	static struct halo_policy p;
	static struct hook_ctx c;
	static int built;

	if (!built) {
		p.mode = POLICY_MODE_WORKSPACE_WRITE;
		p.guard_persistence = 1;
		p.allowed_domains = (struct policy_list){allowed, 3, true};
		p.denied_domains = (struct policy_list){denied, 1, true};
		p.protected_abs = (struct policy_list){protected_abs, 1, true};
		p.protected_globs = (struct policy_list){globs, 1, true};
		CHECK(policy_index_build(&p) == 0);
		c = (struct hook_ctx){.policy = &p,
				      .cwd = "/home/u/ws",
				      .home = "/home/u",
				      .guard_names = guards,
				      .n_guard_names = 2};
		built = 1;
	}
	return &c;
}

static void check_word(const struct hook_word *w)
{
	CHECK(w->text != NULL);
	CHECK(w->lit <= strlen(w->text));
}

static void check_verdict(const struct hook_verdict *v)
{
	CHECK(v->outcome == HOOK_ALLOW || v->outcome == HOOK_BLOCK || v->outcome == HOOK_CANNOT);
	CHECK(v->outcome == HOOK_ALLOW || v->reason[0] != 0);
	CHECK(!strchr(v->reason, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	struct hook_script s;
	struct hook_verdict v;
	struct hook_event ev;
	char why[256] = "";

	if (size > 65536)
		return 0;
	if (hook_shell_parse(in, size, 0, &s) == 0) {
		for (size_t i = 0; i < s.n; i++) {
			const struct hook_cmd *c = &s.cmds[i];
			CHECK(c->pipe_from < (long)i);
			for (size_t k = 0; k < c->n_words; k++)
				check_word(&c->words[k]);
			for (size_t k = 0; k < c->n_assigns; k++)
				check_word(&c->assigns[k]);
			for (size_t k = 0; k < c->n_redirs; k++)
				check_word(&c->redirs[k].target);
		}
	} else {
		CHECK(s.err[0] != 0 || s.n == 0);
	}
	hook_script_free(&s);
	hook_check_command(ctx(), in, size, &v);
	check_verdict(&v);
	if (hook_event_parse(in, size, HOOK_HARNESS_ANY, &ev, why, sizeof(why)) == 0) {
		hook_event_judge(ctx(), &ev, &v);
		check_verdict(&v);
		hook_event_judge(home_ctx(ctx()), &ev, &v);
		check_verdict(&v);
	} else {
		CHECK(why[0] != 0);
	}
	hook_event_free(&ev);
	/* The bytes as a search glob and as a path (the file tools' judgment; braces
	 * recurse, globs meet protected names). */
	char *z = strndup(in, size);
	CHECK(z != NULL);
	hook_check_search(ctx(), "Glob", NULL, z, &v);
	check_verdict(&v);
	hook_check_search(ctx(), "Grep", "/home/u", z, &v);
	check_verdict(&v);
	hook_check_path(ctx(), "Write", z, true, &v);
	check_verdict(&v);
	free(z);
	return 0;
}
