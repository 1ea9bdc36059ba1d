#!/usr/bin/env python3
"""Reading .npz members in pieces (issue 27): a deflated member is inflated
as it is read, so --max-memory holds for the array alone, and every way a
deflate stream can disagree with the zip directory is refused.

The archives are written here byte by byte (local headers, central
directory, end record as PKWARE's APPNOTE has them), so a member's recorded
sizes and CRC can say what its data does not.  The peak resident memory is
the child's ru_maxrss, read by this process (not under sanitizers, whose
shadow memory has nothing to do with the limit)."""
import os
import resource
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

import checks
from checks import check

MASKKIT = os.environ["MASKKIT"]
SANITIZED = os.environ.get("MASKKIT_SANITIZED") == "1"


def npy_bytes(a):
    """The .npy file numpy writes for a (version 1.0)."""
    import io
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def zip_archive(members):
    """members: (name, stored bytes, method, usize, crc) -> the archive."""
    out, central = b"", b""
    for name, data, method, usize, crc in members:
        nm = name.encode()
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, method, 0, 0x21,
                               crc, len(data), usize, len(nm), 0, 0, 0, 0, 0, len(out)) + nm
        out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, method, 0, 0x21, crc,
                           len(data), usize, len(nm), 0) + nm + data
    end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(members), len(members),
                      len(central), len(out), 0)
    return out + central + end


def member(name, raw, method=8, data=None, usize=None, crc=None):
    """A member whose payload is raw (a .npy file), deflated unless method 0;
    data, usize and crc override what is stored and recorded."""
    if data is None:
        data = deflate(raw) if method == 8 else raw
    return (name + ".npy", data, method, len(raw) if usize is None else usize,
            zlib.crc32(raw) if crc is None else crc)


def layout(kv_indices, **over):
    """A layout of one query block of 4 that lists key block 0."""
    num = npy_bytes(np.ones((1, 1, 1), np.int32))
    bs = npy_bytes(np.array(4, np.int32))
    return [member("kv_num_blocks", num), member("kv_indices", kv_indices, **over),
            member("block_size", bs)]


def run(path, *extra):
    """(exit status, stderr, peak resident KiB of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = subprocess.run([MASKKIT, "measure", path, *extra], capture_output=True, text=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is the largest of any: only a larger one shows
    return r.returncode, r.stderr.strip(), peak if peak > before else None


def write(tmp, name, members):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(zip_archive(members))
    return path


def check_damage(tmp):
    idx = npy_bytes(np.zeros((1, 1, 1, 1), np.int32))
    good = write(tmp, "good.npz", layout(idx))
    status, err, _ = run(good, "--json")
    check(status == 0, f"a hand-written deflated layout reads: {err}")
    # a header promising 2 elements, a stream giving 1
    two = npy_bytes(np.zeros((1, 1, 1, 2), np.int32))
    short = deflate(two[:-4])
    cases = {
        "shorter stream": (layout(two, data=short), "does not give its recorded size"),
        "longer stream": (layout(idx, data=deflate(idx + b"\0" * 4)),
                          "does not give its recorded size"),
        "cut-short stream": (layout(two, data=deflate(two)[:-3]), "deflate data is cut short"),
        "corrupt stream": (layout(idx, data=b"\xff" * 40), "corrupt deflate data"),
        "wrong CRC": (layout(idx, crc=zlib.crc32(idx) ^ 1), "fails its CRC check"),
        "stored, short header": (layout(idx[:9], method=0), "not a .npy file"),
    }
    for what, (members, want) in cases.items():
        path = write(tmp, what.replace(" ", "_").replace(",", "") + ".npz", members)
        status, err, _ = run(path)
        check(status == 2 and want in err and err.count("\n") == 0,
              f"{what}: exit {status}, {err!r} (wanted {want!r})")


def check_memory(tmp):
    """kv_indices of 40M int32 (160 MB, deflated to a few hundred KB): the
    array read back is 320 MB of int64.  Whole-member reading held both, 480
    MB; in pieces the array alone is held."""
    count = 40_000_000
    arr = np.zeros((1, 1, 1, count), np.int32)
    path = write(tmp, "big.npz", layout(npy_bytes(arr)))
    del arr
    array_mib = count * 8 / 2**20
    status, err, peak = run(path, "--max-memory", "360M")
    # read whole, then refused: the layout has more blocks than n allows
    check(status == 2 and "blocks" in err, f"big member under 360M: exit {status}, {err!r}")
    if not SANITIZED and peak is not None:
        check(peak / 1024 < 360, f"big member: peak {peak / 1024:.0f} MiB over --max-memory "
              f"360M (the array is {array_mib:.0f} MiB)")
        print(f"big member: peak {peak / 1024:.0f} MiB, the array {array_mib:.0f} MiB")
    status, err, _ = run(path, "--max-memory", "300M")
    check(status == 2 and "over the memory limit of 300.0 MiB" in err,
          f"big member under 300M: exit {status}, {err!r}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_damage(tmp)
        check_memory(tmp)
    return checks.summary("npz_stream")


if __name__ == "__main__":
    sys.exit(main())
