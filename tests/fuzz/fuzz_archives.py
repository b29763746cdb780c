"""Mutation fuzzing of OTF2 archives: `make fuzz` (10,000 cases) or
`python tests/fuzz/fuzz_archives.py --cases N`.

Each case damages one file of an archive (the anchor, the global or a local
definition file, or an event file) by flipping bits, overwriting a run of bytes
or cutting the file short, then opens and analyses the archive in a worker
process (one reading thread; two in every fourth case).  The outcome must be a trace (perhaps with warnings) or an
earlc.TraceError; a crash of the worker (a signal), another exception, or no
answer within the watchdog's time are failures.  The worker serves many cases,
so a case costs the read and the analysis, not a Python start-up; it is
restarted after a failure.  Archives are the reference traces found beside the
repository (if any) and small generated ones; each failing case's archive is
kept under --keep for reproduction.

Exit status 0 when no case failed, 1 otherwise; the counts are printed as one
JSON object on the last line.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("EARLC_SHARED_TRACES", ROOT.parent / "shared" / "traces"))
#: reference traces small enough for thousands of cases
REFERENCE = ["sstmacro-mpi-coverage", "casita-cuda-simple", "pipit-ping-pong",
             "casita-ompt-nested"]
MUTATIONS = ("bit_flips", "overwritten_run", "truncation")

WORKER = r"""
import sys
sys.path.insert(0, sys.argv[1])
import faulthandler
import earlc
for line in sys.stdin:
    path, limit, threads = line.strip().rsplit(" ", 2)
    # the Python stacks go to the worker's log shortly before the watchdog fires
    faulthandler.dump_traceback_later(max(float(limit) * 0.8, 1.0), exit=False)
    try:
        t = earlc.open(path, threads=int(threads))
        r = earlc.analyze(t, packages=False)
        r.to_text(); r.to_json()
        out = "opened"
    except earlc.TraceError as e:
        out = "error" if path in str(e) else "error-without-path " + " ".join(str(e).split())
    except Exception as e:
        out = "exception %s: %s" % (type(e).__name__, " ".join(str(e).split())[:300])
    faulthandler.cancel_dump_traceback_later()
    sys.stdout.write(out + "\n")
    sys.stdout.flush()
"""


class Worker:
    """The process that opens and analyses the damaged archives, one at a time."""

    def __init__(self, log: Path):
        self.proc = None
        self.log = log      # the worker's standard error (faulthandler's stacks)
        self.stacks = ""    # native stacks of the last hang (gdb), if gdb is there

    def start(self):
        with open(self.log, "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-c", WORKER, str(ROOT / "python")],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err, text=True, bufsize=1)

    def ask(self, path: str, timeout: float, threads: int = 1) -> str:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write("%s %g %d\n" % (path, timeout, threads))
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._crashed()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.stacks = native_stacks(self.proc.pid)
            self.stop()
            return "hang"
        line = self.proc.stdout.readline()
        if not line:
            return self._crashed()
        return line.strip()

    def _crashed(self) -> str:
        rc = self.proc.wait()
        self.proc = None
        name = signal.Signals(-rc).name if rc < 0 else "exit %d" % rc
        return "crash %s" % name

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def native_stacks(pid: int) -> str:
    """Every thread's C stack of a hung worker, through gdb when installed."""
    if not shutil.which("gdb"):
        return ""
    try:
        return subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                              capture_output=True, text=True, timeout=60).stdout
    except (subprocess.TimeoutExpired, OSError) as exc:
        return "gdb failed: %s" % exc


def generated_archives(folder: Path):
    sys.path.insert(0, str(ROOT / "python"))
    import earlc

    out = []
    for kind, opts in (("ring", dict(ranks=4, iterations=6, delay=400, delay_rank=2)),
                       ("collectives", dict(ranks=4, iterations=2, split=2)),
                       ("hybrid", dict(ranks=2, threads=2, iterations=2)),
                       ("ping-pong", dict(ranks=2, iterations=4, wrong_order=1))):
        dst = folder / ("synth-" + kind)
        earlc.synth(kind, dst, **opts)
        out.append(dst)
    return out


def archive_files(archive: Path):
    """(kind of file, path) of the files a mutation may hit."""
    out = []
    for p in sorted(archive.rglob("*")):
        if p.name == "traces.otf2":
            out.append(("anchor", p))
        elif p.name == "traces.def":
            out.append(("global_definitions", p))
        elif p.suffix == ".def":
            out.append(("local_definitions", p))
        elif p.suffix == ".evt":
            out.append(("events", p))
    return out


def mutate(data: bytes, how: str, rng: random.Random) -> bytes:
    buf = bytearray(data)
    if not buf:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    if how == "bit_flips":
        for _ in range(rng.randint(1, 16)):
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
    elif how == "overwritten_run":
        n = min(len(buf), rng.choice((1, 2, 4, 8, 16, 64, 256, 1024)))
        start = rng.randrange(len(buf) - n + 1)
        fill = rng.choice(("random", "zero", "ones"))
        for i in range(start, start + n):
            buf[i] = rng.randrange(256) if fill == "random" else (0 if fill == "zero" else 255)
    else:
        buf = buf[:rng.randrange(len(buf))]
    return bytes(buf)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=0,
                    help="stop after this wall time (0: no limit)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60,
                    help="watchdog: seconds a case may take before it counts as a hang")
    ap.add_argument("--keep", default=str(ROOT / "build" / "fuzz-failures"),
                    help="folder for the archives of failing cases")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="earlc-fuzz-"))
    worker = Worker(work / "worker.log")
    counts = Counter()
    by_target = Counter()
    failures = []
    started = time.monotonic()
    try:
        sources = []
        for name in REFERENCE:
            src = SHARED / name
            if (src / "traces.otf2").exists():
                dst = work / name
                shutil.copytree(src, dst)
                for p in dst.rglob("*"):
                    p.chmod(0o755 if p.is_dir() else 0o644)
                sources.append(dst)
        sources += generated_archives(work)
        files = {a: archive_files(a) for a in sources}
        for case in range(args.cases):
            if args.seconds and time.monotonic() - started > args.seconds:
                break
            archive = rng.choice(sources)
            target_kind, target = rng.choice(files[archive])
            how = rng.choice(MUTATIONS)
            # every fourth case reads with two threads: a failing reader among others
            threads = 2 if case % 4 == 3 else 1
            original = target.read_bytes()
            target.write_bytes(mutate(original, how, rng))
            try:
                outcome = worker.ask(str(archive), args.timeout, threads)
            finally:
                damaged = target.read_bytes()
                target.write_bytes(original)
            kind = outcome.split()[0]
            counts["cases"] += 1
            counts[kind] += 1
            by_target["%s/%s" % (target_kind, how)] += 1
            if kind not in ("opened", "error"):
                keep = Path(args.keep) / ("case-%d-seed-%d" % (case, args.seed))
                shutil.rmtree(keep, ignore_errors=True)
                shutil.copytree(archive, keep)
                (keep / target.relative_to(archive)).write_bytes(damaged)
                if kind == "hang":
                    (keep / "hang-stacks.txt").write_text(
                        worker.log.read_text(errors="replace") + "\n" + worker.stacks)
                failures.append({"case": case, "archive": archive.name, "threads": threads,
                                 "file": str(target.relative_to(archive)), "mutation": how,
                                 "outcome": outcome, "kept": str(keep)})
                print("FAIL case %d: %s %s of %s: %s (kept in %s)"
                      % (case, archive.name, how, target.relative_to(archive), outcome, keep),
                      file=sys.stderr)
    finally:
        worker.stop()
        shutil.rmtree(work, ignore_errors=True)
    summary = {"cases": counts["cases"], "opened": counts["opened"],
               "trace_errors": counts["error"],
               "failures": len(failures),
               "crashes": sum(v for k, v in counts.items() if k == "crash"),
               "hangs": counts["hang"],
               "other_exceptions": counts["exception"] + counts["error-without-path"],
               "seconds": round(time.monotonic() - started, 1),
               "archives": [a.name for a in sources],
               "by_target": dict(sorted(by_target.items())), "failed": failures}
    print(json.dumps(summary))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
