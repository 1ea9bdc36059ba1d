/*
 * The interface every pattern family implements.  A pattern is defined on
 * its own t->n x t->n grid (tokens, or blocks when the term has block=B; the
 * expression layer expands blocks) and fills one row, or one column, at a
 * time into a zeroed packed row.
 */
#ifndef MK_PATTERN_H
#define MK_PATTERN_H

#include "patterns.h"

#define MK_MAX_PARAMS 8

struct mk_flex;

typedef struct mk_pval {
	bool given;    /* set explicitly in the expression */
	int64_t i;     /* int and bool values */
	int64_t *list; /* list values (owned) */
	size_t len;
} mk_pval;

typedef struct mk_term {
	const struct mk_pattern_def *def;
	mk_pval p[MK_MAX_PARAMS]; /* in the order of def->info.params */
	int64_t block;            /* 1 = token level */
	int64_t n;                /* grid size: ceil(tokens / block) */
	uint64_t seed;            /* effective seed (explicit, else the global one) */
	bool symmetric;           /* this term is symmetric: def->symmetric, or bind found it so */
	void *priv;               /* what bind precomputed */
} mk_term;

/* What a sweep varies to reach a target sparsity (analysis/sweep.c): the
 * pattern's size parameter, its range at size n, and whether |M| grows with
 * it (a binary search then finds the value) or not (values are scanned). */
typedef enum mk_sweep_hi {
	MK_SWEEP_HI_N,    /* the largest value is n */
	MK_SWEEP_HI_N_1,  /* n - 1 */
	MK_SWEEP_HI_HALF  /* n / 2 */
} mk_sweep_hi;

typedef struct mk_pattern_sweep {
	const char *param; /* NULL: a sweep cannot vary the pattern */
	const char *extra; /* fixed parameters appended to the expression (NULL: none) */
	int64_t lo;        /* the smallest value */
	mk_sweep_hi hi;
	bool monotone;     /* |M| non-decreasing in the value */
	bool blocked;      /* its paper defines it by blocks: swept with block = the
			    * sweep's tile (block=1 named by the user: by tokens) */
	int order;         /* where mk_sweep_patterns() lists the pattern, from 1 */
} mk_pattern_sweep;

typedef struct mk_pattern_def {
	mk_pattern_info info;
	bool symmetric; /* always col(j) == row(j): col may be NULL (bind may also set
			 * t->symmetric for parameter values that make it so) */
	mk_pattern_sweep sweep;
	/* Validates parameters against t->n and precomputes t->priv; may be NULL. */
	int (*bind)(mk_term *t);
	/* Sets the bits of row i (or column j) in dst, zeroed, of t->n bits. */
	void (*row)(const mk_term *t, int64_t i, uint64_t *dst);
	void (*col)(const mk_term *t, int64_t j, uint64_t *dst);
	/* Builds what col() needs when that is costly (random terms); may be NULL. */
	int (*prepare_cols)(mk_term *t, uint64_t max_memory);
	void (*release)(mk_term *t);
	/* Writes the pattern as a FlexAttention mask_mod expression (flex.c);
	 * NULL: it has none (a generator refuses the expression). */
	int (*flex)(const mk_term *t, struct mk_flex *f);
} mk_pattern_def;

/* The table in registry.c. */
const mk_pattern_def *mk_pattern_def_find(const char *name);
size_t mk_pattern_def_count(void);
const mk_pattern_def *mk_pattern_def_get(size_t k);

/* Fills t with def's defaults (parsed from info.params[k].def; lists are
 * comma-separated), block = 1, n = 0, seed = 0, nothing given. */
int mk_term_init(mk_term *t, const mk_pattern_def *def);
/* Index of parameter `name` in def, or -1. */
int mk_term_param_index(const mk_pattern_def *def, const char *name);
/* Frees lists and what bind made (calls def->release); t can be re-inited. */
void mk_term_release(mk_term *t);

/* Families, one file each. */
extern const mk_pattern_def mk_pat_full, mk_pat_none, mk_pat_diag, mk_pat_causal;
extern const mk_pattern_def mk_pat_local, mk_pat_diagonal;
extern const mk_pattern_def mk_pat_global, mk_pat_axis, mk_pat_star;
extern const mk_pattern_def mk_pat_random;
extern const mk_pattern_def mk_pat_logsparse;
extern const mk_pattern_def mk_pat_strided, mk_pat_fixed;
extern const mk_pattern_def mk_pat_longformer;
extern const mk_pattern_def mk_pat_bigbird;
extern const mk_pattern_def mk_pat_prefix, mk_pat_document;

/* ---- helpers shared by families (random.c) ---- */

/* Sets k distinct bits in [0, n) of dst, drawn uniformly without
 * replacement (Floyd's algorithm) from the stream (seed, tag, row); k >= n
 * sets all n.  The same arguments give the same bits on every machine. */
void mk_draw_row(uint64_t seed, uint64_t tag, int64_t row, int64_t k, int64_t n,
		 uint64_t *dst);
/* k distinct positions in [0, n), sorted ascending, from stream (seed, tag);
 * k is clipped to n and the number written is returned. */
int64_t mk_draw_positions(uint64_t seed, uint64_t tag, int64_t k, int64_t n,
			  int64_t *out);

/* The transpose of a per-row random draw, for col(): CSR over columns. */
typedef struct mk_randcols {
	int64_t n;
	int64_t *start; /* n + 1 offsets */
	int32_t *rows;  /* rows whose draw contains the column */
} mk_randcols;
int mk_randcols_build(mk_randcols **out, uint64_t seed, uint64_t tag, int64_t k,
		      int64_t n, uint64_t max_memory);
void mk_randcols_col(const mk_randcols *rc, int64_t j, uint64_t *dst);
void mk_randcols_free(mk_randcols *rc);

/* ---- FlexAttention mask_mod text (flex.c) ---- */

/* What a term's flex() writes: one Python boolean expression over torch
 * integer tensors, in the names the generator gives it for the term's grid
 * indices (i, j: query and key on the term's t->n x t->n grid, blocks when
 * block > 1; ic, jc: the same clamped to [0, t->n), for table lookups, since
 * a kernel may evaluate a mask_mod past the end of the sequence).  Lookup
 * tables hold what arithmetic cannot say (random draws, chosen tokens,
 * document ids) in O(n) or O(n r) entries, never n x n. */
typedef enum mk_flex_kind {
	MK_FLEX_ROWS,     /* int32 [rows, cols]; in Python a tuple of its columns, tK[c] */
	MK_FLEX_SET,      /* positions in [0, n): a bool [n] membership vector */
	MK_FLEX_SEGMENTS  /* lengths: int32 [n] of segment ids, -1 past their sum */
} mk_flex_kind;

typedef struct mk_flex_table {
	mk_flex_kind kind;
	int64_t n;          /* entries of the vector SET and SEGMENTS make */
	int64_t rows, cols; /* of data */
	int32_t *data;      /* owned */
} mk_flex_table;

typedef struct mk_flex {
	const char *i, *j, *ic, *jc; /* the names, set by the generator */
	struct mk_sb *text;          /* the expression being written (the caller's) */
	mk_flex_table *tables;
	size_t ntables, tcap;
	uint64_t max_memory; /* cap on the tables' bytes */
	uint64_t bytes;      /* the tables' bytes so far */
	int err;             /* the first failure (MK_ENOMEM, MK_ERANGE); sticky */
} mk_flex;

/* Appends to f->text; a failure is kept in f->err and later appends do nothing. */
void mk_flex_printf(mk_flex *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a table of len int64 values (positions, lengths: each below 2^31 as
 * n is), stored as int32, and returns K of its name "tK" (-1 on failure,
 * f->err set); the caller writes the name. */
long mk_flex_table_add(mk_flex *f, mk_flex_kind kind, int64_t n, const int64_t *data,
		       int64_t len);
/* Appends the random draws of every row of the grid, as mk_draw_row makes
 * them, as a table and the test "j is one of row i's keys" (k < n). */
void mk_flex_draws(mk_flex *f, const mk_term *t, uint64_t tag, int64_t k);
/* Frees the tables; f can be reused after zeroing. */
void mk_flex_release(mk_flex *f);

#endif
