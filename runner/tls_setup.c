/* TLS termination at launch (egress.credentials, egress.requestRules): the
 * credentials' ${NAME}s read from the caller's environment (a missing one stops the
 * launch, naming it), the run's CA made by the proxy module once the sandbox's init
 * exists (so its key is only ever in this process: init was cloned before), and the
 * CA made trusted inside without flags: a bundle on the sandbox's sealed /run and the
 * variables each tool reads. Nothing happens, and nothing is paid, for a policy
 * without credentials or request rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/runner_int.h"
#ifndef RUNNER_MACOS
#include "linux/linux.h"
#endif

static struct proxy_tls *tls;
static char *ca_pem, *bundle_pem;
static unsigned char *jvm_store;
static size_t ca_len, bundle_len, jvm_len;
static const struct halo_policy *scrub_policy;
static bool wanted; /* the policy terminates some host (--dry-run too: the plan's names) */
static bool jvm;    /* a JVM may run: its trust store is made with the CA */

struct proxy_tls *runner_tls(void)
{
	return tls;
}

static const char *caller_env(void *arg, const char *name)
{
	(void)arg;
	return getenv(name);
}

#ifndef RUNNER_MACOS
#define BUNDLE LINUX_CA_BUNDLE_PATH
#define CACERT LINUX_CA_CERT_PATH
#else
#define BUNDLE ""
#define CACERT ""
#endif

/* Who reads what (README table). Values: the bundle (system roots + the run's CA), or
 * the CA alone where a tool adds it to its own roots. */
static const struct policy_kv tls_vars[] = {
    {"SSL_CERT_FILE", BUNDLE},	     /* OpenSSL's default (python ssl, urllib, ruby,
				      * wget built on OpenSSL), Go's crypto/x509, uv */
    {"CURL_CA_BUNDLE", BUNDLE},	     /* the curl tool */
    {"GIT_SSL_CAINFO", BUNDLE},	     /* git over https (libcurl) */
    {"PIP_CERT", BUNDLE},	     /* pip */
    {"REQUESTS_CA_BUNDLE", BUNDLE},  /* python requests (and tools built on it) */
    {"NODE_EXTRA_CA_CERTS", CACERT}, /* node (https, tls), bun: added to the roots */
    {"npm_config_cafile", BUNDLE},   /* npm and pnpm (their agent ignores the above) */
    {"YARN_CA_FILE_PATH", BUNDLE},   /* Yarn 2+ */
    {"CARGO_HTTP_CAINFO", BUNDLE},   /* cargo */
    {"DENO_CERT", CACERT},	     /* deno: added to the roots */
    {"AWS_CA_BUNDLE", BUNDLE},	     /* the AWS CLI and SDKs */
};

const char *runner_tls_java_options(void)
{
#ifndef RUNNER_MACOS
	if (wanted && jvm) /* the store itself is made after the clone, with the CA */
		return "-Djavax.net.ssl.trustStore=" LINUX_CA_JVM_PATH
		       " -Djavax.net.ssl.trustStoreType=PKCS12"
		       " -Djavax.net.ssl.trustStorePassword=" PROXY_TLS_JVM_STORE_PASSWORD;
#endif
	return NULL;
}

size_t runner_tls_env(struct policy_kv *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; wanted && i < sizeof(tls_vars) / sizeof(tls_vars[0]) && n < max; i++)
		out[n++] = tls_vars[i];
	return n;
}

#ifndef RUNNER_MACOS
/* In the sandbox's init: its copy of the credentials' values, and of the caller's
 * variables they came from, wiped in place (no allocation: see linux.h). */
static void child_scrub(void)
{
	const struct halo_policy *p = scrub_policy;

	proxy_tls_wipe_values(tls);
	for (size_t i = 0; p && i < p->n_creds; i++) {
		char name[128];
		size_t pos = 0;

		while (policy_credential_next_var(p->creds[i].value, &pos, name, sizeof(name))) {
			char *v = getenv(name);
			if (v)
				memset(v, 0, strlen(v));
		}
	}
}
#endif

/* Tests only (t_tls.sh): $HALO_TEST_TLS_KEY_DIGESTS names a file that gets this
 * process's pid and the digests of the run's two private keys, so that the test can
 * look for the keys in the memory of every process (proxy_tls_key_digests). */
static void test_key_digests(void)
{
	const char *path = getenv("HALO_TEST_TLS_KEY_DIGESTS");
	unsigned char d[2][32];
	FILE *f;

	if (!path || proxy_tls_key_digests(tls, d[0], d[1]) < 0 || !(f = fopen(path, "we")))
		return;
	fprintf(f, "pid %d\n", (int)getpid());
	for (int k = 0; k < 2; k++) {
		fprintf(f, "%s ", k ? "leaf" : "ca");
		for (int i = 0; i < 32; i++)
			fprintf(f, "%02x", d[k][i]);
		fprintf(f, "\n");
	}
	fclose(f);
}

/* A JVM the command may start: JAVA_HOME, or java on the caller's PATH. Its trust
 * store costs the launch ~18 ms (every root re-encoded), so it is made only then. */
static bool jvm_present(void)
{
	const char *path = getenv("PATH");
	char dir[4096];

	if (getenv("JAVA_HOME"))
		return true;
	for (const char *p = path; p && *p;) {
		size_t n = strcspn(p, ":");

		if (n && n < sizeof(dir) - 6) {
			memcpy(dir, p, n);
			memcpy(dir + n, "/java", 6);
			if (access(dir, X_OK) == 0)
				return true;
		}
		p += n + (p[n] == ':');
	}
	return false;
}

/* The CA and the files the tools inside read. On Linux, called by the launcher once
 * the sandbox's init exists (linux.h, ca_make): init is a copy of this process, and a
 * key made before the clone would be in it too. */
static int make_ca(struct halo_err *e)
{
	if (proxy_tls_make_ca(tls, e) < 0 || proxy_tls_ca_pem(tls, &ca_pem, &ca_len, e) < 0 ||
	    proxy_tls_bundle(tls, &bundle_pem, &bundle_len, e) < 0 ||
	    (jvm && proxy_tls_jvm_store(tls, &jvm_store, &jvm_len, e) < 0))
		return -EINVAL;
	test_key_digests();
	return 0;
}

#ifndef RUNNER_MACOS
static int launch_make_ca(struct linux_ca_files *out, struct halo_err *e)
{
	int rc = make_ca(e);

	*out = (struct linux_ca_files){ca_pem, bundle_pem, (const char *)jvm_store,
				       ca_len, bundle_len, jvm_len};
	return rc;
}
#endif

int runner_tls_prepare(const struct runner_opts *o, const struct halo_policy *p, runner_launch *l)
{
	struct halo_err e = {{0}};

	(void)l;
	wanted = policy_tls_wanted(p);
	if (!wanted || o->dry_run)
		return 0;
	/* The credentials now: a missing ${NAME} stops the launch before anything runs. */
	jvm = jvm_present();
	if (proxy_tls_prepare(p, caller_env, NULL, &tls, &e) < 0
#ifdef RUNNER_MACOS
	    || make_ca(&e) < 0
#endif
	) {
		fprintf(stderr, "halo-run: %s\n", e.msg);
		runner_tls_release();
		return HALO_EXIT_SETUP;
	}
#ifndef RUNNER_MACOS
	l->ca_make = launch_make_ca;
	l->child_scrub = child_scrub;
#endif
	scrub_policy = p;
	return 0;
}

void runner_tls_release(void)
{
	proxy_tls_free(tls);
	tls = NULL;
	free(ca_pem);
	free(bundle_pem);
	free(jvm_store);
	ca_pem = bundle_pem = NULL;
	jvm_store = NULL;
	ca_len = bundle_len = jvm_len = 0;
	wanted = jvm = false;
}
