"""The mask_mod source (Mask.flex_py, `gen --format flex-py`) against the
mask's cells, without torch: the generated file is run with a stand-in for
the few torch calls it makes, backed by numpy, and its mask_mod evaluated on
the whole grid at once.  The arithmetic is the generator's (patterns/*.c's
flex()), the cells the row generators': two codes that must agree.  The
same with real torch, and the BlockMask, is python/tests_torch/'s."""

import sys
import types

import numpy as np
import pytest

import maskkit


class _T(np.ndarray):
    """The tensor methods the file calls."""

    def clamp(self, lo, hi):
        return np.clip(self, lo, hi)

    def abs(self):
        return np.abs(self)

    def long(self):
        return self.astype(np.int64)

    def clone(self):
        return self.copy()

    def to(self, device):
        return self

    def numel(self):
        return self.size

    def contiguous(self):
        return np.ascontiguousarray(self).view(_T)

    def unbind(self, dim):
        return tuple(np.moveaxis(self, dim, 0))


def _t(a):
    return np.asarray(a).view(_T)


def _fake_torch():
    t = types.ModuleType("torch")
    t.int32, t.bool = np.int32, np.bool_
    t.frombuffer = lambda buf, dtype: _t(np.frombuffer(buf, dtype=dtype))
    t.zeros = lambda n, dtype: _t(np.zeros(n, dtype=dtype))
    t.full = lambda shape, v, dtype: _t(np.full(shape, v, dtype=dtype))
    t.arange = lambda n, dtype=None: _t(np.arange(n, dtype=dtype))
    t.repeat_interleave = lambda a, reps: _t(np.repeat(np.asarray(a), np.asarray(reps)))
    return t


def _mask_mod(source):
    saved = sys.modules.get("torch")
    sys.modules["torch"] = _fake_torch()
    try:
        ns = {"__name__": "flex_numpy"}
        exec(compile(source, "<flex-py>", "exec"), ns)
        return ns
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved


EXPRS = ["full", "none", "diag", "causal", "local3", "diagonal(offsets=0,5,9)", "global3",
         "global(tokens=2,7,60)", "axis(rows=1,5,cols=3)", "random2", "star", "logsparse",
         "logsparse(causal=1)", "strided5", "strided(l=7,causal=1)", "fixed(l=8,c=2)",
         "fixed(l=8,c=2,causal=1)", "longformer(w=2,g=3)", "longformer(w=1,tokens=0,10)",
         "bigbird(w=1,r=2,g=2)", "prefix(p=17)", "document(lengths=10,30,25)",
         "document(lengths=10,30,25,causal=1)", "(local12+global4)&causal", "~causal",
         "local(w=2,block=8)+random(size=1,block=8)-diag",
         "(strided8&~diag)+global(g=2,block=4)", "bigbird(w=1,r=3,g=1)-random(size=1,seed=3)",
         "local(w=1000)+strided(l=1000)+global(g=1000)+random(size=1000)"]

SHAPES = [dict(n=100), dict(n=77), dict(q_len=30, kv_len=100), dict(q_len=100, kv_len=30),
          dict(q_len=30, kv_len=100, align="top-left"),
          dict(q_len=100, kv_len=30, align="top-left")]


@pytest.mark.parametrize("expr", EXPRS)
def test_mask_mod_is_the_cells(expr):
    for shape in SHAPES:
        m = maskkit.mask(expr, seed=5, **shape)
        ns = _mask_mod(m.flex_py())
        q, kv = m.shape
        assert (ns["Q_LEN"], ns["KV_LEN"]) == (q, kv)
        assert ns["ALIGN"] == shape.get("align", "bottom-right") or q == kv
        got = ns["mask_mod"](0, 0, _t(np.arange(q)[:, None]), _t(np.arange(kv)[None, :]))
        cells = m.numpy()
        bad = np.argwhere(np.asarray(got) != cells)
        assert bad.size == 0, "%s %s: %d cells differ, first (q, kv) = %s" % (
            expr, shape, len(bad), tuple(bad[0]))


def test_past_the_end_is_safe():
    """A kernel may ask for rows and columns past the end of a cut block:
    the tables are looked up clamped, so nothing reads outside them."""
    m = maskkit.mask("random2+document(lengths=40,50)+global(tokens=3)", n=100)
    ns = _mask_mod(m.flex_py())
    got = ns["mask_mod"](0, 0, _t(np.arange(128)[:, None]), _t(np.arange(128)[None, :]))
    assert np.asarray(got).shape == (128, 128)
    assert (np.asarray(got)[:100, :100] == m.numpy()).all()


def test_no_table_is_n_squared():
    """Random keys are n x 2K, documents their lengths: O(n r), not n^2."""
    m = maskkit.mask("random(size=2)+document(lengths=3000,1000)", n=4096)
    ns = _mask_mod(m.flex_py())
    sizes = [rows * cols for _, _, rows, cols, _ in ns["_TABLES"]]
    assert sorted(sizes) == [2, 4096 * 4]


def test_the_cli_writes_the_same(tmp_path, cli):
    expr = "bigbird(w=1,r=2,g=2)+document(lengths=20,30)"
    out = tmp_path / "mod.py"
    cli.run("gen", expr, "--q-len", "40", "--kv-len", "60", "--seed", "9", "-o", str(out))
    m = maskkit.mask(expr, q_len=40, kv_len=60, seed=9)
    assert out.read_text() == m.flex_py()


def test_mask_files_have_no_mask_mod(tmp_path, cli):
    f = tmp_path / "m.npy"
    cli.run("gen", "local1", "--n", "8", "-o", str(f))
    m = maskkit.mask(str(f) + "+causal")
    with pytest.raises(maskkit.Error, match="is a mask file"):
        m.flex_py()


def test_block_arrays_without_torch():
    """The BlockMask arrays from the library, against the tile states."""
    for shape in SHAPES:
        m = maskkit.mask("(local12+global4)&causal", **shape)
        for block in (8, 16):
            a = m.block_arrays(block)
            t = m.tiles(block)
            nb, nb_kv = t.shape
            assert a["kv_indices"].shape == (1, 1, nb, nb_kv)
            for kind, state in (("kv_", maskkit.TILE_PARTIAL), ("full_kv_", maskkit.TILE_FULL)):
                num, idx = a[kind + "num_blocks"][0, 0], a[kind + "indices"][0, 0]
                for r in range(nb):
                    listed = np.flatnonzero(t[r] == state)
                    rest = np.flatnonzero(t[r] != state)
                    assert num[r] == len(listed)
                    assert (idx[r] == np.concatenate([listed, rest])).all()
