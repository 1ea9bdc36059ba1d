#!/usr/bin/env python3
"""maskkit measure vs numpy at n = 16384: numpy builds the boolean matrix of
the same pattern and sums it; maskkit streams rows.  Prints medians and the
ratio per pattern; also checks both counted the same |M|."""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

MASKKIT = os.environ.get("MASKKIT", "./maskkit")
BENCH_MEASURE = os.environ.get("BENCH_MEASURE", "./bench/bench_measure")
N = int(os.environ.get("BENCH_N", "16384"))
REPS = int(os.environ.get("BENCH_REPS", "5"))


def np_patterns():
    def grid():
        i = np.arange(N, dtype=np.int32)[:, None]
        j = np.arange(N, dtype=np.int32)[None, :]
        return i, j

    def local2():
        i, j = grid()
        return np.abs(i - j) <= 2

    def causal():
        i, j = grid()
        return j <= i

    def strided():
        i, j = grid()
        d = np.abs(i - j)
        return (d < 4) | (d % 4 == 0)

    def fixed():
        i, j = grid()
        return (i // 4 == j // 4) | (j % 4 >= 3)

    def star():
        i, j = grid()
        return (np.abs(i - j) <= 1) | (i == 0) | (j == 0)

    return {"local2": local2, "causal": causal, "strided": strided, "fixed": fixed, "star": star}


def median_time(fn, reps):
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main():
    print(f"n = {N}; medians of {REPS} runs, in seconds")
    print("numpy: build the boolean matrix and sum it; in-process: mk_measure_expr (all of")
    print("measure's statistics); process: the whole 'maskkit measure --json' command")
    print(f"{'pattern':10} {'numpy':>9} {'in-proc':>9} {'ratio':>7} {'process':>9} {'ratio':>7}")
    ratios, pratios = [], []
    for name, build in np_patterns().items():
        t_np, count_np = median_time(lambda: int(build().sum()), max(3, REPS // 2))
        run = lambda: json.loads(subprocess.run([MASKKIT, "measure", name, "--n", str(N), "--json"],
                                                check=True, capture_output=True).stdout)
        t_mk, res = median_time(run, REPS)
        inproc = json.loads(subprocess.run([BENCH_MEASURE, name, str(N), str(REPS)], check=True,
                                           capture_output=True).stdout)
        if res["count"] != count_np or inproc["count"] != count_np:
            print(f"{name}: counts differ: numpy {count_np}, maskkit {res['count']}")
            return 1
        t_in = inproc["median_s"]
        ratios.append(t_np / t_in)
        pratios.append(t_np / t_mk)
        print(f"{name:10} {t_np:9.4f} {t_in:9.4f} {t_np / t_in:6.1f}x {t_mk:9.4f} {t_np / t_mk:6.1f}x")
    print(f"median ratio: {statistics.median(ratios):.1f}x in-process, "
          f"{statistics.median(pratios):.1f}x whole process (numpy time / maskkit time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
