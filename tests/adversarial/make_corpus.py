#!/usr/bin/env python3
"""Writes the crafted HDF5 files of the adversarial corpus (tests/adversarial/corpus/):
make_corpus.py [OUTDIR].  Each file is small (under 100 KB) and named by its defect;
the generator is deterministic, so the files can be made again and compared.

declares_2p30_samples.h5   axis indicators rows/cols [2^30, 4] uint8, never written:
                           1.6 KB declaring 8 GiB of per-sample lengths and results
declares_8tib_unwritten.h5 attentions [2^18, 2, 16, 512, 512] float32 (8 TiB), never
                           written (no storage allocated: reads as the fill value)
partly_written_chunks.h5   masks [64, 1, 1, 8, 8] uint8 in chunks of one sample, only
                           sample 0 written (the rest reads as the fill value)
one_32mib_gzip_chunk.h5    masks [8192, 1, 1, 64, 64] uint8 zeros in one gzip chunk of
                           32 MiB (32 KB in the file), decompressed whole by any read
chunk_beyond_maxdims.h5    masks [7, 5, 5] uint8 whose layout claims chunks of 112
                           samples where the dataset can never have more than 7
                           (patched after writing; libhdf5 reads out of bounds)
"""
import os
import sys

import h5py
import numpy as np


def declares_2p30_samples(path):
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("rows", shape=(2**30, 4), dtype="u1")
        f.create_dataset("cols", shape=(2**30, 4), dtype="u1")


def declares_8tib_unwritten(path):
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("attentions", shape=(2**18, 2, 16, 512, 512), dtype="f4")


def partly_written_chunks(path):
    with h5py.File(path, "w", libver="earliest") as f:
        d = f.create_dataset("masks", shape=(64, 1, 1, 8, 8), dtype="u1",
                             chunks=(1, 1, 1, 8, 8))
        d[0] = np.eye(8, dtype="u1")


def one_32mib_gzip_chunk(path):
    shape = (8192, 1, 1, 64, 64)
    with h5py.File(path, "w", libver="earliest") as f:
        d = f.create_dataset("masks", shape=shape, dtype="u1", chunks=shape,
                             compression="gzip", compression_opts=9)
        d[...] = np.zeros(shape, "u1")


def chunk_beyond_maxdims(path):
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("masks", data=np.ones((7, 5, 5), "u1"), chunks=(7, 5, 5))
    with open(path, "rb") as fh:
        raw = bytearray(fh.read())
    # the layout message's chunk dims (7, 5, 5) and element size 1, 32-bit each
    old = bytes([7, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0])
    at = raw.find(old)
    assert at > 0 and raw.find(old, at + 1) < 0, "chunk dims not found once"
    raw[at] = 112
    with open(path, "wb") as fh:
        fh.write(raw)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for make in (declares_2p30_samples, declares_8tib_unwritten, partly_written_chunks,
                 one_32mib_gzip_chunk, chunk_beyond_maxdims):
        path = os.path.join(out, make.__name__ + ".h5")
        make(path)
        size = os.path.getsize(path)
        assert size <= 100 * 1024, f"{path}: {size} bytes"


if __name__ == "__main__":
    main()
