/*
 * What a signal must not leave behind: the temporary files of writes in
 * progress (PATH.tmp.XXXXXX, gnuplot's private folder) and the children the
 * library waits for.  A handler (the CLI's) calls mk_cleanup_run, which
 * only uses async-signal-safe calls on a fixed table whose slots are taken
 * and given back with atomic operations.
 */
#define _XOPEN_SOURCE 700
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

#define MK_CLEANUP_SLOTS 64

enum { SLOT_FREE, SLOT_FILLING, SLOT_FILE, SLOT_DIR, SLOT_CHILD, SLOT_CLEARING };

static struct {
	atomic_int state;
	pid_t pid;
	char path[PATH_MAX];
} mk_cleanup_slots[MK_CLEANUP_SLOTS];

static int mk_cleanup_take(void)
{
	for (int k = 0; k < MK_CLEANUP_SLOTS; k++) {
		int want = SLOT_FREE;
		if (atomic_compare_exchange_strong(&mk_cleanup_slots[k].state, &want, SLOT_FILLING))
			return k;
	}
	return -1; /* full: that write is not cleaned up after a signal */
}

static int mk_cleanup_push(int kind, const char *path, pid_t pid)
{
	int k;

	if (path && strlen(path) >= PATH_MAX)
		return -1;
	if ((k = mk_cleanup_take()) < 0)
		return -1;
	if (path)
		memcpy(mk_cleanup_slots[k].path, path, strlen(path) + 1);
	mk_cleanup_slots[k].pid = pid;
	atomic_store(&mk_cleanup_slots[k].state, kind);
	return k;
}

int mk_cleanup_push_file(const char *path)
{
	return mk_cleanup_push(SLOT_FILE, path, 0);
}

int mk_cleanup_push_dir(const char *path)
{
	return mk_cleanup_push(SLOT_DIR, path, 0);
}

int mk_cleanup_push_child(pid_t pid)
{
	return mk_cleanup_push(SLOT_CHILD, NULL, pid);
}

/* A slot the handler is clearing stays its: the process is dying. */
void mk_cleanup_pop(int token)
{
	int state;

	if (token < 0 || token >= MK_CLEANUP_SLOTS)
		return;
	state = atomic_load(&mk_cleanup_slots[token].state);
	if (state == SLOT_FILE || state == SLOT_DIR || state == SLOT_CHILD)
		atomic_compare_exchange_strong(&mk_cleanup_slots[token].state, &state, SLOT_FREE);
}

int mk_cleanup_wait_child(int token, pid_t pid, int *status)
{
	siginfo_t info;

	/* the child stays a zombie (its pid not reusable) until the slot is
	 * given back: a signal never reaches a process that got its pid */
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0)
		if (errno != EINTR) {
			mk_cleanup_pop(token);
			return -1;
		}
	mk_cleanup_pop(token);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* Waits up to about two seconds for the children that were sent the
 * signal: a child maskkit removes its own temporary files as it dies. */
static void mk_cleanup_reap(const pid_t *pids, int count)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	int left = count;

	for (int round = 0; left > 0 && round < 200; round++) {
		left = 0;
		for (int k = 0; k < count; k++)
			if (pids[k] > 0 && waitpid(pids[k], NULL, WNOHANG) == 0)
				left++;
		if (left)
			(void)nanosleep(&tick, NULL);
	}
}

/* Children first (they may still write into our files), then files, then
 * the folders that held them. */
void mk_cleanup_run(int sig)
{
	static const int order[] = {SLOT_CHILD, SLOT_FILE, SLOT_DIR};
	pid_t children[MK_CLEANUP_SLOTS];
	int nchildren = 0;

	for (size_t o = 0; o < sizeof order / sizeof *order; o++) {
		for (int k = 0; k < MK_CLEANUP_SLOTS; k++) {
			int want = order[o];
			if (!atomic_compare_exchange_strong(&mk_cleanup_slots[k].state, &want,
							    SLOT_CLEARING))
				continue;
			if (want == SLOT_CHILD && mk_cleanup_slots[k].pid > 0 &&
			    kill(mk_cleanup_slots[k].pid, sig > 0 ? sig : SIGTERM) == 0)
				children[nchildren++] = mk_cleanup_slots[k].pid;
			else if (want == SLOT_FILE)
				(void)unlink(mk_cleanup_slots[k].path);
			else if (want == SLOT_DIR)
				(void)rmdir(mk_cleanup_slots[k].path);
			atomic_store(&mk_cleanup_slots[k].state, SLOT_FREE);
		}
		if (order[o] == SLOT_CHILD)
			mk_cleanup_reap(children, nchildren);
	}
}
