/*
 * libmaskkit_demo: maskkit as a C library.  Builds two masks from
 * expressions, composes them (OR and AND), measures the result and prints
 * n, |M| and the sparsity 1 - |M|/n^2.
 *
 *   cc libmaskkit_demo.c $(pkg-config --cflags --libs maskkit) -o libmaskkit_demo
 *   ./libmaskkit_demo [N [EXPR_A EXPR_B]]     (default: 16 'local(w=2)' 'global(g=1)')
 *
 * Exits 0, or 1 with libmaskkit's message (mk_error()) on stderr.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <maskkit/maskkit.h>

/* The n x n mask of text (an expression of 'maskkit patterns' terms). */
static int build(const char *text, int64_t n, mk_mask **out)
{
	mk_bind_opts opts = {.n = n, .seed = 0};
	mk_expr *e = NULL;
	int st = mk_expr_parse(text, &e);

	if (st == MK_OK)
		st = mk_expr_bind(e, &opts);
	if (st == MK_OK)
		st = mk_expr_to_mask(e, out);
	mk_expr_free(e);
	return st;
}

static void show(const char *what, const mk_mask *m)
{
	int64_t n = mk_mask_n(m);
	uint64_t count = mk_mask_count(m);

	printf("%-24s |M| = %" PRIu64 ", sparsity = %.6f\n", what, count,
	       1.0 - (double)count / ((double)n * (double)n));
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 16;
	const char *ta = argc > 2 ? argv[2] : "local(w=2)";
	const char *tb = argc > 3 ? argv[3] : "global(g=1)";
	mk_mask *a = NULL, *b = NULL, *both = NULL;
	mk_expr *ea = NULL, *eb = NULL, *joined = NULL;
	mk_bind_opts opts = {.n = n};
	mk_measure m;
	int st;

	/* A | B and A & B on materialised masks */
	st = build(ta, n, &a);
	if (st == MK_OK)
		st = build(tb, n, &b);
	if (st == MK_OK)
		st = mk_mask_clone(a, &both);
	if (st == MK_OK)
		st = mk_mask_and(both, b);
	if (st == MK_OK)
		st = mk_mask_or(a, b);
	/* the same union as one expression, measured by streaming its rows */
	if (st == MK_OK)
		st = mk_expr_parse(ta, &ea);
	if (st == MK_OK)
		st = mk_expr_parse(tb, &eb);
	if (st == MK_OK) {
		st = mk_expr_join(MK_OP_OR, ea, eb, &joined); /* owns ea and eb now */
		ea = eb = NULL;
	}
	if (st == MK_OK)
		st = mk_expr_bind(joined, &opts);
	if (st == MK_OK)
		st = mk_measure_expr(joined, NULL, 0, NULL, NULL, &m);
	if (st != MK_OK) {
		fprintf(stderr, "libmaskkit_demo: %s\n", mk_error());
	} else {
		printf("n = %" PRId64 "\n", mk_mask_n(a));
		printf("A = %s, B = %s\n", ta, tb);
		show("A | B (mk_mask_or)", a);
		show("A & B (mk_mask_and)", both);
		printf("%-24s |M| = %" PRIu64 ", sparsity = %.6f\n", mk_expr_text(joined), m.count,
		       m.sparsity);
		if (m.count != mk_mask_count(a)) {
			fprintf(stderr, "libmaskkit_demo: the measured union differs from A | B\n");
			st = MK_EINTERNAL;
		}
	}
	mk_expr_free(ea);
	mk_expr_free(eb);
	mk_expr_free(joined);
	mk_mask_free(a);
	mk_mask_free(b);
	mk_mask_free(both);
	return st == MK_OK ? 0 : 1;
}
