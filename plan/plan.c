/* The plan's storage: steps (borrowed strings), layers and text lists (copied). An
 * allocation failure is remembered, not returned at every call, so that a builder
 * reads as a list of facts; plan_ok() says whether the plan is whole. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan/plan.h"

static const char *const op_names[PLAN_N_OPS] = {
    [PLAN_BIND_RO] = "bind-ro",
    [PLAN_BIND_RW] = "bind-rw",
    [PLAN_CACHE_BIND] = "cache-bind",
    [PLAN_TMPFS] = "tmpfs",
    [PLAN_DEV] = "dev",
    [PLAN_PROC] = "proc",
    [PLAN_PIN] = "pin",
    [PLAN_GUARD] = "guard",
    [PLAN_READONLY] = "readonly",
    [PLAN_CARVE] = "carve-out",
    [PLAN_SANITIZE] = "sanitized-copy",
    [PLAN_NAMES] = "own-file",
    [PLAN_SSH_CONFIG] = "ssh-config",
    [PLAN_MASK] = "mask",
    [PLAN_SOCKET] = "socket",
    [PLAN_SEAL] = "seal",
    [PLAN_REFUSE_CREATE] = "refuse-create",
    [PLAN_REFUSE_PREFIX] = "refuse-create-prefix",
};

const char *plan_op_name(enum plan_op op)
{
	return op < PLAN_N_OPS ? op_names[op] : "?";
}

void plan_env_names(struct halo_plan *p, char *const *envp)
{
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		int n = eq ? (int)(eq - envp[i]) : (int)strlen(envp[i]);
		plan_add(p, &p->env, "%.*s", n, envp[i]);
		/* HTTP_PROXY, https_proxy, ALL_PROXY, NO_PROXY...: how egress reaches the
		 * proxy (values stay out of the plan: they may hold the run's secret). */
		if (n >= 5 && strncasecmp(envp[i] + n - 5, "proxy", 5) == 0)
			plan_add(p, &p->egress.env, "%.*s", n, envp[i]);
	}
}

bool plan_op_is_layout(enum plan_op op)
{
	return op <= PLAN_PROC;
}

void plan_init(struct halo_plan *p, const char *platform)
{
	memset(p, 0, sizeof(*p));
	p->platform = platform;
}

void plan_text_free(struct plan_text *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

void plan_free(struct halo_plan *p)
{
	struct plan_text *texts[] = {&p->limits,       &p->env,	       &p->egress.listeners,
				     &p->egress.notes, &p->egress.env, &p->gaps,
				     &p->warnings,     &p->extra,      &p->pool};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		plan_text_free(texts[i]);
	if (p->release)
		p->release(p->release_arg);
	for (size_t i = 0; i < p->n_layers; i++) {
		free(p->layers[i].summary);
		plan_text_free(&p->layers[i].details);
	}
	free(p->steps);
	free(p->title);
	free(p->namespaces);
	memset(p, 0, sizeof(*p));
}

static void broken(struct halo_plan *p)
{
	p->oom = true;
}

int plan_ok(const struct halo_plan *p)
{
	return p->oom ? -ENOMEM : 0;
}

struct plan_step *plan_step_add(struct halo_plan *p, enum plan_op op, unsigned flags,
				const char *path, const char *src, const char *reason)
{
	if (p->oom)
		return NULL;
	if (p->n_steps == p->cap_steps) {
		size_t cap = p->cap_steps ? p->cap_steps * 2 : 32;
		struct plan_step *v = realloc(p->steps, cap * sizeof(*v));
		if (!v) {
			broken(p);
			return NULL;
		}
		p->steps = v;
		p->cap_steps = cap;
	}
	struct plan_step *s = &p->steps[p->n_steps++];
	*s = (struct plan_step){
	    .op = op, .flags = flags, .path = path, .src = src, .reason = reason};
	return s;
}

size_t plan_count(const struct halo_plan *p, enum plan_op op)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_steps; i++)
		n += p->steps[i].op == op;
	return n;
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

int plan_text_add(struct plan_text *t, const char *fmt, ...)
{
	va_list ap;
	char *s, **v;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	if (!s || !(v = realloc(t->v, (t->n + 1) * sizeof(*v)))) {
		free(s);
		return -ENOMEM;
	}
	t->v = v;
	t->v[t->n++] = s;
	return 0;
}

int plan_add(struct halo_plan *p, struct plan_text *t, const char *fmt, ...)
{
	va_list ap;
	char *s, **v;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	if (!s || !(v = realloc(t->v, (t->n + 1) * sizeof(*v)))) {
		free(s);
		broken(p);
		return -ENOMEM;
	}
	t->v = v;
	t->v[t->n++] = s;
	return 0;
}

const char *plan_str(struct halo_plan *p, const char *fmt, ...)
{
	va_list ap;
	char *s, **v;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	if (!s || !(v = realloc(p->pool.v, (p->pool.n + 1) * sizeof(*v)))) {
		free(s);
		broken(p);
		return NULL;
	}
	p->pool.v = v;
	p->pool.v[p->pool.n++] = s;
	return s;
}

int plan_set(char **field, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	if (!s)
		return -ENOMEM;
	free(*field);
	*field = s;
	return 0;
}

struct plan_layer *plan_layer_add(struct halo_plan *p, const char *name, const char *label,
				  bool required, bool available, const char *summary)
{
	struct plan_layer *l;

	if (p->n_layers == PLAN_MAX_LAYERS) {
		broken(p);
		return NULL;
	}
	l = &p->layers[p->n_layers];
	*l = (struct plan_layer){
	    .name = name, .label = label, .required = required, .available = available};
	if (summary && plan_set(&l->summary, "%s", summary) < 0) {
		broken(p);
		return NULL;
	}
	p->n_layers++;
	return l;
}

const struct plan_layer *plan_layer_find(const struct halo_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_layers; i++)
		if (strcmp(p->layers[i].name, name) == 0)
			return &p->layers[i];
	return NULL;
}
