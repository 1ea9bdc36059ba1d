/*
 * Attention on tensors in files, what `maskkit attn` does: Q, K and V read
 * and checked against each other, the mask bound at their size, O computed
 * by one kernel and written in Q's layout, and on request the attention
 * matrix pi itself, column block by column block.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "patterns.h"
#include "tensor.h"
#include "attn.h"
#include "result.h"

static const char *const files_names[3] = {"Q", "K", "V"};

/* What the run holds beside its result. */
typedef struct files_job {
	const mk_attn_files_opts *o;
	mk_tensor qkv[3], out, pi;
	mk_attn_shape shape;
	mk_mask *mask;
	mk_attn_layout *layout;
	const mk_attn_backend *backend;
	mk_dtype dtype;
} files_job;

static int files_read(const char *const files[3], files_job *j)
{
	char a[96], b[96];
	int ret;

	for (int k = 0; k < 3; k++)
		if ((ret = (j->o->map_inputs ? mk_tensor_read_mapped : mk_tensor_read)(
			     files[k], j->o->bind.max_memory, &j->qkv[k])))
			return ret;
	/* K and V alike; Q as they are but for its number of rows */
	for (int k = 1; k < 3; k++) {
		const mk_tensor *x = &j->qkv[k == 1 ? 0 : 1], *y = &j->qkv[k];
		int r = x->rank;
		if (r == y->rank && !memcmp(x->dims, y->dims, (size_t)(r - 2) * sizeof *x->dims) &&
		    x->dims[r - 1] == y->dims[r - 1] && (k == 1 || x->dims[r - 2] == y->dims[r - 2]))
			continue;
		mk_tensor_shape_text(x, a, sizeof a);
		mk_tensor_shape_text(y, b, sizeof b);
		return mk_error_set(MK_EINVAL, "%s '%s' has shape %s but %s '%s' has shape %s; K and "
				    "V need the same shape, and Q theirs but for its rows (q_len)",
				    files_names[k == 1 ? 0 : 1], files[k == 1 ? 0 : 1], a,
				    files_names[k], files[k], b);
	}
	j->dtype = MK_DTYPE_F32;
	for (int k = 0; k < 3; k++)
		if (j->qkv[k].dtype == MK_DTYPE_F64)
			j->dtype = MK_DTYPE_F64;
	return MK_OK;
}

static void files_shape(files_job *j)
{
	const mk_tensor *q = &j->qkv[0], *k = &j->qkv[1];
	int r = q->rank;

	j->shape = (mk_attn_shape){.batch = r == 4 ? q->dims[0] : 1,
				   .heads = r >= 3 ? q->dims[r - 3] : 1, .n = q->dims[r - 2],
				   .d = q->dims[r - 1], .kv_len = k->dims[r - 2]};
}

static int files_mask(files_job *j, mk_attn_files *r)
{
	const mk_attn_files_opts *o = j->o;
	int64_t n = j->shape.n, kv = mk_attn_kv(&j->shape);
	int ret;

	if (o->mask && ((ret = mk_expr_operand_bound(o->mask, &o->bind, n, kv, &r->expr)) ||
			(ret = mk_expr_to_mask(r->expr, &j->mask))))
		return ret;
	if (o->kernel == MK_KERNEL_DENSE) {
		if (j->mask && mk_mask_count(j->mask) != (uint64_t)n * (uint64_t)kv)
			return mk_error_set(MK_EINVAL, "kernel 'dense' attends to every key and "
					    "ignores a mask: use masked, block or csr"),
			       mk_error_param("kernel");
		return MK_OK;
	}
	if (!j->mask) {
		ret = mk_mask_new_rect(n, kv, o->bind.max_memory, &j->mask);
		for (int64_t i = 0; ret == MK_OK && i < n; i++)
			mk_bits_set_range(mk_mask_row(j->mask, i), 0, kv);
		if (ret)
			return ret;
	}
	if ((ret = mk_attn_prepare(j->backend, j->mask, o->tile, o->bind.max_memory, &j->layout)))
		return ret;
	r->empty_rows = mk_attn_layout_empty_rows(j->layout);
	return MK_OK;
}

static int files_run(const files_job *j, const float *v, float *out)
{
	mk_attn_stats st;
	return mk_attn_run(j->backend, j->o->kernel, &j->o->norm, &j->shape, j->qkv[0].data,
			   j->qkv[1].data, v, j->layout, out, &st);
}

/* pi column block by column block: pi V is linear in V, so V = columns
 * [c0, c0 + d) of the identity gives those columns of pi in O. */
static int files_weights(files_job *j)
{
	const mk_attn_shape *s = &j->shape;
	int64_t dims[MK_TENSOR_MAX_RANK], slices = s->batch * s->heads, n = s->n, d = s->d;
	int64_t kv = mk_attn_kv(s);
	uint64_t mem = j->o->bind.max_memory;
	mk_tensor v = {0}, out = {0};
	int r = j->qkv[0].rank, ret;

	memcpy(dims, j->qkv[0].dims, sizeof dims);
	dims[r - 1] = kv;
	if ((ret = mk_tensor_new(r, dims, j->dtype, mem, "the attention matrix pi", &j->pi)) ||
	    (ret = mk_tensor_new(r, j->qkv[1].dims, MK_DTYPE_F32, mem, "V", &v)) ||
	    (ret = mk_tensor_new(r, j->qkv[0].dims, MK_DTYPE_F32, mem, "O", &out)))
		goto out;
	for (int64_t c0 = 0; c0 < kv; c0 += d) {
		int64_t w = kv - c0 < d ? kv - c0 : d;
		memset(v.data, 0, (size_t)mk_tensor_count(&v) * sizeof *v.data);
		for (int64_t x = 0; x < slices; x++)
			for (int64_t c = 0; c < w; c++)
				v.data[(x * kv + c0 + c) * d + c] = 1.0f;
		if ((ret = files_run(j, v.data, out.data)))
			goto out;
		for (int64_t x = 0; x < slices * n; x++)
			memcpy(j->pi.data + x * kv + c0, out.data + x * d, (size_t)w * sizeof(float));
	}
out:
	mk_tensor_release(&v);
	mk_tensor_release(&out);
	return ret;
}

/* O is written while it is computed when it is at least this large and
 * the backend is the CPU's (a GPU would copy it back whole): each slice
 * goes to the writer's thread as soon as the kernel has finished it
 * (mk_attn_run_progress), so that the fsync at the end waits for the last
 * slice only.  At n = 4096, d = 64, 8 heads (8 MiB of O, ext4) the time
 * from the kernel's end to the exit fell from 35 to 20 ms (medians of 10;
 * measured with a run of slices per call, which also kept the kernel's
 * threads from going from one slice to the next). */
#define FILES_PARTS_MIN_BYTES ((uint64_t)4 << 20)

typedef struct files_parts {
	files_job *j;
	mk_tensor_sink *sink;
	double seconds; /* the kernel's */
} files_parts;

/* The slices [0, done) of O are final: to the writer. */
static void files_part_ready(int64_t done, int64_t slices, void *arg)
{
	files_parts *p = arg;
	const mk_attn_shape *s = &p->j->shape;

	(void)slices;
	mk_tensor_sink_ready(p->sink, (uint64_t)done * (uint64_t)(s->n * s->d));
}

/* O, all of it, each slice handed on as it is finished (mk_tensor_produce). */
static int files_part(void *arg, mk_tensor_sink *sink, uint64_t *ready)
{
	files_parts *p = arg;
	files_job *j = p->j;
	const mk_attn_shape *s = &j->shape;
	mk_attn_stats st;
	double t0 = mk_attn_clock(j->backend);
	int ret;

	p->sink = sink;
	ret = mk_attn_run_progress(j->backend, j->o->kernel, &j->o->norm, s, j->qkv[0].data,
				   j->qkv[1].data, j->qkv[2].data, j->layout, j->out.data, &st,
				   files_part_ready, p);
	p->seconds = mk_attn_clock(j->backend) - t0;
	*ready = (uint64_t)(s->batch * s->heads * s->n * s->d);
	return ret;
}

/* O computed and written together; r->seconds the kernel's time. */
static int files_run_write(files_job *j, mk_attn_files *r)
{
	files_parts p = {.j = j};
	int ret;

	ret = mk_tensor_write_parts(&j->out, j->o->out, "O", j->dtype, files_part, &p);
	r->seconds = p.seconds;
	return ret;
}

/* Whether O is large enough to be written as it is made (see above). */
static bool files_overlap(const files_job *j)
{
	const mk_attn_shape *s = &j->shape;
	uint64_t bytes = (uint64_t)(s->batch * s->heads * s->n * s->d) * sizeof(float);

	return !j->o->weights && bytes >= FILES_PARTS_MIN_BYTES &&
	       !strcmp(mk_attn_backend_name(j->backend), "cpu") &&
	       (uint64_t)(s->n * s->d) * sizeof(float) < bytes / 2;
}

/* auto: cuda when built and a device is usable, else cpu. */
static const mk_attn_backend *files_backend(const char *name)
{
	const mk_attn_backend *b;

	if (name && strcmp(name, "auto"))
		return mk_attn_backend_get(name);
	if ((b = mk_attn_backend_get("cuda")))
		return b;
	mk_error_set(MK_OK, "%s", "");
	return mk_attn_backend_get("cpu");
}

static int files_compute(const char *const files[3], files_job *j, mk_attn_files *r)
{
	const mk_attn_files_opts *o = j->o;
	double t0;
	bool overlap;
	int ret;

	if (!(j->backend = files_backend(o->backend)))
		return MK_EINVAL;
	if ((ret = files_read(files, j)))
		return ret;
	files_shape(j);
	if (o->weights && (j->shape.n > MK_ATTN_WEIGHTS_MAX_N ||
			   mk_attn_kv(&j->shape) > MK_ATTN_WEIGHTS_MAX_N)) {
		mk_error_set(MK_ERANGE, "the attention matrix pi needs n and kv_len <= %d (it has "
			     "n kv_len entries per head), got %" PRId64 " and %" PRId64,
			     MK_ATTN_WEIGHTS_MAX_N, j->shape.n, mk_attn_kv(&j->shape));
		return mk_error_param("weights");
	}
	overlap = files_overlap(j);
	/* The CPU's kernels write every element of O, empty rows too (tests:
	 * check_rect, check_ukernel), so O written as it is made is not zeroed
	 * first: zeroing its 8 MiB at n = 4096, 8 heads took 1.1 ms before the
	 * kernel, on one thread, and its pages are touched by the kernel's
	 * threads anyway (measured with perf trace).  Elsewhere (a GPU's copy,
	 * pi's columns) it is zeroed as before. */
	if ((ret = files_mask(j, r)) ||
	    (ret = (overlap ? mk_tensor_new_unset : mk_tensor_new)(
		     j->qkv[0].rank, j->qkv[0].dims, j->dtype, o->bind.max_memory, "O", &j->out)))
		return ret;
	if (overlap)
		return files_run_write(j, r);
	t0 = mk_attn_clock(j->backend);
	if ((ret = files_run(j, j->qkv[2].data, j->out.data)))
		return ret;
	r->seconds = mk_attn_clock(j->backend) - t0;
	if (o->weights && (ret = files_weights(j)))
		return ret;
	if ((ret = mk_tensor_write(&j->out, o->out, "O", j->dtype)))
		return ret;
	return o->weights ? mk_tensor_write(&j->pi, o->weights, "pi", j->dtype) : MK_OK;
}

int mk_attn_files_run(const char *const files[3], const mk_attn_files_opts *o,
		      mk_attn_files *r)
{
	files_job j = {.o = o};
	int ret;

	memset(r, 0, sizeof *r);
	ret = files_compute(files, &j, r);
	if (ret == MK_OK) {
		const mk_attn_shape *s = &j.shape;
		r->rank = j.out.rank;
		memcpy(r->dims, j.out.dims, (size_t)r->rank * sizeof *r->dims);
		r->shape = r->dims; /* a pointer for the record's list of numbers */
		if (o->weights)
			memcpy(r->pi_shape, j.pi.dims, (size_t)r->rank * sizeof *r->pi_shape);
		r->batch = s->batch;
		r->heads = s->heads;
		r->n = s->n;
		r->kv_len = mk_attn_kv(s);
		r->d = s->d;
		r->dtype = mk_dtype_name(j.dtype);
		r->kernel = mk_attn_kernel_name(o->kernel);
		r->backend = mk_attn_backend_name(j.backend);
		r->mask = r->expr ? mk_expr_params(r->expr) : "full";
		mk_norm_format(&o->norm, r->norm, sizeof r->norm);
		r->out = o->out;
		r->weights = o->weights;
	} else {
		mk_attn_files_release(r);
	}
	for (int k = 0; k < 3; k++)
		mk_tensor_release(&j.qkv[k]);
	mk_tensor_release(&j.out);
	mk_tensor_release(&j.pi);
	mk_attn_layout_free(j.layout);
	mk_mask_free(j.mask);
	return ret;
}

void mk_attn_files_release(mk_attn_files *r)
{
	if (!r)
		return;
	mk_expr_free(r->expr);
	memset(r, 0, sizeof *r);
}

/* ---- the result, described once ------------------------------------------- */

static void files_show_dims(const int64_t *dims, int64_t rank, const char *dtype, char *buf,
			    size_t cap)
{
	mk_tensor t = {.rank = (int)rank};

	memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
	mk_tensor_shape_text(&t, buf, cap);
	if (dtype)
		snprintf(buf + strlen(buf), cap - strlen(buf), " %s", dtype);
}

static void files_show_o(const void *rec, char *buf, size_t cap)
{
	const mk_attn_files *r = rec;
	files_show_dims(r->dims, r->rank, r->dtype, buf, cap);
}

static void files_show_pi(const void *rec, char *buf, size_t cap)
{
	const mk_attn_files *r = rec;
	files_show_dims(r->pi_shape, r->rank, NULL, buf, cap);
}

static bool files_has_weights(const void *rec)
{
	return ((const mk_attn_files *)rec)->weights != NULL;
}

static const mk_field files_fields[] = {
	{MK_FIELD(mk_attn_files, shape, "shape", MK_FT_I64S), .flags = MK_FF_JSON,
	 .count_offset = offsetof(mk_attn_files, rank), .help = "O's dimensions (Q's)"},
	{MK_FIELD(mk_attn_files, rank, "O", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = files_show_o},
	{MK_FIELD(mk_attn_files, batch, "batch", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_files, heads, "heads", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_files, n, "n", MK_FT_I64), .flags = MK_FF_NOTEXT,
	 .help = "queries"},
	{MK_FIELD(mk_attn_files, kv_len, "kv_len", MK_FT_I64), .flags = MK_FF_NOTEXT,
	 .help = "keys"},
	{MK_FIELD(mk_attn_files, d, "d", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_files, dtype, "dtype", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "O's and pi's"},
	{MK_FIELD(mk_attn_files, kernel, "kernel", MK_FT_STR)},
	{MK_FIELD(mk_attn_files, norm, "norm", MK_FT_CHARS)},
	{MK_FIELD(mk_attn_files, backend, "backend", MK_FT_STR), .help = "the backend that ran"},
	{MK_FIELD(mk_attn_files, mask, "mask", MK_FT_STR),
	 .help = "the mask's parameters, or full"},
	{MK_FIELD(mk_attn_files, empty_rows, "empty_rows", MK_FT_I64), .label = "empty rows",
	 .help = "mask rows with no entry: zero rows of O"},
	{MK_FIELD(mk_attn_files, seconds, "seconds", MK_FT_REAL), .fmt = "%.6f", .unit = "s",
	 .help = "the kernel's time"},
	{MK_FIELD(mk_attn_files, out, "output", MK_FT_STR), .help = "O's file"},
	{MK_FIELD(mk_attn_files, weights, "weights", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "pi's file, or null"},
	{MK_FIELD(mk_attn_files, rank, "pi", MK_FT_I64), .flags = MK_FF_TEXT | MK_FF_OMIT,
	 .present = files_has_weights, .show = files_show_pi},
	{MK_FIELD(mk_attn_files, weights, "weights", MK_FT_STR), .flags = MK_FF_TEXT | MK_FF_OMIT},
};

const mk_record mk_attn_files_record = MK_RECORD("attn", mk_attn_files, files_fields);
