/*
 * HDF5 loaded on first use: libmaskkit does not link libhdf5 (Debian's
 * pulls in about 35 libraries: curl, ssl, krb5, ldap; 11 ms at every start,
 * docs/performance.md), but calls it through a table of its functions that
 * mk_h5_load() fills with dlsym.  Include this after <hdf5.h>, as
 * h5util.h and h5write.h do: every HDF5 function and global the library
 * uses is redefined here to go through the table, so the code reads as
 * plain HDF5.  A function missing from these lists is an undefined symbol
 * when libmaskkit.so is linked (-no-undefined): add it to its list (its
 * type comes from HDF5's own declaration).  Library-private.
 *
 * Which HDF5: the serial one, unless MPI ranks run (the parallel flavour,
 * built against the same headers and of the same version), or a flavour is
 * in the process already (a test or h5py linked it): one process must not
 * hold two HDF5 libraries, whose identifiers would mean different objects.
 */
#ifndef MK_H5LAZY_H
#define MK_H5LAZY_H

#include <hdf5.h>

/* every function, whatever the HDF5 version (the real symbols: API
 * macros such as H5Dcreate expand to them) */
#define MK_H5_FUNCS(X) \
	X(H5Aclose) X(H5Acreate2) X(H5Aexists) X(H5Aget_space) X(H5Aget_type) X(H5Aopen) \
	X(H5Aread) X(H5Awrite) X(H5Dclose) X(H5Dcreate2) X(H5Dget_create_plist) \
	X(H5Dget_num_chunks) X(H5Dget_space) X(H5Dget_space_status) X(H5Dget_storage_size) \
	X(H5Dget_type) X(H5Dopen2) X(H5Dread) X(H5Dwrite) X(H5Dwrite_chunk) X(H5Eset_auto2) \
	X(H5FDregister) X(H5Fclose) X(H5Fcreate) X(H5Fget_obj_count) X(H5Fget_obj_ids) X(H5Fopen) \
	X(H5Gclose) X(H5Gcreate2) X(H5Iget_file_id) X(H5Iget_type) X(H5Iis_valid) \
	X(H5Iobject_verify) X(H5Ldelete) X(H5Lexists) X(H5Lget_info) X(H5Lvisit) X(H5Oclose) \
	X(H5Oopen) X(H5Pclose) X(H5Pcreate) X(H5Pget_chunk) X(H5Pget_driver_info) \
	X(H5Pget_external) X(H5Pget_external_count) X(H5Pget_layout) X(H5Pget_nfilters) \
	X(H5Pset_chunk) X(H5Pset_chunk_cache) X(H5Pset_create_intermediate_group) \
	X(H5Pset_deflate) X(H5Pset_driver) X(H5Pset_elink_cb) X(H5Pset_fclose_degree) \
	X(H5Pset_fill_time) X(H5Pset_shuffle) X(H5Sclose) X(H5Scopy) X(H5Screate) \
	X(H5Screate_simple) X(H5Sget_simple_extent_dims) X(H5Sget_simple_extent_ndims) \
	X(H5Sget_simple_extent_npoints) X(H5Sselect_hyperslab) X(H5Sselect_none) X(H5Tclose) \
	X(H5Tcopy) X(H5Tget_class) X(H5Tget_cset) X(H5Tget_ebias) X(H5Tget_fields) \
	X(H5Tget_native_type) X(H5Tget_norm) X(H5Tget_sign) X(H5Tget_size) X(H5Tis_variable_str) \
	X(H5Tset_cset) X(H5Tset_ebias) X(H5Tset_fields) X(H5Tset_size) X(H5Tset_strpad) \
	X(H5Zfilter_avail) X(H5Zget_filter_info) X(H5check_version) X(H5free_memory) X(H5open)

/* the functions that the two version branches of the code call */
#if H5_VERSION_GE(1, 12, 0)
#define MK_H5_FUNCS_VERSION(X) \
	X(H5Oget_info3) X(H5Oget_info_by_name3) X(H5Otoken_cmp) X(H5Fis_accessible)
#else
#define MK_H5_FUNCS_VERSION(X) \
	X(H5Oget_info2) X(H5Oget_info_by_name) X(H5Fis_hdf5)
#endif
/* parallel HDF5's own, looked up only in that flavour */
#ifdef H5_HAVE_PARALLEL
#define MK_H5_FUNCS_PAR(X) \
	X(H5Pset_fapl_mpio) X(H5Pset_dxpl_mpio)
#else
#define MK_H5_FUNCS_PAR(X)
#endif
/* the globals behind H5T_NATIVE_FLOAT, H5P_FILE_ACCESS and the like */
#define MK_H5_VARS(X) \
	X(H5P_CLS_DATASET_ACCESS_ID_g) X(H5P_CLS_DATASET_CREATE_ID_g) X(H5P_CLS_DATASET_XFER_ID_g) \
	X(H5P_CLS_FILE_ACCESS_ID_g) X(H5P_CLS_LINK_ACCESS_ID_g) X(H5P_CLS_LINK_CREATE_ID_g) \
	X(H5T_C_S1_g) X(H5T_IEEE_F32LE_g) X(H5T_IEEE_F64LE_g) X(H5T_NATIVE_DOUBLE_g) \
	X(H5T_NATIVE_FLOAT_g) X(H5T_NATIVE_INT32_g) X(H5T_NATIVE_INT64_g) X(H5T_NATIVE_UINT64_g) \
	X(H5T_NATIVE_UINT8_g) X(H5T_STD_I32LE_g) X(H5T_STD_I64LE_g) X(H5T_STD_U64LE_g) \
	X(H5T_STD_U8LE_g)

/* a pointer to each: the declarations' own types */
struct mk_h5_api {
#define MK_H5_MEMBER(f) __typeof__(&f) f;
	MK_H5_FUNCS(MK_H5_MEMBER)
	MK_H5_FUNCS_VERSION(MK_H5_MEMBER)
	MK_H5_FUNCS_PAR(MK_H5_MEMBER)
	MK_H5_VARS(MK_H5_MEMBER)
#undef MK_H5_MEMBER
};

/* Loads HDF5 once (later calls return the first's verdict): MK_OK, or
 * MK_ESYS with one line naming the library that could not be loaded.
 * Every entry point calls it, through mk_h5_silence (h5util.h), before any
 * HDF5 call. */
int mk_h5_load(void);
/* The table; an HDF5 call before mk_h5_load succeeded is a bug, which
 * stops the process with that one line rather than jump to NULL. */
const struct mk_h5_api *mk_h5_api(void);

#ifndef MK_H5LAZY_TABLE /* h5lazy.c fills the table under the real names */

#define H5Aclose (mk_h5_api()->H5Aclose)
#define H5Acreate2 (mk_h5_api()->H5Acreate2)
#define H5Aexists (mk_h5_api()->H5Aexists)
#define H5Aget_space (mk_h5_api()->H5Aget_space)
#define H5Aget_type (mk_h5_api()->H5Aget_type)
#define H5Aopen (mk_h5_api()->H5Aopen)
#define H5Aread (mk_h5_api()->H5Aread)
#define H5Awrite (mk_h5_api()->H5Awrite)
#define H5Dclose (mk_h5_api()->H5Dclose)
#define H5Dcreate2 (mk_h5_api()->H5Dcreate2)
#define H5Dget_create_plist (mk_h5_api()->H5Dget_create_plist)
#define H5Dget_num_chunks (mk_h5_api()->H5Dget_num_chunks)
#define H5Dget_space (mk_h5_api()->H5Dget_space)
#define H5Dget_space_status (mk_h5_api()->H5Dget_space_status)
#define H5Dget_storage_size (mk_h5_api()->H5Dget_storage_size)
#define H5Dget_type (mk_h5_api()->H5Dget_type)
#define H5Dopen2 (mk_h5_api()->H5Dopen2)
#define H5Dread (mk_h5_api()->H5Dread)
#define H5Dwrite (mk_h5_api()->H5Dwrite)
#define H5Dwrite_chunk (mk_h5_api()->H5Dwrite_chunk)
#define H5Eset_auto2 (mk_h5_api()->H5Eset_auto2)
#define H5FDregister (mk_h5_api()->H5FDregister)
#define H5Fclose (mk_h5_api()->H5Fclose)
#define H5Fcreate (mk_h5_api()->H5Fcreate)
#define H5Fget_obj_count (mk_h5_api()->H5Fget_obj_count)
#define H5Fget_obj_ids (mk_h5_api()->H5Fget_obj_ids)
#define H5Fopen (mk_h5_api()->H5Fopen)
#define H5Gclose (mk_h5_api()->H5Gclose)
#define H5Gcreate2 (mk_h5_api()->H5Gcreate2)
#define H5Iget_file_id (mk_h5_api()->H5Iget_file_id)
#define H5Iget_type (mk_h5_api()->H5Iget_type)
#define H5Iis_valid (mk_h5_api()->H5Iis_valid)
#define H5Iobject_verify (mk_h5_api()->H5Iobject_verify)
#define H5Ldelete (mk_h5_api()->H5Ldelete)
#define H5Lexists (mk_h5_api()->H5Lexists)
#define H5Lget_info (mk_h5_api()->H5Lget_info)
#define H5Lvisit (mk_h5_api()->H5Lvisit)
#define H5Oclose (mk_h5_api()->H5Oclose)
#define H5Oopen (mk_h5_api()->H5Oopen)
#define H5Pclose (mk_h5_api()->H5Pclose)
#define H5Pcreate (mk_h5_api()->H5Pcreate)
#define H5Pget_chunk (mk_h5_api()->H5Pget_chunk)
#define H5Pget_driver_info (mk_h5_api()->H5Pget_driver_info)
#define H5Pget_external (mk_h5_api()->H5Pget_external)
#define H5Pget_external_count (mk_h5_api()->H5Pget_external_count)
#define H5Pget_layout (mk_h5_api()->H5Pget_layout)
#define H5Pget_nfilters (mk_h5_api()->H5Pget_nfilters)
#define H5Pset_chunk (mk_h5_api()->H5Pset_chunk)
#define H5Pset_chunk_cache (mk_h5_api()->H5Pset_chunk_cache)
#define H5Pset_create_intermediate_group (mk_h5_api()->H5Pset_create_intermediate_group)
#define H5Pset_deflate (mk_h5_api()->H5Pset_deflate)
#define H5Pset_driver (mk_h5_api()->H5Pset_driver)
#define H5Pset_elink_cb (mk_h5_api()->H5Pset_elink_cb)
#define H5Pset_fclose_degree (mk_h5_api()->H5Pset_fclose_degree)
#define H5Pset_fill_time (mk_h5_api()->H5Pset_fill_time)
#define H5Pset_shuffle (mk_h5_api()->H5Pset_shuffle)
#define H5Sclose (mk_h5_api()->H5Sclose)
#define H5Scopy (mk_h5_api()->H5Scopy)
#define H5Screate (mk_h5_api()->H5Screate)
#define H5Screate_simple (mk_h5_api()->H5Screate_simple)
#define H5Sget_simple_extent_dims (mk_h5_api()->H5Sget_simple_extent_dims)
#define H5Sget_simple_extent_ndims (mk_h5_api()->H5Sget_simple_extent_ndims)
#define H5Sget_simple_extent_npoints (mk_h5_api()->H5Sget_simple_extent_npoints)
#define H5Sselect_hyperslab (mk_h5_api()->H5Sselect_hyperslab)
#define H5Sselect_none (mk_h5_api()->H5Sselect_none)
#define H5Tclose (mk_h5_api()->H5Tclose)
#define H5Tcopy (mk_h5_api()->H5Tcopy)
#define H5Tget_class (mk_h5_api()->H5Tget_class)
#define H5Tget_cset (mk_h5_api()->H5Tget_cset)
#define H5Tget_ebias (mk_h5_api()->H5Tget_ebias)
#define H5Tget_fields (mk_h5_api()->H5Tget_fields)
#define H5Tget_native_type (mk_h5_api()->H5Tget_native_type)
#define H5Tget_norm (mk_h5_api()->H5Tget_norm)
#define H5Tget_sign (mk_h5_api()->H5Tget_sign)
#define H5Tget_size (mk_h5_api()->H5Tget_size)
#define H5Tis_variable_str (mk_h5_api()->H5Tis_variable_str)
#define H5Tset_cset (mk_h5_api()->H5Tset_cset)
#define H5Tset_ebias (mk_h5_api()->H5Tset_ebias)
#define H5Tset_fields (mk_h5_api()->H5Tset_fields)
#define H5Tset_size (mk_h5_api()->H5Tset_size)
#define H5Tset_strpad (mk_h5_api()->H5Tset_strpad)
#define H5Zfilter_avail (mk_h5_api()->H5Zfilter_avail)
#define H5Zget_filter_info (mk_h5_api()->H5Zget_filter_info)
#define H5check_version (mk_h5_api()->H5check_version)
#define H5free_memory (mk_h5_api()->H5free_memory)
#define H5open (mk_h5_api()->H5open)
#if H5_VERSION_GE(1, 12, 0)
#define H5Oget_info3 (mk_h5_api()->H5Oget_info3)
#define H5Oget_info_by_name3 (mk_h5_api()->H5Oget_info_by_name3)
#define H5Otoken_cmp (mk_h5_api()->H5Otoken_cmp)
#define H5Fis_accessible (mk_h5_api()->H5Fis_accessible)
#else
#define H5Oget_info2 (mk_h5_api()->H5Oget_info2)
#define H5Oget_info_by_name (mk_h5_api()->H5Oget_info_by_name)
#define H5Fis_hdf5 (mk_h5_api()->H5Fis_hdf5)
#endif
#define H5Pset_fapl_mpio (mk_h5_api()->H5Pset_fapl_mpio)
#define H5Pset_dxpl_mpio (mk_h5_api()->H5Pset_dxpl_mpio)
#define H5P_CLS_DATASET_ACCESS_ID_g (*mk_h5_api()->H5P_CLS_DATASET_ACCESS_ID_g)
#define H5P_CLS_DATASET_CREATE_ID_g (*mk_h5_api()->H5P_CLS_DATASET_CREATE_ID_g)
#define H5P_CLS_DATASET_XFER_ID_g (*mk_h5_api()->H5P_CLS_DATASET_XFER_ID_g)
#define H5P_CLS_FILE_ACCESS_ID_g (*mk_h5_api()->H5P_CLS_FILE_ACCESS_ID_g)
#define H5P_CLS_LINK_ACCESS_ID_g (*mk_h5_api()->H5P_CLS_LINK_ACCESS_ID_g)
#define H5P_CLS_LINK_CREATE_ID_g (*mk_h5_api()->H5P_CLS_LINK_CREATE_ID_g)
#define H5T_C_S1_g (*mk_h5_api()->H5T_C_S1_g)
#define H5T_IEEE_F32LE_g (*mk_h5_api()->H5T_IEEE_F32LE_g)
#define H5T_IEEE_F64LE_g (*mk_h5_api()->H5T_IEEE_F64LE_g)
#define H5T_NATIVE_DOUBLE_g (*mk_h5_api()->H5T_NATIVE_DOUBLE_g)
#define H5T_NATIVE_FLOAT_g (*mk_h5_api()->H5T_NATIVE_FLOAT_g)
#define H5T_NATIVE_INT32_g (*mk_h5_api()->H5T_NATIVE_INT32_g)
#define H5T_NATIVE_INT64_g (*mk_h5_api()->H5T_NATIVE_INT64_g)
#define H5T_NATIVE_UINT64_g (*mk_h5_api()->H5T_NATIVE_UINT64_g)
#define H5T_NATIVE_UINT8_g (*mk_h5_api()->H5T_NATIVE_UINT8_g)
#define H5T_STD_I32LE_g (*mk_h5_api()->H5T_STD_I32LE_g)
#define H5T_STD_I64LE_g (*mk_h5_api()->H5T_STD_I64LE_g)
#define H5T_STD_U64LE_g (*mk_h5_api()->H5T_STD_U64LE_g)
#define H5T_STD_U8LE_g (*mk_h5_api()->H5T_STD_U8LE_g)
#endif

#endif
