/* The credential floor: protected paths that hold under every policy. A policy's
 * sandbox.protectedPaths adds to them and can never remove one; only an explicit
 * sandbox.allowRead carve-out makes part of one readable, and never part of a secret
 * store (keys, tokens, keyrings), except the settings files it names in `carve`.
 *
 * One table, in the order `halo-run policy` prints it. A "mixed" entry is a file or
 * directory that holds settings the tools need as well as secrets; with a sanitizer
 * its copy without the secret entries is shown inside instead of the real file. */
#include <stdio.h>
#include <string.h>

#include "policy/policy_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const ssh_carve[] = {"config", "known_hosts", NULL};
static const char *const gcloud_carve[] = {"configurations", "active_config", NULL};
static const char *const azure_carve[] = {"config", NULL};
static const char *const oci_carve[] = {"config", NULL};
static const char *const cloudflared_carve[] = {"config.yml", "config.yaml", NULL};

static const struct policy_floor_entry floor_entries[] = {
    {"~/.ssh", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, ssh_carve,
     "SSH private keys (config and known_hosts may be carved out)"},
    {"~/.gnupg", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "GPG private keys"},
    {"~/.password-store", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "pass(1) password store"},
    {"~/.local/share/keyrings", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "GNOME keyring"},
    {"~/.local/share/kwalletd", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "KDE wallet"},
    {"~/.aws", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "AWS CLI settings and credentials (config may be carved out)"},
    {"~/.aws/credentials", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "AWS access keys"},
    {"~/.aws/sso/cache", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "AWS SSO access tokens"},
    {"~/.aws/cli/cache", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "AWS CLI cached role credentials"},
    {"~/.azure", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, azure_carve, "Azure CLI token caches"},
    {"~/.config/gcloud", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, gcloud_carve,
     "Google Cloud credentials and tokens"},
    {"~/.kube", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Kubernetes contexts with user tokens and client keys"},
    {"~/.docker/config.json", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "container registry logins"},
    {"~/.docker/key.pem", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Docker TLS client key (DOCKER_CERT_PATH's default)"},
    {"~/.docker/contexts/tls", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Docker contexts' TLS client keys"},
    {"~/.docker/machine", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "docker-machine TLS keys"},
    {"~/.netrc", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "HTTP/FTP passwords (curl, git, pip)"},
    {"~/.git-credentials", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "git credential-store passwords"},
    {"~/.config/git/credentials", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "git credential-store passwords (its XDG place)"},
    {"~/.config/gh/hosts.yml", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "GitHub CLI OAuth tokens"},
    {"~/.config/hub", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "hub GitHub token"},
    {"~/.npmrc", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NPMRC, NULL,
     "npm registry settings and tokens (shown with the secret entries removed)"},
    {"~/.config/pnpm/rc", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NPMRC, NULL,
     "pnpm's own settings, which may hold registry tokens (shown with the secret entries "
     "removed)"},
    {"~/.yarnrc.yml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Yarn registry settings and tokens"},
    {"~/.pypirc", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL, "PyPI upload passwords"},
    {"~/.config/pip/pip.conf", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "pip index URLs, which may carry passwords"},
    {"~/.pip/pip.conf", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "pip index URLs, which may carry passwords (its older place)"},
    {"~/.gem/credentials", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "RubyGems API keys"},
    {"~/.config/composer/auth.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Composer registry tokens"},
    {"~/.composer/auth.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Composer registry tokens (its older place)"},
    {"~/.config/helm/repositories.yaml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Helm chart repositories with their passwords"},
    {"~/.cargo/credentials.toml", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "crates.io tokens"},
    {"~/.cargo/credentials", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "crates.io tokens (old name)"},
    {"~/.m2/settings.xml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Maven mirrors and server passwords"},
    {"~/.m2/settings-security.xml", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Maven master password"},
    {"~/.gradle/gradle.properties", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Gradle properties with repository passwords and signing keys"},
    {"~/.terraform.d/credentials.tfrc.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Terraform Cloud tokens"},
    {"~/.vault-token", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "HashiCorp Vault token"},
    {"~/.pulumi/credentials.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Pulumi access tokens"},
    {"~/.oci", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, oci_carve,
     "Oracle Cloud API keys (config may be carved out)"},
    {"~/.config/doctl/config.yaml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "DigitalOcean CLI contexts with access tokens"},
    {"~/.config/hcloud/cli.toml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Hetzner Cloud CLI contexts with API tokens"},
    {"~/.databrickscfg", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Databricks profiles with access tokens"},
    {"~/.s3cfg", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL, "s3cmd settings and secret keys"},
    {"~/.boto", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "boto and gsutil settings and secret keys"},
    {"~/.config/rclone/rclone.conf", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "rclone remotes with their passwords and tokens"},
    {"~/.config/configstore/firebase-tools.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Firebase CLI tokens"},
    {"~/.config/glab-cli/config.yml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "GitLab CLI settings and tokens"},
    {"~/.pgpass", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "PostgreSQL passwords"},
    {"~/.my.cnf", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "MySQL client settings and passwords"},
    {"~/.cache/huggingface/token", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Hugging Face access token"},
    {"~/.huggingface/token", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Hugging Face access token (its older place)"},
    {"~/.config/sops/age/keys.txt", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "sops' age private keys"},
    {"~/.local/share/atuin/key", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "atuin's key to the synced shell history"},
    {"~/.claude/.credentials.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Claude Code OAuth tokens"},
    {"~/.codex/auth.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "Codex CLI tokens"},
    {"~/.gemini/oauth_creds.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Gemini CLI OAuth tokens"},
    {"~/.mozilla", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Firefox profiles: cookies, saved passwords"},
    {"~/.config/google-chrome", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Chrome profiles: cookies, saved passwords"},
    {"~/.config/chromium", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Chromium profiles: cookies, saved passwords"},
    {"~/.config/BraveSoftware", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Brave profiles: cookies, saved passwords"},
    {"~/.config/microsoft-edge", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Edge profiles: cookies, saved passwords"},
    {"~/Library/Keychains", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "macOS keychains"},
    {"~/Library/Application Support/Google/Chrome", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Chrome profiles on macOS"},
    {"~/Library/Application Support/Firefox", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Firefox profiles on macOS"},
    {"~/Library/Cookies", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Safari and system cookies on macOS"},
    /* Review 22: more that was readable inside an ordinary workspace. */
    {"~/snap/firefox/common/.mozilla", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Firefox profiles (snap): cookies, saved passwords"},
    {"~/.var/app/org.mozilla.firefox/.mozilla", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Firefox profiles (flatpak): cookies, saved passwords"},
    {"~/.thunderbird", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Thunderbird profiles: saved passwords, mail"},
    {"~/snap/thunderbird/common/.thunderbird", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Thunderbird profiles (snap): saved passwords, mail"},
    {"~/.var/app/org.mozilla.Thunderbird/.thunderbird", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE,
     NULL, "Thunderbird profiles (flatpak): saved passwords, mail"},
    {"~/.config/vivaldi", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Vivaldi profiles: cookies, saved passwords"},
    {"~/.config/Signal", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Signal Desktop: the message database and its key"},
    {"~/.config/discord", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Discord: the account token (Local Storage)"},
    {"~/.config/github-copilot", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "GitHub Copilot OAuth tokens (hosts.json, apps.json)"},
    {"~/.config/containers/auth.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "podman, buildah and skopeo registry logins"},
    {"~/.nuget/NuGet/NuGet.Config", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "NuGet package sources with their passwords"},
    {"~/.config/NuGet/NuGet.Config", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "NuGet package sources with their passwords (mono's place)"},
    {"~/.bunfig.toml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "bun's settings, which may hold registry tokens"},
    {"~/.fly/config.yml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Fly.io CLI settings and access token"},
    {"~/.tsh", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL, "Teleport's keys and certificates"},
    {"~/.local/share/com.vercel.cli/auth.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Vercel CLI token"},
    {"~/.vercel/auth.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Vercel CLI token (its older place)"},
    {"~/.now/auth.json", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Vercel CLI token (its oldest place, now)"},
    {"~/.cloudflared", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, cloudflared_carve,
     "cloudflared's account certificate and tunnel credentials (config.yml may be carved out)"},
    {"~/.config/.wrangler/config", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Cloudflare wrangler OAuth tokens"},
    {"~/.wrangler/config", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Cloudflare wrangler OAuth tokens (its older place)"},
    {"~/.config/stripe/config.toml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "Stripe CLI profiles with API keys"},
    {"~/.sentryclirc", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "sentry-cli settings and auth token"},
    {"~/.mc/config.json", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "MinIO client aliases with their secret keys"},
    {"~/.config/ngrok/ngrok.yml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "ngrok settings and authtoken"},
    {"~/.ngrok2/ngrok.yml", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "ngrok settings and authtoken (its older place)"},
    {"~/.bitcoin/wallets", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Bitcoin Core wallets (private keys)"},
    {"~/.bitcoin/wallet.dat", POLICY_FLOOR_SECRET, POLICY_SANITIZE_NONE, NULL,
     "Bitcoin Core's older wallet (private keys)"},
    {".env*", POLICY_FLOOR_MIXED, POLICY_SANITIZE_NONE, NULL,
     "dotenv files in the workspace and writable roots"},
};

const struct policy_floor_entry *policy_floor(size_t *n)
{
	*n = N(floor_entries);
	return floor_entries;
}

const char *policy_floor_kind_name(enum policy_floor_kind k)
{
	return k == POLICY_FLOOR_SECRET ? "secret store" : "settings and secrets";
}

const char *policy_sanitizer_name(enum policy_sanitizer s)
{
	switch (s) {
	case POLICY_SANITIZE_NPMRC:
		return "npmrc";
	default:
		return "none";
	}
}

/* Is `abs` (normalised, absolute) inside the carve names of the floor entry whose
 * expanded form is `entry_abs`? */
bool policy_floor_carve_ok(const struct policy_floor_entry *f, const char *entry_abs,
			   const char *abs)
{
	char name[POLICY_PATH_MAX];

	for (size_t i = 0; f->carve && f->carve[i]; i++) {
		if ((size_t)snprintf(name, sizeof(name), "%s/%s", entry_abs, f->carve[i]) >=
		    sizeof(name))
			continue;
		if (policy_path_within(abs, name))
			return true;
	}
	return false;
}
