"""maskkit: attention masks from libmaskkit, with numpy in and out.

A thin binding (ctypes) over the C library: every number comes from it.
The library is $MASKKIT_LIB (a path to libmaskkit.so; from a build tree,
MASKKIT_LIB=build/.libs/libmaskkit.so), else the installed one.

    import maskkit
    m = maskkit.mask("(local128+global4)&causal", n=4096)
    m.numpy()            # bool [4096, 4096], as `maskkit gen EXPR --n 4096 -o m.npy`
    m.sparsity, m.count  # as `maskkit gen ... --json`
    m.measure()          # the dict `maskkit measure EXPR --n 4096 --json` prints
    m.tiles(128)         # uint8 [nb, nb_kv]: 0 empty, 1 partial, 2 full
    m.block_mask(128)    # FlexAttention's BlockMask with its mask_mod (torch)

The whole API: docs/python.md.
"""

import ctypes
import sys

import numpy as np

from . import _flex, _lib
from ._version import __version__
from ._lib import Error
from ._encode import Maps, encode, measure_attention

__all__ = ["Error", "Mask", "mask", "patterns", "toeplitz", "version",
           "TILE_EMPTY", "TILE_PARTIAL", "TILE_FULL", "encode", "measure_attention", "Maps"]

# include/maskkit/mask.h's MK_TILE_*
TILE_EMPTY, TILE_PARTIAL, TILE_FULL = 0, 1, 2

# include/maskkit/expr.h's mk_align, named as the CLI's --align names them
_ALIGN = {"bottom-right": 0, "top-left": 1}


def version():
    """libmaskkit's version (mk_version), as `maskkit --version` reports it."""
    return _lib.mk_version().decode()


class _Owned:
    """A pointer the library allocated, freed by its _free when the last
    Python object holding it (a Mask, a numpy view) goes."""

    def __init__(self, ptr, free):
        self.ptr = ptr
        self._free = free

    def __del__(self):
        if self.ptr:
            self._free(self.ptr)
            self.ptr = None


def _view(address, ctype, shape, owner):
    """A numpy array over library memory (no copy) that keeps owner alive."""
    count = 1
    for s in shape:
        count *= s
    buf = (ctype * count).from_address(address)
    buf._maskkit_owner = owner
    return np.ctypeslib.as_array(buf).reshape(shape)


class Mask:
    """A mask expression bound to a size: what `maskkit gen EXPR --n N` makes.

    Made by maskkit.mask().  Rows are queries, columns keys; shape is
    (q_len, kv_len).  The cells are generated when first needed (numpy(),
    packed(), tiles()) and kept; count, sparsity and measure() stream the
    rows instead (O(n) memory).
    """

    def __init__(self, expr, bind):
        # private: use maskkit.mask()
        self._expr = expr
        self._bind = bind
        self._mask = None
        self._summary = None

    # ---- what it is ------------------------------------------------------
    @property
    def shape(self):
        """(q_len, kv_len): rows (queries) and columns (keys)."""
        return (_lib.mk_expr_n(self._expr.ptr), _lib.mk_expr_kv_len(self._expr.ptr))

    @property
    def expr(self):
        """The expression in its canonical form (mk_expr_text)."""
        return _lib.mk_expr_text(self._expr.ptr).decode()

    @property
    def params(self):
        """Its bound leaves with every parameter (mk_expr_params)."""
        return _lib.mk_expr_params(self._expr.ptr).decode()

    @property
    def seed(self):
        """The seed random terms without seed= were bound with."""
        return self._bind.seed

    def __repr__(self):
        q, kv = self.shape
        size = "n=%d" % q if q == kv else "q_len=%d, kv_len=%d" % (q, kv)
        return "maskkit.mask(%r, %s)" % (self.expr, size)

    # ---- counts ----------------------------------------------------------
    def summary(self):
        """The dict `maskkit gen EXPR --n N --json` prints (expr, params, n,
        kv_len when rectangular, seed, count, sparsity; output and format
        None: nothing was written)."""
        if self._summary is None:
            rec, addr = _lib.record("mk_mask_summary_record")
            out = _lib.result_buffer(rec)
            _lib.check(_lib.mk_mask_summarize(self._expr.ptr, self._bind.seed, None, None,
                                              ctypes.byref(out)))
            self._summary = _lib.emit_json(addr, ctypes.byref(out))
        return dict(self._summary)

    @property
    def count(self):
        """|M|: the cells set."""
        return self.summary()["count"]

    @property
    def sparsity(self):
        """1 - |M| / (q_len kv_len)."""
        return self.summary()["sparsity"]

    def measure(self, tiles=(64, 128)):
        """The dict `maskkit measure EXPR --n N --json` prints: counts,
        sparsities, rows, structure (symmetric, causal, Toeplitz) and for
        each tile size (at most 8; `--tile B`) its tile densities."""
        rec, addr = _lib.record("mk_mask_measure_record")
        blocks = [_lib.size_arg(b, "tile") for b in tiles]
        arr = (ctypes.c_int64 * max(len(blocks), 1))(*blocks)
        out = _lib.result_buffer(rec)
        ret = _lib.mk_measure_mask(self._expr.ptr, arr, len(blocks), None, None,
                                   ctypes.byref(out))
        try:
            _lib.check(ret)
            return _lib.emit_json(addr, ctypes.byref(out))
        finally:
            _lib.mk_mask_measure_release(ctypes.byref(out))

    # ---- cells -----------------------------------------------------------
    def _materialise(self):
        if self._mask is None:
            ptr = ctypes.c_void_p()
            _lib.check(_lib.mk_expr_to_mask(self._expr.ptr, ctypes.byref(ptr)))
            self._mask = _Owned(ptr.value, _lib.mk_mask_free)
        return self._mask

    def packed(self):
        """The library's own bits, without a copy: uint64 [q_len, words],
        bit j of row i in word j // 64 at bit j % 64 (include/maskkit/mask.h);
        bits beyond kv_len are zero.  Read-only: a view of the Mask."""
        m = self._materialise()
        rows = _lib.mk_mask_n(m.ptr)
        stride = _lib.mk_mask_stride(m.ptr)
        base = ctypes.cast(_lib.mk_mask_row(m.ptr, 0), ctypes.c_void_p).value
        a = _view(base, ctypes.c_uint64, (rows, stride), m)
        a.flags.writeable = False
        return a

    def numpy(self):
        """The cells as a bool array [q_len, kv_len] (C order), equal bit for
        bit to `maskkit gen EXPR --n N -o m.npy`: the packed rows unpacked."""
        words = self.packed()
        if sys.byteorder != "little":
            words = words.astype("<u8")
        cols = self.shape[1]
        return np.unpackbits(words.view(np.uint8), axis=1, count=cols,
                             bitorder="little").view(np.bool_)

    def tiles(self, block):
        """The tile layout at block x block tiles (mk_mask_tiles): uint8
        [nb, nb_kv] of TILE_EMPTY (0), TILE_PARTIAL (1), TILE_FULL (2); the
        last row and column of tiles are cut short when block does not
        divide the size, and such a tile is never full.  The densities
        measure() reports per tile size count these states."""
        m = self._materialise()
        t = ctypes.POINTER(_lib.Tiles)()
        _lib.check(_lib.mk_mask_tiles(m.ptr, _lib.size_arg(block, "block"), ctypes.byref(t)))
        owner = _Owned(t, _lib.mk_tiles_free)
        nb, nb_kv = t.contents.nb, t.contents.nb_kv
        addr = ctypes.cast(t.contents.state, ctypes.c_void_p).value
        a = _view(addr, ctypes.c_uint8, (nb, nb_kv), owner)
        a.flags.writeable = False
        return a

    # ---- FlexAttention ---------------------------------------------------
    def flex_py(self):
        """The mask_mod as a standalone Python source (torch only), the
        file `maskkit gen EXPR --n N --format flex-py -o mask_mod.py` writes:
        index arithmetic on q_idx and kv_idx composed with | & ~, lookup
        tables of O(n r) entries for random keys, chosen tokens and
        documents.  A mask file in the expression is a maskkit.Error."""
        return _flex.flex_py(self._expr.ptr)

    def mask_mod(self, device=None):
        """FlexAttention's mask_mod(b, h, q_idx, kv_idx) of this mask, its
        tables on device (None: the CPU): flex_py()'s, so it works at any
        length and torch.compile fuses it.  An expression that reads mask
        files looks its cells up instead (q_len x kv_len bools).  Needs
        torch."""
        if _flex.has_files(self._expr.ptr):
            return _flex.dense_mask_mod(self.numpy(), device)
        return _flex.load_mask_mod(self.flex_py(), device)

    def block_arrays(self, block_size=128):
        """The four arrays of FlexAttention's BlockMask (kv_num_blocks,
        kv_indices, full_kv_num_blocks, full_kv_indices), int32 with
        create_block_mask's shapes ([1, 1, nb_q], [1, 1, nb_q, nb_kv]) and
        values, from the library's tile layout (mk_expr_flex_blocks): the
        rows streamed, never the n x n cells.  Needs no torch."""
        return _flex.blocks(self._expr.ptr, block_size)

    def block_mask(self, block_size=128, device=None):
        """A torch.nn.attention.flex_attention.BlockMask (B = H = 1) made
        with BlockMask.from_kv_blocks from block_arrays(block_size) and
        mask_mod(device), with seq_lengths (q_len, kv_len): what
        create_block_mask(m.mask_mod(), None, None, q_len, kv_len,
        BLOCK_SIZE=block_size) gives, without evaluating the mask_mod on
        every cell.  Needs torch."""
        return _flex.block_mask(self.block_arrays(block_size), self.mask_mod(device),
                                self.shape, block_size, device)


def mask(expr, n=None, q_len=None, kv_len=None, align="bottom-right", seed=0,
         max_memory=None):
    """A mask expression bound to a size (mk_expr_operand + mk_expr_bind),
    as `maskkit gen EXPR --n N` binds it.

    expr: the mask language (`maskkit patterns`; 'local2+global1',
    '(local128+global4)&causal') or a mask file (m.npy, m.h5:/path).
    n: the size, or q_len (the same thing by the CLI's other name) with
    kv_len for a rectangular q_len x kv_len mask; None: taken from the mask
    files in expr.  align: which corner of the patterns a rectangular mask
    is, "bottom-right" (a KV cache, the default) or "top-left" (--align).
    seed: for random terms that give none.  max_memory: bytes or "4G" (the
    default), the cap on what the library materialises.
    Every failure is a maskkit.Error with the library's message.
    """
    if n is not None and q_len is not None and n != q_len:
        raise Error("n and q_len are the same size by two names: give one (n = %s, q_len = %s)"
                    % (n, q_len), _lib.MK_EINVAL, "n")
    rows = n if n is not None else q_len
    bind = _lib.BindOpts()
    for value, name in ((rows, "n"), (kv_len, "kv_len")):
        # 0 means "from the files" to the library: an explicit size must be one
        if value is not None:
            v = _lib.size_arg(value, name)
            _lib.check(_lib.mk_check_n(v, name.encode()))
            setattr(bind, name, v)
    if align not in _ALIGN:
        raise Error("unknown align '%s' (use bottom-right or top-left)" % (align,),
                    _lib.MK_EINVAL, "align")
    if _lib.HAVE_ALIGN:
        bind.align = _ALIGN[align]
    elif align != "bottom-right":
        raise Error("align '%s' needs a libmaskkit with mk_bind_opts.align" % align,
                    _lib.MK_EINVAL, "align")
    bind.seed = _lib.u64_arg(seed, "seed")
    bind.max_memory = _lib.memory_arg(max_memory)
    # columns for measure()'s symmetry check, as `maskkit measure` binds
    bind.need_cols = True
    if not isinstance(expr, str):
        raise TypeError("expr must be a str, not %s" % type(expr).__name__)
    ptr = ctypes.c_void_p()
    _lib.check(_lib.mk_expr_operand(expr.encode(), ctypes.byref(ptr)))
    owned = _Owned(ptr.value, _lib.mk_expr_free)
    _lib.check(_lib.mk_expr_bind(owned.ptr, ctypes.byref(bind)))
    return Mask(owned, bind)


def patterns():
    """The registered patterns, the list `maskkit patterns --json` prints:
    [{name, summary, shorthand, params: [{name, kind, default, doc}]}]."""
    rec, addr = _lib.record("mk_pattern_record")
    lst = _lib.PatternList()
    _lib.check(_lib.mk_pattern_list_get(ctypes.byref(lst)))
    try:
        # an array even of one, as the CLI prints the list
        return _lib.emit_json(addr, lst.patterns, lst.count, 1)
    finally:
        _lib.mk_pattern_list_release(ctypes.byref(lst))


def toeplitz(E, first=128, max_memory=None):
    """How translation invariant position embeddings are
    (mk_toeplitz_model_fit): E is a numpy [n, d] matrix E_P; P = E E^T in
    double precision and the R^2 of its least-squares Toeplitz fit, for all
    of P and its leading first x first block.  Returns the dict
    `maskkit toeplitz FILE --json` prints for a file holding E, with file and
    dataset None.  A C-contiguous float64 E is read in place (no copy)."""
    a = np.asarray(E)
    if a.ndim != 2:
        raise Error("E must be a 2-D array [n, d], got shape %s" % (a.shape,),
                    _lib.MK_EINVAL, "E")
    if a.dtype.kind not in "biuf":
        raise Error("E must hold real numbers, got dtype %s" % a.dtype, _lib.MK_EINVAL, "E")
    a = np.ascontiguousarray(a, dtype=np.float64)
    m = _lib.Matrix(a.shape[0], a.shape[1],
                    a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    opts = _lib.ToeplitzOpts(None, _lib.size_arg(first, "first"), _lib.memory_arg(max_memory),
                             False)
    rec, addr = _lib.record("mk_toeplitz_model_record")
    out = _lib.result_buffer(rec)
    ret = _lib.mk_toeplitz_model_fit(ctypes.byref(m), ctypes.byref(opts), ctypes.byref(out))
    try:
        _lib.check(ret)
        return _lib.emit_json(addr, ctypes.byref(out))
    finally:
        _lib.mk_toeplitz_model_release(ctypes.byref(out))
