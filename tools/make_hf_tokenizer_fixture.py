#!/usr/bin/env python3
"""Writes tests/py/fixtures/hf_tokenizer_ids.json.gz: HuggingFace tokenizers'
own ids for real texts every Debian system has, made ONCE with the reference
tool and committed, so that tests/py/test_hf_tokenizer.py needs no Python
package (issue 27).

    python3 -m venv /tmp/hf && /tmp/hf/bin/pip install tokenizers
    /tmp/hf/bin/python tools/make_hf_tokenizer_fixture.py MODEL_DIR

MODEL_DIR holds all-MiniLM-L6-v2's tokenizer.json (tools/fetch-model.sh).
Tokenizer.from_file with the file's own settings, padding off (maskkit
prints ids, not batches): each non-blank line of /usr/share/common-licenses/*
and of some /usr/share/doc/*/copyright files, and the lines of
tests/py/fixtures/codepoints.txt.  Each file is kept with its SHA-256: the
test compares only the files whose text is the same where it runs.
"""
import gzip
import hashlib
import json
import os
import sys

import tokenizers

COPYRIGHT = ["dpkg", "coreutils", "bash", "base-files", "libc6", "tar", "apt", "git",
             "gnuplot-data", "libcjson1", "adwaita-icon-theme", "libgtk-3-common",
             "libdbus-1-3", "libpng16-16", "check", "libhdf5-dev", "python3", "perl-base"]


def main(model):
    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = os.path.join(here, "..", "tests", "py", "fixtures")
    tok = tokenizers.Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
    tok.no_padding()
    paths = sorted(os.path.join("/usr/share/common-licenses", f)
                   for f in os.listdir("/usr/share/common-licenses"))
    paths += [f"/usr/share/doc/{p}/copyright" for p in COPYRIGHT]
    paths.append(os.path.join(fixtures, "codepoints.txt"))
    files = []
    for p in paths:
        if not os.path.isfile(p) or os.path.islink(p):
            continue
        raw = open(p, "rb").read()
        lines = raw.decode("utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        ids = []
        for k, line in enumerate(lines):
            line = line[:-1] if line.endswith("\r") else line
            if line.strip(" \t"):
                ids.append([k + 1, tok.encode(line).ids])
        name = "fixtures/codepoints.txt" if p.endswith("codepoints.txt") else p
        files.append({"path": name, "sha256": hashlib.sha256(raw).hexdigest(), "lines": ids})
    out = {"tokenizers": tokenizers.__version__,
           "tokenizer_sha256": hashlib.sha256(
               open(os.path.join(model, "tokenizer.json"), "rb").read()).hexdigest(),
           "files": files}
    with gzip.open(os.path.join(fixtures, "hf_tokenizer_ids.json.gz"), "wt") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{len(files)} files, {sum(len(f['lines']) for f in files)} lines, tokenizers "
          f"{tokenizers.__version__}")


if __name__ == "__main__":
    main(sys.argv[1])
