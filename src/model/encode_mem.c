/*
 * maskkit encode into memory: the padded layout of encode_h5.c (/attn,
 * /lengths, /ids) as arrays the caller gets, for the Python package, which
 * would otherwise need a temporary file.  The forward pass is the file's
 * (mk_encoder_forward batch by batch) and float16 is the file's rounding
 * (mk_half_from_float), so the numbers are the file's bit for bit.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "internal.h"

typedef struct em_job {
	mk_encode_maps *m;
	int64_t first; /* the batch's first sample */
} em_job;

/* The layer callback: each sample's heads x len x len into its top-left
 * corner of the n x n maps (the rest stays zero from calloc). */
static int em_layer(void *arg, const mk_encoder_layer *x)
{
	em_job *j = arg;
	mk_encode_maps *m = j->m;
	int64_t n = m->n;

	for (int64_t s = 0; s < x->count; s++) {
		int64_t len = x->len[s];
		uint64_t base = (((uint64_t)(j->first + s) * (uint64_t)m->layers + (uint64_t)x->layer) *
				 (uint64_t)m->heads) * (uint64_t)(n * n);
		for (int64_t h = 0; h < x->heads; h++)
			for (int64_t i = 0; i < len; i++) {
				const float *src = x->p + x->poff[s] + (h * len + i) * len;
				uint64_t at = base + (uint64_t)(h * n * n + i * n);
				if (m->dtype == MK_DTYPE_F16)
					for (int64_t k = 0; k < len; k++)
						((uint16_t *)m->attn)[at + (uint64_t)k] = mk_half_from_float(src[k]);
				else
					memcpy((float *)m->attn + at, src, (size_t)len * sizeof *src);
			}
	}
	return MK_OK;
}

void mk_encode_maps_release(mk_encode_maps *m)
{
	if (!m)
		return;
	free(m->attn);
	free(m->lengths);
	free(m->ids);
	memset(m, 0, sizeof *m);
}

/* The arrays, the maps' size checked first. */
static int em_alloc(const mk_encode_ids *x, size_t esize, uint64_t max_memory, mk_encode_maps *m)
{
	uint64_t cells, bytes;
	char what[160];
	int ret;

	snprintf(what, sizeof what, "the attention maps of %" PRId64 " samples x %" PRId64
		 " layers x %" PRId64 " heads x %" PRId64 " x %" PRId64, x->samples, m->layers,
		 m->heads, x->n, x->n);
	if ((ret = mk_mul_u64((uint64_t)x->samples * (uint64_t)m->layers, (uint64_t)m->heads,
			      &cells)) ||
	    (ret = mk_mul_u64(cells, (uint64_t)x->n * (uint64_t)x->n, &cells)) ||
	    (ret = mk_mul_u64(cells, esize, &bytes)) ||
	    (ret = mk_check_memory(bytes, max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY, what)))
		return mk_error_param("max_memory");
	m->attn = calloc((size_t)cells, esize);
	m->lengths = malloc((size_t)x->samples * sizeof *m->lengths);
	m->ids = malloc((size_t)(x->samples * x->n) * sizeof *m->ids);
	if (!m->attn || !m->lengths || !m->ids)
		return mk_error_set(MK_ENOMEM, "out of memory for %s", what);
	memcpy(m->lengths, x->len, (size_t)x->samples * sizeof *m->lengths);
	memcpy(m->ids, x->ids, (size_t)(x->samples * x->n) * sizeof *m->ids);
	return MK_OK;
}

int mk_encode_maps_make(mk_encoder *e, const mk_encode_ids *x, const mk_encode_opts *o,
			uint64_t max_memory, mk_encode_maps *out)
{
	const mk_model_config *c = mk_encoder_config(e);
	em_job j = {.m = out};
	int ret;

	memset(out, 0, sizeof *out);
	if (x->samples < 1 || x->n < 1)
		return mk_error_set(MK_EINVAL, "nothing to encode");
	if (o->batch < 1) {
		mk_error_set(MK_EINVAL, "batch must be positive, got %" PRId64, o->batch);
		return mk_error_param("batch");
	}
	if (o->dtype != MK_DTYPE_NONE && o->dtype != MK_DTYPE_F32 && o->dtype != MK_DTYPE_F16) {
		mk_error_set(MK_EINVAL, "encode stores float32 or float16, not %s",
			     mk_dtype_name(o->dtype));
		return mk_error_param("dtype");
	}
	if (o->qk || o->layout != MK_ENCODE_PADDED) {
		mk_error_set(MK_EINVAL, "%s: only in a file (maskkit encode)", o->qk
			     ? "queries and keys" : "the ragged layout");
		return mk_error_param(o->qk ? "qk" : "layout");
	}
	*out = (mk_encode_maps){.samples = x->samples, .layers = c->layers, .heads = c->heads,
				.n = x->n, .max_len = o->max_len, .truncated = x->truncated,
				.tokens = x->tokens, .dtype = o->dtype == MK_DTYPE_F16 ? MK_DTYPE_F16
							       : MK_DTYPE_F32};
	snprintf(out->model_type, sizeof out->model_type, "%s", c->model_type);
	ret = em_alloc(x, out->dtype == MK_DTYPE_F16 ? 2 : 4, max_memory, out);
	for (int64_t s = 0; s < x->samples && ret == MK_OK; s += o->batch) {
		int64_t count = x->samples - s < o->batch ? x->samples - s : o->batch;
		j.first = s;
		ret = mk_encoder_forward(e, &(mk_encoder_batch){
			.count = count, .ids = x->ids + s * x->n, .stride = x->n, .len = x->len + s,
			.layer = em_layer, .arg = &j});
		if (ret == MK_OK && o->progress)
			o->progress(s + count, x->samples, 0.0, o->progress_arg);
	}
	if (ret)
		mk_encode_maps_release(out);
	return ret;
}
