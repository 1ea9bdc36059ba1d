"""maskkit.encode and maskkit.measure_attention against the program:
encode()'s arrays equal, bit for bit, the datasets `maskkit encode --text
FILE -o OUT.h5` writes for the same texts (read with h5py), on the real
all-MiniLM-L6-v2 (skipped without it: tools/fetch-model.sh, or
$MASKKIT_MODEL); measure_attention() equals `maskkit measure OUT.h5
--json` on the encode file and on maps of random probabilities written with
h5py (no model needed); bad input is a maskkit.Error with the library's
message, and nothing is written."""

import json
import os

import numpy as np
import pytest

import maskkit
from maskkit import _lib

h5py = pytest.importorskip("h5py", reason="python3-h5py reads the program's HDF5 files")


def model_dir():
    d = os.environ.get("MASKKIT_MODEL") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "maskkit", "all-MiniLM-L6-v2")
    return d if os.path.isfile(os.path.join(d, "config.json")) else None


MODEL = model_dir()
needs_model = pytest.mark.skipif(
    MODEL is None, reason="no real model: run tools/fetch-model.sh or set MASKKIT_MODEL "
                          "(a directory with all-MiniLM-L6-v2's config.json)")

TEXTS = ["The quick brown fox jumps over the lazy dog.",
         "Attention maps are not masks, but they can be measured like masks.",
         "Short.",
         "Caf\u00e9 na\u00efve r\u00e9sum\u00e9: accents and \u00fcml\u00e4uts \u2014 and a dash."]
PARAGRAPHS = ("Copying is allowed. Nobody may change it! Is it free? Yes.\n"
              "It goes on here (a second line).\n\nA new paragraph starts. It ends.\n")

# what the file records that memory cannot hold the same way: where the data came from
WHERE = ("data", "lengths_from")


def read_h5(path):
    with h5py.File(path, "r") as f:
        return {k: f[k][()] for k in ("attn", "lengths", "ids")}, dict(f.attrs)


def cli_encode(cli, texts, *flags):
    with open(os.path.join(cli.cwd, "t.txt"), "w", encoding="utf-8") as f:
        f.write(texts if isinstance(texts, str) else "\n".join(texts) + "\n")
    cli.run("encode", MODEL, "--text", "t.txt", "--quiet", *flags, "-o", "maps.h5")
    return os.path.join(cli.cwd, "maps.h5")


def same_arrays(got, want):
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape, k
        assert np.array_equal(got[k], want[k]), k


# ---- encode: the file's datasets, bit for bit ---------------------------------

@needs_model
@pytest.mark.parametrize("kw,flags", [
    ({}, []),
    ({"dtype": "fp16", "max_len": 12}, ["--dtype", "fp16", "--max-len", "12"]),
    ({"mask": "local2+global1", "batch": 3, "limit": 3},
     ["--mask", "local2+global1", "--batch", "3", "--limit", "3"]),
])
def test_encode_equals_the_file(cli, kw, flags):
    got = maskkit.encode(MODEL, TEXTS, **kw)
    want, attrs = read_h5(cli_encode(cli, TEXTS, *flags))
    same_arrays(got, want)
    for k in ("layers", "heads", "max_len", "truncated"):
        assert got.attrs[k] == attrs[k], k
    assert got.attrs["model_type"] == attrs["model_type"].decode()
    assert got.attrs["truncated"] == (2 if "max_len" in kw else 0)


@needs_model
def test_encode_sentences_and_one_str(cli):
    got = maskkit.encode(MODEL, PARAGRAPHS, sentences=True)
    want, _ = read_h5(cli_encode(cli, PARAGRAPHS, "--sentences"))
    same_arrays(got, want)
    assert len(got["lengths"]) == 7
    # a sentence never runs from one text into the next
    split = maskkit.encode(MODEL, ["One is here. Two", "three."], sentences=True)
    assert list(split["lengths"]) == [6, 3, 4]
    # a str is one sample: the first line of the list above alone
    one = maskkit.encode(MODEL, TEXTS[0])
    assert one["attn"].shape[0] == 1
    n = one["lengths"][0]
    full = maskkit.encode(MODEL, TEXTS)
    assert np.array_equal(one["attn"][0], full["attn"][0, :, :, :n, :n])


# ---- measure_attention: measure --json --------------------------------------

def assert_same_report(got, want):
    assert list(got) == list(want)
    assert {k: v for k, v in got.items() if k not in WHERE} == \
        {k: v for k, v in want.items() if k not in WHERE}
    assert got["data"].startswith("memory:maps (")
    assert got["data"][len("memory:maps"):] == want["data"][want["data"].index(" ("):]


@needs_model
@pytest.mark.parametrize("rule", [("threshold", 0.05), ("top_p", 0.9)])
def test_measure_attention_on_encoded_maps(cli, rule):
    path = cli_encode(cli, TEXTS)
    want = cli.json("measure", path, "--" + rule[0].replace("_", "-"), rule[1], "--json")
    maps = maskkit.encode(MODEL, TEXTS)
    got = maskkit.measure_attention(maps["attn"], maps["lengths"], **{rule[0]: rule[1]})
    assert_same_report(got, want)
    assert got["lengths_from"] == "lengths" and want["lengths_from"] == "/lengths"
    # encode()'s result as it is
    assert maskkit.measure_attention(maps, **{rule[0]: rule[1]}) == got


def random_maps(rng, shape, lengths):
    """Softmax rows over each sample's real keys, zeros in its padding."""
    p = np.zeros(shape)
    for s, n in enumerate(lengths):
        x = np.exp(3 * rng.standard_normal(shape[1:3] + (n, n)))
        p[s, :, :, :n, :n] = x / x.sum(-1, keepdims=True)
    return p


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("rule", [("threshold", 0.1), ("top_p", 0.8)])
def test_measure_attention_equals_measure_json(cli, dtype, rule):
    rng = np.random.default_rng(3)
    lengths = np.array([10, 4, 7, 1])
    maps = random_maps(rng, (4, 3, 2, 10, 10), lengths).astype(dtype)
    with h5py.File(os.path.join(cli.cwd, "r.h5"), "w") as f:
        f["attn"] = maps
        f["lengths"] = lengths
    flag = "--" + rule[0].replace("_", "-")
    want = cli.json("measure", "r.h5", flag, rule[1], "--json")
    got = maskkit.measure_attention(maps, lengths.astype(np.int32), **{rule[0]: rule[1]})
    assert_same_report(got, want)
    # not C-contiguous: the same numbers from a copy
    strided = np.asfortranarray(maps)
    assert maskkit.measure_attention(strided, lengths, **{rule[0]: rule[1]}) == got


def test_measure_attention_masks_and_leading_axes(cli):
    rng = np.random.default_rng(5)
    masks = rng.random((3, 2, 9, 9)) < 0.3          # [layers, heads, N, N]: one sample
    with h5py.File(os.path.join(cli.cwd, "m.h5"), "w") as f:
        f["masks"] = masks
    want = cli.json("measure", "m.h5", "--json")
    got = maskkit.measure_attention(masks)
    assert_same_report(got, want)
    assert got["lengths_from"] is None and got["samples"] == 1
    assert maskkit.measure_attention(masks.astype(np.uint8)) == \
        dict(got, data=got["data"].replace("bool", "uint8"))


# ---- bad input: a maskkit.Error with the library's message, nothing written -----

INPUTS = {"t.txt", "bad.h5"}  # what the tests below write for the program


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert set(os.listdir(tmp_path)) <= INPUTS


def test_encode_missing_model(cli, scratch):
    with open("t.txt", "w") as f:
        f.write("a text\n")
    want = cli.error("encode", "no-such-model", "--text", "t.txt", "-q", "-o", "o.h5")
    with pytest.raises(maskkit.Error) as err:
        maskkit.encode("no-such-model", ["a text"])
    assert str(err.value) == want
    assert err.value.status < 0


@needs_model
@pytest.mark.parametrize("texts,kw,param,message", [
    (["fine", "  "], {}, "texts", "text 2 is blank: every text is a sample (texts)"),
    ([], {}, "texts", "no text to encode (texts)"),
    (["fine"], {"max_len": 1}, None, "max_len must be in 2..1048576, got 1"),
    (["fine"], {"batch": 0}, "batch", "batch must be positive, got 0 (batch)"),
    (["fine"], {"mask": "lcoal2"}, "mask", None),
    (["bad \ud800 surrogate"], {}, None, "'texts': line 1: invalid UTF-8 at byte 5 (0xed)"),
    (["x"] * 3, {"max_memory": "1K"}, "max_memory", None),
])
def test_encode_bad_input(scratch, texts, kw, param, message):
    with pytest.raises(maskkit.Error) as err:
        maskkit.encode(MODEL, texts, **kw)
    if message:
        assert str(err.value) == message
    if param:
        assert err.value.param == param
    assert "\n" not in str(err.value)


@needs_model
def test_encode_maps_beyond_max_memory(scratch):
    # the weights (90 MB) fit, 200 samples of 128 tokens' maps (943 MB) do not
    with pytest.raises(maskkit.Error) as err:
        maskkit.encode(MODEL, ["word " * 200] * 200, max_memory="500M")
    assert err.value.param == "max_memory" and err.value.status == _lib.MK_ERANGE
    assert str(err.value).startswith("the attention maps of 200 samples x 6 layers x 12 heads "
                                      "x 128 x 128 ")


def test_encode_bad_arguments(scratch):
    with pytest.raises(maskkit.Error, match="unknown dtype 'fp8'"):
        maskkit.encode("no-such-model", ["a"], dtype="fp8")
    with pytest.raises(TypeError):
        maskkit.encode("no-such-model", [b"bytes"])


def file_error(cli, maps, lengths, *flags):
    """measure's message on a file of maps and lengths, its path as memory's."""
    with h5py.File(os.path.join(cli.cwd, "bad.h5"), "w") as f:
        f["attn"] = maps
        if lengths is not None:
            f["lengths"] = lengths
    return cli.error("measure", "bad.h5", *flags).replace("'bad.h5'", "'memory'")


def test_measure_attention_bad_input(cli, scratch):
    maps = random_maps(np.random.default_rng(1), (2, 1, 2, 5, 5), [5, 3]).astype(np.float32)
    for lengths in ([5, 6], [0, 3]):
        want = file_error(cli, maps, np.array(lengths), "--threshold", "0.1")
        with pytest.raises(maskkit.Error) as err:
            maskkit.measure_attention(maps, np.array(lengths), threshold=0.1)
        # the library names the call's parameter, which a file has not
        assert str(err.value) == want + " (lengths)"
        assert err.value.param == "lengths"
    bad = maps.copy()
    bad[1, 0, 1, 2, 0] = np.nan
    want = file_error(cli, bad, np.array([5, 3]), "--threshold", "0.1")
    with pytest.raises(maskkit.Error) as err:
        maskkit.measure_attention(bad, [5, 3], threshold=0.1)
    assert str(err.value) == want.replace("dataset '/attn'", "dataset 'maps'")
    # padding may hold anything finite or not: it is never read
    bad[1, 0, 1, 4, 4] = np.nan
    bad[1, 0, 1, 2, 0] = 0.5
    maskkit.measure_attention(bad, [5, 3], threshold=0.1)
    cases = [
        ((maps,), {}, "threshold", "give a threshold or a top-p rule"),
        ((maps, [5, 3, 2]), {"threshold": 0.1}, "lengths", "3 lengths for 2 samples"),
        ((maps, [[5, 3]]), {"threshold": 0.1}, "lengths", "1-D array of integers"),
        ((maps, [5.0, 3.0]), {"threshold": 0.1}, "lengths", "1-D array of integers"),
        ((maps.astype(np.int32),), {}, "dtype", "int32 data"),
        ((maps[..., :4],), {"threshold": 0.1}, "maps", "must be square"),
        ((maps[0, 0, 0, 0],), {"threshold": 0.1}, "maps", "2 to 5 dimensions"),
        ((maps,), {"top_p": 0.0}, "top_p", "the top-p mass must be in (0, 1], got 0"),
        ((maps,), {"threshold": 0.1, "top_p": 0.5}, "threshold", "give one of"),
        ((maps,), {"threshold": 0.1, "n": 6}, "n", "n = 6 does not match the data's N = 5"),
        ((maps,), {"threshold": 0.1, "max_memory": "100"}, "max_memory", "over the memory limit"),
    ]
    for args, kw, param, part in cases:
        with pytest.raises(maskkit.Error) as err:
            maskkit.measure_attention(*args, **kw)
        assert part in str(err.value), (kw, str(err.value))
        assert err.value.param == param, (kw, err.value.param)
    assert maps[1, 0, 1, 2, 0] == maps[1, 0, 1, 2, 0]  # the caller's array untouched


def test_measure_attention_does_not_write_the_callers_array():
    maps = random_maps(np.random.default_rng(2), (1, 1, 1, 4, 4), [2])
    maps[0, 0, 0, 3, 3] = np.inf      # padding: read as 0, not written back
    keep = maps.copy()
    maps.flags.writeable = False
    maskkit.measure_attention(maps, [2], threshold=0.2)
    assert np.array_equal(maps, keep, equal_nan=True)
