#!/usr/bin/env python3
"""`maskkit encode` against HuggingFace transformers' own BertModel
(output_attentions=True) on the same model and the same token ids: the
largest difference of the attention probabilities and of the queries and
keys.  Optional (bench/, never a test): needs torch and transformers, e.g. in
a venv:

    python3 -m venv venv && venv/bin/pip install torch transformers h5py
    MASKKIT=build/maskkit venv/bin/python bench/encode_vs_hf.py [MODEL_DIR] [--sentences 64]

Without them it says so and exits 0."""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "py"))


def main():
    try:
        import h5py
        import numpy as np
        import torch
        from transformers import BertModel
    except ImportError as e:
        print(f"encode_vs_hf: skipped ({e.name} missing): install torch, transformers and h5py "
              "in a venv (see this script's docstring)")
        return 0
    import bert_ref

    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default=bert_ref.model_dir())
    ap.add_argument("--sentences", type=int, default=64)
    ap.add_argument("--text", default="/usr/share/common-licenses/GPL-3")
    a = ap.parse_args()
    if not a.model:
        print("encode_vs_hf: skipped, no model (tools/fetch-model.sh)")
        return 0
    maskkit = os.environ.get("MASKKIT", "build/maskkit")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "a.h5")
        subprocess.run([maskkit, "encode", a.model, "--text", a.text, "--sentences", "--limit",
                        str(a.sentences), "--qk", "-o", out, "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        with h5py.File(out, "r") as f:
            attn, lens, ids = f["attn"][()], f["lengths"][()], f["ids"][()]
            layers = attn.shape[1]
            q = [f[f"qk/layer_{l}/q"][()] for l in range(layers)]
            k = [f[f"qk/layer_{l}/k"][()] for l in range(layers)]
    model = BertModel.from_pretrained(a.model, attn_implementation="eager").eval()
    heads = model.config.num_attention_heads
    captured = {}

    def hook(name):
        def f(_module, _inp, output):
            captured[name] = output.detach()
        return f
    for l, layer in enumerate(model.encoder.layer):
        layer.attention.self.query.register_forward_hook(hook(f"q{l}"))
        layer.attention.self.key.register_forward_hook(hook(f"k{l}"))
    worst_p = worst_qk = 0.0
    with torch.no_grad():
        for s, n in enumerate(lens):
            x = torch.tensor(ids[s:s + 1, :n].astype(np.int64))
            o = model(input_ids=x, output_attentions=True)
            for l in range(layers):
                p = o.attentions[l][0].numpy()
                worst_p = max(worst_p, float(np.abs(attn[s, l, :, :n, :n] - p).max()))
                for name, got in (("q", q[l]), ("k", k[l])):
                    t = captured[f"{name}{l}"][0].numpy().reshape(n, heads, -1).transpose(1, 0, 2)
                    worst_qk = max(worst_qk, float(np.abs(got[s, :, :n] - t).max()))
    # the token ids against HuggingFace's own (Rust) tokenizer, on the whole
    # text and the hand-picked lines of tests/py/test_tokenize.py
    from tokenizers import Tokenizer
    from test_tokenize import LINES, sentences
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    lines = sentences(open(a.text, encoding="utf-8").read()) + [x for x in LINES if x.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lines.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        got = subprocess.run([maskkit, "tokenize", a.model, "--text", path, "--max-len", "100000"],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    same = sum(g.split() == [str(i) for i in tok.encode(x).ids] for g, x in zip(got, lines))
    print(f"token ids vs tokenizers (Rust): {same} of {len(lines)} lines identical "
          f"({len(lines) - len([x for x in LINES if x.strip()])} sentences of the text, "
          f"{len([x for x in LINES if x.strip()])} hand-picked lines)")
    print(f"encode vs transformers {__import__('transformers').__version__} BertModel "
          f"(torch {torch.__version__}, CPU, float32), {len(lens)} sentences of {a.text}: "
          f"max |P - P_hf| = {worst_p:.3g}, max |QK - QK_hf| = {worst_qk:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
