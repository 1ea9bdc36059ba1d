/*
 * The cuda backend's host state: the device probe (done once: without a
 * driver or device the backend is reported missing, never an abort), the
 * selected device and compute type, grow-only buffers, and masks uploaded
 * once per layout and device (the bit rows, both tile views with their block
 * plans; the CSR entries and their transpose at the first csr run).
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_dev.h"

/* The backend's ctx: one per process, as there is one backend table. */
cuda_state mk_cuda_global = {.device = -1, .usable = -1};


int mk_cuda_fail(cudaError_t err, const char *what, const char *file, int line)
{
	const char *base = strrchr(file, '/');
	/* a failed launch leaves the error to be read once; clear it so that
	 * the next call reports its own */
	(void)cudaGetLastError();
	return mk_error_set(MK_EGPU, "CUDA: %s (%s at %s:%d)", cudaGetErrorString(err), what,
			    base ? base + 1 : file, line);
}

/* The tensor-core kernels need mma.sync with bf16 (compute capability 8.0). */
static int cuda_check_device(int device)
{
	int major = 0, minor = 0;
	MK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
	MK_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
	if (major < 8)
		return mk_error_set(MK_EINVAL, "CUDA device %d has compute capability %d.%d; the "
				    "cuda backend needs 8.0 or later", device, major, minor);
	return MK_OK;
}

/* The first device of compute capability 8.0 or later whose kernels load (a
 * build for other architectures has no image for it), or -1 with c->why. */
static int cuda_find_usable(cuda_state *c)
{
	for (int dev = 0; dev < c->count; dev++) {
		if (cuda_check_device(dev))
			continue;
		if (cudaSetDevice(dev) == cudaSuccess && mk_cuda_tiles_init() == MK_OK)
			return dev;
		(void)cudaGetLastError();
		snprintf(c->why, sizeof c->why, "the kernels have no image for device %d (built "
			 "for other architectures?)", dev);
		return -1;
	}
	snprintf(c->why, sizeof c->why, "no device has compute capability 8.0 or later");
	return -1;
}

int mk_cuda_probe(cuda_state *c)
{
	if (!c->probed) {
		cudaError_t err = cudaGetDeviceCount(&c->count);
		c->probed = 1;
		c->usable = -1;
		if (err != cudaSuccess) {
			c->count = 0;
			snprintf(c->why, sizeof c->why, "%s", cudaGetErrorString(err));
			(void)cudaGetLastError();
		} else if (c->count == 0) {
			snprintf(c->why, sizeof c->why, "the driver reports no device");
		} else {
			c->usable = cuda_find_usable(c);
		}
	}
	if (c->usable >= 0)
		return MK_OK;
	return mk_error_set(MK_EINVAL, "backend 'cuda': no usable CUDA device (%s)", c->why);
}

static void cuda_buf_release(cuda_buf *b)
{
	if (b->p)
		(void)cudaFree(b->p);
	b->p = NULL;
	b->cap = 0;
}

void mk_cuda_release(cuda_state *c)
{
	cuda_buf *bufs[] = {&c->q, &c->k, &c->v, &c->o, &c->o2, &c->f, &c->g, &c->stage, &c->part};
	for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++)
		cuda_buf_release(bufs[k]);
	if (c->stream)
		(void)cudaStreamDestroy(c->stream);
	for (int k = 0; k < 2; k++)
		if (c->ev[k])
			(void)cudaEventDestroy(c->ev[k]);
	c->stream = NULL;
	c->ev[0] = c->ev[1] = NULL;
	c->ready = 0;
	c->device = -1;
}

int mk_cuda_reserve(cuda_buf *b, size_t bytes)
{
	if (bytes <= b->cap)
		return MK_OK;
	cuda_buf_release(b);
	/* a little slack, so that slowly growing sizes do not reallocate each time */
	bytes += bytes / 8;
	MK_CUDA_CHECK(cudaMalloc(&b->p, bytes));
	b->cap = bytes;
	return MK_OK;
}

_Static_assert(MK_CUDA_F32 == (int)MK_COMPUTE_FP32 && MK_CUDA_F16 == (int)MK_COMPUTE_FP16 &&
	       MK_CUDA_BF16 == (int)MK_COMPUTE_BF16 && MK_COMPUTE_COUNT == 3,
	       "mk_cuda_dtype mirrors mk_compute for the .cu files");

static int cuda_dtype(mk_compute dtype, mk_cuda_dtype *out)
{
	if ((unsigned)dtype >= MK_COMPUTE_COUNT)
		return mk_error_set(MK_EINVAL, "the cuda backend computes in fp32, fp16 or bf16, "
				    "not type %d", (int)dtype);
	*out = (mk_cuda_dtype)dtype;
	return MK_OK;
}

/* The stream, events and kernel attributes of the current device. */
static int cuda_open(cuda_state *c)
{
	int ret;
	MK_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
	MK_CUDA_CHECK(cudaEventCreate(&c->ev[0]));
	MK_CUDA_CHECK(cudaEventCreate(&c->ev[1]));
	if ((ret = mk_cuda_tiles_init()))
		return ret;
	c->ready = 1;
	return MK_OK;
}

int mk_cuda_select(cuda_state *c, int device, mk_compute dtype)
{
	mk_cuda_dtype dt = MK_CUDA_F32;
	int ret;
	if ((ret = mk_cuda_probe(c)) || (ret = cuda_dtype(dtype, &dt)))
		return ret;
	if (device < 0 || device >= c->count)
		return mk_error_set(MK_EINVAL, "no CUDA device %d (this machine has %d)", device,
				    c->count);
	if (device == c->device && c->ready) {
		c->dtype = dt;
		return MK_OK;
	}
	if ((ret = cuda_check_device(device)))
		return ret;
	mk_cuda_release(c);
	c->device = device;
	MK_CUDA_CHECK(cudaSetDevice(device));
	if ((ret = cuda_open(c))) {
		/* half-made state would pass the check above next time */
		mk_cuda_release(c);
		return ret;
	}
	c->dtype = dt;
	return MK_OK;
}

/* ---- masks ------------------------------------------------------------------ */

/* cudaMalloc and copy (at least one byte, so an empty list is not NULL). */
static int cuda_put(const void **dst, const void *src, size_t bytes)
{
	void *p = NULL;
	*dst = NULL;
	MK_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
	*dst = p;
	if (bytes)
		MK_CUDA_CHECK(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice));
	return MK_OK;
}

/* int64 tile indices as int32 (nt <= n <= 2^31). */
static int cuda_put_i32(const void **dst, const int64_t *src, int64_t count)
{
	int32_t *tmp = malloc((size_t)(count ? count : 1) * sizeof *tmp);
	int ret;
	if (!tmp)
		return mk_error_set(MK_ENOMEM, "out of memory for %" PRId64 " tile indices", count);
	for (int64_t k = 0; k < count; k++)
		tmp[k] = (int32_t)src[k];
	ret = cuda_put(dst, tmp, (size_t)count * sizeof *tmp);
	free(tmp);
	return ret;
}

/* The CSR transposed (CSC): each column's rows, in increasing order. */
static int cuda_put_csc(mk_cuda_mask *m, const mk_attn_layout *l)
{
	int64_t *cptr;
	int32_t *rows;
	int ret = mk_attn_csr_transpose(l, &cptr, &rows);
	if (ret)
		return ret;
	if (!(ret = cuda_put((const void **)&m->cscptr, cptr, ((size_t)l->n + 1) * sizeof *cptr)))
		ret = cuda_put((const void **)&m->cscrow, rows, (size_t)l->nnz * sizeof *rows);
	free(cptr);
	free(rows);
	return ret;
}

/* One view's block plan (rows: rptr, columns: cptr) on the device. */
static int cuda_put_plan(const int64_t *ptr, const mk_attn_layout *l, const mk_block_item **items,
			 const mk_block_split **splits, int64_t *nitems, int64_t *nsplits,
			 int64_t *nslots)
{
	mk_block_plan p;
	int ret = mk_block_plan_new(ptr, l->n, l->tile, MK_CUDA_BM, mk_block_plan_piece(ptr, l->nt),
				    &p);
	if (ret)
		return ret;
	*nitems = p.nitems;
	*nsplits = p.nsplits;
	*nslots = p.nslots;
	if (!(ret = cuda_put((const void **)items, p.items, (size_t)p.nitems * sizeof *p.items)))
		ret = cuda_put((const void **)splits, p.splits, (size_t)p.nsplits * sizeof *p.splits);
	mk_block_plan_release(&p);
	return ret;
}

static int cuda_mask_fill(mk_cuda_mask *m, const mk_attn_layout *l)
{
	size_t nt1 = ((size_t)l->nt + 1) * sizeof(int64_t), tiles = (size_t)l->nonempty_tiles;
	int ret;

	m->n = l->n;
	m->tile = l->tile;
	m->nt = l->nt;
	m->stride = (int64_t)l->stride;
	if ((ret = cuda_put((const void **)&m->bits, l->bits,
			    (size_t)l->n * l->stride * sizeof *l->bits)) ||
	    (ret = cuda_put((const void **)&m->rptr, l->rptr, nt1)) ||
	    (ret = cuda_put((const void **)&m->cptr, l->cptr, nt1)) ||
	    (ret = cuda_put_i32((const void **)&m->rcol, l->rcol, l->nonempty_tiles)) ||
	    (ret = cuda_put_i32((const void **)&m->crow, l->crow, l->nonempty_tiles)) ||
	    (ret = cuda_put((const void **)&m->rfull, l->rfull, tiles)) ||
	    (ret = cuda_put((const void **)&m->cfull, l->cfull, tiles)))
		return ret;
	if ((ret = cuda_put_plan(l->rptr, l, (const mk_block_item **)&m->ritems, &m->rsplits,
				 &m->nritems, &m->nrsplits, &m->nrslots)))
		return ret;
	return cuda_put_plan(l->cptr, l, (const mk_block_item **)&m->citems, &m->csplits,
			     &m->ncitems, &m->ncsplits, &m->ncslots);
}

static int cuda_mask_sync(void)
{
	MK_CUDA_CHECK(cudaDeviceSynchronize());
	return MK_OK;
}

static void cuda_free_ptrs(const void *const *ptrs, size_t count)
{
	for (size_t j = 0; j < count; j++)
		if (ptrs[j])
			(void)cudaFree((void *)(uintptr_t)ptrs[j]);
}

static void cuda_mask_free_csr(mk_cuda_mask *m)
{
	const void *ptrs[] = {m->ptr, m->col, m->cscptr, m->cscrow};
	cuda_free_ptrs(ptrs, 4);
	m->ptr = m->cscptr = NULL;
	m->col = m->cscrow = NULL;
}

/* The CSR entries and their transpose, which only the csr kernel reads: for a
 * large mask they are most of the device copy (and the transpose is built on
 * the host), so they are uploaded at the first csr run. */
static int cuda_mask_csr(mk_cuda_mask *m, const mk_attn_layout *l)
{
	int ret;
	if (m->cscrow)
		return MK_OK;
	cuda_mask_free_csr(m); /* what a failed attempt left */
	if ((ret = cuda_put((const void **)&m->ptr, l->ptr, ((size_t)l->n + 1) * sizeof *l->ptr)) ||
	    (ret = cuda_put((const void **)&m->col, l->col, (size_t)l->nnz * sizeof *l->col)) ||
	    (ret = cuda_put_csc(m, l)) || (ret = cuda_mask_sync())) {
		cuda_mask_free_csr(m);
		return ret;
	}
	return MK_OK;
}

int mk_cuda_mask_upload(const mk_attn_layout *l, mk_cuda_mask **out)
{
	mk_cuda_mask *m = calloc(1, sizeof *m);
	int ret;
	*out = NULL;
	if (!m)
		return mk_error_set(MK_ENOMEM, "out of memory for the device mask");
	/* cudaMemcpy from pageable memory may return before the copy lands, and
	 * on the legacy stream, which the backend's non-blocking stream does not
	 * wait for: the kernels must not start before the mask is there */
	if ((ret = cuda_mask_fill(m, l)) ||
	    (ret = cuda_mask_sync())) {
		mk_cuda_mask_free(m);
		return ret;
	}
	*out = m;
	return MK_OK;
}

void mk_cuda_mask_free(void *p)
{
	mk_cuda_mask *m = p;
	int cur = -1;
	if (!m)
		return;
	/* freed on the device it was made on */
	if (cudaGetDevice(&cur) == cudaSuccess && m->device >= 0 && cur != m->device &&
	    cudaSetDevice(m->device) != cudaSuccess)
		cur = -1;
	const void *ptrs[] = {m->bits,   m->rptr,   m->cptr,    m->rcol,    m->crow,   m->rfull,
			      m->cfull,  m->ritems, m->citems,  m->rsplits, m->csplits};
	cuda_free_ptrs(ptrs, sizeof ptrs / sizeof *ptrs);
	cuda_mask_free_csr(m);
	if (cur >= 0 && cur != m->device)
		(void)cudaSetDevice(cur);
	(void)cudaGetLastError();
	free(m);
}

int mk_cuda_mask_get(const mk_attn_layout *l, int device, int kernel, const mk_cuda_mask **out,
		     mk_cuda_mask **temp)
{
	mk_cuda_mask *m;
	int ret;
	*out = NULL;
	*temp = NULL;
	if (!l)
		return MK_OK;
	if (l->dev && l->dev_free == mk_cuda_mask_free &&
	    ((mk_cuda_mask *)l->dev)->device == device) {
		m = l->dev;
	} else {
		/* a layout made without the backend's prepare, or prepared on
		 * another device: uploaded for this run */
		if ((ret = mk_cuda_mask_upload(l, temp)))
			return ret;
		m = *temp;
	}
	if (kernel == MK_CUDA_CSR && (ret = cuda_mask_csr(m, l)))
		return ret;
	*out = m;
	return MK_OK;
}

/* ---- the machine ---------------------------------------------------------------- */

void mk_cuda_describe(const mk_attn_backend *b, mk_machine *m)
{
	cuda_state *c = b->ctx;
	int dev = c->device >= 0 ? c->device : c->usable, drv = 0, rt = 0, major = 0, minor = 0, khz = 0;
	struct cudaDeviceProp p;

	if (mk_cuda_probe(c) || (dev = c->device >= 0 ? c->device : c->usable) < 0 ||
	    cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
		(void)cudaGetLastError();
		return;
	}
	(void)cudaDriverGetVersion(&drv);
	(void)cudaRuntimeGetVersion(&rt);
	(void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
	(void)cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
	snprintf(m->gpu, sizeof m->gpu, "%.90s (device %d, sm_%d%d)", p.name, dev, major, minor);
	snprintf(m->gpu_driver, sizeof m->gpu_driver, "%d.%d / runtime %d.%d", drv / 1000,
		 drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
	m->gpu_sms = p.multiProcessorCount;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess)
		m->gpu_clock_mhz = khz / 1000;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess)
		m->gpu_mem_clock_mhz = khz / 1000;
	(void)cudaGetLastError();
}
