"""FlexAttention from a Mask: its mask_mod (Python source the library
writes: index arithmetic on q_idx and kv_idx) and its BlockMask, built from
the library's own tile layout rather than by calling create_block_mask.

torch is imported only here, and only when these are called: the rest of
the package needs numpy alone.
"""

import ctypes

import numpy as np

from . import _lib
from ._lib import Error


class FlexBlocks(ctypes.Structure):
    """mk_flex_blocks (include/maskkit/io.h)."""
    _fields_ = [("q_len", ctypes.c_int64), ("kv_len", ctypes.c_int64),
                ("block", ctypes.c_int64), ("nb_q", ctypes.c_int64),
                ("nb_kv", ctypes.c_int64),
                ("kv_num_blocks", ctypes.POINTER(ctypes.c_int32)),
                ("kv_indices", ctypes.POINTER(ctypes.c_int32)),
                ("full_kv_num_blocks", ctypes.POINTER(ctypes.c_int32)),
                ("full_kv_indices", ctypes.POINTER(ctypes.c_int32))]


_lib_has_flex = hasattr(_lib.lib, "mk_expr_flex_py")
if _lib_has_flex:
    _flex_py = _lib._fn("mk_expr_flex_py", ctypes.c_int, ctypes.c_void_p,
                        ctypes.POINTER(ctypes.c_void_p))
    _free = _lib._fn("mk_free", None, ctypes.c_void_p)
    _blocks = _lib._fn("mk_expr_flex_blocks", ctypes.c_int, ctypes.c_void_p, ctypes.c_int64,
                       ctypes.POINTER(ctypes.POINTER(FlexBlocks)))
    _blocks_free = _lib._fn("mk_flex_blocks_free", None, ctypes.POINTER(FlexBlocks))
    _files = _lib._fn("mk_expr_files", ctypes.c_size_t, ctypes.c_void_p,
                      ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t)

# the four arrays, named as BlockMask and create_block_mask name them
BLOCK_ARRAYS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices")


def _need_flex():
    if not _lib_has_flex:
        raise Error("this libmaskkit has no FlexAttention entry points (mk_expr_flex_py): "
                    "rebuild it", _lib.MK_EINVAL)


def _torch():
    try:
        import torch
        from torch.nn.attention import flex_attention
    except ImportError as err:
        raise ImportError("maskkit: FlexAttention needs torch 2.5 or later (%s)" % err) from None
    return torch, flex_attention


def flex_py(expr_ptr):
    """mk_expr_flex_py's text."""
    _need_flex()
    text = ctypes.c_void_p()
    _lib.check(_flex_py(expr_ptr, ctypes.byref(text)))
    try:
        return ctypes.string_at(text).decode()
    finally:
        _free(text)


def has_files(expr_ptr):
    _need_flex()
    return _files(expr_ptr, None, 0) > 0


def blocks(expr_ptr, block):
    """The BlockMask arrays (mk_expr_flex_blocks) as int32 numpy arrays with
    create_block_mask's shapes: [1, 1, nb_q] and [1, 1, nb_q, nb_kv]."""
    from . import _Owned, _view
    _need_flex()
    out = ctypes.POINTER(FlexBlocks)()
    _lib.check(_blocks(expr_ptr, _lib.size_arg(block, "block_size"), ctypes.byref(out)))
    owner = _Owned(out, _blocks_free)
    b = out.contents
    result = {}
    for name in BLOCK_ARRAYS:
        shape = (1, 1, b.nb_q) if "num" in name else (1, 1, b.nb_q, b.nb_kv)
        addr = ctypes.cast(getattr(b, name), ctypes.c_void_p).value
        result[name] = _view(addr, ctypes.c_int32, shape, owner)
    return result


def load_mask_mod(source, device):
    """make_mask_mod(device) of a flex-py source."""
    _torch()
    ns = {"__name__": "maskkit_mask_mod"}
    exec(compile(source, "<maskkit mask_mod>", "exec"), ns)
    return ns["make_mask_mod"](device)


def dense_mask_mod(cells, device):
    """A mask file's cells have no arithmetic: a lookup into them (q_len x
    kv_len bools), clamped since a kernel may ask past the end."""
    torch, _ = _torch()
    m = torch.from_numpy(np.ascontiguousarray(cells))
    if device is not None:
        m = m.to(device)
    q_last, kv_last = m.shape[0] - 1, m.shape[1] - 1

    def mask_mod(b, h, q_idx, kv_idx):
        return m[q_idx.clamp(0, q_last), kv_idx.clamp(0, kv_last)]

    return mask_mod


def block_mask(arrays, mask_mod, shape, block, device):
    """BlockMask.from_kv_blocks over the library's arrays."""
    torch, fa = _torch()
    t = [torch.from_numpy(arrays[k]) for k in BLOCK_ARRAYS]
    if device is not None:
        t = [x.to(device) for x in t]
    return fa.BlockMask.from_kv_blocks(*t, BLOCK_SIZE=block, mask_mod=mask_mod,
                                       seq_lengths=tuple(shape))
