/*
 * maskkit heads: what each attention head does.  Per (layer, head) of a
 * data set of attention probabilities (data.h), the attention mass on the
 * previous and next token, the diagonal, a band around it, [CLS], [SEP] and
 * punctuation, the row entropy, the top-p sparsity and the Toeplitz R^2 of
 * the head's mean map, and from them a role (after Clark et al. 2019, "What
 * does BERT look at?", and Kovaleva et al. 2019, "Revealing the dark secrets
 * of BERT").  analysis/head_roles.c, head_roles_run.c, head_roles_out.c.
 */
#ifndef MK_HEADS_H
#define MK_HEADS_H

#include "core.h"
#include "attn_maps.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The roles, in the order they are tried: the first whose test a head
 * passes is its role. */
typedef enum mk_head_role {
	MK_ROLE_PREV = 0, /* prev >= t.prev: attends to the token before */
	MK_ROLE_NEXT,     /* next >= t.next: to the token after */
	MK_ROLE_LOCAL,    /* band >= t.band: within w tokens of itself */
	MK_ROLE_SINK,     /* cls + sep >= t.sink: to [CLS] and [SEP] */
	MK_ROLE_BROAD,    /* entropy_norm >= t.broad: nearly uniform */
	MK_ROLE_MIXED,    /* none of these */
	MK_ROLE_COUNT
} mk_head_role;

/* "previous-token", "next-token", "local-band", "cls-sep-sink", "broad",
 * "mixed"; short: "prev", "next", "band", "sink", "broad", "mixed". */
const char *mk_head_role_name(mk_head_role r);
const char *mk_head_role_short(mk_head_role r);

typedef struct mk_head_thresholds {
	double prev, next, band, sink, broad;
} mk_head_thresholds;
/* 0.5, 0.5, 0.5, 0.5, 0.75 (MK_HEAD_* below). */
#define MK_HEAD_PREV 0.5
#define MK_HEAD_NEXT 0.5
#define MK_HEAD_BAND 0.5
#define MK_HEAD_SINK 0.5
#define MK_HEAD_BROAD 0.75
#define MK_HEAD_WINDOW 2
#define MK_HEAD_TOP_P 0.9

/*
 * One head's numbers, over the real len x len block of every sample,
 * cell-weighted as attn-stats' (attn_maps.h: all samples' real rows pooled):
 *   prev, next    mean of P[i][i-1] over rows i >= 1, of P[i][i+1] over
 *                 rows i <= len - 2 (attn-stats' profile at -1 and +1)
 *   diag          mean of P[i][i]
 *   band          mean over rows of sum_{|j - i| <= w} P[i][j]
 *   cls, sep      mean of P[i][0], of P[i][len - 1]
 *   punct         mean over rows of the mass on keys whose token is
 *                 punctuation (NaN without token ids and a tokenizer)
 *   entropy       mean over rows of -sum_j P[i][j] ln P[i][j] (nats)
 *   entropy_norm  mean over the rows of samples with len >= 2 of the row's
 *                 entropy / ln len (1: uniform attention)
 *   sparsity      `maskkit measure --top-p p --by head`'s: the mean over
 *                 samples of 1 - kept / len^2, kept the fewest keys per row
 *                 holding p of its mass (Eq. 9)
 *   toeplitz_r2   R^2 of the least-squares Toeplitz fit of the head's mean
 *                 map (mk_attn_mean_map: the leading m x m block averaged
 *                 over the samples at least m long)
 * A mean over no cells is NaN.
 */
typedef struct mk_head_row {
	int64_t layer, head;
	mk_head_role role;
	const char *role_name;
	double prev, next, diag, band, cls, sep, punct, entropy, entropy_norm, sparsity,
		toeplitz_r2;
} mk_head_row;

/* Decides a head's role from its numbers (NaN passes no test). */
mk_head_role mk_head_classify(const mk_head_row *r, const mk_head_thresholds *t);

typedef struct mk_head_roles_opts {
	mk_dataset_opts d;       /* the data set; d.max_memory caps the work too */
	int64_t window;          /* w of band, >= 0; MK_HEAD_WINDOW */
	double top_p;            /* in (0, 1]; MK_HEAD_TOP_P */
	int64_t map_size;        /* m; 0: the median sample length */
	const char *tokenizer;   /* for punct: a tokenizer (mk_tokenizer_open); NULL: the
				  * directory the file's `model` attribute names, if any */
	bool no_punct;           /* skip punct (no ids read, no tokenizer opened) */
	const char *sort;        /* the rows' order (mk_head_roles_sort); NULL: "layer" */
	mk_head_thresholds t;
	mk_progress_fn progress; /* (samples done, samples); may be NULL */
	void *parg;
} mk_head_roles_opts;

/* The defaults above. */
void mk_head_roles_opts_init(mk_head_roles_opts *o);

typedef struct mk_head_role_count {
	const char *role; /* mk_head_role_name */
	int64_t count;    /* heads with that role */
} mk_head_role_count;

typedef struct mk_head_roles {
	char *file, *dataset, *lengths; /* lengths: its dataset, NULL for none */
	char *punct_from;        /* the tokenizer used for punct, or NULL ... */
	char *punct_note;        /* ... and then why there is no punct column */
	const char *dtype;
	int64_t samples, layers, heads, n;
	uint64_t rows;           /* real rows per head */
	int64_t len_min, len_max;
	double len_mean;
	int64_t window;
	double top_p;
	int64_t map_size, map_samples; /* m, and the samples at least m long */
	mk_head_thresholds t;
	int64_t count;           /* layers * heads */
	mk_head_row *by_head;    /* [count], layer-major */
	mk_head_row *sorted;     /* [count], as mk_head_roles_sort left them */
	const char *sort;        /* the column sorted by */
	mk_head_role_count counts[MK_ROLE_COUNT]; /* in role order */
	const mk_head_role_count *roles; /* counts, for the record */
	int64_t nroles;                  /* MK_ROLE_COUNT */
	int64_t strongest_prev;  /* index into by_head of the largest prev, -1: none */
} mk_head_roles;

/* Opens spec (FILE.h5, or FILE.h5:/PATH naming the data: o->d.dataset must
 * then be NULL, else MK_EINVAL naming `dataset`), reads every block once and
 * fills out, sorted by o->sort (checked first).  MK_EINVAL for mask data, a window
 * < 0, top_p outside (0, 1], a map size above N or longer than every sample
 * (naming `map_size`), a tokenizer that cannot be opened or does not cover
 * the file's ids (naming `tokenizer`). */
int mk_head_roles_run(const char *spec, const mk_head_roles_opts *o, mk_head_roles *out);
void mk_head_roles_release(mk_head_roles *r);

/* Sorts r->sorted by a column of mk_head_row_record: layer and head
 * ascending (layer then head), role in the order of mk_head_role, every
 * measure descending (largest first; NaN last); ties by layer and head.
 * MK_EINVAL naming `sort` for another name, listing the columns (an empty
 * r checks the name only). */
int mk_head_roles_sort(mk_head_roles *r, const char *column);

/* A layers x heads grid, each cell coloured by its head's role and labelled
 * with the role's short name, through gnuplot (templates/head_roles.gp;
 * plot.h's mk_plot_run), written atomically. */
int mk_head_roles_png(const mk_head_roles *r, const char *path);

/* The result (JSON; text: data, lengths, rows, window, top_p, map, punct,
 * thresholds, roles): file, dataset, dtype, lengths, samples, layers, heads,
 * n, rows, window, top_p, map_size, map_samples, punct_from, punct_note,
 * thresholds {prev, next, band, sink, broad}, roles {name: count}, sort,
 * by_head (mk_head_row_record, in sorted order). */
extern const struct mk_record mk_head_roles_record;
/* A head (tables, CSV): layer, head, role, prev, next, diag, band, cls, sep,
 * punct, entropy, entropy_norm, sparsity, toeplitz_r2. */
extern const struct mk_record mk_head_row_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_HEADS_H */
