/*
 * Running across MPI ranks: start and end, agreement on failures, items
 * dealt round-robin with an ordered fold on rank 0, and a gather.  Without
 * MPI (not built, or not launched by mpirun/srun) every call is the serial
 * identity, so one code path serves both.
 *
 * Failures: every collective here ends with a verdict all ranks share, so
 * a rank that fails (a file missing on its node, a damaged slab) makes every
 * rank return the same status and message rather than leave the others
 * waiting; a failure outside them aborts the job (mk_par_end).
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core.h"
#include "par.h"
#if HAVE_MPI
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include "par_mpi.h"
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#define PAR_MSG 640

typedef struct par_hdr {
	int32_t status, rank;
	char msg[PAR_MSG];
	char param[64]; /* the parameter the message names, its " (param)" cut from msg */
} par_hdr;

static bool par_pending;
static int par_rank_, par_size_ = 1, par_local_;
static char par_host_[128];

uint64_t mk_par_hash(uint64_t h, const void *data, size_t bytes)
{
	const unsigned char *p = data;

	for (size_t k = 0; k < bytes; k++)
		h = (h ^ p[k]) * 1099511628211ull;
	return h;
}

bool mk_par_built(void)
{
#if HAVE_MPI
	return true;
#else
	return false;
#endif
}

int mk_par_rank(void) { return par_rank_; }
int mk_par_size(void) { return par_size_; }
int mk_par_local_rank(void) { return par_local_; }
void mk_par_done(void) { par_pending = false; }

const char *mk_par_host(void)
{
	if (!par_host_[0] && gethostname(par_host_, sizeof par_host_ - 1) != 0)
		snprintf(par_host_, sizeof par_host_, "unknown");
	return par_host_;
}

static int par_serial(int64_t count, size_t bytes, mk_par_work_fn work, mk_par_fold_fn fold,
		      void *arg)
{
	void *buf = calloc(1, bytes ? bytes : 1);
	int ret = buf ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	for (int64_t i = 0; i < count && ret == MK_OK; i++)
		if ((ret = work(i, buf, arg)) == MK_OK)
			ret = fold(i, buf, arg);
	free(buf);
	return ret;
}

#if HAVE_MPI

static bool par_on, par_agreed;
static int par_local_size = 1;

/* This rank's message, prefixed with where it failed when it is not rank 0
 * (rank 0's own failures read as they do without MPI). */
static void par_message(par_hdr *h, int status)
{
	const char *param = mk_error_get()->param;
	char tail[sizeof h->param + 4];
	size_t len, tlen;

	h->status = status;
	h->rank = par_rank_;
	if (par_rank_ == 0)
		snprintf(h->msg, sizeof h->msg, "%s", *mk_error() ? mk_error() : mk_status_str(status));
	else
		snprintf(h->msg, sizeof h->msg, "rank %d of %d (%s): %s", par_rank_, par_size_,
			 mk_par_host(), *mk_error() ? mk_error() : mk_status_str(status));
	/* the parameter travels apart, so that every rank's error names it */
	if (param && strlen(param) < sizeof h->param) {
		snprintf(tail, sizeof tail, " (%s)", param);
		len = strlen(h->msg);
		tlen = strlen(tail);
		if (len >= tlen && !strcmp(h->msg + len - tlen, tail)) {
			h->msg[len - tlen] = '\0';
			snprintf(h->param, sizeof h->param, "%s", param);
		}
	}
}

/* Launchers announce themselves in the environment: Open MPI's mpirun,
 * PMIx (srun --mpi=pmix, prterun) and PMI-1/2 (MPICH's hydra, srun). */
static bool par_launched(void)
{
	const char *force = getenv("MASKKIT_MPI");

	if (force && *force)
		return strcmp(force, "0") != 0;
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

/* Ranks on one node share its cores: unless OMP_NUM_THREADS says otherwise,
 * each takes its part of the CPUs it may run on (one when the launcher
 * bound it to a core), rather than all of them each. */
static void par_threads(int local_size)
{
#ifdef _OPENMP
	cpu_set_t set;
	int cpus;

	if (local_size < 2 || getenv("OMP_NUM_THREADS") ||
	    sched_getaffinity(0, sizeof set, &set) != 0)
		return;
	cpus = CPU_COUNT(&set);
	/* a rank bound to its own cores keeps them */
	if (cpus < sysconf(_SC_NPROCESSORS_ONLN))
		return;
	omp_set_num_threads(cpus >= local_size ? cpus / local_size : 1);
#else
	(void)local_size;
#endif
}

int mk_par_init(int *argc, char ***argv)
{
	MPI_Comm node;
	int provided, local_size = 1;

	int ret;

	mk_par_host();
	if (!par_launched())
		return MK_OK;
	/* loaded only now: a program started without a launcher never maps
	 * the MPI stack (par_mpi.h) */
	if ((ret = mk_mpi_load()))
		return ret;
	/* OpenMP threads within a rank; MPI is called from the main thread only */
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return mk_error_set(MK_EINTERNAL, "MPI failed to start");
	par_on = true;
	MPI_Comm_rank(MPI_COMM_WORLD, &par_rank_);
	MPI_Comm_size(MPI_COMM_WORLD, &par_size_);
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
	    MPI_SUCCESS) {
		MPI_Comm_rank(node, &par_local_);
		MPI_Comm_size(node, &local_size);
		MPI_Comm_free(&node);
	}
	par_local_size = local_size;
	return MK_OK;
}

void mk_par_share_cpus(void)
{
	if (par_on)
		par_threads(par_local_size);
}

int mk_par_local_size(void)
{
	return par_local_size;
}

int mk_par_end(int code, const char *message, int err_fd)
{
	if (!par_on)
		return code;
	if (code != 0 && par_pending && !par_agreed && par_size_ > 1) {
		/* rank 0 has told its failure already */
		if (par_rank_ != 0)
			dprintf(err_fd, "maskkit: rank %d of %d (%s): %s (stopping every rank)\n",
				par_rank_, par_size_, mk_par_host(),
				message && *message ? message : "failed");
		MPI_Abort(MPI_COMM_WORLD, code > 0 ? code : 1);
	}
	MPI_Finalize();
	par_on = false;
	return code;
}

int mk_par_agree(int status, int *failed_rank)
{
	par_hdr h = {0};
	int mine, first;

	if (failed_rank)
		*failed_rank = status ? 0 : -1;
	if (!par_on || par_size_ == 1)
		return status;
	par_pending = true;
	mine = status ? par_rank_ : par_size_;
	MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (failed_rank)
		*failed_rank = first < par_size_ ? first : -1;
	if (first == par_size_)
		return MK_OK;
	if (par_rank_ == first)
		par_message(&h, status);
	MPI_Bcast(&h, (int)sizeof h, MPI_BYTE, first, MPI_COMM_WORLD);
	par_agreed = true;
	mk_error_set(h.status, "%s", h.msg);
	return h.param[0] ? mk_error_param(h.param) : h.status;
}

/* The lowest rank holding the hash most ranks hold (a tie: the lowest rank
 * among the tied), so that the odd one out is named even on rank 0. */
static int par_majority(const uint64_t *hash)
{
	int best = 0, best_count = 0;

	for (int q = 0; q < par_size_; q++) {
		int count = 0;
		for (int r = 0; r < par_size_; r++)
			count += hash[r] == hash[q];
		if (count > best_count) {
			best = q;
			best_count = count;
		}
	}
	return best;
}

int mk_par_same(const void *buf, size_t bytes, const char *message)
{
	unsigned char *ref = NULL;
	uint64_t mine = mk_par_hash(MK_PAR_HASH_INIT, buf, bytes), *all = NULL;
	int ret = MK_OK, root;

	if (!par_on || par_size_ == 1)
		return MK_OK;
	if (bytes > (size_t)INT_MAX || !(ref = malloc(bytes ? bytes : 1)) ||
	    !(all = malloc((size_t)par_size_ * sizeof *all)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = mk_par_agree(ret, NULL)))
		goto out;
	MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
	root = par_majority(all);
	/* the bytes themselves decide: a hash may collide */
	if (par_rank_ == root)
		memcpy(ref, buf, bytes);
	MPI_Bcast(ref, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
	/* rank 0 names itself too: the message is about which rank differs */
	if (memcmp(ref, buf, bytes) && par_rank_ == 0)
		ret = mk_error_set(MK_EINVAL, "rank 0 of %d (%s): %s", par_size_, mk_par_host(),
				   message);
	else if (memcmp(ref, buf, bytes))
		ret = mk_error_set(MK_EINVAL, "%s", message);
	ret = mk_par_agree(ret, NULL);
out:
	free(ref);
	free(all);
	return ret;
}

/* The first failure of a round, in item order: a rank's own, or the fold's. */
static int par_round_fold(int64_t round, int64_t count, const unsigned char *all, size_t slot,
			  mk_par_fold_fn fold, void *arg, par_hdr *verdict)
{
	for (int q = 0; q < par_size_; q++) {
		int64_t item = round * par_size_ + q;
		const par_hdr *h = (const par_hdr *)(all + (size_t)q * slot);
		int st;
		if (item >= count)
			break;
		if (h->status) {
			*verdict = *h;
			return h->status;
		}
		if ((st = fold(item, all + (size_t)q * slot + sizeof *h, arg))) {
			par_message(verdict, st);
			return st;
		}
	}
	return MK_OK;
}

static int par_rounds(int64_t count, size_t slot, unsigned char *mine, unsigned char *all,
		      mk_par_work_fn work, int (*idle)(void *), mk_par_fold_fn fold, void *arg)
{
	int64_t rounds = (count + par_size_ - 1) / par_size_;
	int ret = MK_OK;

	for (int64_t r = 0; r < rounds && ret == MK_OK; r++) {
		int64_t item = r * par_size_ + par_rank_;
		par_hdr *h = (par_hdr *)mine, verdict = {0};
		int st = item < count ? work(item, mine + sizeof *h, arg) : idle ? idle(arg) : MK_OK;

		if (st)
			par_message(h, st);
		else
			h->status = 0;
		MPI_Gather(mine, (int)slot, MPI_BYTE, all, (int)slot, MPI_BYTE, 0, MPI_COMM_WORLD);
		if (par_rank_ == 0)
			par_round_fold(r, count, all, slot, fold, arg, &verdict);
		MPI_Bcast(&verdict, (int)sizeof verdict, MPI_BYTE, 0, MPI_COMM_WORLD);
		if (verdict.status) {
			par_agreed = true;
			ret = mk_error_set(verdict.status, "%s", verdict.msg);
		}
	}
	return ret;
}

int mk_par_ordered(int64_t count, size_t bytes, mk_par_work_fn work, int (*idle)(void *arg),
		   mk_par_fold_fn fold, void *arg)
{
	size_t slot = sizeof(par_hdr) + ((bytes + 7) & ~(size_t)7);
	unsigned char *mine = NULL, *all = NULL;
	int ret = MK_OK;

	if (!par_on || par_size_ == 1)
		return par_serial(count, bytes, work, fold, arg);
	if (bytes > (size_t)INT_MAX - sizeof(par_hdr) - 8 ||
	    (par_rank_ == 0 && slot > SIZE_MAX / (size_t)par_size_))
		ret = mk_error_set(MK_ERANGE, "%zu bytes per item are too many to gather", bytes);
	if (ret == MK_OK && (!(mine = calloc(1, slot)) ||
			     (par_rank_ == 0 && !(all = malloc(slot * (size_t)par_size_)))))
		ret = mk_error_set(MK_ENOMEM, "out of memory for the ranks' results");
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = par_rounds(count, slot, mine, all, work, idle, fold, arg);
	free(mine);
	free(all);
	return ret;
}

int mk_par_gather(const void *buf, size_t bytes, void **out, size_t *total)
{
	int n = bytes > (size_t)INT_MAX ? -1 : (int)bytes, *counts = NULL, *displs = NULL, ret;
	size_t sum = 0;

	*out = NULL;
	*total = 0;
	if (!par_on || par_size_ == 1) {
		if (!(*out = malloc(bytes ? bytes : 1)))
			return mk_error_set(MK_ENOMEM, "out of memory");
		memcpy(*out, buf, bytes);
		*total = bytes;
		return MK_OK;
	}
	ret = n < 0 ? mk_error_set(MK_ERANGE, "%zu bytes are too many to gather", bytes) : MK_OK;
	if (par_rank_ == 0 && ret == MK_OK &&
	    (!(counts = malloc((size_t)par_size_ * sizeof *counts)) ||
	     !(displs = malloc((size_t)par_size_ * sizeof *displs))))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = mk_par_agree(ret, NULL)))
		goto out;
	MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int q = 0; par_rank_ == 0 && q < par_size_; q++) {
		displs[q] = sum > (size_t)INT_MAX ? -1 : (int)sum;
		sum += (size_t)counts[q];
	}
	if (par_rank_ == 0 && (sum > (size_t)INT_MAX || !(*out = malloc(sum ? sum : 1))))
		ret = mk_error_set(MK_ENOMEM, "cannot gather %zu bytes of results", sum);
	if ((ret = mk_par_agree(ret, NULL)))
		goto out;
	MPI_Gatherv(buf, n, MPI_BYTE, *out, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
	*total = sum;
out:
	free(counts);
	free(displs);
	return ret;
}

#else /* !HAVE_MPI */

static long par_env_rank(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK")
		      : getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("PMIX_RANK");
	return r ? strtol(r, NULL, 10) : 0;
}

/* A launcher's ranks would each run the whole command, printing and
 * writing the same outputs at once: refused, unless MASKKIT_MPI=0 asks for
 * independent copies. */
int mk_par_init(int *argc, char ***argv)
{
	const char *force = getenv("MASKKIT_MPI");
	const char *n = getenv("OMPI_COMM_WORLD_SIZE") ? getenv("OMPI_COMM_WORLD_SIZE")
		      : getenv("PMI_SIZE");

	(void)argc;
	(void)argv;
	mk_par_host();
	if (force && !strcmp(force, "0"))
		return MK_OK;
	if (n && strtol(n, NULL, 10) > 1 && par_env_rank() > 0)
		return mk_error_set(MK_EINVAL, "%s", ""); /* rank 0 says why */
	if (n && strtol(n, NULL, 10) > 1)
		return mk_error_set(MK_EINVAL, "started by an MPI launcher with %s ranks, but this "
				    "maskkit was built without MPI: each rank would run the whole "
				    "command (configure --with-mpi; MASKKIT_MPI=0 runs independent "
				    "copies)", n);
	if (force && *force)
		return mk_error_set(MK_EINVAL, "MASKKIT_MPI=%s, but this maskkit was built without MPI "
				    "(configure --with-mpi)", force);
	return MK_OK;
}

void mk_par_share_cpus(void) {}

int mk_par_local_size(void) { return 1; }

int mk_par_end(int code, const char *message, int err_fd)
{
	(void)message;
	(void)err_fd;
	return code;
}

int mk_par_agree(int status, int *failed_rank)
{
	if (failed_rank)
		*failed_rank = status ? 0 : -1;
	return status;
}

int mk_par_same(const void *buf, size_t bytes, const char *message)
{
	(void)buf;
	(void)bytes;
	(void)message;
	return MK_OK;
}

int mk_par_ordered(int64_t count, size_t bytes, mk_par_work_fn work, int (*idle)(void *arg),
		   mk_par_fold_fn fold, void *arg)
{
	(void)idle;
	return par_serial(count, bytes, work, fold, arg);
}

int mk_par_gather(const void *buf, size_t bytes, void **out, size_t *total)
{
	*total = 0;
	if (!(*out = malloc(bytes ? bytes : 1)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	memcpy(*out, buf, bytes);
	*total = bytes;
	return MK_OK;
}

#endif
