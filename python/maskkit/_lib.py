"""libmaskkit through ctypes: finding it, the C declarations used, errors.

Only what the binding calls is declared here.  Results the library describes
as records (include/maskkit/result.h) are never mirrored field by field: the
binding allocates the record's own size, lets the library fill it and print it
with mk_emit_json_text, so a dict here is by construction what the CLI's
--json prints.  The few structs the binding writes or reads itself
(mk_bind_opts, mk_matrix, mk_tiles, mk_pattern_list, mk_error_info) are
mirrored below.
"""

import ctypes
import ctypes.util
import glob
import json
import os
import subprocess

from ctypes import (POINTER, Structure, c_bool, c_char_p, c_double, c_int, c_int64,
                    c_size_t, c_uint8, c_uint64, c_void_p)

# include/maskkit/core.h's statuses
MK_OK = 0
MK_EINVAL = -2
MK_ERANGE = -5

_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


class Error(Exception):
    """A failure of libmaskkit: its one-line message, its status and what it
    names.

    status is the library's negative MK_E* code (include/maskkit/core.h) and
    status_name its name as mk_status_str gives it; param is the options
    field at fault (e.g. "max_memory", "n"), file the file, or None.
    """

    def __init__(self, message, status=MK_EINVAL, param=None, file=None, status_name=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.file = file
        self.status_name = status_name

    def __str__(self):
        return self.message


def _load():
    """The library: $MASKKIT_LIB, else the installed one (the linker's cache,
    then pkg-config's libdir)."""
    path = os.environ.get("MASKKIT_LIB")
    if path:
        try:
            return ctypes.CDLL(path)
        except OSError as err:
            raise ImportError("maskkit: cannot load MASKKIT_LIB='%s': %s" % (path, err)) from None
    tried = []
    name = ctypes.util.find_library("maskkit")
    if name:
        try:
            return ctypes.CDLL(name)
        except OSError as err:
            tried.append("%s: %s" % (name, err))
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "maskkit"],
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        libdir = ""
    for cand in sorted(glob.glob(os.path.join(libdir, "libmaskkit.so*")) if libdir else []):
        try:
            return ctypes.CDLL(cand)
        except OSError as err:
            tried.append("%s: %s" % (cand, err))
    raise ImportError("maskkit: libmaskkit not found (install it, or set MASKKIT_LIB to "
                      "the path of libmaskkit.so, e.g. build/.libs/libmaskkit.so)" +
                      ("; tried " + "; ".join(tried) if tried else ""))


lib = _load()
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [c_void_p]
_libc.free.restype = None

# ---- structs ---------------------------------------------------------------

# A library with rectangular alignment (mk_align_name) has mk_bind_opts.align
# after kv_len; one without it has no such field.
HAVE_ALIGN = hasattr(lib, "mk_align_name")


class BindOpts(Structure):
    """mk_bind_opts (include/maskkit/expr.h)."""
    _fields_ = ([("n", c_int64), ("kv_len", c_int64)] +
                ([("align", c_int)] if HAVE_ALIGN else []) +
                [("seed", c_uint64), ("max_memory", c_uint64), ("need_cols", c_bool)])


class Matrix(Structure):
    """mk_matrix (include/maskkit/weights.h): rows x cols doubles, row-major."""
    _fields_ = [("rows", c_int64), ("cols", c_int64), ("data", POINTER(c_double))]


class Tiles(Structure):
    """mk_tiles (include/maskkit/mask.h)."""
    _fields_ = [("n", c_int64), ("block", c_int64), ("nb", c_int64), ("cols", c_int64),
                ("nb_kv", c_int64), ("state", POINTER(c_uint8))]


class PatternList(Structure):
    """mk_pattern_list (include/maskkit/patterns.h)."""
    _fields_ = [("patterns", c_void_p), ("count", c_size_t), ("params", c_void_p),
                ("nparams", c_size_t)]


class ErrorInfo(Structure):
    """mk_error_info (include/maskkit/core.h)."""
    _fields_ = [("status", c_int), ("param", c_char_p), ("file", c_char_p),
                ("message", c_char_p)]


class Record(Structure):
    """mk_record (include/maskkit/result.h): only its size is read here."""
    _fields_ = [("name", c_char_p), ("fields", c_void_p), ("count", c_size_t),
                ("size", c_size_t)]


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_p = c_void_p
mk_version = _fn("mk_version", c_char_p)
mk_status_str = _fn("mk_status_str", c_char_p, c_int)
mk_error_get = _fn("mk_error_get", POINTER(ErrorInfo))
mk_check_n = _fn("mk_check_n", c_int, c_int64, c_char_p)
mk_parse_size = _fn("mk_parse_size", c_int, c_char_p, POINTER(c_uint64))
mk_expr_parse = _fn("mk_expr_parse", c_int, c_char_p, POINTER(_p))
mk_expr_operand = _fn("mk_expr_operand", c_int, c_char_p, POINTER(_p))
mk_expr_bind = _fn("mk_expr_bind", c_int, _p, POINTER(BindOpts))
mk_expr_free = _fn("mk_expr_free", None, _p)
mk_expr_n = _fn("mk_expr_n", c_int64, _p)
mk_expr_kv_len = _fn("mk_expr_kv_len", c_int64, _p)
mk_expr_text = _fn("mk_expr_text", c_char_p, _p)
mk_expr_params = _fn("mk_expr_params", c_char_p, _p)
mk_expr_to_mask = _fn("mk_expr_to_mask", c_int, _p, POINTER(_p))
mk_mask_free = _fn("mk_mask_free", None, _p)
mk_mask_n = _fn("mk_mask_n", c_int64, _p)
mk_mask_cols = _fn("mk_mask_cols", c_int64, _p)
mk_mask_stride = _fn("mk_mask_stride", c_size_t, _p)
mk_mask_row = _fn("mk_mask_row", POINTER(c_uint64), _p, c_int64)
mk_mask_tiles = _fn("mk_mask_tiles", c_int, _p, c_int64, POINTER(POINTER(Tiles)))
mk_tiles_free = _fn("mk_tiles_free", None, POINTER(Tiles))
mk_measure_mask = _fn("mk_measure_mask", c_int, _p, POINTER(c_int64), c_size_t, _p, _p, _p)
mk_mask_measure_release = _fn("mk_mask_measure_release", None, _p)
mk_mask_summarize = _fn("mk_mask_summarize", c_int, _p, c_uint64, _p, _p, _p)
mk_pattern_list_get = _fn("mk_pattern_list_get", c_int, POINTER(PatternList))
mk_pattern_list_release = _fn("mk_pattern_list_release", None, POINTER(PatternList))
mk_toeplitz_model_fit = _fn("mk_toeplitz_model_fit", c_int, POINTER(Matrix), _p, _p)
mk_toeplitz_model_release = _fn("mk_toeplitz_model_release", None, _p)
mk_emit_json_text = _fn("mk_emit_json_text", c_void_p, _p, _p, c_size_t, ctypes.c_uint)


class ToeplitzOpts(Structure):
    """mk_toeplitz_model_opts (include/maskkit/weights.h)."""
    _fields_ = [("dataset", c_char_p), ("first", c_int64), ("max_memory", c_uint64),
                ("keep", c_bool)]


def record(name):
    """A result's record (mk_NAME_record) and its address."""
    r = Record.in_dll(lib, name)
    return r, ctypes.addressof(r)


def result_buffer(rec):
    """Zeroed, 8-byte aligned storage of a record's size: the result struct
    the library fills (no mirror of its fields)."""
    return (c_uint64 * ((rec.size + 7) // 8))()


def emit_json(rec_addr, rows, count=1, flags=0):
    """mk_emit_json_text's text, parsed: what --json prints."""
    text = mk_emit_json_text(rec_addr, rows, count, flags)
    if not text:
        raise Error("out of memory", -1)
    try:
        return json.loads(ctypes.string_at(text).decode())
    finally:
        _libc.free(text)


def raise_error():
    """The library's current error as maskkit.Error."""
    info = mk_error_get().contents
    status = info.status
    name = mk_status_str(status)
    raise Error((info.message or b"").decode(errors="replace"), status,
                info.param.decode() if info.param else None,
                info.file.decode(errors="replace") if info.file else None,
                name.decode() if name else None)


def check(ret):
    if ret != MK_OK:
        raise_error()


def size_arg(value, what, lo=1):
    """An integer for the library (operator.index: no floats); one outside
    64 bits is refused here, since it cannot reach the library's check."""
    import operator
    v = operator.index(value)
    if v > _INT64_MAX or v < -_INT64_MAX - 1:
        raise Error("%s = %d does not fit in 64 bits" % (what, v), MK_ERANGE, what)
    return v


def u64_arg(value, what):
    import operator
    v = operator.index(value)
    if v < 0 or v > _UINT64_MAX:
        raise Error("%s must be in [0, 2^64), got %d" % (what, v), MK_ERANGE, what)
    return v


def memory_arg(value):
    """max_memory: bytes, or a size as the CLI takes it ("4G"), parsed by the
    library; None: the library's default."""
    if value is None:
        return 0
    if isinstance(value, str):
        out = c_uint64()
        check(mk_parse_size(value.encode(), ctypes.byref(out)))
        return out.value
    return u64_arg(value, "max_memory")
