#!/usr/bin/env python3
"""maskkit tokenize against HuggingFace's tokenizers library itself, on real
texts every Debian system has: its ids were made once by
tools/make_hf_tokenizer_fixture.py (tokenizers 0.23) with
Tokenizer.from_file on all-MiniLM-L6-v2's tokenizer.json (its own
truncation at 128, padding off) and committed in
fixtures/hf_tokenizer_ids.json.gz, so this test needs no Python package.

Each non-blank line of /usr/share/common-licenses/*, of 18 packages'
/usr/share/doc/*/copyright and of fixtures/codepoints.txt (unassigned code
points, noncharacters, private-use and format characters inside words) must
give the same ids with maskkit tokenize's defaults.  A file whose text here
differs from the fixture's (another Debian release) is left out and
counted; common-licenses must be compared.  The model is found as in
test_tokenize.py; without it the test is skipped (77), or fails when
MASKKIT_REQUIRE_ALL is set.
"""
# needs: stdlib
import gzip
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from test_tokenize import model_dir  # noqa: E402

MASKKIT = os.environ["MASKKIT"]
HERE = os.path.dirname(os.path.abspath(__file__))


def maskkit_ids(model, path):
    r = subprocess.run([MASKKIT, "tokenize", model, "--text", path], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: maskkit tokenize {model} --text {path} exited {r.returncode}: "
                 f"{r.stderr.decode(errors='replace').strip()}")
    return r.stdout.decode().split("\n")


def main():
    import json
    model = model_dir()
    with gzip.open(os.path.join(HERE, "fixtures", "hf_tokenizer_ids.json.gz"), "rt") as f:
        fx = json.load(f)
    with open(os.path.join(model, "tokenizer.json"), "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != fx["tokenizer_sha256"]:
            print(f"SKIP: {model}/tokenizer.json is not the one the fixture was made with")
            return 1 if os.environ.get("MASKKIT_REQUIRE_ALL") else 77
    compared = lines = differ = 0
    licenses = 0
    left_out = []
    for entry in fx["files"]:
        path = entry["path"]
        if path.startswith("fixtures/"):
            path = os.path.join(HERE, path)
        try:
            with open(path, "rb") as f:
                same = hashlib.sha256(f.read()).hexdigest() == entry["sha256"]
        except OSError:
            same = False
        if not same:
            left_out.append(entry["path"])
            continue
        out = maskkit_ids(model, path)
        compared += 1
        licenses += path.startswith("/usr/share/common-licenses/")
        for lineno, want in entry["lines"]:
            got = [int(x) for x in out[lineno - 1].split()] if lineno <= len(out) else None
            lines += 1
            if got != want:
                differ += 1
                if differ <= 5:
                    print(f"  {entry['path']}:{lineno}: tokenizers {want[:12]}..., maskkit "
                          f"{(got or [])[:12]}...")
    print(f"{compared} files, {lines} lines compared with tokenizers {fx['tokenizers']}; "
          f"{differ} differ; left out (not the fixture's text here): {len(left_out)}")
    checks.check(licenses > 0, "no file of /usr/share/common-licenses is the fixture's")
    checks.check(differ == 0, f"{differ} of {lines} lines differ from HuggingFace tokenizers")
    return checks.summary("test_hf_tokenizer")


if __name__ == "__main__":
    sys.exit(main())
