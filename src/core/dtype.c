/* Names of the element types (mk_dtype), as files and numpy spell them. */
#include "config.h"
#include "core.h"

static const char *const dtype_names[] = {
	[MK_DTYPE_NONE] = "none",
	[MK_DTYPE_F32] = "float32", [MK_DTYPE_F64] = "float64", [MK_DTYPE_F16] = "float16",
	[MK_DTYPE_BOOL] = "bool",
	[MK_DTYPE_I8] = "int8", [MK_DTYPE_I16] = "int16", [MK_DTYPE_I32] = "int32",
	[MK_DTYPE_I64] = "int64",
	[MK_DTYPE_U8] = "uint8", [MK_DTYPE_U16] = "uint16", [MK_DTYPE_U32] = "uint32",
	[MK_DTYPE_U64] = "uint64",
	[MK_DTYPE_ENUM16] = "enum16", [MK_DTYPE_ENUM32] = "enum32", [MK_DTYPE_ENUM64] = "enum64",
	[MK_DTYPE_BITS8] = "bitfield8", [MK_DTYPE_BITS16] = "bitfield16",
	[MK_DTYPE_BITS32] = "bitfield32", [MK_DTYPE_BITS64] = "bitfield64",
};

const char *mk_dtype_name(mk_dtype d)
{
	size_t k = (size_t)d;
	return k < sizeof dtype_names / sizeof *dtype_names && dtype_names[k] ? dtype_names[k]
									      : "none";
}
