#!/usr/bin/env python3
"""The adversarial layer (issue 17): every reader against a corpus of malformed
files, every writer against a full disk, a read-only folder and a missing
parent folder, and a few commands under a low address-space limit.

  readers  each input of tests/adversarial/corpus/, of the fuzz seed corpora
           and of make_text_corpus.py (made afresh in a scratch folder) goes
           to every command that reads its kind; a run must exit 0 or 2
           (never 1: a malformed input is the user's), not die of a signal or
           run past TIMEOUT, peak below MEM_CEILING_MIB of resident memory
           under --max-memory 256M, and on failure print exactly one line
           starting 'maskkit: ', keep an output that existed byte for byte,
           create none, and leave no '*.tmp.*' beside it or anything in TMPDIR.
  writers  each output (adv_cases.WRITERS), after a run in an ordinary folder
           (it must work there), on a full tmpfs (exit 1, 'No space left on
           device'), a tmpfs with room for half the output (exit 1 the same
           way, or 0 if it fits), a tmpfs remounted read-only (exit 2,
           'Read-only file system') and under a missing parent folder (exit 2,
           'No such file or directory'); one line on stderr, the sentinel
           output kept byte for byte, nothing left there or in TMPDIR.
  io       every output option of every command pointed at every file that
           command reads (adv_io.py, checked complete against the option
           tables): exit 2, one line, every file kept byte for byte.
  limits   a few commands under RLIMIT_AS (ulimit -v): exit 0, 1 or 2 with one
           line, no hang (skipped under sanitizers).

Without the right to mount (not root, or no mount namespace) the full disk is
a file-size limit (RLIMIT_FSIZE, 'File too large') and the read-only folder a
chmod 555 folder (skipped as root).  MASKKIT_NO_TMPFS=1 forces that fallback.
Under sanitizers (MASKKIT_SANITIZED=1) everything runs but the limits (ASan
reserves terabytes of address space); the whole run takes about 50 s there.

Environment: MASKKIT (the program), SRCDIR (the source tree), and optionally
MASKKIT_ADV_ONLY=readers|writers|io|limits, MASKKIT_ADV_JOBS (parallel runs),
MASKKIT_ADV_KEEP=1 (keep the scratch folder), MASKKIT_ADV_VERBOSE=1 (every run's
exit status and message).  Exit 0 all passed, 1 a
failure (each listed), 77 numpy/h5py missing (1 with MASKKIT_REQUIRE_ALL)."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree (make distcheck)

try:
    import h5py  # noqa: F401  (the fixtures and make_text_corpus need them)
    import numpy  # noqa: F401
except ImportError:
    print("SKIP: numpy and h5py are needed (apt-get install python3-numpy python3-h5py)")
    sys.exit(1 if os.environ.get("MASKKIT_REQUIRE_ALL") else 77)

import adv_cases  # noqa: E402
import adv_io  # noqa: E402
import adv_places  # noqa: E402

MASKKIT = os.environ.get("MASKKIT") or "maskkit"
SRCDIR = os.environ.get("SRCDIR") or os.path.dirname(os.path.dirname(HERE))
SANITIZED = bool(os.environ.get("MASKKIT_SANITIZED"))
TIMEOUT = 30
NS_FLAG = "MASKKIT_ADV_IN_NAMESPACE"
# a run given --max-memory 256M may peak at twice that (the program itself,
# libraries, allocator slack; ASan's too): the runs peak at 50-250 MiB
MEM_CEILING_MIB = 512
SECONDS = {}  # argv -> the run's wall time (MASKKIT_ADV_VERBOSE lists the slowest)


class Result:
    def __init__(self, what, argv):
        self.what, self.argv = what, argv
        self.problems = []
        self.rc, self.stderr, self.rss = None, b"", 0.0

    def fail(self, why):
        self.problems.append(why)


def run_maskkit(argv, tmpdir, cwd, preexec=None, timeout=TIMEOUT):
    """Runs maskkit in a session of its own; returns (rc, stderr bytes, peak
    resident MiB).  rc is None on a timeout (the whole session is killed),
    negative for a signal."""
    env = dict(os.environ, TMPDIR=tmpdir)
    started = time.monotonic()
    p = subprocess.Popen([MASKKIT] + argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=preexec, start_new_session=True)
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
        p.stderr.close()
    p.returncode = rc = os.waitstatus_to_exitcode(status)
    SECONDS[tuple(argv)] = time.monotonic() - started
    return (None if timed_out else rc), err, usage.ru_maxrss / 1024


def files_under(top):
    """Every path under TOP, relative, directories with a trailing '/'."""
    found = set()
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        for d in dirs:
            found.add(os.path.normpath(os.path.join(rel, d)) + "/")
        for f in files:
            found.add(os.path.normpath(os.path.join(rel, f)))
    return found


def error_lines(stderr, argv):
    """stderr's lines, without sweep's progress lines."""
    lines = stderr.decode("utf-8", "replace").splitlines()
    if argv and argv[0] == "sweep":
        lines = [ln for ln in lines if not adv_cases.SWEEP_PROGRESS.match(ln)]
    return lines


def check_message(res, argv, stderr, reason=None):
    """On failure: exactly one line, 'maskkit: ...', naming REASON when given.
    report lists each file it could not make before its last line."""
    raw = stderr.decode("utf-8", "replace")
    lines = error_lines(stderr, argv)
    if argv[0] == "report":
        bad = [ln for ln in lines if not ln.startswith(("maskkit: ", "maskkit report: "))]
        if not lines or not lines[-1].startswith("maskkit: ") or bad:
            res.fail("stderr is not 'maskkit report:' lines ending in one 'maskkit:' line")
        text = "\n".join(lines)
    else:
        if len(lines) != 1 or not lines[0].startswith("maskkit: ") or not raw.endswith("\n"):
            res.fail(f"stderr is {len(lines)} lines, not one line starting 'maskkit: '")
        text = raw
    if reason and not any(r in text for r in reason):
        res.fail("the message does not give the reason " + " or ".join(repr(r) for r in reason))


def check_outcome(res, rc, argv, expect_rc):
    if rc is None:
        res.fail(f"timed out after {TIMEOUT} s")
        return False
    if rc < 0:
        res.fail(f"killed by signal {-rc}")
        return False
    if rc not in expect_rc:
        res.fail(f"exit {rc}, expected " + " or ".join(str(c) for c in sorted(expect_rc)))
    return True


# --- readers -----------------------------------------------------------------

def reader_run(case, index, scratch):
    """One reader command on one input, in a folder of its own."""
    run_dir = os.path.join(scratch, "runs", str(index))
    work, tmp = os.path.join(run_dir, "work"), os.path.join(run_dir, "tmp")
    os.makedirs(work)
    os.makedirs(tmp)
    out_paths = [os.path.join(work, name) for name in case.outputs]
    # half the runs find their output already there (it must survive a
    # failure byte for byte), half find none (a failure must not make one)
    with_sentinel = index % 2 == 0
    sentinel = b"sentinel %d\n" % index
    if with_sentinel:
        for p in out_paths:
            with open(p, "wb") as fh:
                fh.write(sentinel)
    argv = case.argv(work)
    res = Result(case.what, argv)
    before = files_under(work)
    rc, stderr, rss = run_maskkit(argv, tmp, work)
    res.rc, res.stderr, res.rss = rc, stderr, rss
    if "--max-memory" in argv and rss > MEM_CEILING_MIB:
        res.fail(f"peak resident memory {rss:.0f} MiB under --max-memory "
                 f"{adv_cases.MEM[1]} (at most {MEM_CEILING_MIB} MiB allowed)")
    if check_outcome(res, rc, argv, case.expect_rc):
        if rc != 0:
            check_message(res, argv, stderr)
        if case.forbid and case.forbid.encode() in stderr:
            res.fail(f"the message says '{case.forbid}'")
        for p in out_paths:
            if rc == 0:
                continue
            if with_sentinel:
                with open(p, "rb") as fh:
                    if fh.read() != sentinel:
                        res.fail(f"the existing output {os.path.basename(p)} was changed")
            elif os.path.lexists(p):
                res.fail(f"output {os.path.basename(p)} created despite the error")
    new = files_under(work) - before
    if rc == 0:  # a success makes its outputs, but no temporary file
        new -= {os.path.basename(p) for p in out_paths}
    if case.out_dir:  # report: each file in its folder is made or not on its own
        new = {p for p in new if ".tmp." in p}
    if new:
        res.fail("left behind: " + ", ".join(sorted(new)))
    return finish(res, tmp, run_dir)


def finish(res, tmp, run_dir):
    """Nothing may be left in the run's TMPDIR; the run's folder goes."""
    left = files_under(tmp)
    if left:
        res.fail("left in TMPDIR: " + ", ".join(sorted(left)))
    shutil.rmtree(run_dir, ignore_errors=True)
    return res


# --- writers -----------------------------------------------------------------

def writer_reference(writer, index, scratch, valid):
    """The writer in an ordinary folder: it must succeed; returns the bytes it
    wrote there (the half-full disk leaves room for half of them)."""
    run_dir = os.path.join(scratch, "wref", str(index))
    base, tmp, safe = (os.path.join(run_dir, d) for d in ("place", "tmp", "safe"))
    for d in (base, tmp, safe):
        os.makedirs(d)
    argv = writer.argv(base, valid, safe)
    rc, stderr, _ = run_maskkit(argv, tmp, safe)
    size = sum(os.path.getsize(os.path.join(base, p)) for p in files_under(base)
               if not p.endswith("/"))
    res = Result(f"{writer.name} [ordinary folder]", argv)
    res.rc, res.stderr = rc, stderr
    if rc != 0 or size == 0:
        res.fail("the writer does not work in an ordinary folder")
    shutil.rmtree(run_dir, ignore_errors=True)
    return res, size


def writer_run(writer, place, index, scratch, valid, mode, size):
    """One writer against one hostile place (adv_places does the mounting)."""
    run_dir = os.path.join(scratch, "wruns", str(index))
    host, tmp, safe = (os.path.join(run_dir, d) for d in ("place", "tmp", "safe"))
    for d in (host, tmp, safe):
        os.makedirs(d)
    res = Result(f"{writer.name} [{place}]", None)
    sentinels = {}
    try:
        with adv_places.Place(place, host, mode, room=size // 2) as pl:
            if place != "missing":
                for rel, data in writer.sentinels(valid).items():
                    pl.put(rel, data)
                    sentinels[rel] = data
            pl.seal()
            argv = writer.argv(pl.base, valid, safe)
            res.argv = argv
            before = pl.listing()
            rc, stderr, rss = run_maskkit(argv, tmp, safe, preexec=pl.preexec)
            res.rc, res.stderr, res.rss = rc, stderr, rss
            codes, reason = writer.expect(place, mode)
            if check_outcome(res, rc, argv, codes) and rc != 0:
                check_message(res, argv, stderr, reason)
            new = pl.listing() - before
            if rc == 0 or writer.is_report:
                # half-full: it fitted after all; report: each of its files is
                # made or not on its own (those not made are named)
                new = {p for p in new if ".tmp." in p}
            if rc != 0:
                for rel, data in sentinels.items():
                    if writer.is_report and f"{rel} could not be made".encode() not in stderr:
                        continue
                    if pl.read(rel) != data:
                        res.fail(f"the existing output {rel} was changed")
            if new:
                res.fail("left in the folder: " + ", ".join(sorted(new)))
            # a second output (attn -o beside --weights-out) may have been
            # written before the failure, but no temporary file of it
            tmps = [p for p in files_under(safe) if ".tmp." in p]
            if tmps:
                res.fail("left beside the other output: " + ", ".join(sorted(tmps)))
    except adv_places.PlaceError as e:
        res.fail(f"could not set up the place: {e}")
    return finish(res, tmp, run_dir)


# --- output = input -----------------------------------------------------------

def io_run(case, opt, target, index, scratch, valid, reference=False):
    """One output option pointed at one input (or, for the reference, at a
    new file: it must work) in a folder of its own copies of the inputs."""
    run_dir = os.path.join(scratch, "io", str(index))
    work, tmp = os.path.join(run_dir, "work"), os.path.join(run_dir, "tmp")
    os.makedirs(work)
    os.makedirs(tmp)
    adv_io.prepare(case, valid, work)
    before = adv_io.snapshot(work)
    if reference:
        argv = adv_io.reference_argv(case, opt, work)
        res = Result(f"{case.command} {opt} [a new file]", argv)
    else:
        argv = adv_io.argv_of(case, opt, target, work)
        res = Result(f"{case.command} {opt} = {target}", argv)
    rc, stderr, rss = run_maskkit(argv, tmp, work)
    res.rc, res.stderr, res.rss = rc, stderr, rss
    if reference:
        if check_outcome(res, rc, argv, {0}) and rc != 0:
            res.fail("the command line does not work with its output elsewhere")
        return finish(res, tmp, run_dir)
    if check_outcome(res, rc, argv, {2}):
        # report's --out is a folder: refused for what it is, not by the rule
        check_message(res, argv, stderr, None if case.command == "report"
                      else ["would destroy the input"])
    after = adv_io.snapshot(work)
    changed = sorted(p for p in before if after.get(p) != before[p])
    if changed:
        res.fail("changed: " + ", ".join(changed))
    if set(after) - set(before):
        res.fail("made: " + ", ".join(sorted(set(after) - set(before))))
    return finish(res, tmp, run_dir)


# --- limits ------------------------------------------------------------------

def limit_run(argv, mib, index, scratch):
    import resource
    run_dir = os.path.join(scratch, "lruns", str(index))
    tmp = os.path.join(run_dir, "tmp")
    os.makedirs(tmp)
    res = Result(f"ulimit -v {mib} MiB", argv)

    def lower():
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    rc, stderr, rss = run_maskkit(argv, tmp, run_dir, preexec=lower)
    res.rc, res.stderr, res.rss = rc, stderr, rss
    if check_outcome(res, rc, argv, {0, 1, 2}) and rc != 0:
        check_message(res, argv, stderr)
    shutil.rmtree(run_dir, ignore_errors=True)
    return res


# --- the run -----------------------------------------------------------------

def lsan_options(scratch):
    """LSAN_OPTIONS for the runs: the suppressions already given plus the
    fuzz targets' (libhdf5 1.10 loses memory on its own error paths when it
    opens a damaged file; see tests/fuzz/lsan.supp).  maskkit's own leaks are
    still reported."""
    opts = [o for o in os.environ.get("LSAN_OPTIONS", "").split(":") if o]
    rules = []
    for o in opts:
        if o.startswith("suppressions="):
            try:
                with open(o.split("=", 1)[1]) as fh:
                    rules.append(fh.read())
            except OSError:
                pass
    try:
        with open(os.path.join(SRCDIR, "tests", "fuzz", "lsan.supp")) as fh:
            rules.append(fh.read())
    except OSError:
        rules.append("leak:libhdf5\n")
    path = os.path.join(scratch, "lsan.supp")
    with open(path, "w") as fh:
        fh.write("\n".join(rules))
    opts = [o for o in opts if not o.startswith(("suppressions=", "print_suppressions="))]
    return ":".join(opts + [f"suppressions={path}", "print_suppressions=0"])


def in_namespace_or_reexec():
    """Re-runs this script in a private mount namespace when it may mount (so
    that the tmpfs mounts stay private and vanish with it); returns the mode
    of the full disk, 'tmpfs' or 'fsize'."""
    if os.environ.get("MASKKIT_NO_TMPFS"):
        return "fsize"
    if os.environ.get(NS_FLAG):
        return "tmpfs"
    if adv_places.can_mount():
        os.environ[NS_FLAG] = "1"
        sys.stdout.flush()
        os.execvp("unshare", ["unshare", "-m", "--propagation", "private", "--",
                              sys.executable] + sys.argv)
    return "fsize"


def shorten(b, limit=300):
    text = unscratch(b.decode("utf-8", "replace").strip())
    s = text.replace("\n", " | ")
    s = s if len(s) <= limit else s[:limit] + "..."
    # a sanitizer's report is long: its summary says where
    summary = [ln for ln in text.splitlines() if ln.startswith("SUMMARY: ")]
    return s + (" || " + summary[0] if summary and summary[0] not in s else "")


# scratch paths as printed: the scratch folder is gone when they are read
SHORT = []


def unscratch(s):
    for path, name in SHORT:
        s = s.replace(path, name)
    return s


def show_argv(argv):
    parts = []
    for a in argv or []:
        s = unscratch(a.decode("utf-8", "backslashreplace") if isinstance(a, bytes) else a)
        if len(s) > 120:
            s = s[:60] + f"...({len(s)} chars)"
        parts.append(s if s and all(c.isalnum() or c in "-_./:=,+$" for c in s) else repr(s))
    return "maskkit " + " ".join(parts)


def main():
    mode = in_namespace_or_reexec()
    only = os.environ.get("MASKKIT_ADV_ONLY", "")
    jobs = int(os.environ.get("MASKKIT_ADV_JOBS") or (os.cpu_count() or 2))
    start = time.time()
    scratch = tempfile.mkdtemp(prefix="maskkit-adv.")
    failures, lines, every = [], [], []
    try:
        os.environ["LSAN_OPTIONS"] = lsan_options(scratch)
        valid = adv_cases.make_valid(os.path.join(scratch, "valid"))
        adv_io.make_fixtures(valid, SRCDIR, MASKKIT)
        gen_dir, model_dir = os.path.join(scratch, "corpus"), os.path.join(scratch, "models")
        subprocess.run([sys.executable, os.path.join(HERE, "make_text_corpus.py"), gen_dir],
                       check=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_model_corpus.py"), model_dir,
                        valid], check=True)
        SHORT.extend([(gen_dir, "$GEN"), (model_dir, "$MODELS"), (valid, "$VALID"),
                      (scratch, "$SCRATCH")])

        def tally(results):
            every.extend(results)
            bad = [r for r in results if r.problems]
            failures.extend(bad)
            return len(bad)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            if only in ("", "readers"):
                inputs = adv_cases.collect_inputs(SRCDIR, gen_dir, model_dir)
                stamps = {p: adv_cases.stamp(p) for p in inputs}
                cases = adv_cases.reader_cases(inputs, valid)
                results = list(pool.map(lambda k: reader_run(cases[k], k, scratch),
                                        range(len(cases))))
                for p in inputs:
                    if adv_cases.stamp(p) != stamps[p]:
                        results.append(Result("an input was modified", [p]))
                        results[-1].fail(f"{p} changed")
                nbad = tally(results)
                lines.append(f"readers {len(results)} runs on {len(inputs)} inputs, "
                             f"{nbad} failures")
            if only in ("", "writers"):
                writers = adv_cases.WRITERS
                refs = list(pool.map(lambda k: writer_reference(writers[k], k, scratch, valid),
                                     range(len(writers))))
                nbad = tally([r for r, _ in refs])
                plan = [(k, pl) for k in range(len(writers)) for pl in adv_places.PLACES
                        if adv_places.available(pl, mode)]
                nbad += tally(list(pool.map(
                    lambda j: writer_run(writers[plan[j][0]], plan[j][1], j, scratch, valid, mode,
                                         refs[plan[j][0]][1]), range(len(plan)))))
                lines.append(f"writers {len(plan)} runs ({len(writers)} outputs; "
                             f"{adv_places.describe(mode)}), {nbad} failures")
            if only in ("", "io"):
                missing = adv_io.check_complete(SRCDIR)
                for m in missing:
                    r = Result("output=input sweep", [])
                    r.fail(m)
                    tally([r])
                refs = [(c, o) for c in adv_io.IO_CASES for o in c.outs]
                opts = {(c.command, o) for c, o in refs}
                nbad = len(missing) + tally(list(pool.map(
                    lambda k: io_run(refs[k][0], refs[k][1], None, k, scratch, valid, True),
                    range(len(refs)))))
                plan = adv_io.runs()
                nbad += tally(list(pool.map(
                    lambda k: io_run(*plan[k], len(refs) + k, scratch, valid), range(len(plan)))))
                lines.append(f"output=input {len(plan)} runs ({len(opts)} output options "
                             f"of {len({c.command for c in adv_io.IO_CASES})} commands in "
                             f"{len(adv_io.IO_CASES)} command lines, each at every input), "
                             f"{nbad} failures")
            if only in ("", "limits"):
                if SANITIZED:
                    lines.append("limits skipped under sanitizers")
                else:
                    plan = adv_cases.limit_cases(valid)
                    nbad = tally(list(pool.map(
                        lambda k: limit_run(plan[k][1], plan[k][0], k, scratch),
                        range(len(plan)))))
                    lines.append(f"limits {len(plan)} runs under ulimit -v, {nbad} failures")
    finally:
        if os.environ.get("MASKKIT_ADV_KEEP"):
            print(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    if os.environ.get("MASKKIT_ADV_VERBOSE"):
        for r in every:
            print(f"{'FAIL' if r.problems else 'ok  '} {r.what}: exit {r.rc}, {r.rss:.0f} MiB: "
                  f"{shorten(r.stderr, 160)}")
        for argv, sec in sorted(SECONDS.items(), key=lambda kv: -kv[1])[:8]:
            print(f"slowest {sec:6.2f} s: {show_argv(list(argv))}")
    if failures:
        print("(to replay: $GEN is 'python3 tests/adversarial/make_text_corpus.py $GEN'; "
              "$VALID and $SCRATCH are kept with MASKKIT_ADV_KEEP=1)")
    for r in failures:
        print(f"FAIL {r.what}: {show_argv(r.argv)}")
        print(f"     exit {r.rc}: {'; '.join(r.problems)}")
        if r.stderr:
            print(f"     stderr: {shorten(r.stderr)}")
    print(f"adversarial: {'; '.join(lines)} [{time.time() - start:.0f} s]")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
