/* Large buffers on transparent huge pages.
 *
 * A buffer of many MiB filled once (a tensor read from a file, the packed K
 * and V of an attention pass) costs a page fault per 4 KiB page: reading
 * 8 MiB of Q took 2048 of them, and `maskkit attn` at n = 4096 about 14,000
 * in all, a third of its time outside the kernel (measured).  Aligned to
 * 2 MiB and marked MADV_HUGEPAGE (Debian's default THP mode is "madvise"),
 * such a buffer faults once per 2 MiB where the kernel has huge pages, and
 * as before where it has none.  free() releases it. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *mk_huge_alloc(size_t bytes, bool zero)
{
	void *p = NULL;

	if (bytes < HUGE_PAGE) /* below one huge page: nothing to gain */
		return zero ? calloc(bytes ? bytes : 1, 1) : malloc(bytes ? bytes : 1);
	if (posix_memalign(&p, HUGE_PAGE, bytes))
		return NULL;
#ifdef MADV_HUGEPAGE
	/* a hint: where the kernel has no huge page, 4 KiB pages as before */
	(void)madvise(p, (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE);
#endif
	if (zero)
		memset(p, 0, bytes);
	return p;
}
