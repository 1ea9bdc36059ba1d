/*
 * maskkit explaining away: column sums of normalised attention per head and
 * normalisation (Ding et al., "attention that does not explain away"), the
 * queries and keys they are computed from, and the paper's toy models.
 */
#ifndef MK_EXPLAIN_H
#define MK_EXPLAIN_H

#include "core.h"
#include "attn.h"
#include "expr.h"
#include "result.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- explaining away (analysis/explain.c) -------------------------------- */

/* Per normalisation and head, how the keys' column sums are spread: the
 * statistics `maskkit explain` prints (Ding et al.'s Fig. 1). */
#define MK_EXPLAIN_EPS 1e-8
#define MK_EXPLAIN_BINS_MAX 10000
#define MK_EXPLAIN_MAX_DIM 65536

typedef struct mk_explain_stat {
	int64_t keys;   /* columns with an entry */
	int64_t empty;  /* columns with none: no query may attend to the key */
	int64_t away;   /* keys explained away: column sum below eps */
	double min, q1, median, q3, max; /* log10 column sums over the keys (numpy's
					  * linear quantiles); NaN without keys */
} mk_explain_stat;

typedef struct mk_explain_opts {
	const mk_norm *norms;
	size_t nnorms;
	double eps;      /* in (0, 1] */
	int bins;        /* histogram bins, 1..MK_EXPLAIN_BINS_MAX */
	int trace;       /* sinkhorn rounds traced per head, 0..1000 (0: none) */
	uint64_t max_memory;
	/* called before each (normalisation, head); may be NULL */
	void (*progress)(int64_t done, int64_t total, void *arg);
	void *arg;
} mk_explain_opts;

typedef struct mk_explain {
	int64_t heads, n;
	size_t nnorms;
	double *log10;         /* nnorms x heads x n column sums, -inf: empty column */
	mk_explain_stat *stat; /* nnorms x (heads + 1): each head, then all together */
	/* the histogram of every head's finite log10 column sums per
	 * normalisation: bin b covers [lo + b width, lo + (b + 1) width) */
	int bins;
	double lo, width;
	int64_t *hist;         /* nnorms x bins */
	int trace;
	mk_sinkhorn_step *steps; /* heads x trace */
	double *score_bound;     /* per head: mk_attn_score_bound */
} mk_explain;

/* Column sums for every normalisation and head of q, k ([heads, n, d],
 * row-major), restricted to mask (NULL: every entry).  MK_EINVAL for bad
 * options or n < 2, MK_ERANGE beyond max_memory or when the scores
 * overflow, MK_ENOMEM. */
int mk_explain_run(const mk_explain_opts *o, int64_t heads, int64_t n, int64_t d,
		   const float *q, const float *k, const mk_attn_layout *mask, mk_explain *out);
void mk_explain_release(mk_explain *e); /* frees the arrays, zeroes *e; NULL-safe */

/* ---- queries and keys (src/io/explain_input.c) ------------------------------ */

/* Queries and keys for `maskkit explain`: float32
 * [heads, S, d] each. */
typedef struct mk_qk {
	mk_tensor q, k;
	int64_t heads, n, d;
} mk_qk;
/* Takes q and k of one shape ([S, d], [heads, S, d] or [batch, heads, S,
 * d], leading axes flattened into heads); they are released either way.
 * MK_EINVAL naming both shapes when they differ. */
int mk_qk_adopt(mk_tensor *q, mk_tensor *k, mk_qk *out);
/* "FILE.h5" or "FILE.h5:/group" holding q and k, or a layer's input x
 * [S, D] with projections wq, wk ([heads d, D], PyTorch's Linear; [D, heads
 * d] when tf) and optional biases bq, bk [heads d], projected for `heads`
 * heads (needed then; else 0, or the count q and k hold). */
int mk_qk_read(const char *spec, int64_t heads, bool tf, uint64_t max_memory, mk_qk *out);
/* Sample `sample` (0-based) of "FILE.h5:/group" holding q and k [samples,
 * heads, N, dk] (as maskkit encode --qk writes /qk/layer_L), cut to the
 * sample's length from the file's /lengths (all N rows when it has none).
 * MK_EINVAL for a sample out of range, MK_EFORMAT for another shape. */
int mk_qk_read_sample(const char *spec, int64_t sample, uint64_t max_memory, mk_qk *out);
/* Entries drawn from N(0, scale^2), a stream per (tensor, head). */
int mk_qk_random(int64_t heads, int64_t n, int64_t d, double scale, uint64_t seed,
		 uint64_t max_memory, mk_qk *out);
void mk_qk_release(mk_qk *x); /* NULL-safe */

/* ---- `maskkit explain` as calls (analysis/explain_report.c) ----------------- */

/* Where Q and K come from: input, else q and k, else random (random_n > 0). */
typedef struct mk_explain_source {
	const char *input;     /* FILE.h5[:/group] with q and k, or x, wq and wk
				* (mk_qk_read); with text, a model directory */
	const char *q, *k;     /* tensor files (.npy, .h5, .h5:/path) */
	int64_t random_n, random_d; /* Gaussian Q and K, [heads, n, d] */
	double scale;          /* their standard deviation (0: 1) */
	uint64_t seed;
	int64_t heads;         /* 0: what the input holds (random: 1); x, wq, wk need it */
	bool tf;               /* wq, wk stored [D, heads d] (Keras), not [heads d, D] */
	int64_t sample;        /* -1: none; else the sample of q, k [samples, heads, N,
				* dk] (mk_qk_read_sample) or, with text, of the text */
	const char *text;      /* input is a model, run over this text's sample */
	bool sentences;        /* text's samples are sentences, not lines */
	int64_t layer, max_len; /* with text: the layer read, the tokens kept */
	uint64_t max_memory;
} mk_explain_source;

/* Reads (or draws) the source's Q and K.  MK_EINVAL with the `heads`
 * parameter when heads disagrees with what the input holds, and for fewer
 * than 2 tokens. */
int mk_explain_source_read(const mk_explain_source *s, mk_qk *out);

/* One normalisation and head (or all heads) of the statistics, as shown. */
typedef struct mk_explain_row {
	int64_t head;          /* -1: all heads */
	const char *norm;      /* "softmax", "hnas:0.5", ... */
	const char *head_name; /* "all" or the head */
	int64_t keys, empty, away;
	double fraction_away;  /* away / keys; NaN without keys */
	double min, q1, median, q3, max; /* log10 column sums (mk_explain_stat) */
	double min_colsum;     /* 10^min */
	double bound;          /* 1/S */
	bool above_bound;      /* min_colsum >= 1/S, within float32's rounding */
	int above;             /* the same, 1 or 0 */
} mk_explain_row;

typedef struct mk_explain_norm_view {
	const char *norm;
	const mk_explain_row *all, *heads;
	int64_t nheads;
} mk_explain_norm_view;

typedef struct mk_explain_counts {
	const char *norm;
	const int64_t *counts;
	int64_t bins;
} mk_explain_counts;

typedef struct mk_explain_trace_row {
	int64_t round;         /* 1.. */
	double row_max, row_mean, col_max, col_mean; /* max and mean |sum - 1| */
} mk_explain_trace_row;

typedef struct mk_explain_trace_head {
	const mk_explain_trace_row *rounds;
	int64_t count;
} mk_explain_trace_head;

/* What `maskkit explain` prints: the run's statistics and views of them. */
typedef struct mk_explain_report {
	char *input;           /* where Q and K came from */
	int64_t n, d, heads;
	const char *mask;      /* the mask's expression, or "full" */
	uint64_t entries;      /* the mask's entries, n^2 without one */
	double eps, bound;     /* explained away below eps; Theorem 2's 1/S */
	double seconds;        /* of the column sums */
	mk_explain e;          /* the statistics (mk_explain_run) */
	/* each normalisation's heads, then all heads: the CSV's rows */
	mk_explain_row *rows;
	int64_t nrows;
	/* each normalisation's all heads, then its heads when there are several:
	 * the table's rows */
	mk_explain_row *table;
	int64_t ntable;
	mk_explain_norm_view *norms;
	int64_t nnorms;
	mk_explain_counts *counts; /* the histogram, per normalisation */
	mk_explain_trace_head *trace; /* per head (ntrace 0 without a trace) */
	int64_t ntrace;
	mk_explain_trace_row *trace_rows; /* heads x rounds */
	mk_explain_trace_row *trace_mean; /* per round: max of the maxima, mean of means */
	int64_t rounds;
	char (*names)[64];     /* the normalisations', then the heads' names */
} mk_explain_report;

/* The statistics of o's normalisations over qk (mk_explain_source_read),
 * restricted to mask (bound at qk->n; NULL: every entry; its layout tiled
 * by tile), with s naming the input.  Release *out also after an error. */
int mk_explain_report_run(const mk_explain_source *s, const mk_qk *qk, const mk_expr *mask,
			  int64_t tile, const mk_explain_opts *o, mk_explain_report *out);
void mk_explain_report_release(mk_explain_report *r);
/* The log10 column sums [norms, heads, S] as float32 to a tensor file
 * (mk_tensor_write: .npy, FILE.h5 or FILE.h5:/dataset, else dataset
 * log10_colsum); -inf for a key no query may attend to. */
int mk_explain_write_sums(const mk_explain *e, const char *path, uint64_t max_memory);
/* The histogram of every head's log10 column sums as CSV, atomically:
 * columns log10_lo, log10_hi (the bin's edges), then the count of each
 * normalisation, named as it prints. */
int mk_explain_write_hist(const mk_explain_report *r, const char *path);
/* The report (JSON): input, S, d, heads, mask, entries, eps, bound, norms
 * (norm, all, heads), histogram (log10_lo, width, bins, counts by
 * normalisation), sinkhorn_trace (per head, per round; only with a trace),
 * seconds.  Text: the scalar fields. */
extern const struct mk_record mk_explain_report_record;
/* The rows (mk_explain_report's rows and table): CSV's columns norm, head,
 * keys, empty, explained_away, fraction_away, log10_min, log10_q1,
 * log10_median, log10_q3, log10_max, min_colsum, bound, above_bound (1 or 0). */
extern const struct mk_record mk_explain_row_record;
/* A round of the Sinkhorn trace (the report's trace_mean in a table). */
extern const struct mk_record mk_explain_trace_record;

/* ---- explaining away: toy models (analysis/explain_toy.c, explain_curves.c) */

/*
 * The toy models of Ding et al., "Attention that does not Explain Away":
 * attention with Q = K = I on points x_i, every point updated at once to
 * x_i <- sum_j pi_ij x_j.  UNAS (dnas = 0): pi_ij = softmax over j of s_ij.
 * DNAS (dnas != 0): xi_ij = exp(s_ij) / sum_i exp(s_ij) (each key normalised
 * over the queries), then pi_ij = xi_ij / sum_j xi_ij.  Computed in logs,
 * so scores of -10^4 (points far apart) never give 0/0.
 */
typedef enum mk_toy_score {
	MK_TOY_SCORE_DOT,  /* s_ij = x_i . x_j: a Transformer's scores, unscaled */
	MK_TOY_SCORE_DIST  /* s_ij = -|x_i - x_j|^2 / 2: a Gaussian kernel */
} mk_toy_score;

/* "dot" or "dist"; NULL for another value. */
const char *mk_toy_score_name(mk_toy_score score);
/* Parses "dot" or "dist"; MK_EINVAL naming the value otherwise. */
int mk_toy_score_parse(const char *s, mk_toy_score *out);

#define MK_TOY_DISTANCE_LIST_MAX 32  /* half distances a, and check sizes, at most */
#define MK_TOY_DISTANCE_SIZE_MAX 1000
#define MK_TOY_DISTANCE_CURVE_MAX 100000

/* The centre-distance figure (the paper's Fig. 7) and its check. */
typedef struct mk_toy_distance_opts {
	const double *a;       /* na half distances, finite, > 0 */
	int na;                /* 1..MK_TOY_DISTANCE_LIST_MAX */
	double r_min, r_max;   /* the curves' ratios: 0 < r_min < r_max, finite */
	int64_t nr;            /* 2..MK_TOY_DISTANCE_CURVE_MAX, spaced evenly in log r */
	const int64_t *sizes;  /* the check simulates every (n0, n1) of these, */
	int nsizes;            /* 1..MK_TOY_DISTANCE_LIST_MAX, each 1..MK_TOY_DISTANCE_SIZE_MAX */
	mk_toy_score score;
} mk_toy_distance_opts;

/* n values: one curve, one point (the records' arrays of arrays). */
typedef struct mk_toy_values {
	const double *v;
	int64_t n;
} mk_toy_values;

/* A row of the centre-distance CSV (mk_toy_distance_write_csv) and table;
 * index 0 UNAS, 1 DNAS. */
typedef struct mk_toy_distance_row {
	const char *kind;      /* "curve", "check" or "max" */
	double a, r;           /* NaN in "max" */
	int64_t n0, n1;        /* "check" only */
	double closed[2], simulated[2], error[2]; /* NaN where the kind has none */
} mk_toy_distance_row;

/* One simulated point of the check; index 0 UNAS, 1 DNAS. */
typedef struct mk_toy_check {
	int64_t n0, n1;
	double a, r;
	double closed[2], simulated[2];
} mk_toy_check;

typedef struct mk_toy_distance_result {
	double *r;             /* nr ratios */
	double *curve[2];      /* [UNAS, DNAS]: na x nr closed forms, a-major */
	mk_toy_check *check;   /* na x nsizes x nsizes: a, then n0, then n1 */
	int64_t nr, ncheck;
	double max_error[2];   /* the largest |closed - simulated| per scheme */
	/* what mk_toy_distance_record shows (a and sizes point into the
	 * options' arrays: keep them while the result is used) */
	const char *toy, *score; /* "distance", the score's name */
	const double *a;
	const int64_t *sizes;
	int64_t na, nsizes;
	mk_toy_values *curves[2]; /* na each, into curve[] */
	mk_toy_distance_row *shown; /* closed forms at up to 5 ratios per a: the table */
	int64_t nshown;
} mk_toy_distance_result;

/* Fills *out (release it with mk_toy_distance_release, also after an
 * error).  MK_EINVAL or MK_ERANGE naming the bad option, MK_ENOMEM. */
int mk_toy_distance(const mk_toy_distance_opts *o, mk_toy_distance_result *out);
void mk_toy_distance_release(mk_toy_distance_result *r);
/* Writes the curves and the check as CSV, atomically ("-": standard output): columns kind, a, r,
 * n0, n1, unas, dnas, unas_simulated, dnas_simulated, unas_error,
 * dnas_error; a "curve" row per (a, r) fills a, r, unas and dnas, a
 * "check" row per simulated step fills all, and one last "max" row only
 * the two errors (the largest |closed - simulated|). */
int mk_toy_distance_write_csv(const char *path, const mk_toy_distance_opts *o,
			      const mk_toy_distance_result *r);
/* The result (JSON, text): toy, score, a, r, unas and dnas (a curve per a),
 * check (sizes, max_error, points: a, n0, n1, r, unas, unas_simulated,
 * dnas, dnas_simulated). */
extern const struct mk_record mk_toy_distance_record;
/* The CSV's rows (and the table of result.shown). */
extern const struct mk_record mk_toy_distance_row_record;

#define MK_TOY_COLLAPSE_BIG 500      /* points around (1.8, 0.7), first */
#define MK_TOY_COLLAPSE_SMALL 50     /* then points around (-1, -1) */
#define MK_TOY_COLLAPSE_POINTS 550
#define MK_TOY_COLLAPSE_STEPS_MAX 1000
#define MK_TOY_COLLAPSE_SD 0.1       /* the default spread */
#define MK_TOY_COLLAPSE_SD_MAX 100
#define MK_TOY_COLLAPSE_TOL 1e-3     /* points this close share a cluster */
/*
 * The default seed, the one the tests check.  With the defaults (dot
 * scores, sd 0.1) it gives the paper's Fig. 6: clusters after steps 1..7
 * UNAS 47 47 43 1 1 1 1, DNAS 43 3 2 2 2 2 2.  Robust: of seeds 0..199,
 * 194 have UNAS at 1 cluster after step 4 (the rest, 0 33 97 121 137 184,
 * at step 5) and all 200 have DNAS at 2 from step 4 on (no later step up
 * to 7 differs).  The Gaussian-kernel reading (dist scores) with variance
 * 0.1 (sd sqrt(0.1)) is slower: seed 1 gives UNAS 515 44 44 45 24 1 and
 * DNAS 529 12 3 2 2 2; over seeds 0..99 UNAS reaches 1 at step 5 (8
 * seeds), 6 (87) or 7 (5), never 4 (the 50 points strung out toward the
 * big mode), DNAS 2 at step 3 to 5.  dot with sd sqrt(0.1): UNAS 1 at step
 * 5 for 43 of seeds 0..49 (4 for 5, 6 for 2); dist with sd 0.1: UNAS 1
 * at step 7 for all of seeds 0..49.
 */
#define MK_TOY_COLLAPSE_SEED 1

typedef struct mk_toy_collapse_opts {
	uint64_t seed;
	int steps;            /* 0..MK_TOY_COLLAPSE_STEPS_MAX */
	mk_toy_score score;
	double sd;            /* per-coordinate standard deviation, 0..MK_TOY_COLLAPSE_SD_MAX */
} mk_toy_collapse_opts;

/* The defaults: MK_TOY_COLLAPSE_SEED, 4 steps, dot scores, sd 0.1. */
void mk_toy_collapse_opts_init(mk_toy_collapse_opts *o);

/*
 * The mode-collapse toy (the paper's Fig. 6): draws MK_TOY_COLLAPSE_BIG
 * points around (1.8, 0.7), then MK_TOY_COLLAPSE_SMALL around (-1, -1),
 * each coordinate normal with standard deviation o->sd (maskkit's
 * generator keyed by o->seed), then applies o->steps attention steps.
 * points receives (steps + 1) x MK_TOY_COLLAPSE_POINTS x 2 doubles (the
 * start, then each step) and clusters[t] the number of clusters after step
 * t (points within MK_TOY_COLLAPSE_TOL of each other linked, single
 * linkage).  MK_EINVAL for steps or sd out of range, MK_ENOMEM.
 */
int mk_toy_collapse(int dnas, const mk_toy_collapse_opts *o, double *points, int64_t *clusters);
/* Writes both runs (index 0 UNAS, 1 DNAS, as mk_toy_collapse filled them)
 * as CSV, atomically ("-": standard output): columns scheme, step,
 * clusters (after that step), point, mode (0 for the big cloud's points, 1
 * for the small one's), x, y (%.17g, so they read back exactly). */
int mk_toy_collapse_write_csv(const char *path, const mk_toy_collapse_opts *o,
			      const double *const points[2], const int64_t *const clusters[2]);

/* The clusters after one step (the table of mk_toy_collapse_result). */
typedef struct mk_toy_collapse_step {
	int64_t step, unas, dnas;
} mk_toy_collapse_step;

typedef struct mk_toy_collapse_result {
	mk_toy_collapse_opts o;
	double *points[2];     /* UNAS, DNAS as mk_toy_collapse fills them */
	int64_t *clusters[2];
	int64_t nsteps;        /* steps + 1: the start, then each step */
	mk_toy_collapse_step *table; /* nsteps */
	/* what mk_toy_collapse_record shows */
	const char *toy, *score; /* "collapse", the score's name */
	int64_t total, big, small; /* MK_TOY_COLLAPSE_POINTS, _BIG, _SMALL */
	double tol;
	const mk_toy_values *centres; /* of the two clouds */
	int64_t ncentres;
} mk_toy_collapse_result;

/* Both runs (UNAS and DNAS) of the mode-collapse toy; release *out also
 * after an error. */
int mk_toy_collapse_run(const mk_toy_collapse_opts *o, mk_toy_collapse_result *out);
void mk_toy_collapse_release(mk_toy_collapse_result *r);
/* The result (JSON, text): toy, points, big, small, centres, sd, seed,
 * score, steps, tol, clusters (unas, dnas: after each step). */
extern const struct mk_record mk_toy_collapse_record;
/* The table's rows: step, unas, dnas. */
extern const struct mk_record mk_toy_collapse_step_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_EXPLAIN_H */
