/* Unit tests of the positional attention term: known answers computed term
 * by term with plain loops, both checkpoint layouts, an ALBERT-style
 * projection, head splitting, and every malformed input. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "positional_find.h"
#include "testutil.h"
#include "h5testutil.h"

#define N 5 /* positions */
#define E 4 /* embedding size */
#define V 3 /* vocabulary */

static char path[4096];
static double ep[N * E], words[V * E], wq[E * E], wk[E * E], bq[E], bk[E];

/* Small reproducible values in [-1, 1). */
static void fill(double *x, int count, uint64_t seed)
{
	for (int k = 0; k < count; k++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		x[k] = (double)(seed >> 11) / 4503599627370496.0 - 1.0;
	}
}

static void setup(void)
{
	fill(ep, N * E, 1);
	fill(words, V * E, 2);
	fill(wq, E * E, 3);
	fill(wk, E * E, 4);
	fill(bq, E, 5);
	fill(bk, E, 6);
	h5t_tmpname(path, sizeof path, "check_positional");
}

static void teardown(void)
{
	unlink(path);
}

static void transpose(const double *a, int rows, int cols, double *t)
{
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++)
			t[j * rows + i] = a[i * cols + j];
}

/* A HuggingFace TF layout (kernels in x out) or a PyTorch one (out x in). */
static void write_model(bool torch, int layers)
{
	hid_t f = h5t_create(path);
	char name[256];
	double t[E * E];
	h5t_write2(f, torch ? "bert.embeddings.position_embeddings.weight"
			    : "m/bert/embeddings/position_embeddings/embeddings:0", N, E, ep);
	h5t_write2(f, torch ? "bert.embeddings.word_embeddings.weight"
			    : "m/bert/embeddings/word_embeddings/weight:0", V, E, words);
	for (int l = 0; l < layers; l++)
		for (int r = 0; r < 2; r++) {
			const char *role = r ? "key" : "query";
			const double *w = r ? wk : wq, *b = r ? bk : bq;
			if (torch) {
				transpose(w, E, E, t);
				snprintf(name, sizeof name, "bert.encoder.layer.%d.attention.self.%s.weight",
					 l, role);
				h5t_write2(f, name, E, E, t);
				snprintf(name, sizeof name, "bert.encoder.layer.%d.attention.self.%s.bias",
					 l, role);
			} else {
				snprintf(name, sizeof name, "m/bert/encoder/layer_._%d/attention/self/%s/"
					 "kernel:0", l, role);
				h5t_write2(f, name, E, E, w);
				snprintf(name, sizeof name, "m/bert/encoder/layer_._%d/attention/self/%s/"
					 "bias:0", l, role);
			}
			h5t_write1(f, name, E, b);
		}
	H5Fclose(f);
}

/* x (1 x in) W (in x out, row-major) + b, by loops. */
static void affine(const double *x, const double *w, const double *b, int in, int out,
		   double *y)
{
	for (int j = 0; j < out; j++) {
		y[j] = b ? b[j] : 0.0;
		for (int k = 0; k < in; k++)
			y[j] += x[k] * w[k * out + j];
	}
}

/* F[h][i][j] = (q_i . k_j - a . c) / sqrt(dk) over head h's columns, with
 * q_i = a + p_i W_Q, k_j = c + p_j W_K, a = wbar W_Q + b_Q, c = wbar W_K + b_K. */
static double reference(int heads, bool bias, int h, int i, int j)
{
	double wbar[E] = {0}, a[E], c[E], qi[E], kj[E], s = 0.0;
	int dk = E / heads;
	for (int v = 0; v < V; v++)
		for (int k = 0; k < E; k++)
			wbar[k] += words[v * E + k] / V;
	affine(wbar, wq, bias ? bq : NULL, E, E, a);
	affine(wbar, wk, bias ? bk : NULL, E, E, c);
	affine(ep + i * E, wq, NULL, E, E, qi);
	affine(ep + j * E, wk, NULL, E, E, kj);
	for (int k = h * dk; k < (h + 1) * dk; k++)
		s += a[k] * kj[k] + qi[k] * c[k] + qi[k] * kj[k];
	return s / sqrt((double)dk);
}

static void check_against_reference(const mk_positional *p, bool bias)
{
	for (int h = 0; h < p->heads; h++)
		for (int i = 0; i < N; i++)
			for (int j = 0; j < N; j++)
				ck_assert_double_eq_tol(p->f[(h * N + i) * N + j],
							reference((int)p->heads, bias, h, i, j), 1e-12);
}

static int compute(mk_positional_opts *o, mk_positional *p)
{
	return mk_positional_compute(path, o, p);
}

START_TEST(test_tf_layout_matches_loops)
{
	mk_positional_opts o = {.heads = 2};
	mk_positional p;
	write_model(false, 2);
	ck_assert_int_eq(compute(&o, &p), MK_OK);
	ck_assert_int_eq(p.n, N);
	ck_assert_int_eq(p.heads, 2);
	ck_assert_int_eq(p.dk, 2);
	ck_assert_int_eq(p.layers, 2);
	ck_assert_ptr_nonnull(strstr(p.used[MK_POS_QUERY_BIAS], "query/bias:0"));
	check_against_reference(&p, true);
	mk_positional_release(&p);
}
END_TEST

START_TEST(test_torch_layout_matches_loops)
{
	mk_positional_opts o = {.heads = 1, .layer = 2};
	mk_positional p;
	write_model(true, 3);
	ck_assert_int_eq(compute(&o, &p), MK_OK);
	ck_assert_int_eq(p.layers, 3);
	ck_assert_ptr_nonnull(strstr(p.used[MK_POS_KEY], "layer.2.attention.self.key.weight"));
	check_against_reference(&p, true);
	mk_positional_release(&p);
}
END_TEST

START_TEST(test_no_bias_is_the_papers_equation)
{
	mk_positional_opts o = {.heads = 4, .no_bias = true};
	mk_positional p;
	write_model(false, 1);
	ck_assert_int_eq(compute(&o, &p), MK_OK);
	ck_assert_ptr_null(p.used[MK_POS_QUERY_BIAS]);
	check_against_reference(&p, false);
	mk_positional_release(&p);
}
END_TEST

/* Each head's Toeplitz fit is the one of its own matrix. */
START_TEST(test_fit_per_head)
{
	mk_positional_opts o = {.heads = 2};
	mk_positional p;
	mk_toeplitz t;
	write_model(false, 1);
	ck_assert_int_eq(compute(&o, &p), MK_OK);
	for (int h = 0; h < 2; h++) {
		ck_assert_int_eq(mk_toeplitz_fit(p.f + h * N * N, N, N, false, NULL, &t), MK_OK);
		ck_assert_double_eq(t.r2, p.fit[h].r2);
		ck_assert_double_eq(p.profile[h * (2 * N - 1) + N - 1],
				    (p.f[h * N * N] + p.f[h * N * N + N + 1] + p.f[h * N * N + 2 * N + 2] +
				     p.f[h * N * N + 3 * N + 3] + p.f[h * N * N + 4 * N + 4]) / N);
	}
	mk_positional_release(&p);
}
END_TEST

/* ALBERT: embeddings of size 3 projected to 4 by x W_E + b_E; positions get
 * p W_E, the mean word w W_E + b_E. */
START_TEST(test_projection)
{
	double p3[N * 3], w3[V * 3], we[3 * E], be[E];
	mk_positional_opts o = {.heads = 1};
	mk_positional p;
	hid_t f = h5t_create(path);
	fill(p3, N * 3, 11);
	fill(w3, V * 3, 12);
	fill(we, 3 * E, 13);
	fill(be, E, 14);
	h5t_write2(f, "a/embeddings/position_embeddings/embeddings:0", N, 3, p3);
	h5t_write2(f, "a/embeddings/word_embeddings/weight:0", V, 3, w3);
	h5t_write2(f, "a/encoder/embedding_hidden_mapping_in/kernel:0", 3, E, we);
	h5t_write1(f, "a/encoder/embedding_hidden_mapping_in/bias:0", E, be);
	h5t_write2(f, "a/encoder/albert_layer_groups_._0/albert_layers_._0/attention/query/kernel:0",
		   E, E, wq);
	h5t_write2(f, "a/encoder/albert_layer_groups_._0/albert_layers_._0/attention/key/kernel:0",
		   E, E, wk);
	H5Fclose(f);
	/* the reference works on the projected embeddings, without biases */
	for (int i = 0; i < N; i++)
		affine(p3 + 3 * i, we, NULL, 3, E, ep + E * i);
	{
		double wbar3[3] = {0};
		for (int v = 0; v < V; v++)
			for (int k = 0; k < 3; k++)
				wbar3[k] += w3[v * 3 + k] / V;
		/* one "word" equal to the projected mean: its mean is itself */
		for (int v = 0; v < V; v++)
			affine(wbar3, we, be, 3, E, words + E * v);
	}
	ck_assert_int_eq(compute(&o, &p), MK_OK);
	ck_assert_int_eq(p.e, 3);
	ck_assert_int_eq(p.hidden, E);
	ck_assert_ptr_nonnull(p.used[MK_POS_PROJ_BIAS]);
	check_against_reference(&p, false);
	mk_positional_release(&p);
}
END_TEST

START_TEST(test_layer_names)
{
	ck_assert_int_eq(mk_pos_layer_of("/m/encoder/layer_._3/attention/self/query/kernel:0"), 3);
	ck_assert_int_eq(mk_pos_layer_of("bert.encoder.layer.12.attention.self.key.weight"), 12);
	ck_assert_int_eq(mk_pos_layer_of("a/albert_layer_groups_._0/albert_layers_._7/q"), 7);
	ck_assert_int_eq(mk_pos_layer_of("h.layers-5.q"), 5);
	ck_assert_int_eq(mk_pos_layer_of("/embeddings/position_embeddings"), -1);
	ck_assert_int_eq(mk_pos_layer_of("/layer_norm/gamma"), -1);
}
END_TEST

/* Each malformed input: status, and a message with the key words. */
static void expect_error(mk_positional_opts *o, int status, const char *words1)
{
	mk_positional p;
	ck_assert_int_eq(compute(o, &p), status);
	ck_assert_msg(strstr(mk_error(), words1), "'%s' lacks '%s'", mk_error(), words1);
	ck_assert_ptr_null(p.f);
}

START_TEST(test_missing_layer)
{
	mk_positional_opts o = {.heads = 2, .layer = 3};
	write_model(false, 2);
	expect_error(&o, MK_EFORMAT, "no 'query' weights for layer 3");
}
END_TEST

START_TEST(test_mismatched_query_shape)
{
	double w[6 * 6] = {0};
	mk_positional_opts o = {.heads = 2};
	hid_t f;
	write_model(false, 1);
	f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	h5t_write2(f, "bad/q6", 6, 6, w);
	H5Fclose(f);
	o.dataset[MK_POS_QUERY] = "/bad/q6";
	expect_error(&o, MK_EFORMAT, "is 6 x 6, but its inputs have size 4");
}
END_TEST

START_TEST(test_heads_must_divide)
{
	mk_positional_opts o = {.heads = 3};
	write_model(false, 1);
	expect_error(&o, MK_EINVAL, "3 heads do not divide the 4");
	o.heads = 0; /* no config.json: the shape does not say */
	expect_error(&o, MK_EINVAL, "give it (heads)");
}
END_TEST

START_TEST(test_one_position)
{
	mk_positional_opts o = {.heads = 1};
	hid_t f = h5t_create(path);
	h5t_write2(f, "position_embeddings", 1, E, ep);
	h5t_write2(f, "word_embeddings", V, E, words);
	h5t_write2(f, "layer_0/query/kernel", E, E, wq);
	h5t_write2(f, "layer_0/key/kernel", E, E, wk);
	H5Fclose(f);
	expect_error(&o, MK_EFORMAT, "n = 1");
}
END_TEST

START_TEST(test_nan_in_weights)
{
	mk_positional_opts o = {.heads = 1};
	wk[5] = NAN;
	write_model(false, 1);
	expect_error(&o, MK_EFORMAT, "non-finite");
}
END_TEST

START_TEST(test_square_weights_need_a_layout)
{
	mk_positional_opts o = {.heads = 1};
	hid_t f = h5t_create(path);
	h5t_write2(f, "position_embeddings", N, E, ep);
	h5t_write2(f, "word_embeddings", V, E, words);
	h5t_write2(f, "layer_0/query/w", E, E, wq);
	h5t_write2(f, "layer_0/key/w", E, E, wk);
	H5Fclose(f);
	expect_error(&o, MK_EINVAL, "give the layout (layout)");
	o.layout = MK_LAYOUT_IN_OUT;
	{
		mk_positional p;
		ck_assert_int_eq(compute(&o, &p), MK_OK);
		check_against_reference(&p, false);
		mk_positional_release(&p);
	}
}
END_TEST

START_TEST(test_word_size_mismatch)
{
	mk_positional_opts o = {.heads = 1};
	hid_t f = h5t_create(path);
	h5t_write2(f, "position_embeddings", N, E, ep);
	h5t_write2(f, "word_embeddings", 2, 2, words);
	h5t_write2(f, "layer_0/query/kernel", E, E, wq);
	h5t_write2(f, "layer_0/key/kernel", E, E, wk);
	H5Fclose(f);
	expect_error(&o, MK_EFORMAT, "have size 2");
}
END_TEST

START_TEST(test_bias_size_mismatch)
{
	mk_positional_opts o = {.heads = 1};
	hid_t f = h5t_create(path);
	h5t_write2(f, "position_embeddings", N, E, ep);
	h5t_write2(f, "word_embeddings", V, E, words);
	h5t_write2(f, "layer_0/query/kernel", E, E, wq);
	h5t_write1(f, "layer_0/query/bias", 3, bq);
	h5t_write2(f, "layer_0/key/kernel", E, E, wk);
	H5Fclose(f);
	expect_error(&o, MK_EFORMAT, "has 3 entries, expected 4");
}
END_TEST

START_TEST(test_negative_layer)
{
	mk_positional_opts o = {.heads = 1, .layer = -1};
	write_model(false, 1);
	expect_error(&o, MK_EINVAL, "layer");
}
END_TEST

static Suite *positional_suite(void)
{
	Suite *s = suite_create("positional");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tf_layout_matches_loops);
	tcase_add_test(tc, test_torch_layout_matches_loops);
	tcase_add_test(tc, test_no_bias_is_the_papers_equation);
	tcase_add_test(tc, test_fit_per_head);
	tcase_add_test(tc, test_projection);
	tcase_add_test(tc, test_layer_names);
	tcase_add_test(tc, test_missing_layer);
	tcase_add_test(tc, test_mismatched_query_shape);
	tcase_add_test(tc, test_heads_must_divide);
	tcase_add_test(tc, test_one_position);
	tcase_add_test(tc, test_nan_in_weights);
	tcase_add_test(tc, test_square_weights_need_a_layout);
	tcase_add_test(tc, test_word_size_mismatch);
	tcase_add_test(tc, test_bias_size_mismatch);
	tcase_add_test(tc, test_negative_layer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(positional_suite());
}
