/*
 * A thread that writes a file's data and makes it durable while its
 * producer goes on computing the rest.
 *
 * An atomic write ends with fsync, which waits for every byte still in the
 * page cache to reach the disk: for the 8 MiB of `maskkit attn`'s output at
 * n = 4096, 8 ms on a virtual disk, after the computing is over.
 * sync_file_range only starts write-back, and where the disk (or the host
 * under a virtual one) holds the data until told to flush, the final fsync
 * still paid for all of it (7-8 ms against 10-12; measured).  fdatasync
 * after each part pays as it goes, but in the producer's thread it would
 * stop the computing for each part: this thread waits instead, asleep in
 * the kernel, and does the writes too (copies into the page cache, 0.3 ms
 * per MiB, that the producer's thread made between parts while the
 * computing threads waited).
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "flusher.h"

#define FLUSHER_WRITE_MAX ((size_t)1 << 30) /* bytes per write() call */

struct mk_flusher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int fd;
	const char *base;
	size_t handed, written; /* bytes of base */
	bool stop;
	int err; /* the first failed write's or sync's errno */
};

/* Writes base[from .. to); 0 or errno. */
static int flusher_write(const mk_flusher *f, size_t from, size_t to)
{
	while (from < to) {
		size_t len = to - from < FLUSHER_WRITE_MAX ? to - from : FLUSHER_WRITE_MAX;
		ssize_t r = write(f->fd, f->base + from, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno : EIO;
		from += (size_t)r;
	}
	return 0;
}

static void *flusher_main(void *arg)
{
	mk_flusher *f = arg;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (f->written == f->handed && !f->stop)
			pthread_cond_wait(&f->wake, &f->lock);
		if (f->written == f->handed || f->err)
			break; /* stopped with nothing left, or failed */
		size_t from = f->written, to = f->handed;
		bool sync = !f->stop; /* the caller's fsync follows the last part */
		pthread_mutex_unlock(&f->lock);
		int err = flusher_write(f, from, to);
		/* EINVAL: a file that cannot be synced (a pipe) */
		if (!err && sync && fdatasync(f->fd) && errno != EINVAL)
			err = errno;
		pthread_mutex_lock(&f->lock);
		f->written = to;
		if (err && !f->err)
			f->err = err;
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

mk_flusher *mk_flusher_start(int fd, const void *base)
{
	mk_flusher *f = calloc(1, sizeof *f);

	if (!f)
		return NULL;
	f->fd = fd;
	f->base = base;
	if (pthread_mutex_init(&f->lock, NULL))
		goto fail_mutex;
	if (pthread_cond_init(&f->wake, NULL))
		goto fail_cond;
	if (pthread_create(&f->thread, NULL, flusher_main, f))
		goto fail_thread;
	return f;
fail_thread:
	pthread_cond_destroy(&f->wake);
fail_cond:
	pthread_mutex_destroy(&f->lock);
fail_mutex:
	free(f);
	return NULL;
}

int mk_flusher_hand(mk_flusher *f, size_t upto)
{
	int err;

	pthread_mutex_lock(&f->lock);
	if (upto > f->handed)
		f->handed = upto;
	err = f->err;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	return err;
}

int mk_flusher_stop(mk_flusher *f)
{
	int err;

	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	err = f->err;
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return err;
}

static void *closer_main(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

void mk_close_detached(int fd)
{
	pthread_attr_t attr;
	pthread_t thread;
	bool started = false;

	if (pthread_attr_init(&attr) == 0) {
		/* nobody joins it: it ends with the close, or with the process */
		if (pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0)
			started = pthread_create(&thread, &attr, closer_main,
						 (void *)(intptr_t)fd) == 0;
		pthread_attr_destroy(&attr);
	}
	if (!started)
		close(fd);
}
