/*
 * safetensors files (https://github.com/huggingface/safetensors, the format
 * HuggingFace models ship in): an 8-byte little-endian header length N, N
 * bytes of JSON mapping each tensor name to its dtype, shape and
 * data_offsets [begin, end) relative to the data area that follows the
 * header ("__metadata__", a map of strings, is ignored).
 *
 * Nothing in the header is trusted: the header length must lie within the
 * file (and under the reference implementation's 100 MiB cap), every
 * offset within the data area, each tensor's byte count must be the product
 * of its shape times its dtype's size (overflow checked), and no two
 * tensors may share a byte.  A dtype we do not know is refused, naming it,
 * since its size, and so every check, would be a guess.
 *
 * Tensors are read with pread in chunks and converted on the way (float16
 * and bfloat16 by hand, so that no compiler support is needed); the file is
 * not mapped, so a file truncated while we read is an error rather than a
 * SIGBUS.
 */
#include "config.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "safetensors.h"

#define ST_CHUNK 65536         /* bytes converted per read */
#define ST_MAX_INT 9007199254740992.0 /* 2^53: JSON numbers as doubles are exact below */

static const struct {
	const char *name;
	unsigned size;
} st_dtypes[MK_ST_NDTYPES] = {
	[MK_ST_BOOL] = {"BOOL", 1},     [MK_ST_U8] = {"U8", 1},     [MK_ST_I8] = {"I8", 1},
	[MK_ST_F8_E5M2] = {"F8_E5M2", 1}, [MK_ST_F8_E4M3] = {"F8_E4M3", 1},
	[MK_ST_I16] = {"I16", 2},       [MK_ST_U16] = {"U16", 2},   [MK_ST_F16] = {"F16", 2},
	[MK_ST_BF16] = {"BF16", 2},     [MK_ST_I32] = {"I32", 4},   [MK_ST_U32] = {"U32", 4},
	[MK_ST_F32] = {"F32", 4},       [MK_ST_F64] = {"F64", 8},   [MK_ST_I64] = {"I64", 8},
	[MK_ST_U64] = {"U64", 8},
};

const char *mk_st_dtype_name(mk_st_dtype d)
{
	return (unsigned)d < MK_ST_NDTYPES ? st_dtypes[d].name : "?";
}

uint64_t mk_st_count(const mk_st_tensor *t)
{
	uint64_t c = 1;
	for (int k = 0; k < t->rank; k++)
		c *= (uint64_t)t->dims[k];
	return c;
}

void mk_st_free(mk_st *st)
{
	if (!st)
		return;
	for (int s = 0; s < st->nshards; s++) {
		if (st->shards[s].fd >= 0)
			close(st->shards[s].fd);
		free(st->shards[s].path);
	}
	for (size_t k = 0; k < st->count; k++)
		free(st->t[k].name);
	free(st->shards);
	free(st->t);
	free(st);
}

static int st_name_cmp(const void *a, const void *b)
{
	return strcmp(((const mk_st_tensor *)a)->name, ((const mk_st_tensor *)b)->name);
}

const mk_st_tensor *mk_st_find(const mk_st *st, const char *name)
{
	mk_st_tensor key = {.name = (char *)name};
	return st->count ? bsearch(&key, st->t, st->count, sizeof *st->t, st_name_cmp) : NULL;
}

int mk_st_sort(mk_st *st, const char *path)
{
	if (st->count)
		qsort(st->t, st->count, sizeof *st->t, st_name_cmp);
	for (size_t k = 1; k < st->count; k++)
		if (!strcmp(st->t[k - 1].name, st->t[k].name))
			return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' appears twice", path,
					    st->t[k].name);
	return MK_OK;
}

/* ---- reading bytes ----------------------------------------------------------- */

static int st_pread(const mk_st_shard *s, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t got = pread(s->fd, p, len, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return mk_error_errno(errno, "'%s': read failed", s->path);
		if (got == 0)
			return mk_error_set(MK_EFORMAT, "'%s': the file ends early (shrank while "
					    "reading?)", s->path);
		p += got;
		len -= (size_t)got;
		off += (uint64_t)got;
	}
	return MK_OK;
}

static uint64_t st_le(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned k = size; k-- > 0;)
		v = v << 8 | p[k];
	return v;
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. */
double mk_st_half(uint16_t h)
{
	return mk_half_to_float(h);
}

static double st_value(mk_st_dtype d, const uint8_t *p)
{
	uint64_t u = st_le(p, st_dtypes[d].size);
	float f;
	double x;

	switch (d) {
	case MK_ST_F16: return mk_st_half((uint16_t)u);
	case MK_ST_BF16: u <<= 16; /* the top half of a float32 */
		/* fall through */
	case MK_ST_F32: {
		uint32_t b = (uint32_t)u;
		memcpy(&f, &b, sizeof f);
		return f;
	}
	case MK_ST_F64: memcpy(&x, &u, sizeof x); return x;
	case MK_ST_I8: return (int8_t)u;
	case MK_ST_I16: return (int16_t)u;
	case MK_ST_I32: return (int32_t)u;
	case MK_ST_I64: return (double)(int64_t)u;
	default: return (double)u; /* unsigned */
	}
}

int mk_st_read(const mk_st *st, const mk_st_tensor *t, bool f32, void *dst)
{
	unsigned size = st_dtypes[t->dtype].size;
	size_t step = ST_CHUNK / size * size;
	uint8_t *buf;
	uint64_t e = 0;
	int ret = MK_OK;

	if (t->dtype == MK_ST_BOOL || t->dtype == MK_ST_F8_E5M2 || t->dtype == MK_ST_F8_E4M3)
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' holds %s values, which maskkit "
				    "does not read as weights", st->shards[t->shard].path, t->name,
				    mk_st_dtype_name(t->dtype));
	if (!(buf = malloc(step)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (uint64_t off = t->begin; off < t->end && ret == MK_OK;) {
		size_t len = t->end - off < step ? (size_t)(t->end - off) : step;
		ret = st_pread(&st->shards[t->shard], buf, len, off);
		for (size_t k = 0; ret == MK_OK && k < len; k += size, e++) {
			double v = st_value(t->dtype, buf + k);
			if (f32)
				((float *)dst)[e] = (float)v;
			else
				((double *)dst)[e] = v;
		}
		off += len;
	}
	free(buf);
	return ret;
}

/* ---- the header -------------------------------------------------------------- */

typedef struct st_file {
	const char *path;
	uint64_t size; /* of the file */
	uint64_t data; /* offset of the data area */
	int shard;
} st_file;

/* A JSON number that is a whole number in [0, 2^53]. */
static bool st_uint(const cJSON *x, uint64_t *v)
{
	double d = cJSON_IsNumber(x) ? x->valuedouble : -1.0;
	if (!(d >= 0.0 && d <= ST_MAX_INT && d == floor(d)))
		return false;
	*v = (uint64_t)d;
	return true;
}

static int st_parse_dtype(const st_file *f, const char *name, const cJSON *x, mk_st_tensor *t)
{
	if (!cJSON_IsString(x))
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has no \"dtype\" string", f->path,
				    name);
	for (int d = 0; d < MK_ST_NDTYPES; d++)
		if (!strcmp(x->valuestring, st_dtypes[d].name)) {
			t->dtype = (mk_st_dtype)d;
			return MK_OK;
		}
	return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has an unknown dtype '%.40s'", f->path,
			    name, x->valuestring);
}

/* The shape, and the byte count it implies (*bytes). */
static int st_parse_shape(const st_file *f, const char *name, const cJSON *x, mk_st_tensor *t,
			  uint64_t *bytes)
{
	uint64_t count = 1, v;
	const cJSON *d;

	if (!cJSON_IsArray(x))
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has no \"shape\" array", f->path,
				    name);
	if (cJSON_GetArraySize(x) > MK_ST_MAX_RANK)
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has %d dimensions (at most %d)",
				    f->path, name, cJSON_GetArraySize(x), MK_ST_MAX_RANK);
	t->rank = 0;
	cJSON_ArrayForEach(d, x) {
		if (!st_uint(d, &v))
			return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has a shape entry that is "
					    "not a whole number >= 0", f->path, name);
		t->dims[t->rank++] = (int64_t)v;
		if (mk_mul_u64(count, v, &count))
			return mk_error_set(MK_EFORMAT, "'%s': tensor '%s': its shape's size "
					    "overflows", f->path, name);
	}
	if (mk_mul_u64(count, st_dtypes[t->dtype].size, bytes))
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s': its size in bytes overflows",
				    f->path, name);
	return MK_OK;
}

static int st_parse_tensor(const st_file *f, const char *name, const cJSON *x, mk_st_tensor *t)
{
	const cJSON *off = cJSON_GetObjectItemCaseSensitive(x, "data_offsets");
	uint64_t bytes = 0, begin, end, area = f->size - f->data;
	int ret;

	if (!cJSON_IsObject(x))
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' is not a JSON object", f->path,
				    name);
	if ((ret = st_parse_dtype(f, name, cJSON_GetObjectItemCaseSensitive(x, "dtype"), t)) ||
	    (ret = st_parse_shape(f, name, cJSON_GetObjectItemCaseSensitive(x, "shape"), t,
				  &bytes)))
		return ret;
	if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 ||
	    !st_uint(cJSON_GetArrayItem(off, 0), &begin) || !st_uint(cJSON_GetArrayItem(off, 1), &end))
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has no \"data_offsets\" pair of "
				    "whole numbers", f->path, name);
	if (begin > end)
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has data_offsets [%" PRIu64
				    ", %" PRIu64 "] that run backwards", f->path, name, begin, end);
	if (end > area)
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' has data_offsets [%" PRIu64
				    ", %" PRIu64 "] past the end of the data (%" PRIu64 " bytes)",
				    f->path, name, begin, end, area);
	if (end - begin != bytes)
		return mk_error_set(MK_EFORMAT, "'%s': tensor '%s' takes %" PRIu64 " bytes but its "
				    "shape and dtype %s need %" PRIu64, f->path, name, end - begin,
				    mk_st_dtype_name(t->dtype), bytes);
	if (!(t->name = strdup(name)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	t->begin = f->data + begin;
	t->end = f->data + end;
	t->shard = f->shard;
	return MK_OK;
}

static int st_begin_cmp(const void *a, const void *b)
{
	const mk_st_tensor *x = *(const mk_st_tensor *const *)a, *y = *(const mk_st_tensor *const *)b;
	return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : x->end < y->end ? -1 : x->end > y->end;
}

/* No byte of the data area belongs to two tensors (empty tensors own none). */
static int st_check_overlap(const st_file *f, mk_st_tensor *t, size_t count)
{
	const mk_st_tensor **by = malloc((count ? count : 1) * sizeof *by);
	const mk_st_tensor *prev = NULL;
	int ret = MK_OK;

	if (!by)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (size_t k = 0; k < count; k++)
		by[k] = &t[k];
	qsort(by, count, sizeof *by, st_begin_cmp);
	for (size_t k = 0; k < count && ret == MK_OK; k++) {
		if (by[k]->begin == by[k]->end)
			continue;
		if (prev && by[k]->begin < prev->end)
			ret = mk_error_set(MK_EFORMAT, "'%s': tensors '%s' and '%s' overlap (data "
					   "bytes %" PRIu64 "-%" PRIu64 " and %" PRIu64 "-%" PRIu64 ")",
					   f->path, prev->name, by[k]->name, prev->begin - f->data,
					   prev->end - f->data, by[k]->begin - f->data,
					   by[k]->end - f->data);
		prev = by[k];
	}
	free(by);
	return ret;
}

static int st_parse_header(mk_st *st, const st_file *f, const char *text, size_t len)
{
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0), *x;
	size_t first = st->count, want;
	mk_st_tensor *grown;
	int ret = MK_OK;

	if (!j || (size_t)(end - text) + strspn(end, " \t\r\n") != len) {
		cJSON_Delete(j);
		return mk_error_set(MK_EFORMAT, "'%s': the header is not valid JSON", f->path);
	}
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return mk_error_set(MK_EFORMAT, "'%s': the header is not a JSON object", f->path);
	}
	want = st->count + (size_t)cJSON_GetArraySize(j);
	if (!(grown = realloc(st->t, (want ? want : 1) * sizeof *grown))) {
		cJSON_Delete(j);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	st->t = grown;
	cJSON_ArrayForEach(x, j) {
		if (!x->string || !strcmp(x->string, "__metadata__"))
			continue;
		st->t[st->count] = (mk_st_tensor){0};
		if ((ret = st_parse_tensor(f, x->string, x, &st->t[st->count])))
			break;
		st->count++;
	}
	cJSON_Delete(j);
	return ret ? ret : st_check_overlap(f, st->t + first, st->count - first);
}

/* A new shard: the file opened (mk_input_open's checks: a regular file). */
static int st_add_shard(mk_st *st, const char *path, st_file *f)
{
	mk_st_shard *grown = realloc(st->shards, (size_t)(st->nshards + 1) * sizeof *grown);
	mk_st_shard *s;
	struct stat sb;
	FILE *fp;
	int ret;

	if (!grown)
		return mk_error_set(MK_ENOMEM, "out of memory");
	st->shards = grown;
	s = &st->shards[st->nshards];
	*s = (mk_st_shard){.fd = -1, .path = strdup(path)};
	if (!s->path)
		return mk_error_set(MK_ENOMEM, "out of memory");
	f->shard = st->nshards++;
	f->path = s->path;
	if ((ret = mk_input_open(path, (void **)&fp)))
		return ret;
	s->fd = dup(fileno(fp));
	fclose(fp);
	if (s->fd < 0 || fstat(s->fd, &sb) != 0)
		return mk_error_errno(errno, "'%s'", path);
	f->size = (uint64_t)sb.st_size;
	return MK_OK;
}

int mk_st_parse_file(mk_st *st, const char *path)
{
	st_file f = {0};
	uint8_t len8[8];
	uint64_t n;
	char *text = NULL;
	int ret = st_add_shard(st, path, &f);

	if (ret)
		return ret;
	if (f.size < 8)
		return mk_error_set(MK_EFORMAT, "'%s': %" PRIu64 " bytes, too short for a safetensors "
				    "file (truncated?)", path, f.size);
	if ((ret = st_pread(&st->shards[f.shard], len8, 8, 0)))
		return ret;
	n = st_le(len8, 8);
	if (n > f.size - 8)
		return mk_error_set(MK_EFORMAT, "'%s': the header length %" PRIu64 " runs past the "
				    "end of the file (%" PRIu64 " bytes; truncated?)", path, n, f.size);
	if (n > MK_ST_MAX_HEADER || n < 2)
		return mk_error_set(MK_EFORMAT, "'%s': a header length of %" PRIu64 " bytes (a "
				    "safetensors header has 2 to %u)", path, n, MK_ST_MAX_HEADER);
	if (!(text = malloc((size_t)n + 1)))
		return mk_error_set(MK_ENOMEM, "out of memory for a %" PRIu64 "-byte header", n);
	if ((ret = st_pread(&st->shards[f.shard], text, (size_t)n, 8)) == MK_OK) {
		text[n] = '\0';
		f.data = 8 + n;
		ret = memchr(text, '\0', (size_t)n)
			      ? mk_error_set(MK_EFORMAT, "'%s': a NUL byte in the header", path)
			      : st_parse_header(st, &f, text, (size_t)n);
	}
	free(text);
	return ret;
}

int mk_st_open(const char *path, mk_st **out)
{
	mk_st *st = calloc(1, sizeof *st);
	int ret;

	*out = NULL;
	if (!st)
		return mk_error_set(MK_ENOMEM, "out of memory");
	ret = mk_st_parse_file(st, path);
	if (ret == MK_OK)
		ret = mk_st_sort(st, path);
	if (ret) {
		mk_st_free(st);
		return ret;
	}
	*out = st;
	return MK_OK;
}
