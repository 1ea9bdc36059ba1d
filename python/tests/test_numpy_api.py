"""The numpy API against the program's own outputs: masks bit for bit with
`gen -o m.npy`, measure() with `measure --json`, patterns() with
`patterns --json`, toeplitz() with `maskkit toeplitz` on a file holding the
same E, and bad input as the library's message with nothing written."""

import os

import numpy as np
import pytest

import maskkit
from maskkit import _lib

# patterns whose parameters have no default, with values that fit every size below
REQUIRED = {"document": "document(lengths=3,2)"}

SHAPES = [(1, 1), (7, 7), (100, 100), (130, 130), (5, 130), (130, 7)]
COMPOSED = ["(local8+global4)&causal", "prefix4-diag", "~causal", "random2+local1",
            "bigbird(w=2,r=3,g=1,seed=5)", "document(lengths=3,2,causal=1)+global1",
            "strided(l=8,causal=1)&~diag", "local2(block=16)"]


def pattern_exprs():
    # a new pattern that needs a parameter fails gen below until it has an entry
    return [REQUIRED.get(p["name"], p["name"]) for p in maskkit.patterns()]


def size_args(q, kv):
    return ["--n", q] if q == kv else ["--q-len", q, "--kv-len", kv]


def gen_npy(cli, expr, q, kv, *extra):
    cli.run("gen", expr, *size_args(q, kv), *extra, "-o", "m.npy")
    return np.load(os.path.join(cli.cwd, "m.npy"))


def made(expr, q, kv, **kw):
    return maskkit.mask(expr, n=q, kv_len=None if q == kv else kv, **kw)


@pytest.mark.parametrize("q,kv", SHAPES)
def test_every_pattern_bit_for_bit(cli, q, kv):
    for expr in pattern_exprs():
        if expr.startswith("document") and q < 5:
            continue
        want = gen_npy(cli, expr, q, kv)
        got = made(expr, q, kv).numpy()
        assert got.dtype == np.bool_ and want.dtype == np.bool_
        assert got.shape == (q, kv)
        assert np.array_equal(got, want), (expr, q, kv)


@pytest.mark.parametrize("expr", COMPOSED)
@pytest.mark.parametrize("q,kv", [(64, 64), (100, 100), (9, 100), (100, 9)])
def test_compositions_bit_for_bit(cli, expr, q, kv):
    want = gen_npy(cli, expr, q, kv, "--seed", 3)
    m = made(expr, q, kv, seed=3)
    assert np.array_equal(m.numpy(), want)
    summary = cli.json("gen", expr, *size_args(q, kv), "--seed", 3, "--json")
    assert m.summary() == summary
    assert m.count == summary["count"] == int(want.sum())
    assert m.sparsity == summary["sparsity"]
    assert m.shape == (q, kv)


def test_packed_is_the_library_memory():
    m = maskkit.mask("local3+global1", n=200)
    a, b = m.packed(), m.packed()
    assert a.dtype == np.uint64 and a.shape == (200, 4)
    assert np.shares_memory(a, b)
    assert not a.flags.writeable
    del m  # the views keep the library's mask alive
    assert int(np.unpackbits(a.view(np.uint8)).sum()) == \
        maskkit.mask("local3+global1", n=200).count


def test_mask_file_operand(cli):
    want = gen_npy(cli, "bigbird", 50, 50)
    m = maskkit.mask(os.path.join(cli.cwd, "m.npy"))
    assert m.shape == (50, 50)
    assert np.array_equal(m.numpy(), want)


@pytest.mark.parametrize("expr,q,kv", [("local2+global1", 100, 100), ("bigbird", 300, 300),
                                       ("(local128+global4)&causal", 1000, 1000),
                                       ("causal", 5, 130), ("local3", 130, 7),
                                       ("random2", 257, 257), ("document(lengths=60,40)", 100, 100)])
def test_measure_equals_measure_json(cli, expr, q, kv):
    want = cli.json("measure", expr, *size_args(q, kv), "--json")
    assert made(expr, q, kv).measure() == want
    want = cli.json("measure", expr, *size_args(q, kv), "--tile", 16, "--tile", 48, "--json")
    assert made(expr, q, kv).measure(tiles=(16, 48)) == want


@pytest.mark.parametrize("q,kv,block", [(100, 100, 16), (130, 7, 4), (5, 130, 64), (1000, 1000, 128)])
def test_tiles_against_numpy(q, kv, block):
    m = made("(local8+global2)&causal", q, kv)
    t = m.tiles(block)
    dense = m.numpy()
    nb, nb_kv = -(-q // block), -(-kv // block)
    assert t.shape == (nb, nb_kv) and t.dtype == np.uint8
    for bi in range(nb):
        for bj in range(nb_kv):
            cell = dense[bi * block:(bi + 1) * block, bj * block:(bj + 1) * block]
            short = cell.shape != (block, block)
            want = (maskkit.TILE_EMPTY if not cell.any() else
                    maskkit.TILE_FULL if cell.all() and not short else maskkit.TILE_PARTIAL)
            assert t[bi, bj] == want, (bi, bj)
    tiles = m.measure(tiles=(block,))["tiles"][0]
    assert tiles["nonempty"] == int((t != maskkit.TILE_EMPTY).sum())
    assert tiles["full"] == int((t == maskkit.TILE_FULL).sum())


def test_patterns_equal_patterns_json(cli):
    assert maskkit.patterns() == cli.json("patterns", "--json")


def test_version(cli):
    assert cli.run("--version").stdout.strip() == "maskkit " + maskkit.version()


def test_package_version_is_the_library_s():
    """python/maskkit/_version.py (pyproject.toml's version) moves with
    configure.ac's AC_INIT, the version the library reports."""
    import re
    from conftest import ROOT
    with open(os.path.join(ROOT, "configure.ac")) as f:
        ac = re.search(r"AC_INIT\(\[maskkit\], \[([^]]+)\]", f.read()).group(1)
    assert maskkit.__version__ == ac == maskkit.version()


def toeplitz_cli(cli, name, first=None):
    args = ["toeplitz", name, "--json"] + (["--first", first] if first else [])
    return cli.json(*args)


@pytest.mark.parametrize("n,d,first", [(50, 8, 10), (64, 16, None), (20, 3, 100)])
def test_toeplitz_npy(cli, n, d, first):
    e = np.random.default_rng(n).standard_normal((n, d))
    np.save(os.path.join(cli.cwd, "e.npy"), e)
    want = toeplitz_cli(cli, "e.npy", first)
    got = maskkit.toeplitz(e, **({"first": first} if first else {}))
    assert got.pop("file") is None and got.pop("dataset") is None
    assert want.pop("file") == "e.npy" and want.pop("dataset") == "/"
    assert got == want
    if first and first >= n:
        assert got["first"] is None


def test_toeplitz_float32_and_h5(cli):
    h5py = pytest.importorskip("h5py")
    # a sinusoidal E_P (Toeplitz by construction: R^2 near 1) in float32
    pos = np.arange(40)[:, None] / 10000 ** (np.arange(0, 16, 2)[None, :] / 16)
    e = np.concatenate([np.sin(pos), np.cos(pos)], axis=1).astype(np.float32)
    with h5py.File(os.path.join(cli.cwd, "e.h5"), "w") as f:
        f["embeddings/position_embeddings"] = e
    want = toeplitz_cli(cli, "e.h5", 8)
    got = maskkit.toeplitz(e, first=8)
    for k in ("file", "dataset"):
        got.pop(k), want.pop(k)
    assert got == want
    assert got["r2"] > 0.999


# ---- bad input: maskkit.Error with the library's message, nothing written ----

@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("expr", ["lcoal2", "local(w=-1)", "document", "local2 +", "(causal",
                                  "local(x=1)", "missing.npy", "causal&"])
def test_bad_expression_has_the_cli_message(cli, scratch, expr):
    want = cli.error("gen", expr, "--n", 100)
    with pytest.raises(maskkit.Error) as err:
        maskkit.mask(expr, n=100).numpy()
    assert str(err.value) == want
    assert err.value.status < 0 and err.value.status_name


@pytest.mark.parametrize("kw,message", [
    ({"n": -3}, "n must be positive, got -3"),
    ({"n": 0}, "n must be positive, got 0"),
    ({"n": 1 << 21}, "n = 2097152 is too large (at most 1048576)"),
    ({"n": 10, "kv_len": -1}, "kv_len must be positive, got -1"),
    ({}, "the sequence length is not known: give it (n)"),
])
def test_bad_size(scratch, kw, message):
    with pytest.raises(maskkit.Error) as err:
        maskkit.mask("local2", **kw)
    assert str(err.value) == message
    assert err.value.status in (_lib.MK_EINVAL, _lib.MK_ERANGE)


def test_bad_size_beyond_64_bits(scratch):
    with pytest.raises(maskkit.Error) as err:
        maskkit.mask("local2", n=1 << 70)
    assert err.value.status == _lib.MK_ERANGE
    with pytest.raises(TypeError):
        maskkit.mask("local2", n=10.0)
    with pytest.raises(maskkit.Error):
        maskkit.mask("local2", n=10, q_len=11)


def test_bad_memory_and_tiles(cli, scratch):
    want = cli.error("gen", "full", "--n", 4096, "--max-memory", "1K", "-o", "x.npy")
    with pytest.raises(maskkit.Error) as err:
        maskkit.mask("full", n=4096, max_memory="1K").numpy()
    # the library names its parameter; the program shows it as its flag
    assert str(err.value) == want.replace("(--max-memory)", "(max_memory)")
    assert err.value.param == "max_memory" and err.value.status == _lib.MK_ERANGE
    with pytest.raises(maskkit.Error, match="bad size 'lots'"):
        maskkit.mask("full", n=8, max_memory="lots")
    m = maskkit.mask("local2", n=64)
    with pytest.raises(maskkit.Error):
        m.measure(tiles=[0])
    with pytest.raises(maskkit.Error):
        m.measure(tiles=range(1, 10))
    with pytest.raises(maskkit.Error):
        m.tiles(0)


def test_bad_toeplitz_input(scratch):
    with pytest.raises(maskkit.Error, match="non-finite value"):
        maskkit.toeplitz(np.array([[1.0, 2.0], [np.nan, 0.0]]))
    with pytest.raises(maskkit.Error, match="n >= 2"):
        maskkit.toeplitz(np.ones((1, 4)))
    with pytest.raises(maskkit.Error, match="2-D"):
        maskkit.toeplitz(np.ones(4))
    with pytest.raises(maskkit.Error, match="max_memory"):
        maskkit.toeplitz(np.ones((300, 4)), max_memory=1024)


def test_align(cli):
    if not _lib.HAVE_ALIGN:
        with pytest.raises(maskkit.Error, match="align"):
            maskkit.mask("causal", q_len=1, kv_len=1000, align="top-left")
        assert maskkit.mask("causal", q_len=1, kv_len=1000).count == 1000
        return
    for align, count in (("bottom-right", 1000), ("top-left", 1)):
        m = maskkit.mask("causal", q_len=1, kv_len=1000, align=align)
        assert m.count == count
        want = gen_npy(cli, "(local4+global2)&causal", 9, 100, "--align", align)
        got = maskkit.mask("(local4+global2)&causal", q_len=9, kv_len=100, align=align)
        assert np.array_equal(got.numpy(), want)
    with pytest.raises(maskkit.Error, match="unknown align"):
        maskkit.mask("causal", n=4, align="middle")
