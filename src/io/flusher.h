/* Writing a file's data and making it durable on a thread of its own while
 * the caller computes the rest, and closing a replaced file's last handle
 * on one (flusher.c); private to the library. */
#ifndef MK_FLUSHER_H
#define MK_FLUSHER_H

#include <stddef.h>

typedef struct mk_flusher mk_flusher;

/* Starts a thread that writes base[0 .. handed) to fd, from its current
 * offset on, as it is handed over, and syncs it.  NULL when no thread can
 * be started: the caller then writes it itself. */
mk_flusher *mk_flusher_start(int fd, const void *base);
/* base[0 .. upto) is final and may be written (upto only grows).  0, or
 * the errno of a write or sync that failed already: the caller stops making
 * parts that cannot be written. */
int mk_flusher_hand(mk_flusher *f, size_t upto);
/* Waits until all that was handed is written, and ends the thread; 0, or
 * the errno of the first write or sync that failed (after a failed sync a
 * later one may not report the lost data again).  The caller's own fsync
 * then covers what the last sync did not. */
int mk_flusher_stop(mk_flusher *f);

/* Closes fd on a detached thread of its own (inline when none starts):
 * for the last handle of a file whose name is gone, whose close frees its
 * pages and blocks while the caller goes on. */
void mk_close_detached(int fd);

#endif
