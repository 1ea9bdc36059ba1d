/* The bf16 micro-kernels on AMX, and the choice of a bf16 level.
 *
 * AMX multiplies tiles: TDPBF16PS adds a 16 x 32 bf16 tile times a 32 x 16
 * one (stored as 16 rows of 16 pairs, the pairs along the reduced axis) to
 * a 16 x 16 float32 tile, 16 K multiply-adds an instruction; one core did
 * 3.8 TFLOP/s on registers against 0.25 for float32 FMA and 0.12 for
 * AVX512_BF16's VDPBF16PS (measured on a Xeon with all three).  A strip is
 * 32 rows: 4 float32 tiles (32 x 32) of scores, or of O, 2 tiles of Q (or
 * P) and 2 of K (or V) in the 8 tile registers.  K and V are packed as for
 * AVX512_BF16 (cpu_ukernel_bf16.c) with their pairs padded to a multiple of
 * 16, so a tile of 16 pairs x 16 columns is half of a packed row of 32
 * columns (stride 128 bytes); the strip of Q, or of P, is rounded to bf16 on
 * the stack, rows padded to 32 and columns to a multiple of 32.
 *
 * Linux gives a process the tiles' 8 KiB of state only on request
 * (arch_prctl ARCH_REQ_XCOMP_PERM), made once; where it is refused the
 * AVX512_BF16 level is used.  Each call loads the tile configuration (it is
 * per thread) and releases the tiles before returning. */
#define _GNU_SOURCE /* syscall */
#include "config.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "attn_internal.h"
#include "cpu_ukernel.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && __GNUC__ >= 11 && \
	defined(__linux__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AMX_MR 32
#define AMX_NR 32
#define AMX_CHUNK 512 /* keys of P rounded at a time (on the stack) */
#define AMX_TARGET                                                                          \
	__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16"), optimize("O3")))
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

typedef struct amx_config {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} amx_config;

/* Every tile 16 rows of 64 bytes: 16 x 16 float32 or 16 x 32 bf16. */
AMX_TARGET static void amx_begin(void)
{
	amx_config c;

	memset(&c, 0, sizeof c);
	c.palette = 1;
	for (int t = 0; t < 8; t++) {
		c.colsb[t] = 64;
		c.rows[t] = 16;
	}
	_tile_loadconfig(&c);
}

static inline int64_t amx_pairs(int64_t n) /* pairs for n, a multiple of 16 */
{
	return (n + 31) / 32 * 16;
}

/* Adds a (32 rows of bf16, lda apart) times b (packed pairs, 32 columns)
 * over steps of 32 to the 4 float32 tiles of a 32 x 32 block: tiles 0..3 are
 * rows 0-15 x columns 0-15, 0-15 x 16-31, 16-31 x 0-15, 16-31 x 16-31. */
AMX_TARGET static void amx_accumulate(const uint16_t *a, int64_t lda, const uint16_t *b,
				      int64_t steps)
{
	for (int64_t kk = 0; kk < steps; kk++) {
		_tile_loadd(4, a + kk * 32, lda * 2);
		_tile_loadd(5, a + 16 * lda + kk * 32, lda * 2);
		_tile_loadd(6, b + kk * 16 * 64, 128);
		_tile_loadd(7, b + kk * 16 * 64 + 32, 128);
		_tile_dpbf16ps(0, 4, 6);
		_tile_dpbf16ps(1, 4, 7);
		_tile_dpbf16ps(2, 5, 6);
		_tile_dpbf16ps(3, 5, 7);
	}
}

AMX_TARGET static void amx_store(float *s, int64_t lds)
{
	_tile_stored(0, s, lds * 4);
	_tile_stored(1, s + 16, lds * 4);
	_tile_stored(2, s + 16 * lds, lds * 4);
	_tile_stored(3, s + 16 * lds + 16, lds * 4);
}

AMX_TARGET static void amx_qk(const float *a, int64_t rows, const float *packed, int64_t cols,
			      int64_t d, const float *zero, float *s, int64_t lds)
{
	int64_t np = amx_pairs(d);
	const uint32_t *qa = (const uint32_t *)a; /* rounded: 32 rows of np pairs */
	float out[AMX_MR * AMX_NR] __attribute__((aligned(64)));
	const uint16_t *kb = (const uint16_t *)packed;

	(void)zero;
	amx_begin();
	for (int64_t c = 0; c < cols; c += AMX_NR) {
		int64_t w = cols - c < AMX_NR ? cols - c : AMX_NR;
		_tile_zero(0);
		_tile_zero(1);
		_tile_zero(2);
		_tile_zero(3);
		amx_accumulate((const uint16_t *)qa, 2 * np, kb + c * np * 2, np / 16);
		if (rows == AMX_MR && w == AMX_NR) {
			amx_store(s + c, lds);
			continue;
		}
		amx_store(out, AMX_NR);
		for (int64_t r = 0; r < rows; r++)
			memcpy(s + r * lds + c, out + r * AMX_NR, (size_t)w * sizeof *out);
	}
	_tile_release();
}

AMX_TARGET static void amx_pv(const float *p, int64_t ldp, int64_t rows, const float *v,
			      int64_t cols, uint64_t live, int64_t d, const float *zero, float *sink, float *o)
{
	uint32_t pa[AMX_MR * (AMX_CHUNK / 2)] __attribute__((aligned(64)));
	float tmp[AMX_MR * AMX_NR] __attribute__((aligned(64)));
	const uint16_t *vb = (const uint16_t *)v;
	int64_t ncp = amx_pairs(cols); /* pairs of keys in each packed chunk of V */

	(void)live; /* not skipped: P is rounded in chunks of keys wider than a panel */
	(void)zero;
	(void)sink;
	amx_begin();
	for (int64_t j0 = 0; j0 < cols; j0 += AMX_CHUNK) {
		int64_t n = cols - j0 < AMX_CHUNK ? cols - j0 : AMX_CHUNK, np = amx_pairs(n);
		mk_uk_bf16_round(p, ldp, rows, AMX_MR, j0, n, pa, np);
		for (int64_t c = 0; c < d; c += AMX_NR) {
			int64_t w = d - c < AMX_NR ? d - c : AMX_NR;
			const uint16_t *b = vb + (c / AMX_NR) * ncp * 64 + j0 / 2 * 64;
			bool whole = rows == AMX_MR && w == AMX_NR;
			float *acc = whole ? o + c : tmp;
			int64_t ld = whole ? d : AMX_NR;
			if (!whole) { /* O's block through a zero-padded copy */
				memset(tmp, 0, sizeof tmp);
				for (int64_t r = 0; r < rows; r++)
					memcpy(tmp + r * AMX_NR, o + r * d + c, (size_t)w * sizeof *tmp);
			}
			_tile_loadd(0, acc, ld * 4);
			_tile_loadd(1, acc + 16, ld * 4);
			_tile_loadd(2, acc + 16 * ld, ld * 4);
			_tile_loadd(3, acc + 16 * ld + 16, ld * 4);
			amx_accumulate((const uint16_t *)pa, 2 * np, b, np / 16);
			amx_store(acc, ld);
			for (int64_t r = 0; r < rows && !whole; r++)
				memcpy(o + r * d + c, tmp + r * AMX_NR, (size_t)w * sizeof *tmp);
		}
	}
	_tile_release();
}

static const mk_uk amx_level = {"amx", AMX_MR, AMX_NR, amx_qk, amx_pv, true, 16, NULL};

static bool amx_ok;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

/* The CPU has AMX-TILE and AMX-BF16 (CPUID 7.0 EDX bits 24 and 22), the
 * AVX-512 the rounding uses, and Linux grants the tile state. */
static void amx_probe(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 22)) ||
	    !mk_uk_bf16_avx512_supported())
		return;
	amx_ok = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

const mk_uk *mk_uk_bf16_amx(void)
{
	pthread_once(&amx_once, amx_probe);
	return amx_ok ? &amx_level : NULL;
}

#else /* no AMX in this compiler or system */

const mk_uk *mk_uk_bf16_amx(void)
{
	return NULL;
}
#endif

static const mk_uk *bf16_forced;
static bool bf16_is_forced;

bool mk_uk_bf16_supported(const char *name)
{
	if (!name)
		return false;
	if (!strcmp(name, "amx"))
		return mk_uk_bf16_amx() != NULL;
	if (!strcmp(name, "avx512bf16"))
		return mk_uk_bf16_avx512() != NULL;
	return false;
}

int mk_uk_bf16_force(const char *name)
{
	if (!name) {
		bf16_is_forced = false;
		return MK_OK;
	}
	if (!mk_uk_bf16_supported(name))
		return mk_error_set(MK_EINVAL, "bf16 CPU kernel '%s' is unknown or not run here "
				    "(amx, avx512bf16)", name);
	bf16_forced = !strcmp(name, "amx") ? mk_uk_bf16_amx() : mk_uk_bf16_avx512();
	bf16_is_forced = true;
	return MK_OK;
}

const mk_uk *mk_uk_bf16(void)
{
	const char *env = getenv("MASKKIT_CPU_BF16");
	const mk_uk *amx;

	if (bf16_is_forced)
		return bf16_forced;
	/* an unknown or unsupported name falls back to the default, as
	 * MASKKIT_CPU_KERNEL does */
	if (env && !strcmp(env, "avx512bf16") && mk_uk_bf16_avx512())
		return mk_uk_bf16_avx512();
	amx = mk_uk_bf16_amx();
	return amx ? amx : mk_uk_bf16_avx512();
}
