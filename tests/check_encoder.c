/* Unit tests of the encoder (src/model/encoder*.c, encode*.c): a tiny random
 * BERT written by the test under PyTorch, TF1 and HF-TF2 names must give
 * the same bits; closed forms (Q = K = 0: uniform attention; a constant row
 * through LayerNorm; GELU at known points; a mask with an empty row); the
 * loader's errors; the HDF5 output read back through libhdf5's filters. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encoder_internal.h"
#include "h5testutil.h"
#include "scratchutil.h"
#include "testutil.h"
#include "tinybert.h"

/* ---- running a batch ------------------------------------------------------ */

enum { NS = 3, MAXN = 7 };
static const int64_t batch_len[NS] = {5, 1, 7};
static const int32_t batch_ids[NS][MAXN] = {{2, 7, 3, 19, 4}, {11}, {1, 0, 5, 5, 9, 12, 3}};

/* What a pass gave: every layer's P and Q/K/V, the last hidden states. */
typedef struct run {
	float p[LAYERS][HEADS * (25 + 1 + 49)];
	float qkv[LAYERS][13 * 3 * H];
	float hidden[13 * H];
	int64_t cells;
} run;

static int run_layer(void *arg, const mk_encoder_layer *x)
{
	run *r = arg;
	int64_t cells = 0, tokens = 0;
	for (int64_t s = 0; s < x->count; s++) {
		cells += x->heads * x->len[s] * x->len[s];
		tokens += x->len[s];
	}
	ck_assert_int_eq(cells, HEADS * (25 + 1 + 49));
	memcpy(r->p[x->layer], x->p, (size_t)cells * sizeof(float));
	memcpy(r->qkv[x->layer], x->qkv, (size_t)(tokens * 3 * H) * sizeof(float));
	r->cells = cells;
	return MK_OK;
}

static void run_batch(mk_encoder *e, run *r)
{
	memset(r, 0, sizeof *r);
	ck_assert_int_eq(mk_encoder_forward(e, &(mk_encoder_batch){
		.count = NS, .ids = &batch_ids[0][0], .stride = MAXN, .len = batch_len,
		.layer = run_layer, .arg = r, .hidden = r->hidden}), MK_OK);
}

START_TEST(test_namings_agree)
{
	static tiny m;
	static run r[3];
	static const char *const files[3] = {"torch.h5", "tf1.h5", "tf2.h5"};
	static const char *const naming[3] = {"torch", "tf", "tf"};
	mk_model_config c = tiny_config();

	tiny_make(&m, 1);
	for (int k = 0; k < 3; k++) {
		mk_encoder *e = NULL;
		ck_assert_msg(tiny_load(tiny_write(&m, k, files[k], NULL), &c, &e) == MK_OK, "%s: %s",
			      files[k], mk_error());
		ck_assert_str_eq(mk_encoder_naming(e), naming[k]);
		run_batch(e, &r[k]);
		mk_encoder_free(e);
	}
	for (int k = 1; k < 3; k++) {
		ck_assert(!memcmp(r[0].p, r[k].p, sizeof r[0].p));
		ck_assert(!memcmp(r[0].qkv, r[k].qkv, sizeof r[0].qkv));
		ck_assert(!memcmp(r[0].hidden, r[k].hidden, sizeof r[0].hidden));
	}
	/* every row of P a distribution */
	for (int64_t i = 0; i < r[0].cells; i += 5) {
		ck_assert(r[0].p[1][i] >= 0 && r[0].p[1][i] <= 1);
	}
}
END_TEST

/* The query and key projections of every layer zeroed, biases too. */
static void tiny_zero_qk(tiny *m)
{
	for (int l = 0; l < LAYERS; l++)
		for (int k = 0; k < 2; k++) {
			memset(m->l[l].w[k], 0, sizeof m->l[l].w[k]);
			memset(m->l[l].b[k], 0, sizeof m->l[l].b[k]);
		}
}

/* Q = K = 0 (weights and biases): every score is 0, so P is 1/len. */
START_TEST(test_uniform_attention)
{
	static tiny m;
	static run r;
	mk_model_config c = tiny_config();
	mk_encoder *e = NULL;

	tiny_make(&m, 2);
	tiny_zero_qk(&m);
	ck_assert_int_eq(tiny_load(tiny_write(&m, NAMES_TORCH, "u.h5", NULL), &c, &e), MK_OK);
	run_batch(e, &r);
	for (int l = 0; l < LAYERS; l++)
		for (int64_t s = 0, at = 0; s < NS; s++)
			for (int64_t k = 0; k < HEADS * batch_len[s] * batch_len[s]; k++, at++)
				ck_assert_float_eq_tol(r.p[l][at], 1.0f / (float)batch_len[s], 1e-7f);
	mk_encoder_free(e);
}
END_TEST

/* With --mask "causal - diag" row 0 has no key: all-zero probabilities;
 * row i > 0 spreads 1/i over the keys before it (Q = K = 0). */
START_TEST(test_mask_empty_row)
{
	static tiny m;
	static run r;
	mk_model_config c = tiny_config();
	mk_encoder *e = NULL;

	tiny_make(&m, 3);
	tiny_zero_qk(&m);
	ck_assert_int_eq(tiny_load(tiny_write(&m, NAMES_TORCH, "m.h5", NULL), &c, &e), MK_OK);
	ck_assert_int_eq(mk_encoder_set_mask(e, "causal - diag", 0), MK_OK);
	run_batch(e, &r);
	for (int64_t s = 0, at = 0; s < NS; s++) {
		int64_t n = batch_len[s];
		for (int64_t h = 0; h < HEADS; h++)
			for (int64_t i = 0; i < n; i++)
				for (int64_t j = 0; j < n; j++, at++)
					ck_assert_float_eq_tol(r.p[1][at], j < i ? 1.0f / (float)i : 0.0f,
							       1e-7f);
	}
	for (int64_t k = 0; k < 13 * H; k++)
		ck_assert(isfinite(r.hidden[k]));
	ck_assert_int_eq(mk_encoder_set_mask(e, "local(", 0), MK_EINVAL);
	mk_encoder_free(e);
}
END_TEST

/* A constant row has no spread: LayerNorm gives the bias exactly. */
START_TEST(test_layernorm)
{
	float x[2 * 4] = {3, 3, 3, 3, 1, 2, 3, 6}, g[4] = {2, 2, 2, 2}, b[4] = {0.5f, -1, 0, 7};
	double mean = 3, sd = sqrt((4.0 + 1.0 + 0.0 + 9.0) / 4.0 + 1e-12);

	mk_enc_layernorm(x, NULL, 2, 4, g, b, 1e-12);
	for (int j = 0; j < 4; j++)
		ck_assert_float_eq(x[j], b[j]);
	ck_assert_float_eq_tol(x[4], (float)(2 * (1 - mean) / sd + 0.5), 1e-6f);
	ck_assert_float_eq_tol(x[7], (float)(2 * (6 - mean) / sd + 7), 1e-6f);
}
END_TEST

/* GELU(x) = x Phi(x): Phi(1) = 0.841344746, Phi(-1) = 0.158655254,
 * Phi(3) = 0.998650102; 0 at 0; relu and the tanh form near it. */
START_TEST(test_gelu)
{
	float x[5] = {0, 1, -1, 3, -3}, t[5], r[3] = {-2, 0, 2};
	const double want[5] = {0, 0.841344746068543, -0.158655253931457, 2.995950305069243,
				-0.004049694930757};

	memcpy(t, x, sizeof x);
	mk_enc_activate(x, 5, ENC_GELU);
	for (int k = 0; k < 5; k++)
		ck_assert_float_eq_tol(x[k], (float)want[k], 2e-7f);
	mk_enc_activate(t, 5, ENC_GELU_TANH);
	for (int k = 0; k < 5; k++)
		ck_assert_float_eq_tol(t[k], (float)want[k], 1e-3f);
	mk_enc_activate(r, 3, ENC_RELU);
	ck_assert(r[0] == 0 && r[1] == 0 && r[2] == 2);
}
END_TEST

/* The loader's errors, each naming what is wrong. */
START_TEST(test_load_errors)
{
	static tiny m;
	mk_model_config c = tiny_config();
	mk_encoder *e = NULL;
	const char *p;
	hid_t f;

	tiny_make(&m, 4);
	p = tiny_write(&m, NAMES_TORCH, "missing.h5", "encoder.layer.1.output.dense.bias");
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "encoder.layer.1.output.dense.bias"));
	/* config.json says 3 layers, the file has 2 */
	p = tiny_write(&m, NAMES_TF1, "tf.h5", NULL);
	c.layers = 3;
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "encoder.layer.2.attention.self.query.weight"));
	/* ... or 1 layer, and the file has a second */
	c.layers = 1;
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "num_hidden_layers 1"));
	c = tiny_config();
	c.intermediate = 12;
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "intermediate/dense/kernel"));
	ck_assert_ptr_nonnull(strstr(mk_error(), "expected [8, 12]"));
	c = tiny_config();
	c.vocab = 30;
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "word_embeddings"));
	c = tiny_config();
	snprintf(c.model_type, sizeof c.model_type, "albert");
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "ALBERT"));
	c = tiny_config();
	snprintf(c.position_embedding_type, sizeof c.position_embedding_type, "relative_key");
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	/* a second copy of a role under another prefix */
	c = tiny_config();
	f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
	h5t_write1(f, "roberta/embeddings/LayerNorm/beta", H, m.ln_b);
	H5Fclose(f);
	ck_assert_int_eq(tiny_load(p, &c, &e), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "two prefixes"));
	ck_assert_ptr_null(e);
}
END_TEST

/* RoBERTa numbers positions from pad_token_id + 1: its input of n tokens
 * reads position rows 2 .. n + 1, the same as BERT given those rows first. */
START_TEST(test_roberta_positions)
{
	static tiny m, shifted;
	static run a, b;
	mk_model_config c = tiny_config();
	mk_encoder *e = NULL;

	tiny_make(&m, 5);
	shifted = m;
	memcpy(shifted.pos, m.pos + 2 * H, (size_t)(POS - 2) * H * sizeof(double));
	ck_assert_int_eq(tiny_load(tiny_write(&shifted, NAMES_TORCH, "b.h5", NULL), &c, &e), MK_OK);
	run_batch(e, &a);
	mk_encoder_free(e);
	snprintf(c.model_type, sizeof c.model_type, "roberta");
	c.pad_token_id = 1;
	ck_assert_int_eq(tiny_load(tiny_write(&m, NAMES_TORCH, "r.h5", NULL), &c, &e), MK_OK);
	ck_assert_int_eq(mk_encoder_max_len(e), POS - 2);
	run_batch(e, &b);
	ck_assert(!memcmp(a.p, b.p, sizeof a.p));
	ck_assert(!memcmp(a.hidden, b.hidden, sizeof a.hidden));
	mk_encoder_free(e);
}
END_TEST

/* maskkit encode's file read back through libhdf5 (its shuffle and deflate
 * filters undo the chunks encode_h5.c packed itself). */
START_TEST(test_write_file)
{
	static tiny m;
	static run r;
	static float blk[HEADS * MAXN * MAXN], q[HEADS * MAXN * DK];
	mk_model_config c = tiny_config();
	mk_encoder *e = NULL;
	int32_t ids[NS * MAXN];
	int64_t len[NS], got_len[NS];
	mk_encode_ids x = {.ids = ids, .len = len, .samples = NS, .n = MAXN, .tokens = 13};
	mk_encode_result res;
	hid_t f, d, sp, ms;

	memcpy(ids, batch_ids, sizeof ids);
	memcpy(len, batch_len, sizeof len);
	tiny_make(&m, 6);
	ck_assert_int_eq(tiny_load(tiny_write(&m, NAMES_TORCH, "w.h5", NULL), &c, &e), MK_OK);
	run_batch(e, &r);
	ck_assert_int_eq(mk_encode_write(e, &x, &(mk_encode_opts){.batch = 2, .max_len = 7,
		.qk = true, .model = "w.h5", .text = "t.txt"}, path("out.h5"), &res), MK_OK);
	f = H5Fopen(path("out.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	d = H5Dopen2(f, "lengths", H5P_DEFAULT);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, got_len), 0);
	H5Dclose(d);
	ck_assert(!memcmp(got_len, len, sizeof len));
	for (int64_t s = 0, at = 0; s < NS; s++) {
		int64_t n = len[s];
		hsize_t start[5] = {(hsize_t)s, 1, 0, 0, 0}, count[5] = {1, 1, HEADS, MAXN, MAXN};
		d = H5Dopen2(f, "attn", H5P_DEFAULT);
		sp = H5Dget_space(d);
		ms = H5Screate_simple(5, count, NULL);
		H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL);
		ck_assert_int_ge(H5Dread(d, H5T_NATIVE_FLOAT, ms, sp, H5P_DEFAULT, blk), 0);
		for (int64_t h = 0; h < HEADS; h++)
			for (int64_t i = 0; i < MAXN; i++)
				for (int64_t j = 0; j < MAXN; j++)
					ck_assert(blk[(h * MAXN + i) * MAXN + j] ==
						  (i < n && j < n ? r.p[1][at + (h * n + i) * n + j] : 0.0f));
		at += HEADS * n * n;
		H5Sclose(ms);
		H5Sclose(sp);
		H5Dclose(d);
	}
	/* sample 2's queries of layer 0: the first 3H-wide rows' first H columns */
	{
		hsize_t start[4] = {2, 0, 0, 0}, count[4] = {1, HEADS, MAXN, DK};
		d = H5Dopen2(f, "qk/layer_0/q", H5P_DEFAULT);
		sp = H5Dget_space(d);
		ms = H5Screate_simple(4, count, NULL);
		H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL);
		ck_assert_int_ge(H5Dread(d, H5T_NATIVE_FLOAT, ms, sp, H5P_DEFAULT, q), 0);
		for (int64_t h = 0; h < HEADS; h++)
			for (int64_t i = 0; i < MAXN; i++)
				for (int64_t j = 0; j < DK; j++)
					ck_assert(q[(h * MAXN + i) * DK + j] ==
						  r.qkv[0][(6 + i) * 3 * H + h * DK + j]);
		H5Sclose(ms);
		H5Sclose(sp);
		H5Dclose(d);
	}
	H5Fclose(f);
	/* nothing but out.h5 left behind (no temporary file) */
	ck_assert_int_eq(access(path("out.h5"), R_OK), 0);
	mk_encoder_free(e);
}
END_TEST

/* mk_encode_maps_make: the file's /attn, /lengths and /ids in memory, the
 * same bits in float32 and float16; its refusals. */
START_TEST(test_maps_in_memory)
{
	static tiny m;
	static float want32[NS * LAYERS * HEADS * MAXN * MAXN];
	static uint16_t want16[NS * LAYERS * HEADS * MAXN * MAXN];
	mk_model_config c = tiny_config();
	mk_encoder *e = NULL;
	int32_t ids[NS * MAXN], got_ids[NS * MAXN];
	int64_t len[NS];
	mk_encode_ids x = {.ids = ids, .len = len, .samples = NS, .n = MAXN, .tokens = 13,
			   .truncated = 1};
	mk_encode_result res;
	mk_encode_maps got;
	hid_t f16 = h5t_float16();

	memcpy(ids, batch_ids, sizeof ids);
	memcpy(len, batch_len, sizeof len);
	tiny_make(&m, 8);
	ck_assert_int_eq(tiny_load(tiny_write(&m, NAMES_TORCH, "w.h5", NULL), &c, &e), MK_OK);
	for (int half = 0; half < 2; half++) {
		mk_encode_opts o = {.batch = 2, .max_len = 7, .dtype = half ? MK_DTYPE_F16 : 0};
		hid_t f, d;
		ck_assert_int_eq(mk_encode_write(e, &x, &o, path("out.h5"), &res), MK_OK);
		f = H5Fopen(path("out.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
		d = H5Dopen2(f, "attn", H5P_DEFAULT);
		/* float16 read as itself: its bits */
		ck_assert_int_ge(H5Dread(d, half ? f16 : H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL,
					 H5P_DEFAULT, half ? (void *)want16 : (void *)want32), 0);
		H5Dclose(d);
		d = H5Dopen2(f, "ids", H5P_DEFAULT);
		ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT,
					 got_ids), 0);
		H5Dclose(d);
		H5Fclose(f);
		ck_assert_msg(mk_encode_maps_make(e, &x, &o, 0, &got) == MK_OK, "%s", mk_error());
		ck_assert_int_eq(got.samples, NS);
		ck_assert_int_eq(got.layers, LAYERS);
		ck_assert_int_eq(got.heads, HEADS);
		ck_assert_int_eq(got.n, MAXN);
		ck_assert_int_eq(got.truncated, 1);
		ck_assert_int_eq(got.max_len, 7);
		ck_assert_int_eq(got.dtype, half ? MK_DTYPE_F16 : MK_DTYPE_F32);
		ck_assert_str_eq(got.model_type, "bert");
		ck_assert(!memcmp(got.attn, half ? (void *)want16 : (void *)want32,
				  half ? sizeof want16 : sizeof want32));
		ck_assert(!memcmp(got.lengths, len, sizeof len));
		ck_assert(!memcmp(got.ids, got_ids, sizeof got_ids));
		mk_encode_maps_release(&got);
	}
	/* the maps' bytes against max_memory, before they are allocated */
	ck_assert_int_eq(mk_encode_maps_make(e, &x, &(mk_encode_opts){.batch = 2}, 1000, &got),
			 MK_ERANGE);
	ck_assert_str_eq(mk_error_get()->param, "max_memory");
	ck_assert_ptr_null(got.attn);
	ck_assert_int_eq(mk_encode_maps_make(e, &x, &(mk_encode_opts){.batch = 0}, 0, &got),
			 MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "batch");
	ck_assert_int_eq(mk_encode_maps_make(e, &x, &(mk_encode_opts){.batch = 1, .qk = true}, 0,
					     &got), MK_EINVAL);
	ck_assert_int_eq(mk_encode_maps_make(e, &x, &(mk_encode_opts){.batch = 1,
		.layout = MK_ENCODE_RAGGED}, 0, &got), MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "layout");
	H5Tclose(f16);
	mk_encoder_free(e);
}
END_TEST

/* The ids file: blank lines skipped, long lines cut and counted, bad ids named. */
START_TEST(test_ids_file)
{
	static const char good[] = "101 7 8 102\n\n  101 9 102 \n101 1 2 3 4 5 102\n";
	mk_encode_ids x;

	put_file(path("ids.txt"), good, sizeof good - 1);
	ck_assert_int_eq(mk_encode_ids_read(path("ids.txt"), 200, 5, 0, 0, &x), MK_OK);
	ck_assert_int_eq(x.samples, 3);
	ck_assert_int_eq(x.n, 5);
	ck_assert_int_eq(x.truncated, 1);
	ck_assert_int_eq(x.len[1], 3);
	ck_assert_int_eq(x.ids[1 * 5 + 1], 9);
	ck_assert_int_eq(x.ids[1 * 5 + 3], 0);
	ck_assert_int_eq(x.tokens, 12);
	mk_encode_ids_release(&x);
	ck_assert_int_eq(mk_encode_ids_read(path("ids.txt"), 200, 5, 1, 0, &x), MK_OK);
	ck_assert_int_eq(x.samples, 1);
	ck_assert_int_eq(x.n, 4);
	mk_encode_ids_release(&x);
	ck_assert_int_eq(mk_encode_ids_read(path("ids.txt"), 50, 5, 0, 0, &x), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "line 1: token id 101"));
	put_file(path("bad.txt"), "1 2\n3 x4\n", 9);
	ck_assert_int_eq(mk_encode_ids_read(path("bad.txt"), 50, 5, 0, 0, &x), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "line 2: 'x4'"));
	put_file(path("empty.txt"), " \n\n", 3);
	ck_assert_int_eq(mk_encode_ids_read(path("empty.txt"), 50, 5, 0, 0, &x), MK_EFORMAT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("encoder");
	TCase *t = tcase_create("encoder");

	tcase_add_checked_fixture(t, scratch_setup, scratch_teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_namings_agree);
	tcase_add_test(t, test_uniform_attention);
	tcase_add_test(t, test_mask_empty_row);
	tcase_add_test(t, test_layernorm);
	tcase_add_test(t, test_gelu);
	tcase_add_test(t, test_load_errors);
	tcase_add_test(t, test_roberta_positions);
	tcase_add_test(t, test_write_file);
	tcase_add_test(t, test_maps_in_memory);
	tcase_add_test(t, test_ids_file);
	suite_add_tcase(s, t);
	return mk_test_main(s);
}
