/*
 * OpenBLAS under an address-space limit (ulimit -v).  Each thread that
 * calls OpenBLAS takes a work buffer of about 128 MiB from a pool, and when
 * that allocation fails OpenBLAS retries for ever: the program would hang
 * instead of failing.  So before the first BLAS call that needs more
 * buffers than before, the room left under the limit is checked.
 */
#include "config.h"
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cblas.h>
#include "internal.h"

/* maskkit and its libraries, mapped before any BLAS buffer */
#define MK_BLAS_BASE_VM ((uint64_t)256 << 20)

int mk_blas_threads_fit(int want)
{
	struct rlimit rl;
	uint64_t fit;

	if (want <= 1 || getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return want < 1 ? 1 : want;
	fit = (uint64_t)rl.rlim_cur > MK_BLAS_BASE_VM ?
		      ((uint64_t)rl.rlim_cur - MK_BLAS_BASE_VM) / MK_BLAS_BUFFER : 0;
	return fit < 1 ? 1 : fit < (uint64_t)want ? (int)fit : want;
}

#ifdef OPENBLAS_VERSION
/* callers already checked: their buffers are in OpenBLAS's pool */
static atomic_int mk_blas_checked;

/* Bytes of address space this process maps now, 0 when unknown. */
static uint64_t mk_blas_vm_size(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &pages) != 1)
		pages = 0;
	fclose(f);
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

int mk_blas_room(int callers)
{
	struct rlimit rl;
	uint64_t vm, need, room;
	char lim[32], free_[32], want[32];
	int ret;

	if (callers <= atomic_load(&mk_blas_checked))
		return MK_OK;
	/* loaded first: its threads and their buffers count against the limit */
	if ((ret = mk_blas_load()))
		return ret;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
		atomic_store(&mk_blas_checked, 1 << 30);
		return MK_OK;
	}
	vm = mk_blas_vm_size();
	need = (uint64_t)callers * MK_BLAS_BUFFER;
	room = (uint64_t)rl.rlim_cur > vm ? (uint64_t)rl.rlim_cur - vm : 0;
	if (room < need) {
		mk_format_bytes((uint64_t)rl.rlim_cur, lim, sizeof lim);
		mk_format_bytes(room, free_, sizeof free_);
		mk_format_bytes(need, want, sizeof want);
		return mk_error_set(MK_ENOMEM, "the address-space limit (ulimit -v) of %s leaves %s, "
				    "and OpenBLAS needs %s for the work buffers of %d thread%s (raise "
				    "the limit%s)", lim, free_, want, callers, callers == 1 ? "" : "s",
				    callers > 1 ? " or set OMP_NUM_THREADS=1" : "");
	}
	for (int seen = atomic_load(&mk_blas_checked);
	     callers > seen && !atomic_compare_exchange_weak(&mk_blas_checked, &seen, callers);)
		;
	return MK_OK;
}
#else
int mk_blas_room(int callers)
{
	(void)callers;
	return MK_OK;
}
#endif
