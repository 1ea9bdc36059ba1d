/*
 * libFuzzer target: the data-set reader (mk_dataset_*) and the Eq. 9
 * measure over it.  Each input is opened as a data set; when it opens:
 *
 * - the shape is sane: rank 2..5, samples, layers, heads, n >= 1, one block
 *   within MK_FUZZ_MAX_MEMORY, every length in [1, n];
 * - every block (the first MK_FUZZ_MAX_BLOCKS) reads or fails cleanly; a
 *   mask block holds only 0 and 1;
 * - mk_dataset_measure (nonzero for masks, p >= 0.5 and top-p 0.9 for
 *   probabilities) gives rho and classic rho in [0, 1] (or NaN-free
 *   failure), per-head values in [0, 1], and the mean of the per-head values
 *   equal to rho;
 * - every error leaves a one-line message that fits mk_error()'s buffer.
 *
 * The same input is also read as a lengths file (mk_lengths_read): on
 * success every length is in [1, MK_N_MAX].
 *
 * Linked with h5_asan.c: libhdf5 mallocs the sizes a corrupt file claims.
 */
#include "config.h"
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "fuzz.h"

#define MK_FUZZ_MAX_BLOCKS 64
/* a measure reads every block: only small data sets are measured */
#define MK_FUZZ_MAX_MEASURED ((uint64_t)4 << 20)

static void mk_fuzz_blocks(mk_dataset *d, const mk_dataset_info *in)
{
	int64_t done = 0;
	uint64_t cells = (uint64_t)in->heads * (uint64_t)in->n * (uint64_t)in->n;

	for (int64_t s = 0; s < in->samples && done < MK_FUZZ_MAX_BLOCKS; s++)
		for (int64_t l = 0; l < in->layers && done < MK_FUZZ_MAX_BLOCKS; l++, done++) {
			mk_dataset_block b;
			int ret = mk_dataset_read(d, s, l, &b);
			if (ret != MK_OK) {
				mk_fuzz_check_error(ret, "mk_dataset_read");
				continue;
			}
			MK_FUZZ_CHECK(b.len >= 1 && b.len <= b.n && b.n == in->n, "block len %lld n %lld",
				      (long long)b.len, (long long)b.n);
			MK_FUZZ_CHECK(!b.p != !b.m, "a block with %s", b.p ? "both" : "neither");
			for (uint64_t c = 0; b.m && c < cells; c++)
				MK_FUZZ_CHECK(b.m[c] <= 1, "mask cell %llu is %u", (unsigned long long)c,
					      b.m[c]);
		}
}

static void mk_fuzz_measure(mk_dataset *d, const mk_dataset_info *in, mk_keep k)
{
	mk_ds_measure r;
	double sum = 0;
	int ret = mk_dataset_measure(d, &k, NULL, NULL, &r);

	if (ret != MK_OK) {
		mk_fuzz_check_error(ret, "mk_dataset_measure");
		return;
	}
	MK_FUZZ_CHECK(r.rho >= 0 && r.rho <= 1 && r.rho_classic >= 0 && r.rho_classic <= 1,
		      "rho %g, classic %g", r.rho, r.rho_classic);
	for (int64_t a = 0; a < in->layers * in->heads; a++) {
		MK_FUZZ_CHECK(r.by_head[a] >= 0 && r.by_head[a] <= 1, "head %lld: %g", (long long)a,
			      r.by_head[a]);
		sum += r.by_head[a];
	}
	MK_FUZZ_CHECK(fabs(sum / (double)(in->layers * in->heads) - r.rho) <= 1e-9,
		      "heads average %g, rho %g", sum / (double)(in->layers * in->heads), r.rho);
	mk_ds_measure_release(&r);
}

static void mk_fuzz_dataset(const char *file)
{
	mk_dataset_opts o = {.max_memory = MK_FUZZ_MAX_MEMORY};
	mk_dataset *d = NULL;
	const mk_dataset_info *in;
	const int64_t *len;
	int ret = mk_dataset_open(file, &o, &d);

	if (ret != MK_OK) {
		MK_FUZZ_CHECK(d == NULL, "a failed open returned a handle");
		mk_fuzz_check_error(ret, "mk_dataset_open");
		return;
	}
	in = mk_dataset_get_info(d);
	len = mk_dataset_lengths(d);
	MK_FUZZ_CHECK(in->rank >= 2 && in->rank <= 5 && in->samples >= 1 && in->layers >= 1 &&
			      in->heads >= 1 && in->n >= 1, "shape rank %d", in->rank);
	for (int64_t s = 0; s < in->samples; s++)
		MK_FUZZ_CHECK(len[s] >= 1 && len[s] <= in->n, "lengths[%lld] = %lld",
			      (long long)s, (long long)len[s]);
	mk_fuzz_blocks(d, in);
	if (in->bytes <= MK_FUZZ_MAX_MEASURED) {
		if (in->is_float) {
			mk_fuzz_measure(d, in, (mk_keep){MK_KEEP_THRESHOLD, 0.5});
			mk_fuzz_measure(d, in, (mk_keep){MK_KEEP_TOP_P, 0.9});
		} else {
			mk_fuzz_measure(d, in, (mk_keep){MK_KEEP_NONZERO, 0});
		}
	}
	mk_dataset_close(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *file = mk_fuzz_input(data, size, ".h5");
	int64_t *len = NULL, count = 0;
	int ret;

	mk_fuzz_dataset(file);
	ret = mk_lengths_read(file, 0, &len, &count);
	if (ret != MK_OK) {
		MK_FUZZ_CHECK(len == NULL && count == 0, "a failed lengths read left data");
		mk_fuzz_check_error(ret, "mk_lengths_read");
		return 0;
	}
	for (int64_t i = 0; i < count; i++)
		MK_FUZZ_CHECK(len[i] >= 1 && len[i] <= MK_N_MAX, "length %lld", (long long)len[i]);
	free(len);
	return 0;
}
