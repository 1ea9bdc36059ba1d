"""maskkit.encode and maskkit.measure_attention: `maskkit encode` and
`maskkit measure DATA.h5` in process, numpy in and out, no file between.

encode() calls mk_encode_texts (the forward pass and float16 rounding of
`maskkit encode`, into library-allocated arrays seen here without a copy);
measure_attention() wraps the caller's array as a data set
(mk_dataset_wrap) and measures it with mk_ds_report_dataset, the call
behind `maskkit measure DATA.h5`, whose record is printed by the same
emitter as --json.
"""

import ctypes
from ctypes import (POINTER, Structure, c_bool, c_char, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_uint16, c_uint64, c_void_p)

import numpy as np

from . import _lib
from ._lib import Error

# include/maskkit/core.h's mk_dtype
_DT = {"float32": 1, "float64": 2, "float16": 3, "bool": 4, "int8": 5, "int16": 6,
       "int32": 7, "int64": 8, "uint8": 9, "uint16": 10, "uint32": 11, "uint64": 12}
# encode's --dtype names, and numpy's for the same
_ENCODE_DTYPE = {"fp32": 1, "float32": 1, "fp16": 3, "float16": 3}
# include/maskkit/data.h's mk_keep_rule
_KEEP_NONZERO, _KEEP_THRESHOLD, _KEEP_TOP_P = 0, 1, 2

_progress_fn = ctypes.CFUNCTYPE(None, c_int64, c_int64, c_double, c_void_p)


class _RunOpts(Structure):
    """mk_encode_run_opts (include/maskkit/model.h)."""
    _fields_ = [("text", c_char_p), ("sentences", c_bool), ("ids", c_char_p),
                ("tokenizer", c_char_p), ("config", c_char_p), ("mask", c_char_p),
                ("seed", c_uint64), ("max_len", c_int64), ("limit", c_int64),
                ("batch", c_int64), ("qk", c_bool), ("qk_limit", c_int64), ("layout", c_int),
                ("dtype", c_int), ("max_memory", c_uint64), ("progress", _progress_fn),
                ("progress_arg", c_void_p)]


class _Maps(Structure):
    """mk_encode_maps (include/maskkit/model.h)."""
    _fields_ = [("attn", c_void_p), ("lengths", POINTER(c_int64)), ("ids", POINTER(c_int32)),
                ("samples", c_int64), ("layers", c_int64), ("heads", c_int64), ("n", c_int64),
                ("max_len", c_int64), ("truncated", c_int64), ("tokens", c_int64),
                ("dtype", c_int), ("model_type", c_char * 32)]


class _DatasetMem(Structure):
    """mk_dataset_mem (include/maskkit/data.h)."""
    _fields_ = [("data", c_void_p), ("dtype", c_int), ("samples", c_int64), ("layers", c_int64),
                ("heads", c_int64), ("n", c_int64), ("lengths", POINTER(c_int64)),
                ("nlengths", c_int64), ("path", c_char_p), ("name", c_char_p),
                ("lengths_name", c_char_p)]


class _Keep(Structure):
    """mk_keep (include/maskkit/data.h)."""
    _fields_ = [("rule", c_int), ("value", c_double)]


class _ReportOpts(Structure):
    """mk_ds_report_opts (include/maskkit/data.h)."""
    _fields_ = [("dataset", c_char_p), ("lengths", c_char_p), ("axes", c_char_p), ("keep", _Keep),
                ("n", c_int64), ("seed", c_uint64), ("max_memory", c_uint64),
                ("collective", c_bool), ("progress", c_void_p), ("parg", c_void_p)]


_fn = _lib._fn
_mk_encode_texts = _fn("mk_encode_texts", c_int, c_char_p, POINTER(c_char_p), POINTER(c_size_t),
                       c_int64, POINTER(_RunOpts), POINTER(_Maps))
_mk_encode_maps_release = _fn("mk_encode_maps_release", None, POINTER(_Maps))
_mk_dataset_wrap = _fn("mk_dataset_wrap", c_int, POINTER(_DatasetMem), c_uint64, POINTER(c_void_p))
_mk_dataset_close = _fn("mk_dataset_close", None, c_void_p)
_mk_ds_report_dataset = _fn("mk_ds_report_dataset", c_int, c_void_p, POINTER(_ReportOpts),
                            c_void_p)
_mk_ds_report_release = _fn("mk_ds_report_release", None, c_void_p)


class Maps(dict):
    """What `maskkit encode MODEL --text FILE -o OUT.h5` writes, in memory:
    the padded layout's datasets by name ("attn": float32 or float16
    [samples, layers, heads, N, N], "lengths": int64 [samples], "ids": int32
    [samples, N]) and, as .attrs, the file's root attributes (layers, heads,
    max_len, truncated, model, model_type; text None: there is no file)."""

    def __init__(self, arrays, attrs):
        super().__init__(arrays)
        self.attrs = attrs


def _path_arg(value, what):
    if value is None:
        return None
    import os
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("%s must be a path, not %s" % (what, type(value).__name__))
    return os.fsencode(value)


def encode(model_dir, texts, sentences=False, max_len=128, limit=None, batch=32, mask=None,
           seed=0, dtype="fp32", tokenizer=None, config=None, max_memory=None):
    """Attention maps of texts from a BERT-family model, as `maskkit encode
    MODEL --text FILE -o OUT.h5` writes them (mk_encode_texts: the same
    tokenizer, forward pass and float16 rounding), returned as a Maps dict
    of numpy arrays ("attn", "lengths", "ids") without a file.

    texts: a str (one sample) or a list of str (one sample each, as the
    non-blank lines of --text FILE); with sentences=True each str is split
    into its sentences as --sentences splits a file.  The other arguments
    are encode's flags: max_len (--max-len), limit, batch, mask (an
    expression), seed, dtype ("fp32" or "fp16"), tokenizer, config and
    max_memory (bytes or "4G"; also the cap on the maps, checked before
    they are allocated).  Every failure is a maskkit.Error."""
    from . import _Owned, _view
    if isinstance(texts, str):
        texts = [texts]
    texts = list(texts)
    for k, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError("texts[%d] must be a str, not %s" % (k, type(t).__name__))
    if dtype not in _ENCODE_DTYPE:
        raise Error("unknown dtype '%s' (use fp32 or fp16)" % (dtype,), _lib.MK_EINVAL, "dtype")
    if limit is not None and _lib.size_arg(limit, "limit") < 1:
        raise Error("limit must be positive, got %d" % limit, _lib.MK_EINVAL, "limit")
    # surrogates pass as the bytes they are: the library names invalid UTF-8
    raw = [t.encode("utf-8", "surrogatepass") for t in texts]
    n = len(raw)
    ptrs = (c_char_p * max(n, 1))(*raw)
    lens = (c_size_t * max(n, 1))(*[len(b) for b in raw])
    opts = _RunOpts(sentences=bool(sentences), tokenizer=_path_arg(tokenizer, "tokenizer"),
                    config=_path_arg(config, "config"),
                    mask=None if mask is None else str(mask).encode(),
                    seed=_lib.u64_arg(seed, "seed"), max_len=_lib.size_arg(max_len, "max_len"),
                    limit=0 if limit is None else limit, batch=_lib.size_arg(batch, "batch"),
                    dtype=_ENCODE_DTYPE[dtype], max_memory=_lib.memory_arg(max_memory))
    maps = _Maps()
    _lib.check(_mk_encode_texts(_path_arg(model_dir, "model_dir"), ptrs, lens, n,
                                ctypes.byref(opts), ctypes.byref(maps)))
    owner = _Owned(ctypes.pointer(maps), _mk_encode_maps_release)
    s, nn = maps.samples, maps.n
    shape = (s, maps.layers, maps.heads, nn, nn)
    half = maps.dtype == _DT["float16"]
    attn = _view(maps.attn, c_uint16 if half else ctypes.c_float, shape, owner)
    arrays = {
        "attn": attn.view(np.float16) if half else attn,
        "lengths": _view(ctypes.cast(maps.lengths, c_void_p).value, c_int64, (s,), owner),
        "ids": _view(ctypes.cast(maps.ids, c_void_p).value, c_int32, (s, nn), owner),
    }
    import os
    attrs = {"layers": maps.layers, "heads": maps.heads, "max_len": maps.max_len,
             "truncated": maps.truncated, "model": os.fsdecode(model_dir),
             "model_type": maps.model_type.decode(), "text": None}
    return Maps(arrays, attrs)


def _data_set(maps):
    """(array [samples, layers, heads, N, N] C-contiguous, its mk_dtype)."""
    a = np.asarray(maps)
    if a.ndim < 2 or a.ndim > 5:
        raise Error("maps must have 2 to 5 dimensions ([samples, layers, heads, N, N] with "
                    "optional leading axes), got shape %s" % (a.shape,), _lib.MK_EINVAL, "maps")
    if a.shape[-1] != a.shape[-2]:
        raise Error("maps end in %d x %d; attention maps must be square (N x N)"
                    % a.shape[-2:], _lib.MK_EINVAL, "maps")
    # absent leading axes count 1, as the file reader takes them by rank
    a = a.reshape((1,) * (5 - a.ndim) + a.shape)
    return np.ascontiguousarray(a), _DT.get(a.dtype.name, 0)


def measure_attention(maps, lengths=None, threshold=None, top_p=None, n=None, max_memory=None):
    """Eq. 9 sparsity of attention maps (or masks) in memory: the dict
    `maskkit measure DATA.h5 --threshold T --json` (or --top-p P) prints for
    a file holding maps and lengths, with data naming them "memory:maps".

    maps: [samples, layers, heads, N, N] (leading axes may be absent),
    float16/32/64 probabilities (give threshold or top_p) or bool/uint8/int8
    masks; or encode()'s result, whose "attn" and "lengths" are taken.
    lengths: each sample's N_i (integers in [1, N]); None: every sample is N
    long.  n: the data's N, checked when given.  Read in place when
    C-contiguous (never written to).  Every failure is a maskkit.Error."""
    if isinstance(maps, dict):
        if lengths is None:
            lengths = maps.get("lengths")
        maps = maps["attn"]
    if threshold is not None and top_p is not None:
        raise Error("give one of threshold and top_p", _lib.MK_EINVAL, "threshold")
    a, dtype = _data_set(maps)
    mem = _DatasetMem(data=a.ctypes.data, dtype=dtype, samples=a.shape[0], layers=a.shape[1],
                      heads=a.shape[2], n=a.shape[3], path=b"memory", name=b"maps",
                      lengths_name=b"lengths")
    if lengths is not None:
        ln = np.asarray(lengths)
        if ln.ndim != 1 or (ln.dtype.kind not in "iu" and ln.size):
            raise Error("lengths must be a 1-D array of integers, got %s %s"
                        % (ln.dtype, ln.shape), _lib.MK_EINVAL, "lengths")
        if ln.dtype.kind == "u" and ln.size and ln.max() > np.iinfo(np.int64).max:
            raise Error("lengths must be in [1, N], got %d" % ln.max(), _lib.MK_EINVAL, "lengths")
        ln = np.ascontiguousarray(ln, dtype=np.int64)
        mem.lengths = ln.ctypes.data_as(POINTER(c_int64))
        mem.nlengths = ln.size
    keep = (_Keep(_KEEP_TOP_P, float(top_p)) if top_p is not None else
            _Keep(_KEEP_THRESHOLD, float(threshold)) if threshold is not None else
            _Keep(_KEEP_NONZERO, 0.0))
    cap = _lib.memory_arg(max_memory)
    opts = _ReportOpts(keep=keep, n=0 if n is None else _lib.size_arg(n, "n"), max_memory=cap)
    d = c_void_p()
    _lib.check(_mk_dataset_wrap(ctypes.byref(mem), cap, ctypes.byref(d)))
    rec, addr = _lib.record("mk_ds_report_record")
    out = _lib.result_buffer(rec)
    try:
        ret = _mk_ds_report_dataset(d, ctypes.byref(opts), ctypes.byref(out))
        _lib.check(ret)
        try:
            return _lib.emit_json(addr, ctypes.byref(out))
        finally:
            _mk_ds_report_release(ctypes.byref(out))
    finally:
        _mk_dataset_close(d)
