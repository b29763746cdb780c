"""The workload generator: `earlc.synth(kind, out_dir, **options)`.

Simulates a program of one of the kinds below in integer ticks (in C, with the
GIL released), writes its OTF2 trace to `out_dir` and, next to `traces.otf2`,
`expected.json` with the exact severity of every property of the catalog per
call path and location, derived from the simulated schedule.  See
docs/generator.md for the kinds, the options and every rule.

    import earlc
    r = earlc.synth("ring", "out/ring", ranks=4, iterations=20, delay=500, delay_rank=2)
    r.events, r.seconds, r.expected()["properties"]["late_sender"]["total"]
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Union

from . import _core

#: the kinds, in the order of docs/generator.md
KINDS = tuple(_core.SYNTH_KINDS)

#: every option with its meaning (defaults depend on the kind: docs/generator.md)
OPTIONS = {
    "ranks": "MPI processes",
    "threads": "threads per process (OpenMP)",
    "iterations": "iterations of the main loop",
    "events": "if set: iterate until at least this many events (overrides iterations)",
    "seed": "random seed of the imbalance and the skews",
    "compute": "base ticks of a compute phase",
    "imbalance": "percent: a compute phase lasts compute * (1 + U[0, imbalance%])",
    "latency": "ticks a message needs from its send to its receive",
    "bytes": "message size in bytes",
    "eager_limit": "MPI_Send with bytes <= eager_limit is buffered, above it synchronous",
    "delay": "injected delay in ticks, added to the compute phase of delay_rank",
    "delay_rank": "rank that is delayed (-1: none)",
    "delay_thread": "thread of delay_rank whose OpenMP work is delayed",
    "delay_every": "delay every n-th iteration",
    "root": "root of rooted collectives on MPI_COMM_WORLD",
    "sub_root": "root (local rank) of rooted collectives on the split communicators",
    "split": "collectives: number of split communicators (color = rank % split; 1: none)",
    "px": "halo: process grid columns", "py": "halo: process grid rows",
    "hold": "OpenMP: ticks a critical section / lock is held",
    "lock_rounds": "OpenMP: critical sections and lock acquisitions per thread and region",
    "wrong_order": "ping-pong: send two pings and receive them in reverse order",
    "any_source": "master-worker: receive with MPI_ANY_SOURCE (1) or in rank order (0)",
    "resolution": "timer ticks per second",
    "memory_limit": "bytes of event chunks the writer keeps in memory",
}

ProgressFn = Callable[[str, int, int], None]

#: iterations of a run that sets neither iterations nor events (earl_synth_defaults)
DEFAULT_ITERATIONS = 10


@dataclass
class SynthResult:
    path: str                 #: the archive folder
    kind: str
    events: int               #: events written
    iterations: int
    duration: int             #: last timestamp (ticks)
    seconds: float            #: wall time of the generation, close included
    by_kind: Dict[str, int] = field(default_factory=dict)

    @property
    def anchor(self) -> str:
        return os.path.join(self.path, "traces.otf2")

    @property
    def expected_path(self) -> str:
        return os.path.join(self.path, "expected.json")

    @property
    def rate(self) -> float:
        """Events written per second."""
        return self.events / self.seconds if self.seconds > 0 else float("inf")

    def expected(self) -> Dict[str, Any]:
        with open(self.expected_path) as f:
            return json.load(f)


def _options(options: Dict[str, Any]) -> Dict[str, Any]:
    """The options as the C core takes them (names with _, booleans as 0/1, None left out)."""
    opts = {}
    for name, value in options.items():
        name = name.replace("-", "_")
        if name not in OPTIONS:
            raise _core.TraceError("synth: unknown option '%s' (options: %s)"
                                   % (name, ", ".join(sorted(OPTIONS))))
        if value is not None:
            opts[name] = int(value) if isinstance(value, bool) else value
    return opts


def _folder_bytes(path: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for f in files:
            total += os.lstat(os.path.join(folder, f)).st_size
    return total


@dataclass
class Estimate:
    """What a run of the generator would write, extrapolated from runs of one and
    two iterations: events, and bytes on disk (archive and expected.json)."""

    events: int
    bytes: int


def estimate(kind: str, **options) -> Estimate:
    """The events and bytes `synth(kind, ..., **options)` would write, without
    writing them: the generator runs one and two iterations with the same options
    into a private temporary folder (a few milliseconds for small programs), and
    the difference is one iteration's events and bytes.  The bytes err on the large
    side (about 1.5 times the real size at ten million events and more: small
    archives pack their events less densely)."""
    opts = _options(options)
    target = opts.pop("events", 0) or 0
    iterations = opts.pop("iterations", 0) or 0
    if not target and not iterations:
        iterations = DEFAULT_ITERATIONS
    runs = []
    folder = tempfile.mkdtemp(prefix="earlc-synth-estimate-")
    try:
        for n in (1, 2):
            out = os.path.join(folder, str(n))
            r = _core.synth(str(kind), out, dict(opts, iterations=n), None)
            runs.append((r["events"], _folder_bytes(out)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    (e1, b1), (e2, b2) = runs
    per_iteration = max(e2 - e1, 1)
    per_event = max(b2 - b1, 0) / per_iteration
    if target:
        # the last iteration may run past the target
        events = max(int(target), e1) + per_iteration
    else:
        events = e1 + (int(iterations) - 1) * per_iteration
    return Estimate(events=int(events), bytes=int(b1 + max(events - e1, 0) * per_event))


def _check_space(kind: str, out: str, options: Dict[str, Any]) -> None:
    """Refuse a run whose archive the disk at `out` cannot hold (TraceError)."""
    parent = os.path.dirname(os.path.abspath(out)) or "."
    while not os.path.isdir(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)  # the folders above out are made by the writer
    try:
        free = shutil.disk_usage(parent).free
    except OSError:
        return  # nothing to measure against: the writer reports a full disk itself
    need = estimate(kind, **options)
    if need.bytes > free:
        raise _core.TraceError(
            "synth: the trace would take about %s (%s events), more than the %s free in %s: "
            "ask for fewer events or iterations" % (_size(need.bytes), format(need.events, ","),
                                                    _size(free), parent))


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return ("%d %s" if unit == "B" else "%.1f %s") % (n, unit)
        n /= 1000.0
    return "%d B" % n


def synth(kind: str, out_dir: Union[str, os.PathLike], progress: Optional[ProgressFn] = None,
          overwrite: bool = False, check_space: bool = True, **options) -> SynthResult:
    """Generate a trace of `kind` into `out_dir` (see the module doc and docs/generator.md).

    Options are integers (booleans for wrong_order / any_source); None leaves the default.
    Impossible parameters raise earlc.TraceError before anything is written; a failed write
    raises it too and leaves nothing at `out_dir`.  check_space: estimate the archive's
    size first (`estimate`) and raise TraceError when the disk cannot hold it.
    """
    opts = _options(options)
    out = os.fspath(out_dir)
    if check_space:
        _check_space(str(kind), out, opts)
    if overwrite:
        opts["overwrite"] = 1
    r = _core.synth(str(kind), out, opts, progress)
    return SynthResult(path=out, kind=str(kind), events=r["events"], iterations=r["iterations"],
                       duration=r["duration"], seconds=r["seconds"], by_kind=r["by_kind"])


# `earlc.synth` is this function (the package exports it over the module's name):
# keep the module's tables reachable from it.
synth.KINDS = KINDS
synth.OPTIONS = OPTIONS
synth.estimate = estimate
