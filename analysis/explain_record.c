/*
 * `maskkit explain`'s results described once (result.h): the report
 * (JSON, text), its rows (CSV, the table) and the Sinkhorn trace.
 */
#include "config.h"
#include <stdio.h>
#include "explain.h"
#include "result.h"

static bool ex_is_head(const void *rec)
{
	return ((const mk_explain_row *)rec)->head >= 0;
}

static void ex_show_percent(const void *rec, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.3f%%", 100.0 * ((const mk_explain_row *)rec)->fraction_away);
}

#define EX_LOG10(m, name_, label_)                                                         \
	{MK_FIELD(mk_explain_row, m, name_, MK_FT_REAL), .label = label_, .fmt = "%.3f"}

static const mk_field ex_row_fields[] = {
	{MK_FIELD(mk_explain_row, head, "head", MK_FT_I64), .flags = MK_FF_JSON | MK_FF_OMIT,
	 .present = ex_is_head},
	{MK_FIELD(mk_explain_row, norm, "norm", MK_FT_STR), .flags = MK_FF_NOJSON},
	{MK_FIELD(mk_explain_row, head_name, "head", MK_FT_STR), .flags = MK_FF_NOJSON,
	 .help = "a head, or all"},
	{MK_FIELD(mk_explain_row, keys, "keys", MK_FT_I64), .help = "columns with an entry"},
	{MK_FIELD(mk_explain_row, empty, "empty", MK_FT_I64), .help = "columns without one"},
	{MK_FIELD(mk_explain_row, away, "explained_away", MK_FT_I64), .label = "away",
	 .help = "keys whose column sum is below eps"},
	{MK_FIELD(mk_explain_row, fraction_away, "fraction_away", MK_FT_REAL), .label = "away%",
	 .show = ex_show_percent},
	EX_LOG10(min, "log10_min", "min"),
	EX_LOG10(q1, "log10_q1", "q1"),
	EX_LOG10(median, "log10_median", "median"),
	EX_LOG10(q3, "log10_q3", "q3"),
	EX_LOG10(max, "log10_max", "max"),
	{MK_FIELD(mk_explain_row, min_colsum, "min_colsum", MK_FT_REAL), .label = "min_sum",
	 .fmt = "%.4g", .help = "the smallest column sum"},
	{MK_FIELD(mk_explain_row, bound, "bound", MK_FT_REAL), .flags = MK_FF_NOJSON | MK_FF_NOTEXT,
	 .help = "1/S"},
	{MK_FIELD(mk_explain_row, above_bound, "above_bound", MK_FT_BOOL), .label = ">=1/S",
	 .flags = MK_FF_NOCSV, .help = "min_colsum >= 1/S, within float32's rounding"},
	{MK_FIELD(mk_explain_row, above, "above_bound", MK_FT_INT),
	 .flags = MK_FF_NOJSON | MK_FF_NOTEXT},
};
const mk_record mk_explain_row_record = MK_RECORD("explain_row", mk_explain_row, ex_row_fields);

static const mk_field ex_norm_fields[] = {
	{MK_FIELD(mk_explain_norm_view, norm, "norm", MK_FT_STR)},
	{MK_FIELD(mk_explain_norm_view, all, "all", MK_FT_PTR), .sub = &mk_explain_row_record},
	{MK_FIELD(mk_explain_norm_view, heads, "heads", MK_FT_LIST), .sub = &mk_explain_row_record,
	 .count_offset = offsetof(mk_explain_norm_view, nheads)},
};
static const mk_record ex_norm_record = MK_RECORD("explain_norm", mk_explain_norm_view,
						  ex_norm_fields);

static const mk_field ex_counts_fields[] = {
	{MK_FIELD(mk_explain_counts, norm, "norm", MK_FT_STR)},
	{MK_FIELD(mk_explain_counts, counts, "counts", MK_FT_I64S),
	 .count_offset = offsetof(mk_explain_counts, bins)},
};
static const mk_record ex_counts_record = MK_RECORD("explain_counts", mk_explain_counts,
						    ex_counts_fields);

static const mk_field ex_hist_fields[] = {
	{MK_FIELD(mk_explain_report, e.lo, "log10_lo", MK_FT_REAL)},
	{MK_FIELD(mk_explain_report, e.width, "width", MK_FT_REAL)},
	{MK_FIELD(mk_explain_report, e.bins, "bins", MK_FT_INT)},
	{MK_FIELD(mk_explain_report, counts, "counts", MK_FT_LIST), .flags = MK_FF_KEYED,
	 .sub = &ex_counts_record, .count_offset = offsetof(mk_explain_report, nnorms)},
};
static const mk_record ex_hist_record = MK_RECORD("explain_histogram", mk_explain_report,
						  ex_hist_fields);

#define EX_RESIDUAL(m, name_)                                                              \
	{MK_FIELD(mk_explain_trace_row, m, name_, MK_FT_REAL), .fmt = "%.4e"}

static const mk_field ex_trace_fields[] = {
	{MK_FIELD(mk_explain_trace_row, round, "round", MK_FT_I64)},
	EX_RESIDUAL(row_max, "row_max"),
	EX_RESIDUAL(row_mean, "row_mean"),
	EX_RESIDUAL(col_max, "col_max"),
	EX_RESIDUAL(col_mean, "col_mean"),
};
const mk_record mk_explain_trace_record = MK_RECORD("sinkhorn_step", mk_explain_trace_row,
						    ex_trace_fields);

static const mk_field ex_trace_head_fields[] = {
	{MK_FIELD(mk_explain_trace_head, rounds, "rounds", MK_FT_LIST),
	 .sub = &mk_explain_trace_record, .count_offset = offsetof(mk_explain_trace_head, count)},
};
static const mk_record ex_trace_head_record = MK_RECORD("sinkhorn_trace", mk_explain_trace_head,
							ex_trace_head_fields);

static bool ex_has_trace(const void *rec)
{
	return ((const mk_explain_report *)rec)->ntrace > 0;
}

static const mk_field ex_fields[] = {
	{MK_FIELD(mk_explain_report, input, "input", MK_FT_STR)},
	{MK_FIELD(mk_explain_report, n, "S", MK_FT_I64), .help = "tokens"},
	{MK_FIELD(mk_explain_report, d, "d", MK_FT_I64)},
	{MK_FIELD(mk_explain_report, heads, "heads", MK_FT_I64)},
	{MK_FIELD(mk_explain_report, mask, "mask", MK_FT_STR)},
	{MK_FIELD(mk_explain_report, entries, "entries", MK_FT_U64), .help = "of the S^2"},
	{MK_FIELD(mk_explain_report, eps, "eps", MK_FT_REAL), .help = "explained away below"},
	{MK_FIELD(mk_explain_report, bound, "bound", MK_FT_REAL),
	 .help = "1/S: dnas and sinkhorn:K keep every column sum above it, hnas:u above u/S"},
	{MK_FIELD(mk_explain_report, norms, "norms", MK_FT_LIST), .flags = MK_FF_JSON,
	 .sub = &ex_norm_record, .count_offset = offsetof(mk_explain_report, nnorms)},
	/* the histogram's fields are the report's own */
	{.name = "histogram", .type = MK_FT_OBJ, .offset = 0, .flags = MK_FF_JSON,
	 .sub = &ex_hist_record},
	{MK_FIELD(mk_explain_report, trace, "sinkhorn_trace", MK_FT_LIST),
	 .flags = MK_FF_BARE | MK_FF_OMIT, .present = ex_has_trace, .sub = &ex_trace_head_record,
	 .count_offset = offsetof(mk_explain_report, ntrace)},
	{MK_FIELD(mk_explain_report, seconds, "seconds", MK_FT_REAL), .fmt = "%.3f", .unit = "s"},
};
const mk_record mk_explain_report_record = MK_RECORD("explain", mk_explain_report, ex_fields);
