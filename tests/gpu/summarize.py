#!/usr/bin/env python3
"""The device check's results in one page: summarize.py OUT [--plot]

Reads what tests/gpu/device_check.sh left in OUT (steps.tsv, the logs,
sweep_N/sweep.json and peers.csv, dnas.json) and writes OUT/summary.md:
the device, each step's status, check_cuda's and compute-sanitizer's
verdicts, and per n the table the issue asks for: maskkit dense against
SDPA flash (goal <= 1.25), each block run against 1.15 t T_dense + 10 us and
against FlexAttention on the same mask, where csr crosses dense, DNAS over
softmax, and TFLOP/s next to the bf16 dense peak.  With --plot (where gnuplot
is installed, e.g. here after the results came back) it also draws each
sweep's figure from its plot.dat.  Standard library only.
"""
import csv
import json
import os
import re
import subprocess
import sys

# dense bf16 tensor-core peaks (TFLOP/s, without sparsity) by device name
PEAKS = (("H200", 989.0), ("H100 SXM", 989.0), ("H100 PCIe", 756.0), ("H100", 989.0),
         ("A100", 312.0))


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def peak_of(gpu):
    return next((p for name, p in PEAKS if name in gpu), None)


def steps(out):
    rows = [line.split("\t") for line in read(os.path.join(out, "steps.tsv")).splitlines()[1:]]
    lines = ["| step | exit | seconds | last line |", "|---|---:|---:|---|"]
    for name, rc, secs in (r for r in rows if len(r) == 3):
        log = read(os.path.join(out, name + ".log")).strip().splitlines()
        last = log[-1][:100].replace("|", "/") if log else ""
        lines.append(f"| {name} | {rc} | {secs} | {last} |")
    return lines


def verdicts(out):
    lines = []
    m = re.search(r"(\d+)%: Checks: (\d+), Failures: (\d+), Errors: (\d+)",
                  read(os.path.join(out, "check_cuda.log")))
    lines.append("- check_cuda: " + (f"{m.group(2)} checks, {m.group(3)} failures, "
                                     f"{m.group(4)} errors" if m else "no verdict (see check_cuda.log)"))
    for tool in ("memcheck", "racecheck", "synccheck"):
        log = read(os.path.join(out, tool + ".log"))
        # memcheck and synccheck: "ERROR SUMMARY: N errors"; racecheck:
        # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
        errs = [int(s) for s in re.findall(r"ERROR SUMMARY: (\d+) error", log)]
        errs += [int(e) for e in re.findall(r"RACECHECK SUMMARY: \d+ hazards? displayed "
                                              r"\((\d+) errors?", log)]
        if "Device not supported" in log or "not supported on this" in log:
            said = "refused by the machine (Device not supported)"
        elif not errs:
            said = "no summary: not run, stopped, or refused (see the log)"
        else:
            said = f"{sum(errs)} errors reported"
            if log.strip().endswith(" clean"):  # sanitize.sh's last line
                said += ", check_cuda passed under it"
        lines.append(f"- compute-sanitizer {tool}: {said}")
    return lines


def load_sweep(d):
    try:
        sweep = json.load(open(os.path.join(d, "sweep.json")))
    except (OSError, ValueError):
        return None, []
    peers = []
    try:
        with open(os.path.join(d, "peers.csv")) as f:
            rows = csv.DictReader(line for line in f if not line.startswith("#"))
            peers = [r for r in rows if None not in r.values() and number(r.get("median_s"))]
    except OSError:
        pass
    return sweep, peers


def number(s):
    try:
        return float(s) == float(s)  # not NaN
    except (TypeError, ValueError):
        return False


def table(sweep, peers, peak):
    res = sweep["results"]
    dense = next((r for r in res if r["kernel"] == "dense" and r["norm"] == "softmax"), None)
    if not dense:
        return ["a sweep without a dense row"]
    n, td = dense["n"], dense["median_s"]
    flash = next((float(p["median_s"]) for p in peers if p["kernel"] == "sdpa_flash_dense"), None)
    flops = 4.0 * dense["batch"] * dense["heads"] * n * n * dense["d"]
    tf = flops / td / 1e12
    lines = [f"### n = {n}, batch x heads = {dense['batch'] * dense['heads']}, d = {dense['d']}, "
             f"{dense['dtype']}", "",
             f"- maskkit dense {1e3 * td:.3f} ms, {tf:.1f} TFLOP/s"
             + (f" ({100 * tf / peak:.0f}% of the {peak:.0f} TFLOP/s bf16 peak)" if peak else "")]
    if flash:
        lines.append(f"- SDPA flash {1e3 * flash:.3f} ms: maskkit dense / flash = {td / flash:.2f} "
                     f"(goal <= 1.25, stretch 1.0)")
    flex = {p["pattern"]: float(p["median_s"]) for p in peers if p["kernel"] == "flex"}
    lines += ["", "| mask | achieved | tile density t | block ms | 1.15 t T_dense + 10 us | "
              "flex ms | csr ms | masked ms |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    masks = {}
    for r in res:
        if r["kernel"] != "dense" and r["norm"] == "softmax":
            masks.setdefault(r["mask"], {})[r["kernel"]] = r
    cross = None
    for mask, ks in sorted(masks.items(), key=lambda kv: next(iter(kv[1].values()))["achieved"]):
        any_r = next(iter(ks.values()))
        t = any_r["tile_density"]
        ms = lambda k: f"{1e3 * ks[k]['median_s']:.3f}" if k in ks else ""
        bound = 1.15 * t * td + 10e-6
        ok = "" if "block" not in ks else (" ok" if ks["block"]["median_s"] <= bound else " over")
        fx = f"{1e3 * flex[mask]:.3f}" if mask in flex else ""
        lines.append(f"| {mask} | {100 * any_r['achieved']:.1f}% | {t:.3f} | {ms('block')}{ok} | "
                     f"{1e3 * bound:.3f} | {fx} | {ms('csr')} | {ms('masked')} |")
        if "csr" in ks and ks["csr"]["median_s"] < td and cross is None:
            cross = any_r["achieved"]
    lines.append("")
    lines.append("- csr faster than dense from " + (f"{100 * cross:.1f}% sparsity" if cross
                                                     else "no sparsity swept"))
    return lines


def dnas_ratio(out):
    try:
        res = json.load(open(os.path.join(out, "dnas.json")))["results"]
    except (OSError, ValueError):
        return ["- DNAS / softmax: not measured (see dnas.log)"]
    t = {r["norm"]: r["median_s"] for r in res if r["kernel"] == "dense"}
    if "softmax" in t and "dnas" in t:
        return [f"- DNAS / softmax (dense, n = 4096): {t['dnas'] / t['softmax']:.2f} "
                f"({1e3 * t['dnas']:.3f} ms / {1e3 * t['softmax']:.3f} ms)"]
    return ["- DNAS / softmax: incomplete"]


def plot(d):
    if not os.path.exists(os.path.join(d, "plot.dat")):
        return
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    title = read(os.path.join(d, "plot.title")).strip().replace("'", "")
    subprocess.run(["gnuplot", "-e", f"datafile = '{d}/plot.dat'; output = '{d}/gpu_sweep.png'",
                    "-e", f"load '{d}/plot.vars'",
                    "-e", f"title = '{title}' . (strlen(gpu) ? ', ' . gpu : '')",
                    os.path.join(top, "templates", "gpu_sweep.gp")], check=False)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py OUT [--plot]")
    out = sys.argv[1]
    gpu = ""
    doc = ["# maskkit cuda backend: device check", ""]
    sweeps = []
    for n in (4096, 16384):
        d = os.path.join(out, f"sweep_{n}")
        sweep, peers = load_sweep(d)
        if "--plot" in sys.argv[2:]:
            plot(d)
        if sweep:
            gpu = gpu or sweep["machine"].get("gpu", "")
            sweeps.append((sweep, peers))
    if not gpu:  # no sweep finished: nvidia-smi's name, if it answered
        m = re.search(r"^name, .*\n([^,\n]+),", read(os.path.join(out, "info.log")), re.M)
        gpu = f"{m.group(1)} (from nvidia-smi; no sweep finished)" if m else ""
    doc += [f"Device: {gpu or 'none usable'}", "", "## Steps", ""] + steps(out)
    doc += ["", "## Verdicts", ""] + verdicts(out) + dnas_ratio(out) + ["", "## Timings", ""]
    for sweep, peers in sweeps:
        doc += table(sweep, peers, peak_of(gpu)) + [""]
    if not sweeps:
        doc.append("No sweep results (no usable device, or the sweeps failed: see their logs).")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(doc) + "\n")
    print("\n".join(doc))


if __name__ == "__main__":
    main()
