"""Shared fixtures: the reference traces in ../shared/traces (tests skip when absent)
and a parser of `otf2-print` output, the independent source of expected values."""
import gc
import os
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

# Ctrl-C as a person at a terminal has it, however the suite was started: a
# shell starts a background job with SIGINT ignored, and Python keeps an ignored
# SIGINT (no KeyboardInterrupt; `_thread.interrupt_main` does nothing), as does
# every process the tests start.  With Python's own handler here, the children
# start with the default action (exec resets a handler, not an ignored signal).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SHARED_TRACES = Path(os.environ.get("EARLC_SHARED_TRACES", ROOT.parent / "shared" / "traces"))
REFERENCE_NAMES = ["pipit-ping-pong", "pipit-ping-pong-papi", "sstmacro-mpi-coverage",
                   "casita-jacobi-hybrid", "casita-cuda-simple", "casita-ompt-nested"]


def reference_trace(name):
    path = SHARED_TRACES / name / "traces.otf2"
    if not path.exists():
        pytest.skip("reference trace %s is absent" % name)
    return path


def need_otf2_print():
    if not shutil.which("otf2-print"):
        pytest.skip("otf2-print (Debian otf2-tools) is not installed")


_EVENT = re.compile(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s*(.*)$")
_PEER = re.compile(r"(?:Receiver|Sender|Root): \d+ \(\"[^\"]*\" <(\d+)>\)")


class Otf2Print:
    """Events of an archive as otf2-print shows them, grouped per location id:
    events[loc_id] = [(kind, time, peer_location_id or None), ...] in order."""

    def __init__(self, anchor):
        need_otf2_print()
        out = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True,
                             check=True).stdout
        self.events = defaultdict(list)
        self.kinds = Counter()
        for line in out.splitlines():
            m = _EVENT.match(line)
            if not m or m.group(1) in ("ADDITIONAL",):
                continue
            kind, loc, time, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
            p = _PEER.search(rest)
            self.events[loc].append((kind, time, int(p.group(1)) if p else None))
            self.kinds[kind] += 1
        defs = subprocess.run(["otf2-print", "-G", str(anchor)], capture_output=True,
                              text=True, check=True).stdout
        self.definitions = Counter()
        for line in defs.splitlines():
            m = re.match(r"^([A-Z_]+)\s", line)
            if m and m.group(1) not in ("OTF2", "Definition"):
                self.definitions[m.group(1)] += 1


_cache = {}


def otf2_print(anchor):
    key = str(anchor)
    if key not in _cache:
        _cache[key] = Otf2Print(anchor)
    return _cache[key]


def _have_mpi4py() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


#: tests that run the analysis in parts on MPI processes (mpiexec -n P)
needs_mpi = pytest.mark.skipif(not shutil.which("mpiexec") or not _have_mpi4py(),
                               reason="mpiexec (Debian mpich) and mpi4py are needed")


def stopped_run(path) -> None:
    """A run that was ended while its ranks waited: ranks 0-1 stopped in MPI_Recv,
    rank 2 in MPI_Barrier, the run ended at t=1000 (earlc::run_ended)."""
    import earlc
    with earlc.TraceWriter(path, ranks=3, resolution=1000) as w:
        for r in range(3):
            w.enter(r, 0, "main")
            w.enter(r, 10 + r, "work")
            w.leave(r, 100 + r, "work")
            w.enter(r, 200 + r, "MPI_Barrier" if r == 2 else "MPI_Recv")
            w.mark_incomplete(r, "the run did not finish within the timeout and was ended")
            w.location_property(r, "earlc::run_ended", "1000")


#: the real traces the analyses in parts are checked on (skipped one by one when absent)
PARTS_REAL = REFERENCE_NAMES + ["generated-3r-longterm", "generated-4r-longterm"]


def trace_folders(folder, programs, bundled, real=PARTS_REAL, bundled_prefix=""):
    """name -> archive folder: the generated programs (written into `folder`; a name's
    kind is before "-any"), the bundled traces and the real traces present."""
    import earlc
    out = {}
    for name, options in programs.items():
        earlc.synth(name.split("-any")[0], folder / name, **options)
        out[name] = folder / name
    for name in bundled:
        out[bundled_prefix + name] = ROOT / "traces" / name
    for name in real:
        if (SHARED_TRACES / name / "traces.otf2").exists():
            out[name] = SHARED_TRACES / name
    return out


@pytest.fixture(scope="session")
def halo_2m(tmp_path_factory):
    """A trace large enough that the bytes per event, not the fixed costs, decide an
    analysis's peak: 2 M events of a 16-rank halo exchange (the budgets of the
    analyses in turn are checked on it)."""
    import earlc
    return earlc.synth("halo", tmp_path_factory.mktemp("halo-2m") / "h", ranks=16,
                       events=2_000_000).path


@pytest.fixture(scope="module", autouse=True)
def frozen_heap():
    """Before each test module, freeze what is alive (the modules imported so far:
    numpy, pandas, earlc and its catalog, pytest, matplotlib once a page or a
    picture imported it: 50,000-120,000 objects) out of the cycle collector's
    reach.  They live until the end anyway, and every full collection would walk
    them again: the analysis in turn collects after each part (parts/inturn.py,
    `let_go`), thousands of times in the suite, and each walk took 0.05-0.5 s in
    the suite's process, more than a small part's whole analysis.  What the tests
    create is collected as before (the previous module's fixtures are gone by
    now).  EARLC_TESTS_NO_GC_FREEZE=1 leaves the collector as it was (to measure
    the difference)."""
    if not os.environ.get("EARLC_TESTS_NO_GC_FREEZE"):
        gc.collect()
        gc.freeze()
    yield
