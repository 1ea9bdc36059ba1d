/*
 * MPI loaded on first use: libmaskkit does not link libmpi (Open MPI and
 * the libraries it brings cost about 4 ms at every start, and a program
 * started without mpirun has no use for them: docs/performance.md), but
 * calls it through a table that mk_par_init fills with dlsym when a
 * launcher started the process.  Include this after <mpi.h> (or after
 * <hdf5.h>, which includes it in parallel HDF5): every MPI function and
 * Open MPI global the library uses goes through the table (MPI_COMM_WORLD
 * is the address of ompi_mpi_comm_world).  A call missing from these lists
 * is an undefined symbol when libmaskkit.so is linked.  Library-private.
 */
#ifndef MK_PAR_MPI_H
#define MK_PAR_MPI_H

#include <mpi.h>

#define MK_MPI_FUNCS(X) \
	X(MPI_Abort) X(MPI_Allgather) X(MPI_Allreduce) X(MPI_Bcast) X(MPI_Comm_free) \
	X(MPI_Comm_rank) X(MPI_Comm_size) X(MPI_Comm_split_type) X(MPI_Finalize) X(MPI_Gather) \
	X(MPI_Gatherv) X(MPI_Init_thread)
/* the globals behind the handles (Open MPI's names) */
#define MK_MPI_VARS(X) \
	X(ompi_mpi_byte) X(ompi_mpi_comm_world) X(ompi_mpi_info_null) X(ompi_mpi_int) \
	X(ompi_mpi_op_min) X(ompi_mpi_uint64_t)

struct mk_mpi_api {
#define MK_MPI_MEMBER(f) __typeof__(&f) f;
	MK_MPI_FUNCS(MK_MPI_MEMBER)
	MK_MPI_VARS(MK_MPI_MEMBER)
#undef MK_MPI_MEMBER
};

/* Loads MPI once (later calls return the first's verdict): MK_OK, or
 * MK_ESYS with one line naming the library that could not be loaded.
 * mk_par_init calls it before MPI_Init, only under a launcher. */
int mk_mpi_load(void);
/* The table; an MPI call before mk_mpi_load succeeded is a bug, which
 * stops the process with one line rather than jump to NULL. */
const struct mk_mpi_api *mk_mpi_api(void);

#ifndef MK_PAR_MPI_TABLE /* par_mpi.c fills the table under the real names */
#define MPI_Abort (mk_mpi_api()->MPI_Abort)
#define MPI_Allgather (mk_mpi_api()->MPI_Allgather)
#define MPI_Allreduce (mk_mpi_api()->MPI_Allreduce)
#define MPI_Bcast (mk_mpi_api()->MPI_Bcast)
#define MPI_Comm_free (mk_mpi_api()->MPI_Comm_free)
#define MPI_Comm_rank (mk_mpi_api()->MPI_Comm_rank)
#define MPI_Comm_size (mk_mpi_api()->MPI_Comm_size)
#define MPI_Comm_split_type (mk_mpi_api()->MPI_Comm_split_type)
#define MPI_Finalize (mk_mpi_api()->MPI_Finalize)
#define MPI_Gather (mk_mpi_api()->MPI_Gather)
#define MPI_Gatherv (mk_mpi_api()->MPI_Gatherv)
#define MPI_Init_thread (mk_mpi_api()->MPI_Init_thread)
#define ompi_mpi_byte (*mk_mpi_api()->ompi_mpi_byte)
#define ompi_mpi_comm_world (*mk_mpi_api()->ompi_mpi_comm_world)
#define ompi_mpi_info_null (*mk_mpi_api()->ompi_mpi_info_null)
#define ompi_mpi_int (*mk_mpi_api()->ompi_mpi_int)
#define ompi_mpi_op_min (*mk_mpi_api()->ompi_mpi_op_min)
#define ompi_mpi_uint64_t (*mk_mpi_api()->ompi_mpi_uint64_t)
#endif

#endif
