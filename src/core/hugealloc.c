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
#include <pthread.h>
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

/* One kept buffer for mk_huge_take: a fresh one costs its page faults
 * again, and a guest's first touch of a huge page is slow (clearing the
 * packed K and V of each head anew took 7 % of `maskkit attn`'s time at
 * n = 4096, 8 heads, measured in a KVM guest). */
static struct {
	void *p;
	size_t bytes;
} huge_kept;
static pthread_mutex_t huge_lock = PTHREAD_MUTEX_INITIALIZER;

void *mk_huge_take(size_t bytes, size_t *got)
{
	void *p = NULL;
	size_t have = 0;

	pthread_mutex_lock(&huge_lock);
	p = huge_kept.p;
	have = huge_kept.bytes;
	huge_kept.p = NULL;
	huge_kept.bytes = 0;
	pthread_mutex_unlock(&huge_lock);
	if (p && have >= bytes) {
		*got = have;
		return p;
	}
	free(p); /* too small: a larger one replaces it */
	*got = bytes;
	return mk_huge_alloc(bytes, false);
}

void mk_huge_give(void *p, size_t bytes)
{
	void *drop = p;

	if (!p)
		return;
	pthread_mutex_lock(&huge_lock);
	if (bytes > huge_kept.bytes) { /* keep the larger */
		drop = huge_kept.p;
		huge_kept.p = p;
		huge_kept.bytes = bytes;
	}
	pthread_mutex_unlock(&huge_lock);
	free(drop);
}
