/* `halo-run policy render` and `halo-run policy import`: the files and the printing
 * around render/, which builds the text. Nothing here sends network traffic. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "hook/hook.h"
#include "render/render.h"
#include "runner/runner_int.h"

bool runner_harness_known(const char *name)
{
	return strcmp(name, "all") == 0 || render_adapter_find(name) != NULL;
}

static int harness_error(const char *name)
{
	char names[256];

	policy_harness_names(POLICY_HARNESS_RENDER, names, sizeof(names));
	fprintf(stderr, "halo-run: unknown harness '%s' (expected %s)\n", name ? name : "", names);
	return HALO_EXIT_SETUP;
}

/* Write one rendered file into dir, never through a symlink, replacing it. */
static int write_file(const char *dir, const struct render_file *f)
{
	char path[4096];
	size_t len = strlen(f->text);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, f->name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, f->text, len) != (ssize_t)len) {
		fprintf(stderr, "halo-run: --out: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return HALO_EXIT_SETUP;
	}
	if (close(fd) < 0) {
		fprintf(stderr, "halo-run: --out: %s: %s\n", path, strerror(errno));
		return HALO_EXIT_SETUP;
	}
	fprintf(stderr, "halo-run: wrote %s%s%s\n", path, f->install ? "; install it as " : "",
		f->install ? f->install : "");
	return 0;
}

static int emit(const struct runner_opts *o, const struct render_out *out)
{
	int rc = 0;

	for (size_t i = 0; !o->quiet && i < out->n_w; i++)
		fprintf(stderr, "halo-run: warning: %s: %s\n", out->harness, out->w[i].text);
	if (o->out_dir) {
		struct stat st;
		if (stat(o->out_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "halo-run: --out %s: not a directory\n", o->out_dir);
			return HALO_EXIT_SETUP;
		}
		for (size_t i = 0; i < out->n_files && !rc; i++)
			rc = write_file(o->out_dir, &out->files[i]);
		return rc;
	}
	for (size_t i = 0; i < out->n_files; i++) {
		if (out->n_files > 1)
			printf("# file: %s\n", out->files[i].name);
		fputs(out->files[i].text, stdout);
		if (!o->quiet && out->files[i].install)
			fprintf(stderr, "halo-run: install %s as %s\n", out->files[i].name,
				out->files[i].install);
	}
	return 0;
}

/* ---------------------------------------------------------------- --hook */

/* The hook's command line, as the harness's shell will read it: this binary and the
 * policy files by absolute path, each one shell word. NULL after saying why. */
static char *hook_command(const struct runner_opts *o)
{
	char self[4096], *q = NULL, *line = NULL;
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (k <= 0) {
		fprintf(stderr, "halo-run: --hook: cannot tell where halo-run itself is\n");
		return NULL;
	}
	self[k] = 0;
	if (hook_shell_quote(self, strlen(self), &q) < 0 ||
	    asprintf(&line, "%s hook --wrap --harness claude-code", q) < 0)
		line = NULL;
	free(q);
	for (size_t i = 0; line && i < o->n_policies; i++) {
		char abs[4096], *more = NULL;
		if (!realpath(o->policies[i], abs)) {
			fprintf(stderr, "halo-run: --policy %s: %s\n", o->policies[i],
				strerror(errno));
			free(line);
			return NULL;
		}
		if (hook_shell_quote(abs, strlen(abs), &q) < 0 ||
		    asprintf(&more, "%s --policy %s", line, q) < 0)
			more = NULL;
		free(q);
		free(line);
		line = more;
	}
	return line;
}

/* One hooks entry: {"matcher": M, "hooks": [{"type": "command", ...}]}. */
static bool hook_entry(cJSON *arr, const char *matcher, const char *cmd)
{
	cJSON *e = cJSON_CreateObject(), *hooks, *h;

	if (!e || !cJSON_AddItemToArray(arr, e))
		return cJSON_Delete(e), false;
	if (matcher && !cJSON_AddStringToObject(e, "matcher", matcher))
		return false;
	if (!(hooks = cJSON_AddArrayToObject(e, "hooks")) || !(h = cJSON_CreateObject()) ||
	    !cJSON_AddItemToArray(hooks, h))
		return false;
	return cJSON_AddStringToObject(h, "type", "command") &&
	       cJSON_AddStringToObject(h, "command", cmd) &&
	       cJSON_AddNumberToObject(h, "timeout", 10);
}

/* `policy render --harness claude-code --hook`: the settings snippet that installs
 * `halo-run hook --wrap` (PreToolUse for the tools it judges, SessionEnd), once the
 * policy has loaded and validated. */
static int render_hook(const struct runner_opts *o)
{
	cJSON *root = cJSON_CreateObject(), *hooks;
	struct runner_env re;
	char *cmd = NULL, *text = NULL;
	int rc;

	if (o->out_dir) {
		fprintf(stderr, "halo-run: --hook prints the settings to merge into yours; "
				"--out is not for it\n");
		cJSON_Delete(root);
		return HALO_EXIT_SETUP;
	}
	const char *dropped = runner_wrap_dropped_option(o, false);
	if (dropped) {
		fprintf(stderr,
			"halo-run: --hook: %s: the hook would run without it (hook --wrap carries "
			"only --policy); put it in the policy file\n",
			dropped);
		cJSON_Delete(root);
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_load_policy(o, false, &re)) != 0) {
		cJSON_Delete(root);
		return rc;
	}
	runner_env_release(&re);
	if (!(cmd = hook_command(o))) {
		cJSON_Delete(root);
		return HALO_EXIT_SETUP;
	}
	if ((hooks = cJSON_AddObjectToObject(root, "hooks")) &&
	    hook_entry(cJSON_AddArrayToObject(hooks, "PreToolUse"), hook_claude_code_matcher,
		       cmd) &&
	    hook_entry(cJSON_AddArrayToObject(hooks, "SessionEnd"), NULL, cmd))
		text = cJSON_Print(root);
	cJSON_Delete(root);
	free(cmd);
	if (!text) {
		fprintf(stderr, "halo-run: out of memory\n");
		return HALO_EXIT_SETUP;
	}
	printf("%s\n", text);
	free(text);
	if (!o->quiet)
		fprintf(stderr,
			"halo-run: merge into ~/.claude/settings.json, or managed-settings.json "
			"with allowManagedHooksOnly; leave Claude Code's own sandbox off for "
			"Bash (sandboxes do not nest)\n");
	return 0;
}

int runner_cmd_policy_render(const struct runner_opts *o)
{
	const struct render_adapter *a = o->harness ? render_adapter_find(o->harness) : NULL;
	struct render_opts ro = {.os = RENDER_OS_LINUX, .version = o->pin};
	struct render_out out;
	struct runner_env re;
	struct halo_err e = {{0}};
	int rc;

	if (o->n_rest != 1) {
		fprintf(stderr, "halo-run: policy render takes no operands (use --policy F)\n");
		return HALO_EXIT_SETUP;
	}
	if (!a)
		return o->harness
			   ? harness_error(o->harness)
			   : (fprintf(stderr, "halo-run: policy render needs --harness NAME\n"),
			      HALO_EXIT_SETUP);
	if (o->os && render_os_parse(o->os, &ro.os) < 0) {
		fprintf(stderr, "halo-run: --os %s: expected linux, macos or windows\n", o->os);
		return HALO_EXIT_SETUP;
	}
	if (o->render_proxy && o->render_hook) {
		fprintf(stderr, "halo-run: --proxy renders the harness's managed settings; "
				"--hook prints the hook's settings: give one of them\n");
		return HALO_EXIT_SETUP;
	}
	if (o->render_proxy &&
	    render_proxy_parse(o->render_proxy, &ro.proxy_http, &ro.proxy_socks, &e) < 0) {
		fprintf(stderr, "halo-run: %s\n", e.msg);
		return HALO_EXIT_SETUP;
	}
	if (o->render_hook) {
		char names[256];
		if (policy_harness_find(o->harness, POLICY_HARNESS_WRAP))
			return render_hook(o);
		policy_harness_names(POLICY_HARNESS_WRAP, names, sizeof(names));
		fprintf(stderr,
			"halo-run: --hook: hook --wrap needs a harness whose pre-tool hook can "
			"replace the tool's input without granting it: %s\n",
			names);
		return HALO_EXIT_SETUP;
	}
	if ((rc = runner_load_policy(o, false, &re)) != 0)
		return rc;
	if (render_policy(a, re.policy, &ro, &out, &e) < 0) {
		fprintf(stderr, "halo-run: %s\n", e.msg);
		rc = HALO_EXIT_SETUP;
	} else {
		rc = emit(o, &out);
	}
	render_out_free(&out);
	runner_env_release(&re);
	return rc;
}

/* ---------------------------------------------------------------- import */

static int read_input(const char *path, char **buf, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "halo-run: import: %s: %s\n", path,
			fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return HALO_EXIT_SETUP;
	}
	if (st.st_size > RENDER_IMPORT_MAX) {
		fprintf(stderr, "halo-run: import: %s: larger than %d bytes; refused\n", path,
			RENDER_IMPORT_MAX);
		close(fd);
		return HALO_EXIT_SETUP;
	}
	*buf = malloc((size_t)st.st_size + 1);
	n = *buf ? read(fd, *buf, (size_t)st.st_size + 1) : -1;
	close(fd);
	if (n < 0 || n > st.st_size) {
		fprintf(stderr, "halo-run: import: %s: %s\n", path,
			n < 0 ? strerror(errno) : "changed while read");
		free(*buf);
		return HALO_EXIT_SETUP;
	}
	*len = (size_t)n;
	return 0;
}

static bool exists(const char *abs)
{
	struct stat st;

	return stat(abs, &st) == 0;
}

int runner_cmd_policy_import(const struct runner_opts *o)
{
	struct policy_ctx ctx = {0};
	struct render_import_world w = {&ctx, exists, o->lossy};
	char home[4096];
	enum render_import_kind kind = RI_GUESS;
	struct render_import r = {0};
	struct halo_err e = {{0}};
	char *buf = NULL;
	size_t len = 0;
	int rc;

	char names[256];

	policy_harness_names(POLICY_HARNESS_IMPORT, names, sizeof(names));
	if (o->n_rest != 2 || o->n_policies) {
		fprintf(stderr,
			"halo-run: policy import takes one FILE: policy import FILE "
			"[--from KIND] (KIND: %s)\n",
			names);
		return HALO_EXIT_SETUP;
	}
	if (o->from && render_import_kind_parse(o->from, &kind) < 0) {
		fprintf(stderr, "halo-run: --from %s: expected %s\n", o->from, names);
		return HALO_EXIT_SETUP;
	}
	if (runner_pw_home(getuid(), home, sizeof(home)) < 0) {
		fprintf(stderr, "halo-run: uid %u has no home directory in the password database\n",
			(unsigned)getuid());
		return HALO_EXIT_SETUP;
	}
	/* The world `validate` checks the result in: the same homes. */
	ctx.pw_home = home;
	ctx.env_home = getenv("HOME") && getenv("HOME")[0] == '/' ? getenv("HOME") : NULL;
	if ((rc = read_input(o->rest[1], &buf, &len)) != 0)
		return rc;
	rc = render_import(buf, len, kind, &w, &r, &e);
	free(buf);
	/* Each deny entry the policy cannot hold, named: never printed as "dropped". */
	for (size_t i = 0; i < r.n_lost; i++)
		fprintf(stderr, "halo-run: import: cannot hold: %s\n", r.lost[i]);
	if (rc < 0) {
		fprintf(stderr, "halo-run: import: %s: %s\n", o->rest[1], e.msg);
		render_import_free(&r);
		return HALO_EXIT_SETUP;
	}
	for (size_t i = 0; i < r.n_subst; i++)
		fprintf(stderr, "halo-run: import: substituted (tighter): %s\n", r.subst[i]);
	for (size_t i = 0; !o->quiet && i < r.n_warnings; i++)
		fprintf(stderr, "halo-run: warning: %s: %s\n", render_import_kind_name(r.kind),
			r.warnings[i]);
	fputs(r.yaml, stdout);
	render_import_free(&r);
	return 0;
}

/* ---------------------------------------------------------------- check */

static bool egress_field(enum render_field f)
{
	return f == RF_MODE || f == RF_EGRESS_DEFAULT || f == RF_ALLOWED_DOMAINS ||
	       f == RF_PRESETS || f == RF_DENIED_DOMAINS || f == RF_GATEWAY ||
	       f == RF_ALLOW_PRIVATE;
}

static void check_one(const struct render_adapter *a, const struct runner_opts *o,
		      const struct halo_policy *p, const char *host, unsigned port, bool allow)
{
	struct render_opts ro = {.os = RENDER_OS_LINUX, .version = o->pin};
	struct render_out out;
	struct halo_err e = {{0}};
	char mech[512];
	bool h_allow;

	if (o->os && render_os_parse(o->os, &ro.os) < 0)
		ro.os = RENDER_OS_LINUX;
	h_allow = a->explain(p, &ro, host, port, mech, sizeof(mech));
	printf("harness %s: %s: %s\n", a->name, h_allow ? "allow" : "deny", mech);
	if (h_allow != allow)
		printf("  differs from halo-run (%s): run the command under halo-run for "
		       "halo-run's decision\n",
		       allow ? "allow" : "deny, Decide() or the address rule");
	if (render_policy(a, p, &ro, &out, &e) < 0)
		printf("  warning: %s\n", e.msg);
	for (size_t i = 0; i < out.n_w; i++)
		if (egress_field(out.w[i].field))
			printf("  warning: %s\n", out.w[i].text);
	render_out_free(&out);
}

void runner_check_harness(const struct runner_opts *o, const struct halo_policy *p,
			  const char *host, unsigned port, bool allow)
{
	for (size_t i = 0; i < render_n_adapters(); i++) {
		const struct render_adapter *a = render_adapter_at(i);
		if (strcmp(o->harness, "all") == 0 || render_adapter_find(o->harness) == a)
			check_one(a, o, p, host, port, allow);
	}
}
