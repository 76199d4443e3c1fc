/* Internal to render/'s TOML reader: the cursor and the lexical layer (toml_str.c)
 * that the document reader (toml.c) is built on. */
#ifndef HALO_RENDER_TOML_INT_H
#define HALO_RENDER_TOML_INT_H

#include "render/render_int.h"

#define TOML_DEPTH   32
#define TOML_KEY_MAX 1024

/* A dotted key, owned segments. `overflow`: deeper than TOML_DEPTH (scan only). */
struct keypath {
	char *seg[TOML_DEPTH];
	size_t n;
	bool overflow;
};

struct tr {
	const char *p, *end;
	unsigned line;
	struct halo_err *e;
	/* doctor's scan: the whole grammar is read (multi-line strings, dates, \e and
	 * \x escapes, duplicate keys), values are only shown to kv; import is strict. */
	bool scan;
	render_toml_kv_fn kv;
	void *arg;
	struct keypath table; /* the current [table] */
};

int toml_fail(struct tr *t, const char *what);
int toml_peek(const struct tr *t, size_t k);
void toml_blanks(struct tr *t);
bool toml_newline(struct tr *t);
/* Blanks, an optional comment, then a newline or the end of the file. */
int toml_end_of_line(struct tr *t);
/* Blanks, comments and newlines (inside arrays and inline tables). */
int toml_space(struct tr *t);
/* A string at p (a quote); `value`: a multi-line one is a value's (scan only), never
 * a key's. The result is malloc'd into *out. */
int toml_string(struct tr *t, bool value, char **out);

#endif
