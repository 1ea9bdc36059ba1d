/*
 * Tensors mapped from their .npy files rather than copied
 * (mk_tensor_read_mapped).
 *
 * `maskkit attn` at n = 4096, d = 64, 8 heads reads 24 MiB: copying it into
 * fresh memory cost 7-10 ms, the copy and the first touch of every page,
 * which a virtual machine whose host takes freed memory back pays again on
 * every run (1 ms per MiB; measured).  A read-only mapping of the page
 * cache, populated in one call, took 0.1-0.6 ms per 8 MiB, on the one
 * thread that reads the files.  Not populated, its pages are mapped as
 * the check for non-finite values (mk_floats_nonfinite_all, on every
 * thread) first reads them, 16 at a time (the kernel's fault-around):
 * that took 1 ms off the whole process at n = 4096, d = 64, and a single
 * thread reading every cache line of Q, K and V took 1.2-1.6 ms either
 * way (measured).  (Populated for writing, a writable mapping would
 * have been a private copy of every page, 4.7 ms per 8 MiB; read first, a
 * page is copied only if it is written.)
 *
 * A file truncated while mapped makes the touch of a missing page raise
 * SIGBUS.  The program handles it, and asks here which file it was: every
 * mapping is recorded in a fixed table that a signal handler can read.
 */
#include "config.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"
#include "tensor_map.h"

#define MAP_SLOTS 32          /* tensors mapped at once; more are read */
#define MAP_PATH_MAX 512      /* a longer path is named by its end */
#define MAP_MIN_BYTES ((size_t)4 << 20) /* smaller files are read: one copy is cheap */

/* lo and hi are set last (and cleared first) with release stores, so a
 * handler that sees a range sees its path. */
static struct {
	uintptr_t lo, hi;
	char path[MAP_PATH_MAX];
} map_slots[MAP_SLOTS];
static bool map_taken[MAP_SLOTS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static int map_slot_take(const char *path, const void *lo, size_t bytes)
{
	size_t len = strlen(path);
	int k;

	pthread_mutex_lock(&map_lock);
	for (k = 0; k < MAP_SLOTS && map_taken[k]; k++)
		;
	if (k < MAP_SLOTS) {
		map_taken[k] = true;
		/* the end of a long path: the file's name */
		snprintf(map_slots[k].path, MAP_PATH_MAX, "%s%s",
			 len >= MAP_PATH_MAX ? "..." : "",
			 len >= MAP_PATH_MAX ? path + len - (MAP_PATH_MAX - 4) : path);
		__atomic_store_n(&map_slots[k].hi, (uintptr_t)lo + bytes, __ATOMIC_RELEASE);
		__atomic_store_n(&map_slots[k].lo, (uintptr_t)lo, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&map_lock);
	return k < MAP_SLOTS ? k : -1;
}

static void map_slot_give(const void *lo)
{
	pthread_mutex_lock(&map_lock);
	for (int k = 0; k < MAP_SLOTS; k++)
		if (map_taken[k] && map_slots[k].lo == (uintptr_t)lo) {
			__atomic_store_n(&map_slots[k].lo, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&map_slots[k].hi, 0, __ATOMIC_RELEASE);
			map_taken[k] = false;
			break;
		}
	pthread_mutex_unlock(&map_lock);
}

const char *mk_tensor_mapped_file(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	for (int k = 0; k < MAP_SLOTS; k++) {
		uintptr_t lo = __atomic_load_n(&map_slots[k].lo, __ATOMIC_ACQUIRE);
		uintptr_t hi = __atomic_load_n(&map_slots[k].hi, __ATOMIC_ACQUIRE);
		if (lo && a >= lo && a < hi)
			return map_slots[k].path;
	}
	return NULL;
}

/* Maps t's float32 data, offset bytes into f: whether it could. */
static bool map_data(FILE *f, const char *path, uint64_t offset, mk_tensor *t)
{
	size_t count = (size_t)mk_tensor_count(t), bytes = (size_t)offset + count * sizeof(float);
	void *m;

	/* numpy pads its headers to 64 bytes; data at another offset would be
	 * misaligned floats (and vectors): read it instead */
	if (offset % 64 != 0 || count * sizeof(float) <= MAP_MIN_BYTES)
		return false;
	/* the stream has read the header; the mapping reads the file itself */
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(f), 0);
	if (m == MAP_FAILED)
		return false;
	if (map_slot_take(path, m, bytes) < 0) {
		munmap(m, bytes);
		return false;
	}
	t->map = m;
	t->map_bytes = bytes;
	t->data = (float *)((char *)m + offset);
	return true;
}

bool mk_tensor_map_npy(FILE *f, const mk_npy *h, mk_tensor *t, bool *checked)
{
	memset(t, 0, sizeof *t);
	t->rank = h->ndim;
	memcpy(t->dims, h->shape, (size_t)h->ndim * sizeof *h->shape);
	t->dtype = MK_DTYPE_F32;
	if (!map_data(f, h->path, h->offset, t)) {
		memset(t, 0, sizeof *t);
		return false;
	}
	*checked = !mk_floats_nonfinite_all(t->data, (size_t)mk_tensor_count(t));
	return true;
}

void mk_tensor_unmap(mk_tensor *t)
{
	map_slot_give(t->map);
	munmap(t->map, t->map_bytes);
}
