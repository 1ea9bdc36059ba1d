/*
 * A sweep set up from text, as maskkit sweep's options give it: the lists
 * of patterns (LABEL=MASK names the rows), kernels and normalisations
 * parsed and checked, and the backend chosen, checked against the dtype,
 * head dimension and kernels asked, and configured on its device.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sweep.h"
#include "par.h"

/* Splits a comma-separated list in place; commas inside parentheses belong
 * to an item ("local(w=2,dilation=3)"). */
static int setup_split(char *buf, const char *param, const char **items, size_t *count)
{
	char *p = buf;

	*count = 0;
	for (;;) {
		char *comma = p;
		int depth = 0;
		for (; *comma && (*comma != ',' || depth > 0); comma++)
			depth += (*comma == '(') - (*comma == ')');
		bool last = !*comma;
		*comma = '\0';
		if (!*p)
			return mk_error_set(MK_EINVAL, "empty item in the list"), mk_error_param(param);
		if (*count == MK_SWEEP_MAX_LIST)
			return mk_error_set(MK_EINVAL, "more than %d items", MK_SWEEP_MAX_LIST),
			       mk_error_param(param);
		items[(*count)++] = p;
		if (last)
			return MK_OK;
		p = comma + 1;
	}
}

/* "LABEL=MASK": a name for the rows.  An expression has no '=' outside
 * parentheses (local(w=3)), so one before any '(' is always meant as a
 * label, and a label that is not a plain word is refused as such rather
 * than parsed as an expression (which would blame an "unknown pattern"). */
static int setup_label(char *item, const char **mask, const char **label)
{
	size_t eq = strcspn(item, "=("), w = strspn(item, "abcdefghijklmnopqrstuvwxyz"
						     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.");
	*mask = item;
	*label = NULL;
	if (item[eq] != '=')
		return MK_OK;
	if (eq == 0 || w < eq || !item[eq + 1])
		return mk_error_set(MK_EINVAL, "'%s': LABEL=MASK takes a LABEL of letters, digits, "
				    "'_', '-' and '.', and a MASK after the '='", item),
		       mk_error_param("patterns");
	item[eq] = '\0';
	*label = item;
	*mask = item + eq + 1;
	return MK_OK;
}

/* A pattern the sweep varies, or any mask (one point): refused only when
 * it does not parse, with the parser's reason. */
static int setup_check_pattern(const char *name)
{
	mk_expr *e = NULL;
	const char *msg, *at;
	char copy[256];

	if (mk_sweep_param(name))
		return MK_OK;
	if (mk_expr_parse(name, &e) == MK_OK) {
		mk_expr_free(e);
		return MK_OK;
	}
	/* the parser's "did you mean", without its column */
	msg = mk_error();
	at = strstr(msg, "unknown pattern");
	snprintf(copy, sizeof copy, "%s", at ? at : msg);
	if (at) /* it names the word already */
		mk_error_set(MK_EINVAL, "%s", copy);
	else
		mk_error_set(MK_EINVAL, "'%s': %s", name, copy);
	return mk_error_param("patterns");
}

static int setup_patterns(mk_sweep_lists *l, const char *list)
{
	size_t n;
	int ret;

	if (!(l->buf[0] = strdup(list)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = setup_split(l->buf[0], "patterns", l->patterns, &n)))
		return ret;
	for (size_t p = 0; p < n; p++)
		if ((ret = setup_label((char *)l->patterns[p], &l->patterns[p], &l->labels[p])) ||
		    (ret = setup_check_pattern(l->patterns[p])))
			return ret;
	/* rows are named by label, else by pattern: two of one name could not
	 * be told apart in any table or plot */
	for (size_t p = 0; p < n; p++)
		for (size_t q = 0; q < p; q++) {
			const char *a = l->labels[q] ? l->labels[q] : l->patterns[q];
			const char *b = l->labels[p] ? l->labels[p] : l->patterns[p];
			if (!strcmp(a, b))
				return mk_error_set(MK_EINVAL, "'%s' names two of them ('%s' and '%s'): "
						    "give each its own label (LABEL=MASK)", a,
						    l->patterns[q], l->patterns[p]),
				       mk_error_param("patterns");
		}
	l->npatterns = n;
	return MK_OK;
}

int mk_sweep_lists_parse(const char *patterns, const char *kernels, const char *norms,
			 mk_sweep_lists *l, mk_sweep_opts *o)
{
	const char *names[MK_SWEEP_MAX_LIST];
	size_t count;
	int ret;

	memset(l, 0, sizeof *l);
	if ((ret = setup_patterns(l, patterns)))
		return ret;
	if (!(l->buf[1] = strdup(kernels)) || !(l->buf[2] = strdup(norms)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = setup_split(l->buf[1], "kernels", names, &count)))
		return ret;
	o->kernels = 0;
	for (size_t k = 0; k < count; k++) {
		mk_attn_kernel kern;
		if ((ret = mk_attn_kernel_parse(names[k], &kern)))
			return ret;
		o->kernels |= 1u << kern;
	}
	if ((ret = setup_split(l->buf[2], "norm", names, &l->nnorms)))
		return ret;
	for (size_t k = 0; k < l->nnorms; k++)
		if ((ret = mk_norm_parse(names[k], &l->norms[k])))
			return ret;
	o->patterns = l->patterns;
	o->labels = l->labels;
	o->npatterns = l->npatterns;
	o->norms = l->norms;
	o->nnorms = l->nnorms;
	return MK_OK;
}

void mk_sweep_lists_release(mk_sweep_lists *l)
{
	for (int k = 0; k < 3; k++)
		free(l->buf[k]);
	memset(l, 0, sizeof *l);
}

/* ---- the backend ------------------------------------------------------------ */

int mk_sweep_setup(mk_sweep_opts *o, const char *backend, bool pick_device)
{
	const mk_attn_backend *b;

	/* auto: cuda when built and a device is usable, else cpu */
	if (!backend || !strcmp(backend, "auto")) {
		b = mk_attn_backend_get("cuda");
		o->backend = b ? b : mk_attn_backend_get("cpu");
		mk_error_set(MK_OK, "%s", "");
	} else if (!(o->backend = mk_attn_backend_get(backend))) {
		return MK_EINVAL;
	}
	b = o->backend;
	if (mk_attn_check_dtype(b, o->dtype))
		return mk_error_param("dtype");
	if (o->shape.d > mk_attn_backend_max_head_dim(b))
		return mk_error_set(MK_EINVAL, "head dimension %" PRId64 " is not supported by "
				    "backend '%s' (1 to %" PRId64 ")", o->shape.d,
				    mk_attn_backend_name(b), mk_attn_backend_max_head_dim(b)),
		       mk_error_param("head_dim");
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		if ((o->kernels & (1u << k)) && !(mk_attn_backend_kernels(b) & (1u << k)))
			return mk_error_set(MK_EINVAL, "backend '%s' has no kernel '%s'",
					    mk_attn_backend_name(b),
					    mk_attn_kernel_name((mk_attn_kernel)k)),
			       mk_error_param("kernels");
	/* MPI ranks on one node take a device each, by their rank on the node */
	if (pick_device && mk_par_size() > 1 && mk_attn_devices(b) > 1)
		o->device = mk_par_local_rank() % mk_attn_devices(b);
	return mk_attn_configure(b, o->device, o->dtype);
}
