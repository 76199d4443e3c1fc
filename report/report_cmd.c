/* `halo-run report FILE.jsonl [--format text|markdown|json] [--fail-on-deny]`, and what
 * a run does at exit for CI: --summary-md FILE (the report of this run's records) and
 * --fail-on-deny (exit HALO_EXIT_DENIED when the command exited 0 but something was
 * denied). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "report/report.h"
#include "opts/opts.h"

static bool want_colour(int fd)
{
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");

	return isatty(fd) && !(nc && nc[0]) && !(term && strcmp(term, "dumb") == 0);
}

static int parse_format(const struct runner_opts *o, enum report_format *f)
{
	*f = REPORT_TEXT;
	if (o->format && report_format_parse(o->format, f) < 0) {
		fprintf(stderr, "halo-run: --format %s: unknown (text, markdown or json)\n",
			o->format);
		return HALO_EXIT_SETUP;
	}
	return 0;
}

static int read_file(struct report *rp, const char *path)
{
	FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	int rc;

	if (!in) {
		fprintf(stderr, "halo-run: report: %s: %s\n", path, strerror(errno));
		return HALO_EXIT_SETUP;
	}
	rc = report_read(rp, in);
	if (in != stdin)
		fclose(in);
	if (rc < 0) {
		fprintf(stderr, "halo-run: report: %s: %s\n", path, strerror(-rc));
		return HALO_EXIT_SETUP;
	}
	return 0;
}

static void say_denied(unsigned long long denied, const char *what)
{
	fprintf(stderr,
		"halo-run: --fail-on-deny: %s %llu denied egress connection%s; exit status %d\n",
		what, denied, denied == 1 ? "" : "s", HALO_EXIT_DENIED);
}

int runner_cmd_report(const struct runner_opts *o)
{
	enum report_format f;
	struct report rp;
	int rc;

	if (o->n_rest != 1) {
		fprintf(stderr, "halo-run: report takes one audit file (FILE.jsonl, or - for "
				"standard input)\n");
		return HALO_EXIT_SETUP;
	}
	if ((rc = parse_format(o, &f)) != 0)
		return rc;
	report_init(&rp);
	rc = read_file(&rp, o->rest[0]);
	if (rc == 0) {
		report_sort(&rp);
		if (report_print(&rp, f, f == REPORT_TEXT && want_colour(STDOUT_FILENO), stdout) <
		    0) {
			fprintf(stderr, "halo-run: report: could not write the report\n");
			rc = HALO_EXIT_SETUP;
		} else if (o->fail_on_deny && rp.denied) {
			say_denied(rp.denied, "the audit records");
			rc = HALO_EXIT_DENIED;
		}
	}
	report_free(&rp);
	return rc;
}

int runner_ci_check(const struct runner_opts *o)
{
	enum report_format f;

	if (o->format && parse_format(o, &f) != 0)
		return HALO_EXIT_SETUP;
	if (o->summary_md && !o->audit) {
		fprintf(stderr, "halo-run: --summary-md needs --audit FILE (the summary is made "
				"from this run's audit records)\n");
		return HALO_EXIT_SETUP;
	}
	if (o->summary_md && strcmp(o->summary_md, o->audit) == 0) {
		fprintf(stderr, "halo-run: --summary-md and --audit name the same file\n");
		return HALO_EXIT_SETUP;
	}
	return 0;
}

/* The run's command line in display form: words joined by spaces, quoted when they
 * hold a space or are empty. */
static void command_line(const struct runner_opts *o, char *out, size_t n)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < o->n_rest && len + 4 < n; i++) {
		const char *a = o->rest[i];
		bool q = !a[0] || strpbrk(a, " \t") != NULL;

		if (i)
			out[len++] = ' ';
		if (q)
			out[len++] = '\'';
		len += report_escape(a, strlen(a), out + len, n - len - (q ? 1 : 0));
		if (q)
			out[len++] = '\'';
		out[len] = '\0';
	}
}

/* This run's records: the audit from where it ended when the run began, read through
 * the name only if it still leads to the file halo-run wrote. */
static int read_run_records(struct report *rp, const char *path, int audit_fd, off_t start)
{
	struct stat a, b;
	FILE *in;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &a) < 0 || fstat(audit_fd, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino || lseek(fd, start, SEEK_SET) < 0) {
		close(fd);
		return -ESTALE;
	}
	if (!(in = fdopen(fd, "r"))) {
		close(fd);
		return -ENOMEM;
	}
	rc = report_read(rp, in);
	fclose(in);
	return rc;
}

/* Through the descriptor opened before the launch (runner/loop.c): the name may lead
 * elsewhere by now, the file cannot. Every failure (a full disk, a file-size limit)
 * is said and fails the run: a CI job must not pass without the report it asked for. */
static int write_summary(const struct runner_opts *o, int fd, struct report *rp)
{
	int dfd = dup(fd), err = 0;
	FILE *out = dfd >= 0 ? fdopen(dfd, "a") : NULL;

	if (!out) {
		err = errno;
		if (dfd >= 0)
			close(dfd);
	} else {
		if (report_print(rp, REPORT_MARKDOWN, false, out) < 0 || fflush(out) != 0)
			err = errno ? errno : EIO;
		if (fclose(out) != 0 && !err)
			err = errno ? errno : EIO;
	}
	if (!err)
		return 0;
	fprintf(stderr,
		"halo-run: --summary-md %s: could not write the report: %s; exit status %d\n",
		o->summary_md, strerror(err), HALO_EXIT_SETUP);
	return -EIO;
}

int runner_ci_finish(const struct runner_opts *o, const struct proxy *px, int audit_fd,
		     off_t audit_start, int summary_fd, int *status)
{
	struct proxy_stats ps = {0};
	struct report rp;
	bool failed = false;
	int rc;

	if (px)
		proxy_get_stats(px, &ps);
	if (o->fail_on_deny && *status == 0 && ps.denied) {
		say_denied(ps.denied, "the command exited 0, but the run had");
		*status = HALO_EXIT_DENIED;
		failed = true;
	} else if (o->fail_on_deny && *status == 0 && ps.refused) {
		/* Turned away before any decision (the connection cap): the command may have
		 * swallowed it as it swallows a denial, and what it wanted is unknown. */
		fprintf(stderr,
			"halo-run: --fail-on-deny: the command exited 0, but the run refused %zu "
			"egress connection%s at a proxy limit (limits.connections); exit status "
			"%d\n",
			ps.refused, ps.refused == 1 ? "" : "s", HALO_EXIT_DENIED);
		*status = HALO_EXIT_DENIED;
		failed = true;
	}
	if (!o->summary_md || audit_fd < 0 || summary_fd < 0)
		return 0;
	report_init(&rp);
	command_line(o, rp.command, sizeof(rp.command));
	rp.exit_status = *status;
	rp.failed_on_deny = failed;
	rc = read_run_records(&rp, o->audit, audit_fd, audit_start);
	if (rc < 0)
		fprintf(stderr,
			"halo-run: --summary-md: cannot read this run's records from %s: %s\n",
			o->audit, strerror(-rc));
	report_sort(&rp);
	errno = 0;
	rc = write_summary(o, summary_fd, &rp);
	report_free(&rp);
	if (rc < 0)
		*status = HALO_EXIT_SETUP;
	return rc;
}
