/*
 * maskkit par: maskkit across MPI ranks (src/par/par.c).  A maskkit built
 * with MPI (configure --with-mpi) starts MPI only when a launcher started it
 * (mpirun, srun); otherwise, and with one rank, every function here is the
 * serial identity: rank 0 of 1, agreements return the status given,
 * mk_par_ordered runs work then fold item by item.
 */
#ifndef MK_PAR_H
#define MK_PAR_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Starts MPI when the environment says a launcher started this process
 * (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE; MASKKIT_MPI=0 never, =1
 * always: a maskkit started by a program that itself runs under mpirun
 * inherits the launcher's variables).  MK_EINTERNAL when MPI fails to
 * start. */
int mk_par_init(int *argc, char ***argv);
/* Ends MPI.  A failing rank (code != 0) whose failure the ranks have not
 * agreed on (mk_par_agree) after it took part in collective work, and
 * before mk_par_done, aborts every rank, so that none waits for it for
 * ever; message is written to err_fd first.  Returns the exit code. */
int mk_par_end(int code, const char *message, int err_fd);
bool mk_par_built(void);  /* MPI compiled in */
/* Ranks on one node that were not bound to cores of their own split the
 * node's CPUs for OpenMP (unless OMP_NUM_THREADS is set); called by the
 * commands whose work the ranks share. */
void mk_par_share_cpus(void);
int mk_par_local_size(void); /* ranks on this host */
int mk_par_rank(void);    /* 0 without MPI */
int mk_par_size(void);    /* 1 without MPI */
int mk_par_local_rank(void); /* among the ranks on this host: picks the GPU */
const char *mk_par_host(void);
/* This rank's collective work is over: a failure from here on is its own
 * (rank 0 writing the outputs) and does not abort the others. */
void mk_par_done(void);

/* Collective: every rank passes its status (0 or a negative MK_E*, or an
 * exit code > 0); every rank gets the status of the lowest failing rank,
 * with its message in mk_error(), prefixed "rank R of P (HOST): " when R is
 * not 0.  *failed_rank (may be NULL) gets R, or -1. */
int mk_par_agree(int status, int *failed_rank);

/* FNV-1a of bytes, continuing from h (MK_PAR_HASH_INIT to start): the
 * digests that ranks compare. */
#define MK_PAR_HASH_INIT 1469598103934665603ull
uint64_t mk_par_hash(uint64_t h, const void *data, size_t bytes);

/* Collective: MK_EINVAL on every rank when some rank's bytes differ from
 * those most ranks hold (a tie: from the lowest rank's among the tied),
 * with `message` ("rank R of P (HOST): " in front, R the lowest rank that
 * differs: rank 0 when its copy is the odd one out). */
int mk_par_same(const void *buf, size_t bytes, const char *message);

/* Items 0..count-1 dealt round-robin to the ranks, a round of one item per
 * rank at a time: work(item, buf, arg) fills `bytes` bytes on the item's
 * rank (idle(arg), when not NULL, runs on a rank with no item in the last
 * round: collective reads need every rank), and rank 0 calls fold(item, buf,
 * arg) in item order, so sums formed in fold do not depend on the number of
 * ranks.  Collective.  A failure of work or fold stops every rank at the end
 * of its round and is returned on every rank, as mk_par_agree does. */
typedef int (*mk_par_work_fn)(int64_t item, void *buf, void *arg);
typedef int (*mk_par_fold_fn)(int64_t item, const void *buf, void *arg);
int mk_par_ordered(int64_t count, size_t bytes, mk_par_work_fn work, int (*idle)(void *arg),
		   mk_par_fold_fn fold, void *arg);

/* Collective: rank 0 gets every rank's bytes, in rank order, in *out
 * (malloc'd, *total bytes; NULL and 0 on other ranks). */
int mk_par_gather(const void *buf, size_t bytes, void **out, size_t *total);

#ifdef __cplusplus
}
#endif
#endif /* MK_PAR_H */
