"""What run.py runs: the valid fixtures, the inputs and the reader commands
for each kind of input, the writers, and the address-space-limit cases.

To add a reader command, add it to READERS under the kinds of input it reads
({f} is the input, {V} the folder of valid fixtures, outputs named in
'outputs' are written in the run's own folder).  To add a writer, add a
Writer to WRITERS: its argv gets the hostile folder BASE (the output goes
to BASE/out.EXT), the valid fixtures V and a SAFE folder for any second
output that is not under test."""
import os
import re

import h5py
import numpy as np

MEM = ["--max-memory", "256M"]
SWEEP_PROGRESS = re.compile(r"^maskkit: sweep \d+/\d+: ")

# the input kinds of each file name extension
KINDS = {
    ".npy": ("mask", "lengths", "tensor"),
    ".json": ("mask", "heads"),
    ".txt": ("mask", "lengths"),
    ".h5": ("mask", "lengths", "tensor", "weights", "dataset"),
    ".csv": ("sweep-csv",),
    ".expr": ("expr",),
    # make_model_corpus.py's (issue 27)
    ".safetensors": ("weights", "encoder-weights"),
    ".model": ("model",),
    ".tok": ("tokenizer",),
    ".text": ("text",),
    ".npz": ("mask",),
    ".patterns": ("patterns",),
}
# kinds whose file's content, not its name, is the argument ({e})
CONTENT_KINDS = ("expr", "patterns")

FUZZ_CORPORA = ("json", "npy", "txt", "h5", "weights", "dataset", "expr")


class ReaderCase:
    """expect_rc: the exits allowed; forbid: text no message may hold;
    out_dir: the command writes a folder of files, each made or not on its
    own (report), so only temporary files may not stay."""

    def __init__(self, what, argv, outputs=(), expect_rc=(0, 2), forbid=None, out_dir=False):
        self.what, self.template, self.outputs = what, argv, tuple(outputs)
        self.expect_rc, self.forbid, self.out_dir = set(expect_rc), forbid, out_dir

    def argv(self, work):
        return [a.replace("{work}", work) if isinstance(a, str) else a for a in self.template]


# kind -> [(command label, argv template, outputs, options)]
READERS = {
    "mask": [
        ("measure", ["measure", "{f}"] + MEM, ()),
        ("compose", ["compose", "{f}", "diag", "-o", "c.npy"] + MEM, ("c.npy",)),
    ],
    "lengths": [
        ("measure --lengths", ["measure", "local2", "--lengths", "{f}"] + MEM, ()),
        ("axis --lengths-file", ["axis", "{V}/axis.h5", "--lengths-file", "{f}"] + MEM, ()),
    ],
    "tensor": [
        ("attn", ["attn", "{f}", "{f}", "{f}", "-o", "o.npy"] + MEM, ("o.npy",)),
        ("attn V", ["attn", "{V}/q.npy", "{V}/k.npy", "{f}", "-o", "o.npy"] + MEM, ("o.npy",)),
        ("prune", ["prune", "{f}", "--sparsity", "0.5", "-o", "p.h5"] + MEM, ("p.h5",)),
        ("explain --q --k", ["explain", "--q", "{f}", "--k", "{f}"] + MEM, ()),
    ],
    "weights": [
        ("toeplitz", ["toeplitz", "{f}"] + MEM, ()),
        ("positional", ["positional", "{f}"] + MEM, ()),
    ],
    "dataset": [
        ("measure --top-p", ["measure", "{f}", "--top-p", "0.9", "--by", "head"] + MEM, ()),
        ("attn-stats", ["attn-stats", "{f}"] + MEM, ()),
        ("axis", ["axis", "{f}", "-o", "a.h5", "--sample", "0"] + MEM, ("a.h5",)),
        ("explain", ["explain", "{f}"] + MEM, ()),
    ],
    "heads": [
        ("gen --heads-file", ["gen", "--heads-file", "{f}", "--n", "8", "-o", "h.h5"] + MEM,
         ("h.h5",)),
        ("measure --heads-file", ["measure", "--heads-file", "{f}", "--lengths",
                                  "{V}/lengths.txt"] + MEM, ()),
    ],
    # report's own rule: exit 1 is a report with figures missing, which a bad
    # --sweep file makes; but a file its reader accepts must then plot
    "sweep-csv": [
        ("report --sweep", ["report", "--out", "{work}/rep", "--quick", "--only", "sweep",
                            "--sweep", "{f}", "--quiet"], (),
         dict(expect_rc=(0, 1, 2), forbid="gnuplot failed", out_dir=True)),
    ],
    "expr": [
        ("gen EXPR", ["gen", "{e}", "--n", "16"] + MEM, ()),
        ("measure EXPR", ["measure", "{e}", "--n", "4096"] + MEM, ()),
    ],
    "encoder-weights": [
        ("encode --config", ["encode", "{f}", "--config", "{V}/model/config.json", "--text",
                             "{V}/t.txt", "-o", "e.h5", "--quiet"] + MEM, ("e.h5",)),
    ],
    "model": [
        ("toeplitz MODEL", ["toeplitz", "{f}"] + MEM, ()),
        ("positional MODEL", ["positional", "{f}"] + MEM, ()),
        ("tokenize MODEL", ["tokenize", "{f}", "--text", "{V}/t.txt"], ()),
        ("encode MODEL", ["encode", "{f}", "--text", "{V}/t.txt", "-o", "e.h5", "--quiet"] + MEM,
         ("e.h5",)),
        ("explain MODEL", ["explain", "{f}", "--text", "{V}/t.txt"] + MEM, ()),
    ],
    "tokenizer": [
        ("tokenize TOKENIZER", ["tokenize", "{f}", "--text", "{V}/t.txt", "-o", "t.txt"],
         ("t.txt",)),
        ("encode --tokenizer", ["encode", "{V}/model", "--tokenizer", "{f}", "--text",
                                "{V}/t.txt", "-o", "e.h5", "--quiet"] + MEM, ("e.h5",)),
    ],
    "text": [
        ("tokenize --text", ["tokenize", "{V}/model", "--text", "{f}"], ()),
        ("tokenize --sentences", ["tokenize", "{V}/model", "--text", "{f}", "--sentences"], ()),
        ("encode --text", ["encode", "{V}/model", "--text", "{f}", "--limit", "100", "-o",
                           "e.h5", "--quiet"] + MEM, ("e.h5",)),
        ("explain --text", ["explain", "{V}/model", "--text", "{f}"] + MEM, ()),
    ],
    "patterns": [
        ("sweep --patterns", ["sweep", "--patterns", "{e}", "--n", "16", "--sparsity", "50%",
                              "--heads", "1", "--head-dim", "4", "--reps", "1", "--kernels",
                              "dense", "-o", "s.csv", "--png", "s.png"], ("s.csv", "s.png")),
    ],
}


def kinds_of(path):
    return KINDS.get(os.path.splitext(path)[1], ())


def collect_inputs(srcdir, *generated):
    """The committed crafted files, the generated files and the fuzz seed
    corpora, in a fixed order (which fixes the runs that get a sentinel)."""
    found = []
    for top in [os.path.join(srcdir, "tests", "adversarial", "corpus"), *generated] + \
            [os.path.join(srcdir, "tests", "fuzz", "corpus", c) for c in FUZZ_CORPORA]:
        if not os.path.isdir(top):
            continue
        for name in sorted(os.listdir(top)):
            path = os.path.join(top, name)
            if os.path.basename(top) == "expr" and "corpus" in top and "fuzz" in top:
                # the expression seeds have no extension: their content is the input
                found.append(path)
            elif kinds_of(path):
                found.append(path)
    return found


def stamp(path):
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns)


def reader_cases(inputs, valid):
    cases, seen = [], set()
    for path in inputs:
        kinds = kinds_of(path) or ("expr",)
        expr = None
        if any(k in CONTENT_KINDS for k in kinds):
            with open(path, "rb") as fh:
                expr = fh.read().rstrip(b"\n")
        for kind in kinds:
            for label, template, outputs, *opts in READERS[kind]:
                argv = []
                for a in template:
                    if a == "{e}":
                        argv.append(expr)
                    else:
                        argv.append(a.replace("{f}", path).replace("{V}", valid))
                key = tuple(argv)
                if key in seen:
                    continue
                seen.add(key)
                what = f"{label} <- {os.path.basename(path)}"
                cases.append(ReaderCase(what, argv, outputs, **(opts[0] if opts else {})))
    return cases


# --- valid fixtures ------------------------------------------------------------

def softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def make_valid(out):
    """Small valid inputs for the writers (and the readers' other operands)."""
    os.makedirs(out)
    rng = np.random.default_rng(17)
    # big enough that each writer's output spans several pages (half-full disk)
    q, k, v = (rng.standard_normal((2, 64, 16)).astype(np.float32) for _ in range(3))
    for name, a in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(out, name + ".npy"), a)
    with h5py.File(os.path.join(out, "qk.h5"), "w") as f:
        f["q"], f["k"] = q, k
    with h5py.File(os.path.join(out, "p.h5"), "w") as f:
        f["p"] = softmax_rows(rng.standard_normal((2, 64, 64))).astype(np.float32)
    with h5py.File(os.path.join(out, "data.h5"), "w") as f:
        f["attentions"] = softmax_rows(rng.standard_normal((2, 2, 2, 32, 32))).astype(np.float32)
        f["lengths"] = np.array([32, 20], np.int32)
    with h5py.File(os.path.join(out, "axis.h5"), "w") as f:
        f["rows"] = (rng.random((2, 2, 96)) < 0.3).astype(np.uint8)
        f["cols"] = (rng.random((2, 2, 96)) < 0.3).astype(np.uint8)
        f["lengths"] = np.array([96, 60], np.int32)
    n, d, vocab = 64, 16, 20
    with h5py.File(os.path.join(out, "weights.h5"), "w") as f:
        f["bert.embeddings.position_embeddings.weight"] = rng.standard_normal((n, d))
        f["bert.embeddings.word_embeddings.weight"] = rng.standard_normal((vocab, d))
        for name in ("query", "key"):
            base = f"bert.encoder.layer.0.attention.self.{name}."
            f[base + "weight"] = rng.standard_normal((d, d))
            f[base + "bias"] = rng.standard_normal(d)
    with h5py.File(os.path.join(out, "sentinel.h5"), "w") as f:
        f["keep"] = np.arange(6, dtype=np.int32)
    with open(os.path.join(out, "heads.json"), "w") as fh:
        fh.write('["local1", "global1+diag"]\n')
    with open(os.path.join(out, "lengths.txt"), "w") as fh:
        fh.write("8\n6\n")
    return out


# --- writers -------------------------------------------------------------------

class Writer:
    def __init__(self, name, ext, argv, is_report=False):
        self.name, self.ext, self._argv = name, ext, argv
        self.is_report = is_report

    def out_name(self):
        return "out." + self.ext

    def argv(self, base, valid, safe):
        out = base if self.is_report else os.path.join(base, self.out_name())
        return [a.replace("{out}", out).replace("{V}", valid).replace("{safe}", safe)
                for a in self._argv]

    def sentinels(self, valid):
        if self.is_report:
            return {"figures/aaa_fig1.png": b"sentinel figure\n"}
        if self.ext == "h5":  # an existing .h5 output must be HDF5 to be replaced
            with open(os.path.join(valid, "sentinel.h5"), "rb") as fh:
                return {self.out_name(): fh.read()}
        return {self.out_name(): b"sentinel output\n"}

    def expect(self, place, mode):
        """(the exits allowed, the reasons any of which the message must give)."""
        full = ["No space left on device"] if mode == "tmpfs" else ["File too large"]
        if self.is_report and mode != "tmpfs":
            # a file-size limit also stops report's child commands, whose
            # own messages report does not repeat
            full = None
        if place == "full":
            return {1}, full
        if place == "half-full":  # an output that fits in the room left may succeed
            return {0, 1}, full
        if place == "read-only":
            return {2}, (["Read-only file system"] if mode == "tmpfs" else ["Permission denied"])
        if self.is_report:  # report makes its folder, parents included
            return {0}, None
        return {2}, ["No such file or directory"]


QKV = ["{V}/q.npy", "{V}/k.npy", "{V}/v.npy"]
SWEEP = ["sweep", "--patterns", "local", "--sparsity", "50%", "--n", "16", "--heads", "1",
         "--head-dim", "4", "--reps", "1", "--kernels", "dense,masked"]

WRITERS = [
    Writer("gen -o .txt", "txt", ["gen", "local1", "--n", "128", "-o", "{out}"]),
    Writer("gen -o .json", "json", ["gen", "local1", "--n", "128", "-o", "{out}"]),
    Writer("gen -o .npy", "npy", ["gen", "local1", "--n", "128", "-o", "{out}"]),
    Writer("gen -o .png", "png", ["gen", "local1", "--n", "128", "-o", "{out}"]),
    Writer("gen -o .h5", "h5", ["gen", "local1", "--n", "128", "-o", "{out}"]),
    Writer("gen --format blocks", "blocks", ["gen", "local1", "--n", "1024", "--format",
                                             "blocks", "--block", "8", "-o", "{out}"]),
    Writer("gen --heads-file -o .h5", "h5", ["gen", "--heads-file", "{V}/heads.json", "--n", "8",
                                             "-o", "{out}"]),
    Writer("compose -o .npy", "npy", ["compose", "local1", "global1", "--n", "128", "-o", "{out}"]),
    Writer("prune -o", "h5", ["prune", "{V}/p.h5", "--sparsity", "0.5", "-o", "{out}"]),
    Writer("axis -o", "h5", ["axis", "{V}/axis.h5", "-o", "{out}", "--sample", "0"]),
    Writer("axis --csv", "csv", ["axis", "{V}/axis.h5", "--csv", "{out}"]),
    Writer("attn -o .npy", "npy", ["attn"] + QKV + ["-o", "{out}"]),
    Writer("attn -o .h5", "h5", ["attn"] + QKV + ["-o", "{out}"]),
    Writer("attn -o .h5:/x", "h5", ["attn"] + QKV + ["-o", "{out}:/x"]),
    Writer("attn --weights-out .npy", "npy", ["attn"] + QKV + ["-o", "{safe}/o.npy",
                                                                "--weights-out", "{out}"]),
    Writer("attn --weights-out .h5", "h5", ["attn"] + QKV + ["-o", "{safe}/o.npy",
                                                              "--weights-out", "{out}"]),
    Writer("explain -o .h5", "h5", ["explain", "{V}/qk.h5", "-o", "{out}"]),
    Writer("explain -o .npy", "npy", ["explain", "{V}/qk.h5", "-o", "{out}"]),
    Writer("explain --csv", "csv", ["explain", "{V}/qk.h5", "--csv", "{out}"]),
    Writer("explain --hist-csv", "csv", ["explain", "{V}/qk.h5", "--hist-csv", "{out}"]),
    Writer("explain --png", "png", ["explain", "{V}/qk.h5", "--png", "{out}"]),
    Writer("explain --toy --csv", "csv", ["explain", "--toy", "distance", "--sizes", "1,2",
                                          "--a", "0.5", "--r", "0.1..10:5", "--csv", "{out}"]),
    Writer("toeplitz --png", "png", ["toeplitz", "{V}/weights.h5", "--png", "{out}"]),
    Writer("toeplitz --profile", "png", ["toeplitz", "{V}/weights.h5", "--profile", "{out}"]),
    Writer("positional --png", "png", ["positional", "{V}/weights.h5", "--heads", "2",
                                       "--png", "{out}"]),
    Writer("positional --profile", "png", ["positional", "{V}/weights.h5", "--heads", "2",
                                           "--profile", "{out}"]),
    Writer("attn-stats --png", "png", ["attn-stats", "{V}/data.h5", "--png", "{out}",
                                       "--max-offset", "4"]),
    Writer("attn-stats --csv", "csv", ["attn-stats", "{V}/data.h5", "--csv", "{out}"]),
    Writer("attn-stats --profile-csv", "csv", ["attn-stats", "{V}/data.h5", "--profile-csv",
                                               "{out}", "--max-offset", "4"]),
    Writer("measure DATA.h5 --png", "png", ["measure", "{V}/data.h5", "--threshold", "0.1",
                                              "--png", "{out}"]),
    Writer("sweep -o .csv", "csv", SWEEP + ["-o", "{out}"]),
    Writer("sweep -o .json", "json", SWEEP + ["-o", "{out}"]),
    Writer("sweep --png", "png", SWEEP + ["-o", "{safe}/s.csv", "--png", "{out}"]),
    Writer("report --out", "", ["report", "--out", "{out}", "--quick", "--only", "aaa-fig1",
                                "--quiet"], is_report=True),
]


def limit_cases(valid):
    """(MiB of address space, argv): each must end (0, 1 or 2), not hang."""
    qkv = [os.path.join(valid, n) for n in ("q.npy", "k.npy", "v.npy")]
    return [
        (100, ["--version"]),
        (150, ["measure", "local1", "--n", "8"]),
        (150, ["gen", "local1", "--n", "8", "-o", "g.npy"]),
        (200, ["attn"] + qkv + ["-o", "o.npy"]),
        (200, SWEEP),
        (400, SWEEP),
        (400, ["toeplitz", os.path.join(valid, "weights.h5")]),
    ]
