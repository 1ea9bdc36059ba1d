#!/usr/bin/env python3
"""What a first touch of memory costs on this machine, beside a second.

`maskkit attn` as a whole process pays for memory the kernel timed in a
loop (bench_attn) has already touched: O and the packed K and V on fresh
anonymous pages, and the output file's page cache, written in 1 MiB pieces.
In a virtual machine whose host takes back free memory (free page reporting)
a first touch after an idle spell costs a fault in the host as well.  This
prints, per kind of page, the median milliseconds per MiB of a first touch
(memset) right after the previous buffer was freed and after an idle spell,
and of a second touch; then the milliseconds per MiB of write() into a new
file in the same directory as the outputs (--dir) and of the fdatasync after
each piece, wall and the writing thread's CPU, written through the page
cache and with O_DIRECT from page-aligned memory; and what a rename over a
file of that size costs, with nothing else holding the file and with a
handle held across it (the freeing then left to its close).

    python3 bench/first_touch.py [--mib 8] [--idle 3] [--reps 5] [--dir DIR]
"""
import argparse
import ctypes
import mmap
import os
import statistics
import tempfile
import time

LIBC = ctypes.CDLL(None)
LIBC.memset.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)
HUGE = 2 << 20


def touch(nbytes, huge):
    """ms of the first and second memset of a fresh mapping of nbytes."""
    m = mmap.mmap(-1, nbytes + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    start = (base + HUGE - 1) // HUGE * HUGE  # huge pages need 2 MiB alignment
    m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE, start - base, nbytes)
    times = []
    for value in (1, 2):
        t = time.perf_counter()
        LIBC.memset(start, value, nbytes)
        times.append((time.perf_counter() - t) * 1e3)
    m.close()
    return times


def writes(nbytes, directory, direct=False):
    """ms of the write() calls and of the fdatasync()s, 1 MiB at a time, and
    the thread's CPU ms in them."""
    m = mmap.mmap(-1, nbytes + HUGE)  # page-aligned, as O_DIRECT needs
    m.write(b"\x03" * (nbytes + HUGE))
    view = memoryview(m)
    fd, path = tempfile.mkstemp(dir=directory, prefix=".first_touch.")
    if direct:
        os.close(fd)
        fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
    tw = ts = cpu = 0.0
    try:
        for k in range(nbytes >> 20):
            c, t = time.thread_time(), time.perf_counter()
            os.write(fd, view[k << 20:(k + 1) << 20])
            tw += time.perf_counter() - t
            t = time.perf_counter()
            os.fdatasync(fd)
            ts += time.perf_counter() - t
            cpu += time.thread_time() - c
    finally:
        os.close(fd)
        os.unlink(path)
        view.release()
        m.close()
    return tw * 1e3, ts * 1e3, cpu * 1e3


def rename_over(nbytes, directory, hold):
    """ms of a rename over a synced file of nbytes (the file whose last
    name it removes), and of the close that frees it when held."""
    paths = [tempfile.mkstemp(dir=directory, prefix=".first_touch.") for _ in range(2)]
    for fd, _ in paths:
        os.write(fd, b"\x05" * nbytes)
        os.fdatasync(fd)
        os.close(fd)
    held = os.open(paths[1][1], os.O_RDONLY) if hold else -1
    t = time.perf_counter()
    os.rename(paths[0][1], paths[1][1])
    took = time.perf_counter() - t
    t = time.perf_counter()
    if hold:
        os.close(held)
    freed = time.perf_counter() - t
    os.unlink(paths[1][1])
    return took * 1e3, freed * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=8)
    ap.add_argument("--idle", type=float, default=3.0, help="seconds of the idle spell")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    nbytes, mib = args.mib << 20, float(args.mib)
    print(f"{args.mib} MiB, medians of {args.reps}; ms per MiB")
    print(f"{'pages':<12} {'first, at once':>15} {'first, after idle':>18} {'second':>8}")
    for name, huge in (("2 MiB (THP)", True), ("4 KiB", False)):
        touch(nbytes, huge)  # the first ever: the host may not have backed it yet
        at_once = [touch(nbytes, huge) for _ in range(args.reps)]
        idle = []
        for _ in range(args.reps):
            time.sleep(args.idle)
            idle.append(touch(nbytes, huge))
        print(f"{name:<12} {statistics.median(t[0] for t in at_once) / mib:>15.3f} "
              f"{statistics.median(t[0] for t in idle) / mib:>18.3f} "
              f"{statistics.median(t[1] for t in at_once + idle) / mib:>8.3f}")
    for direct in (False, True):
        got = []
        for _ in range(args.reps):
            time.sleep(args.idle)
            got.append(writes(nbytes, args.dir, direct))
        print(f"write() into a new file in {args.dir}, {'O_DIRECT' if direct else 'buffered'}, "
              f"after idle: {statistics.median(g[0] for g in got) / mib:.3f} ms per MiB; "
              f"fdatasync after each MiB: {statistics.median(g[1] for g in got) / mib:.3f}; "
              f"the thread's CPU in both: {statistics.median(g[2] for g in got) / mib:.3f}")
    for hold in (False, True):
        got = [rename_over(nbytes, args.dir, hold) for _ in range(args.reps)]
        print(f"rename over a file of {args.mib} MiB, {'held' if hold else 'not held'}: "
              f"{statistics.median(g[0] for g in got):.2f} ms"
              + (f", then its close {statistics.median(g[1] for g in got):.2f} ms" if hold else ""))


if __name__ == "__main__":
    main()
