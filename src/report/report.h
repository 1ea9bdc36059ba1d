/* maskkit report: the state shared by the report's sections (cmd_report.c,
 * report_*.c).  Each section runs maskkit's own subcommands as child
 * processes in the output directory, so that the commands the report prints
 * are exactly the ones that made its figures and tables, and a failing one
 * costs its figure, never the report. */
#ifndef MK_REPORT_H
#define MK_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "plot.h"

struct cJSON;

#define RP_REASON_MAX 400

/* One figure or table the report promises; ok is false with a reason when
 * it could not be made. */
typedef struct rp_item {
	char *file;   /* relative to the output directory */
	char *section;
	bool ok;
	char reason[RP_REASON_MAX];
} rp_item;

typedef struct rp_section {
	const char *slot;  /* the template's {{slot}} */
	char *text;        /* Markdown, malloc'd */
	size_t len;
	FILE *f;           /* open_memstream over text while the section runs */
} rp_section;

/* The model the report studies (report_model.c). */
typedef struct rp_model {
	bool tried, ok, real;
	bool encoded, encode_failed;
	char dir[4096];     /* as the commands get it (relative: under the output directory) */
	char label[160];
	char reason[RP_REASON_MAX];
	char *encode_cmd;   /* the encode command, once run */
	int64_t layers, heads, samples, n, tokens;
} rp_model;

typedef struct report {
	char out[4096];     /* the output directory, absolute */
	char self[4096];    /* this program */
	bool quick;
	char **weights;
	int nweights;
	char **sweeps;
	int nsweeps;
	const char *only;   /* comma-separated section names, or NULL */
	rp_item **items;    /* each allocated alone: the pointers stay valid */
	int nitems, capitems;
	rp_section *cur;    /* the section being written */
	bool verbose;
	char *invocation;   /* this report's own command line */
	const char *model_opt; /* --model DIR, "none", or NULL: the default */
	const char *text;   /* --text FILE, or NULL: the default */
	int64_t samples;    /* --samples, or 0: the default */
	char samples_text[24];
	rp_model model;
} report;

/* Text built in memory (open_memstream); rp_buf_write closes it and
 * writes it to the item's file, marking the item failed otherwise. */
typedef struct rp_buf {
	char *text;
	size_t len;
	FILE *f;
} rp_buf;
bool rp_buf_open(rp_buf *b);
void rp_buf_write(report *r, rp_buf *b, rp_item *it);
void rp_buf_discard(rp_buf *b);

/* Markdown into the current section. */
void rp_md(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text from outside (a file name, a CSV field, an error message) into the
 * Markdown, with the characters that would make it markup escaped. */
void rp_md_text(report *r, const char *s);
/* s as a Markdown code span, its fence longer than any run of backticks in s. */
void rp_md_code(report *r, const char *s);
/* s as a gnuplot single-quoted string ('' for a quote; control characters
 * become spaces). */
void rp_gp_string(FILE *f, const char *s);
/* s as a CSV field, always quoted (RFC 4180: "" for a quote). */
void rp_csv_field(FILE *f, const char *s);

/* A fenced block of the commands that remake what follows. */
void rp_md_commands(report *r, const char *const *lines, int n);

/* Runs `maskkit ARGV...` in the output directory.  stdout is returned in
 * *out (malloc'd, NUL-terminated; NULL to drop it); on failure the child's
 * last error line goes to reason.  *cmd (malloc'd) is the command as a
 * shell line. */
int rp_run(report *r, const char *const *argv, char **out, char **cmd, char *reason,
	   size_t size);
/* rp_run, stdout parsed as JSON. */
int rp_run_json(report *r, const char *const *argv, struct cJSON **json, char **cmd,
		char *reason, size_t size);
/* Runs another program (argv[0] looked up in PATH) the same way. */
int rp_run_program(report *r, const char *const *argv, char **out, char **cmd, char *reason,
		   size_t size);
/* A shell-quoted command line for argv (prefix "maskkit" when maskkit). */
char *rp_command(const char *const *argv, bool maskkit);

/* A number member of a JSON object, NaN when absent. */
double rp_json_num(const struct cJSON *o, const char *key);

/* Registers a promised file; rp_fail marks it (and prints the reason). */
rp_item *rp_promise(report *r, const char *file);
void rp_fail(report *r, rp_item *it, const char *reason);
/* Draws p into png's file, then the same as SVG beside it (promised here):
 * each marked failed on its own. */
struct mk_plot;
void rp_plot(report *r, rp_item *png, struct mk_plot *p);
/* The Markdown for a figure: the image (and its SVG when there is one), or
 * why it is missing. */
void rp_md_figure(report *r, rp_item *it, const char *alt);
/* Writes text to DIR/file atomically. */
int rp_write_file(report *r, const char *file, const char *text, size_t len);
/* The path of file under the output directory. */
int rp_path(const report *r, const char *file, char *buf, size_t size);

/* The sections, in the report's order. */
/* The synthetic BERT (report_synth.c): config.json, vocab.txt and
 * model.safetensors in dir (made if missing); MK_OK, or a status with the
 * reason written. */
int rp_synthetic_bert(const char *dir, uint64_t seed, char *reason, size_t size);

/* The model (report_model.c): NULL with r->model.reason when none could
 * be had; rp_model_attn runs encode once and gives its output's path
 * (relative to the output directory), or NULL with the reason.  The file
 * is ragged and float16, with the queries and keys of the first
 * RP_QK_SAMPLES samples only (explain reads one of them): about 40 MB for
 * 200 sentences of GPL-3, where padded float32 with every sample's took
 * 200 MB. */
#define RP_QK_SAMPLES 16
const rp_model *rp_model_get(report *r);
const char *rp_model_attn(report *r, char *reason, size_t size);
const char *rp_model_text(const report *r);
/* "Model: ..." for a section's text, and the section's commands after the
 * encode command. */
void rp_model_md(report *r);
void rp_model_commands(report *r, char **cmds, int n);

void rp_section_header(report *r);
void rp_section_sparsebert_fig1(report *r);
void rp_section_sparsebert_table4(report *r);
void rp_section_aaa_fig1(report *r);
void rp_section_eq9(report *r);
void rp_section_tisa(report *r);
void rp_section_explain(report *r);
void rp_section_sweep(report *r);
void rp_section_attention(report *r);
void rp_section_heads(report *r);
void rp_section_dam(report *r);
void rp_section_axis(report *r);
/* Parts of eq9 and explain on the model's real attention (report_attn.c). */
void rp_eq9_real(report *r);
void rp_explain_real(report *r);
/* Grouped bars (templates/bars.gp): values[group * nseries + s]. */
void rp_plot_bars(report *r, rp_item *it, const char *title, const char *ylabel,
		  const char *const *groups, int ngroups, const char *const *series, int nseries,
		  const double *values);
/* The same with a horizontal line at ref named ref_name in the key: one
 * number that holds for every group (NaN: none). */
void rp_plot_bars_ref(report *r, rp_item *it, const char *title, const char *ylabel,
		      const char *const *groups, int ngroups, const char *const *series,
		      int nseries, const double *values, double ref, const char *ref_name);

/* The sweep CSV reader (report_sweep.c), exposed for its tests.  Columns
 * added since the first sweeps (target, the quartiles, the interval,
 * dense_s, the baseline, reps, agree, rank_ok) are NaN, or -1, when a CSV
 * lacks them. */
typedef struct rp_sweep_row {
	char pattern[128], kernel[16], norm[32], backend[16], dtype[8];
	double target, achieved, median_s, q1_s, q3_s, speedup, speedup_lo, speedup_hi;
	double dense_s, baseline_s;
	long long n;
	int reps, agree, rank_ok;
} rp_sweep_row;
int rp_sweep_read(const char *path, rp_sweep_row **rows, size_t *count, char *reason,
		  size_t size);

/* The sweep figure (report_sweep_fig.c, templates/sweep.gp), the same for
 * `maskkit sweep --png` and the report: rows are sorted in place into series
 * (pattern, kernel, norm, backend, dtype, n; by sparsity) and fig->plot is
 * ready for mk_plot_run or rp_plot once its output is set.  A status with a
 * message when there is nothing to draw. */
typedef struct rp_sweep_fig {
	mk_plot plot;
	double *data;
	char *vars;
} rp_sweep_fig;
int rp_sweep_figure(rp_sweep_row *rows, size_t count, const char *title, rp_sweep_fig *fig);
void rp_sweep_figure_release(rp_sweep_fig *fig);

/* What a report made, as --json shows it (report_summary.c): each file
 * promised, whether it was made and why not. */
typedef struct rp_file_view {
	const char *file, *section;
	bool made;
	const char *reason; /* NULL when made */
} rp_file_view;
typedef struct rp_result {
	const char *out, *directory; /* as given, and absolute */
	bool page;          /* README.md and index.html too (not --only) */
	int64_t made, promised;
	rp_file_view *files;
	int64_t nfiles;
} rp_result;
extern const struct mk_record rp_result_record;
int rp_result_make(const report *r, const char *out_arg, rp_result *s);
void rp_result_release(rp_result *s);

/* Renders the Markdown template into README.md and index.html. */
int rp_render(report *r, rp_section *sections, int nsections);

#endif
