"""The output = input sweep (issue 27): every output option of every command
pointed at every file that command reads, in a folder of its own.  Each run
must exit 2 with one line saying the output would destroy the input, leave
every file of the folder byte for byte as it was and make none.

IO_CASES holds, per command, command lines whose inputs are written {name}
(a file or model folder of the valid fixtures, copied into the run's
folder), the files each reads (a model folder's own files named
"model/config.json"), and the output options with any options they need.
check_complete() reads the option tables in src/cli/cmd_*.c, so an output
or input option added to a command without a case here fails the sweep
instead of going untested."""
import hashlib
import os
import re
import shutil

# the model folder's files each kind of command reads
MODEL_WEIGHTS = ["model/model.safetensors", "model/config.json"]
MODEL_ALL = MODEL_WEIGHTS + ["model/vocab.txt"]
QKV = ["{q.npy}", "{k.npy}", "{v.npy}"]
SWEEP = ["--n", "16", "--sparsity", "50%", "--heads", "1", "--head-dim", "4", "--reps", "1",
         "--kernels", "dense"]


class IoCase:
    """argv: the command line, {name} for a fixture; reads: what it reads
    (default: every {name} of argv); outs: {output option: options it needs
    beside it}; inputs_named: the input options the case exercises."""

    def __init__(self, argv, outs, reads=None):
        self.argv, self.outs = argv, outs
        names = re.findall(r"\{([^{}]+)\}", " ".join(argv))
        self.reads = reads or list(dict.fromkeys(names))
        self.fixtures = list(dict.fromkeys(n.split(":")[0].split("/")[0]
                                           for n in names + self.reads))

    @property
    def command(self):
        return self.argv[0]

    def fill(self, work):
        return [re.sub(r"\{([^{}]+)\}", lambda m: os.path.join(work, m.group(1)), a)
                for a in self.argv]


IO_CASES = [
    IoCase(["gen", "{mask.npy} + diag"], {"-o": []}),
    IoCase(["gen", "--heads-file", "{heads.json}", "--n", "8"], {"-o": []}),
    IoCase(["compose", "{mask.npy}", "diag"], {"-o": []}),
    IoCase(["compose", "--heads-file", "{heads.json}", "--n", "8"], {"-o": []}),
    IoCase(["measure", "{mask.npy}", "--n", "64"], {"--png": []}),
    IoCase(["measure", "{data.h5}", "--threshold", "0.1"], {"--png": [], "--csv": []}),
    IoCase(["measure", "--heads-file", "{heads.json}", "--lengths", "{lengths.txt}"],
           {"--png": [], "--csv": []}),
    IoCase(["prune", "{p.h5}", "--sparsity", "0.5"], {"-o": []}),
    IoCase(["axis", "{axis.h5}", "--lengths-file", "{axlen.txt}", "--with", "{mask96.npy}"],
           {"-o": ["--sample", "0"], "--csv": []}),
    IoCase(["attn"] + QKV + ["--mask", "{mask.npy}"],
           {"-o": [], "--weights-out": ["-o", "o.npy"]}),
    # an HDF5 output names a dataset: the one read is the input, the file's
    # other datasets are not (a new one may be written beside them)
    IoCase(["attn", "{qk.h5}:/q", "{qk.h5}:/k", "{v.npy}"],
           {"-o": [], "--weights-out": ["-o", "o.npy"]}, reads=["qk.h5:/q", "qk.h5:/k", "v.npy"]),
    IoCase(["explain", "{qk.h5}"], {"-o": [], "--csv": [], "--hist-csv": [], "--png": []},
           reads=["qk.h5:/q", "qk.h5:/k"]),
    IoCase(["explain", "--q", "{q.npy}", "--k", "{k.npy}"], {"-o": [], "--csv": []}),
    # t.txt is one sentence of 9 tokens, [CLS] and [SEP] included
    IoCase(["explain", "{model}", "--text", "{t.txt}", "--mask", "{mask9.npy}"],
           {"-o": [], "--csv": [], "--png": []}, reads=MODEL_ALL + ["t.txt", "mask9.npy"]),
    IoCase(["toeplitz", "{weights.h5}"], {"--png": [], "--profile": []}),
    IoCase(["toeplitz", "{model}"], {"--png": [], "--profile": []}, reads=MODEL_WEIGHTS),
    IoCase(["positional", "{weights.h5}", "--heads", "2"], {"--png": [], "--profile": []}),
    IoCase(["positional", "{model}"], {"--png": [], "--profile": []}, reads=MODEL_WEIGHTS),
    IoCase(["attn-stats", "{data.h5}"], {"--csv": [], "--profile-csv": [], "--png": []}),
    IoCase(["heads", "{data.h5}"], {"--csv": [], "--png": []}),
    IoCase(["heads", "{data.h5}", "--tokenizer", "{tokenizer.json}"], {"--csv": []}),
    IoCase(["attn-derive", "{data.h5}"], {"--mean-map": [], "--indicators": [],
                                          "--png": ["--mean-map", "mm.h5"]}),
    IoCase(["encode", "{model}", "--text", "{t.txt}", "--mask", "{mask9.npy}"], {"-o": []},
           reads=MODEL_ALL + ["t.txt", "mask9.npy"]),
    IoCase(["encode", "{model}", "--tokenizer", "{tokenizer.json}", "--text", "{t.txt}"],
           {"-o": []}, reads=MODEL_WEIGHTS + ["tokenizer.json", "t.txt"]),
    IoCase(["encode", "{model}/model.safetensors", "--config", "{model}/config.json", "--ids",
            "{ids.txt}"], {"-o": []}, reads=MODEL_WEIGHTS + ["ids.txt"]),
    IoCase(["tokenize", "{model}", "--text", "{t.txt}"], {"-o": []},
           reads=["model/vocab.txt", "t.txt"]),
    IoCase(["tokenize", "{tokenizer.json}", "--text", "{t.txt}"], {"-o": []}),
    IoCase(["sweep", "--patterns", "m={mask16.npy},causal"] + SWEEP,
           {"-o": [], "--csv": [], "--png": ["-o", "s.csv"]}),
    IoCase(["report", "--quick", "--only", "sweep", "--sweep", "{sweep.csv}", "--text",
            "{t.txt}", "--weights", "{weights.h5}", "--model", "{model}", "--quiet"],
           {"--out": []}, reads=["sweep.csv", "t.txt", "weights.h5"] + MODEL_ALL),
]

# input options and the cases above that give them (check_complete)
OPT_RE = re.compile(r'CLI_OPT_(WRITE_H5|WRITE|OUT|READ_AS|READ)\("([a-z0-9-]+)", \'?(\w)?')
INPUT_FLAG_RE = re.compile(r'\{\.name = "([a-z0-9-]+)"[^}]*?\.flags = CLI_INPUT', re.S)


def declared(srcdir):
    """{(command, option)} of the outputs and of the inputs declared in the
    option tables ("--name"; "-o" for an output that has it)."""
    outs, ins = set(), set()
    cli = os.path.join(srcdir, "src", "cli")
    for name in sorted(os.listdir(cli)):
        m = re.fullmatch(r"cmd_(\w+)\.c", name)
        if not m:
            continue
        with open(os.path.join(cli, name)) as fh:
            text = fh.read()
        cmd = m.group(1).replace("_", "-")
        for kind, opt, short in OPT_RE.findall(text):
            spelled = f"-{short}" if short and short != "0" else f"--{opt}"
            (ins if kind.startswith("READ") else outs).add((cmd, spelled))
        for opt in INPUT_FLAG_RE.findall(text):
            ins.add((cmd, f"--{opt}"))
        if "SWEEP_OPT_INPUTS(\"patterns\"" in text:
            ins.add((cmd, "--patterns"))
    return outs, ins


def check_complete(srcdir):
    """The declared outputs and inputs without a case: a list of messages."""
    outs, ins = declared(srcdir)
    have_out = {(c.command, o) for c in IO_CASES for o in c.outs}
    have_in = {(c.command, a) for c in IO_CASES for a in c.argv if a.startswith("-")}
    missing = [f"{c} {o}: an output with no output=input case" for c, o in sorted(outs - have_out)]
    missing += [f"{c} {o}: an input with no output=input case" for c, o in sorted(ins - have_in)]
    return missing


def runs():
    """(case, output option, the input it is pointed at) of the sweep."""
    return [(c, o, r) for c in IO_CASES for o in c.outs for r in c.reads]


def snapshot(top):
    """{relative path: sha256} of every file under top."""
    found = {}
    for root, _, files in os.walk(top):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                found[os.path.relpath(p, top)] = hashlib.sha256(fh.read()).hexdigest()
    return found


def prepare(case, valid, work):
    """Copies the fixtures case reads into work."""
    for name in case.fixtures:
        src = os.path.join(valid, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(work, name))
        else:
            shutil.copy(src, os.path.join(work, name))


# the options that write one dataset of an HDF5 file (CLI_OPT_WRITE_H5)
H5_OUTPUTS = {("attn", "-o"), ("attn", "--weights-out"), ("explain", "-o")}


def argv_of(case, opt, target, work):
    """The case's command line with opt pointed at target (FILE or
    FILE:/dataset; a whole-file output at FILE)."""
    if (case.command, opt) not in H5_OUTPUTS:
        target = target.split(":")[0]
    return case.fill(work) + case.outs[opt] + [opt, os.path.join(work, target)]


def reference_argv(case, opt, work):
    """The case's command line with opt writing a new file: it must work,
    so that the sweep's refusals are the check's and not another error."""
    ext = {"--png": ".png", "--profile": ".png", "--csv": ".csv", "--hist-csv": ".csv",
           "--profile-csv": ".csv"}.get(opt, ".h5")
    if case.command in ("gen", "compose", "attn") and opt == "-o":
        ext = ".h5" if "--heads-file" in case.argv else ".npy"
    if case.command == "sweep" and opt == "-o":
        ext = ".csv"
    new = "report-out" if opt == "--out" else "new-output" + ext
    return case.fill(work) + case.outs[opt] + [opt, os.path.join(work, new)]


def make_fixtures(valid, srcdir, maskkit):
    """The files the sweep's command lines read, beside make_valid's."""
    import subprocess
    import sys
    import numpy as np
    n = {"mask.npy": 64, "mask9.npy": 9, "mask16.npy": 16, "mask96.npy": 96}
    for name, size in n.items():
        i = np.arange(size)
        np.save(os.path.join(valid, name), abs(i[:, None] - i[None, :]) <= 2)
    subprocess.run([sys.executable, os.path.join(srcdir, "tests", "cli", "fixtures",
                                                 "make_encoder.py"), os.path.join(valid, "model")],
                   check=True)
    with open(os.path.join(valid, "model", "vocab.txt")) as fh:
        vocab = fh.read().split("\n")[:-1]
    tok = {"version": "1.0", "added_tokens": [],
           "normalizer": {"type": "BertNormalizer", "lowercase": True},
           "pre_tokenizer": {"type": "BertPreTokenizer"},
           "model": {"type": "WordPiece", "unk_token": "[UNK]",
                     "vocab": {t: k for k, t in enumerate(vocab)}}}
    import json
    with open(os.path.join(valid, "tokenizer.json"), "w") as fh:
        json.dump(tok, fh)
    texts = {"t.txt": "hello world, how are you?\n", "ids.txt": "2 4 5 3\n2 9 10 3\n",
             "axlen.txt": "96\n96\n"}
    for name, text in texts.items():
        with open(os.path.join(valid, name), "w") as fh:
            fh.write(text)
    subprocess.run([maskkit, "sweep", "--patterns", "local,causal", "-o",
                    os.path.join(valid, "sweep.csv")] + SWEEP, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
