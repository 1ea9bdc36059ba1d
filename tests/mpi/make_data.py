#!/usr/bin/env python3
"""Data sets for the MPI tests: make_data.py DIR.

masks.h5   uint8 masks [23, 3, 4, 64, 64] with lengths (23 samples: not a
           multiple of 2, 3 or 4 ranks), chunked one (sample, layer) per chunk
probs.h5   float32 softmax rows [23, 3, 4, 64, 64] with lengths, contiguous
probs16.h5 the same as float16, chunked and compressed
badslab.h5 masks [12, 2, 2, 32, 32] whose chunk (9, 1) is overwritten with
           garbage: opening works, reading that block fails"""
import os
import sys

import h5py
import numpy as np


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    s, l, h, n = 23, 3, 4, 64
    lengths = rng.integers(5, n + 1, s)
    lengths[3] = 1  # a one-token sample: offsets and 'off' have no cells there
    logits = rng.normal(size=(s, l, h, n, n)).astype(np.float32) * 2
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    with h5py.File(os.path.join(out, "masks.h5"), "w") as f:
        f.create_dataset("masks", data=(p > 1.0 / n).astype(np.uint8), chunks=(1, 1, h, n, n))
        f["lengths"] = lengths
    with h5py.File(os.path.join(out, "probs.h5"), "w") as f:
        f["attentions"] = p
        f["lengths"] = lengths
    with h5py.File(os.path.join(out, "probs16.h5"), "w") as f:
        f.create_dataset("attentions", data=p.astype(np.float16), chunks=(1, 1, h, n, n),
                         compression="gzip")
        f["lengths"] = lengths
    bad = os.path.join(out, "badslab.h5")
    m = (rng.random((12, 2, 2, 32, 32)) < 0.3).astype(np.uint8)
    with h5py.File(bad, "w") as f:
        d = f.create_dataset("masks", data=m, chunks=(1, 1, 2, 32, 32), compression="gzip")
        info = d.id.get_chunk_info_by_coord((9, 1, 0, 0, 0))
    with open(bad, "r+b") as f:
        f.seek(info.byte_offset)
        f.write(b"\xab" * info.size)


if __name__ == "__main__":
    main()
