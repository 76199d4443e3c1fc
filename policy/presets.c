/* Presets: named groups of domains, kept as data. Each entry says why it is there
 * (the service it serves), so a reviewer can judge the list line by line. */
#include <string.h>

#include "policy/policy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct policy_preset_entry vcs[] = {
    {"github.com", "GitHub web, git over HTTPS"},
    {"*.github.com", "GitHub API (api.github.com), codeload, uploads"},
    {"*.githubusercontent.com", "raw files, release assets, avatars"},
    {"gitlab.com", "GitLab web, git over HTTPS"},
    {"*.gitlab.com", "GitLab registry and pages hosts"},
    {"bitbucket.org", "Bitbucket web, git over HTTPS"},
    {"*.bitbucket.org", "Bitbucket API (api.bitbucket.org)"},
    {"codeberg.org", "Codeberg web, git over HTTPS"},
};

static const struct policy_preset_entry registries[] = {
    {"registry.npmjs.org", "npm registry"},
    {"registry.yarnpkg.com", "Yarn's npm mirror"},
    {"pypi.org", "Python package index (simple API, JSON API)"},
    {"files.pythonhosted.org", "Python package downloads"},
    {"crates.io", "Rust crate registry API"},
    {"index.crates.io", "Rust sparse index"},
    {"static.crates.io", "Rust crate downloads"},
    {"proxy.golang.org", "Go module proxy"},
    {"sum.golang.org", "Go checksum database"},
    {"rubygems.org", "Ruby gems"},
    {"repo.maven.apache.org", "Maven Central"},
    {"repo1.maven.org", "Maven Central (legacy name)"},
    {"api.nuget.org", "NuGet v3 API"},
};

static const struct policy_preset_entry models[] = {
    {"api.anthropic.com", "Anthropic API"},
    {"api.openai.com", "OpenAI API"},
    {"generativelanguage.googleapis.com", "Google Gemini API"},
};

static const struct policy_preset presets[] = {
    {"vcs", vcs, N(vcs)},
    {"package-registries", registries, N(registries)},
    {"model-providers", models, N(models)},
};

const struct policy_preset *policy_presets(size_t *n)
{
	*n = N(presets);
	return presets;
}

const struct policy_preset *policy_preset_find(const char *name)
{
	for (size_t i = 0; i < N(presets); i++)
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}
