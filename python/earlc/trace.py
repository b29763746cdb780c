"""`earlc.open` and `Trace`: an OTF2 trace read into earlc's model.

The heavy lifting happens in the C core (earlc._core): reading the archive in
parallel, ordering all events, resolving MPI peers and pairing requests.  This
module wraps the result in objects that read like the domain.
"""
from __future__ import annotations

import os
import struct
from typing import Callable, Dict, List, Optional

import numpy as np

from . import _core, otf2names
from .definitions import Definitions, DefinitionList, Communicator, Location, Region
from .events import KIND_NAMES, Event, Events, make_event

TraceError = _core.TraceError


class TraceTooLarge(TraceError):
    """A trace whose open would take more memory than there is: the message
    says how much, and how to analyse it in parts instead."""


#: codes that say how the trace was read rather than that its content is
#: inconsistent: (Note or Warning, what it means for the numbers), as reports say it
READING_NOTES = {
    "event_count_mismatch": ("Note", "the definitions announce other event counts than the "
                             "event files hold; every event the files hold was read"),
    "clock_properties_missing": ("Note", "the trace gives no timer resolution; seconds assume "
                                 "one tick a nanosecond"),
    "event_file_cut_short": ("Warning", "event files were cut short and salvaged; the records "
                             "after each cut are missing from every number"),
}


class Warnings:
    """Inconsistencies found while reading, counted per code.

    `counts` maps every code to its count, `details` lists the first ones of each
    code as (code, location, position on the location, event id, text), and
    `other_records` counts record types that earlc reads but does not keep.
    """

    def __init__(self, raw: dict):
        self.counts: Dict[str, int] = raw["counts"]
        self.details = raw["details"]
        self.other_records: Dict[str, int] = raw["other_records"]

    @property
    def total(self) -> int:
        """Warnings about content (records not kept are not counted here)."""
        return sum(n for code, n in self.counts.items() if code != "other_record")

    def __bool__(self) -> bool:
        return self.total > 0

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.counts.items() if v}
        return "Warnings(%s)" % shown

    def to_dataframe(self):
        import pandas as pd

        return pd.DataFrame(self.details,
                            columns=["code", "location", "position", "event", "detail"])


class ProfileMethods:
    """The profiles and communication summaries pipit users know, as methods of
    a Trace and of a view of one (earlc.view.TraceView): thin calls of
    profiles.py and communication.py, which restrict themselves to a view."""

    def flat_profile(self, per_location: bool = False):
        """Per region: exclusive and inclusive time (seconds, with ticks), visits."""
        from .profiles import flat_profile

        return flat_profile(self, per_location=per_location)

    def call_tree(self):
        """Per call path: parent, depth, path, exclusive and inclusive time, visits."""
        from .profiles import call_tree

        return call_tree(self)

    def time_profile(self, bins: int = 50, normalized: bool = False):
        """Exclusive time of every region in each of `bins` time bins (bounds in
        seconds from the trace's start, with their ticks)."""
        from .profiles import time_profile

        return time_profile(self, bins=bins, normalized=normalized)

    def load_imbalance(self, top: int = 1, by: str = "location"):
        """Per region: mean, min, max over locations (or ranks), max / mean."""
        from .profiles import load_imbalance

        return load_imbalance(self, top=top, by=by)

    def idle_time(self, mpi: bool = False, regions=None):
        """Per location: time outside its own regions (+ MPI, + named regions)."""
        from .profiles import idle_time

        return idle_time(self, mpi=mpi, regions=regions)

    def comm_matrix(self, output: str = "bytes", by: str = "location"):
        """numpy matrix[sender, receiver] of bytes or message counts."""
        from .communication import comm_matrix

        return comm_matrix(self, output=output, by=by)

    def message_histogram(self, bins=20):
        """(counts, edges) of point-to-point message sizes."""
        from .communication import message_histogram

        return message_histogram(self, bins=bins)

    def comm_over_time(self, output: str = "bytes", message: str = "send", bins: int = 50):
        """(values, edges in ticks): bytes or messages sent (received) per time bin."""
        from .communication import comm_over_time

        return comm_over_time(self, output=output, message=message, bins=bins)

    def comm_by_process(self, output: str = "bytes", by: str = "rank"):
        """DataFrame of bytes (or messages) sent and received per rank (location)."""
        from .communication import comm_by_process

        return comm_by_process(self, output=output, by=by)


class Trace(ProfileMethods):
    """An OTF2 trace: definitions, all events in total order, warnings.

    Event ids are positions in the total order (timestamp, then location, then
    position on the location); `len(trace)` is the number of events.
    """

    #: this process's part when the trace is analysed in parts over MPI
    #: (earlc.parts): the trace then holds that part's events only
    part = None

    def __init__(self, core_trace, threads: int = 0):
        self._core = core_trace
        #: threads the trace was opened with (0: one per core); later work on it
        #: (the EARL layer) uses as many
        self.threads = threads
        self._defs = Definitions(core_trace.definitions())
        self.events = Events(core_trace, self)
        self.warnings = Warnings(core_trace.warnings())
        self._region_names = None
        self._states = None
        self._calltree = None
        self._clocks = None  # the last VectorClocks of happened_before/concurrent

    # -- EARL states (python/earlc/states.py) ------------------------------------
    @property
    def states(self):
        """Pointer attributes and collective instances, built on first use."""
        return self.states_with(calltree=False)

    def states_with(self, calltree: bool):
        """self.states; when not built yet, built now with the call tree walked
        on the way (calltree): the first call tree of these states
        (earlc.calltree.CallTree, as the analysis builds) takes it instead of a
        walk of its own over every event."""
        if self._states is None:
            from .states import States

            self._states = States(self, calltree=calltree)
        return self._states

    @property
    def calltree(self):
        """The call tree (earlc.calltree.CallTree): call paths, the call path of
        every event, exclusive time and visits per (call path, location); built on
        first use, as the profiles read it."""
        if self._calltree is None:
            from .calltree import CallTree

            self._calltree = CallTree(self, threads=self.threads)
        return self._calltree

    def stack(self, i: int, loc) -> List[int]:
        """ENTER ids of the open regions of loc just after event i, outermost first."""
        return self.states.stack(i, loc)

    def queue(self, i: int, src, dst) -> List[int]:
        """Send ids of the messages in transfer from src to dst just after event i."""
        return self.states.queue(i, src, dst)

    def coll(self, i: int) -> List[int]:
        """Members of the collective instance event i completes ([] if none)."""
        return self.states.coll(i)

    def locks(self, i: int):
        """The locks changed up to event i, with their state just after it."""
        return self.states.locks(i)

    # -- exports (python/earlc/export/) ------------------------------------------------
    def to_perfetto(self, path, start=None, end=None, locations=None, report=None,
                    wait_states: bool = True) -> dict:
        """Write a window (seconds from the trace start) as trace-event JSON for
        Perfetto: regions, wait states, messages (docs/exports.md)."""
        from .export.perfetto import write_perfetto

        return write_perfetto(self, path, start=start, end=end, locations=locations,
                              report=report, wait_states=wait_states)

    # -- counters as time series (python/earlc/metrics.py) ---------------------------
    @property
    def metrics(self):
        """Every METRIC sample as a time series: a pandas DataFrame of location,
        metric (the member's name), unit, time (seconds from the trace start),
        time_ticks and value (float64, in the unit), one row per sample in the total
        order.  Counters sampled on their own METRIC locations (GPU power,
        temperature) are only here; those recorded beside ENTER/LEAVE are also the
        analysis's hwc_ metrics (docs/model.md)."""
        from .metrics import metric_frame

        return metric_frame(self)

    def detect_iterations(self, region=None, location: int = 0, max_period: int = 64):
        """The repeated phases of the run on one location (earlc.phases.Iterations): the
        instances of `region`, or found by earlc (docs/python.md)."""
        from .phases import detect_iterations

        return detect_iterations(self, region=region, location=location,
                                 max_period=max_period)

    # -- the workflow: markers, logical time, views (markers.py, logical.py, view.py) --
    @property
    def markers(self):
        """The markers of the archive's marker file (earlc.markers.Markers; empty when
        it has none), read afresh on every access: annotating changes them."""
        from .markers import read_markers

        return read_markers(self)

    def filter(self, start=None, end=None, locations=None, regions=None):
        """A view of the events between start and end (seconds from the trace's
        start), on locations, inside regions (names): an earlc.view.TraceView, which
        earlc.analyze, search, the profiles and the other analyses accept."""
        from .view import TraceView

        return TraceView(self, start=start, end=end, locations=locations, regions=regions)

    def logical_time(self, progress=None):
        """Logical steps and lateness of the communication events (earlc.logical:
        numpy columns events, step, lateness, location, time; late_processes())."""
        from .logical import LogicalTime

        return LogicalTime(self, progress=progress)

    # -- happened-before order (python/earlc/clocks.py) ------------------------------
    def vector_clocks(self, ids, threads: Optional[int] = None, progress=None):
        """Vector timestamps of the events ids (see earlc.VectorClocks)."""
        from .clocks import VectorClocks

        return VectorClocks(self, ids, threads=threads, progress=progress)

    def _clocks_for(self, a, b):
        need = np.union1d(np.asarray(a, dtype=np.int64).ravel(),
                          np.asarray(b, dtype=np.int64).ravel())
        c = self._clocks
        stale = c is None or len(np.setdiff1d(need, c.events, assume_unique=True)) > 0
        if self.part is not None:  # stamping is collective: restamp where any part must
            stale = bool(self.part.exchange.allreduce_sum(np.array([stale], np.int64))[0])
        if stale:
            c = self._clocks = self.vector_clocks(need)
        return c

    def happened_before(self, a, b):
        """a --> b for event ids a and b (scalars or numpy arrays that broadcast).
        Of a part of a trace (earlc.parts) collective: every MPI process calls it,
        each with events of its own part."""
        return self._clocks_for(a, b).happened_before(a, b)

    def concurrent(self, a, b):
        """a || b: distinct events of which neither happened before the other."""
        return self._clocks_for(a, b).concurrent(a, b)

    # -- causal pattern search (python/earlc/search.py) --------------------------------
    def search(self, pattern, name: Optional[str] = None, limit: Optional[int] = None,
               progress=None, threads: Optional[int] = None, teams: int = 1,
               pruning: bool = True, root: Optional[int] = None):
        """The matches of a pattern (docs/patterns.md) as an earlc.Matches, in
        canonical order; limit: the first K of them; name: the pattern of the text to
        search (default: the last one); threads (default: the trace's) and teams do
        not change the answer.  Raises earlc.PatternError for a bad pattern.  Of a
        part of a trace (earlc.parts) collective, with the whole trace's matches on
        every MPI process, or on process `root` only."""
        from .search import search

        return search(self, pattern, name=name, limit=limit, progress=progress,
                      threads=threads, teams=teams, pruning=pruning, root=root)

    # -- definitions --------------------------------------------------------------
    @property
    def path(self) -> str:
        """The anchor file."""
        return self._defs.path

    @property
    def creator(self) -> str:
        return self._defs.creator

    @property
    def otf2_version(self) -> str:
        return self._defs.version

    @property
    def locations(self) -> DefinitionList[Location]:
        """Threads, streams and metric locations, by dense index."""
        return self._defs.locations

    @property
    def processes(self):
        return self._defs.processes

    @property
    def regions(self) -> DefinitionList[Region]:
        return self._defs.regions

    @property
    def communicators(self) -> DefinitionList[Communicator]:
        return self._defs.communicators

    @property
    def groups(self):
        return self._defs.groups

    @property
    def system_tree(self):
        return self._defs.system_nodes

    @property
    def strings(self) -> List[str]:
        return self._defs.strings

    @property
    def definition_count(self) -> int:
        """Global definition records read (all types)."""
        return self._defs.n_defs_read

    # -- time -----------------------------------------------------------------------
    @property
    def timer_resolution(self) -> int:
        """Ticks per second."""
        return self._defs.clock_resolution

    @property
    def clock_offset(self) -> int:
        return self._defs.clock_offset

    @property
    def start_time(self) -> int:
        """The trace's start (ticks): the timestamp of its first event, or for a trace
        without events its clock properties' offset.  Every time earlc shows a person
        is counted from here (earlc.display).  Of a part of a trace (earlc.parts),
        the whole trace's first event."""
        whole = self.part.whole if self.part is not None else {}
        if whole.get("first_time") is not None:
            return whole["first_time"]
        return int(self.events.time[0]) if len(self) else self._defs.clock_offset

    @property
    def duration_ticks(self) -> int:
        """Ticks from the first to the last event (of the whole trace, for a part)."""
        whole = self.part.whole if self.part is not None else {}
        if whole.get("first_time") is not None:
            return whole["last_time"] - whole["first_time"]
        t = self.events.time
        return int(t[-1]) - int(t[0]) if len(t) else self._defs.clock_length

    @property
    def duration(self) -> float:
        """Seconds from the first to the last event (for display; ticks are exact)."""
        return self.duration_ticks / self.timer_resolution if self.timer_resolution else 0.0

    def seconds(self, ticks) -> float:
        """Convert a tick count, a duration (or array), to seconds."""
        return ticks / self.timer_resolution

    def time_seconds(self, ticks):
        """Timestamps (ticks, scalar or array) as seconds from the trace's start
        (`start_time`): how every output of earlc shows a time (earlc.display)."""
        from .display import time_seconds

        return time_seconds(self, ticks)

    # -- events -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._core)

    def event(self, i: int) -> Event:
        """Event i as an object with readable fields."""
        return make_event(self, i)

    def kind_counts(self) -> Dict[str, int]:
        """Events per kind (kinds that occur)."""
        return {KIND_NAMES[k]: n for k, n in enumerate(self._core.kind_counts()) if n}

    def memory(self) -> Dict[str, int]:
        """Bytes of the event store: all of it, and the core columns alone."""
        total, core = self._core.memory()
        return {"total": total, "core": core}

    def __repr__(self) -> str:
        return "<earlc.Trace %s: %d events, %d locations, %.6f s>" % (
            self.path, len(self), len(self.locations), self.duration)

    # -- helpers for Event and Events -------------------------------------------------
    def _region(self, ref: int) -> Optional[Region]:
        return self._defs.regions.get(ref)

    def _string(self, ref: int) -> Optional[str]:
        s = self._defs.strings
        return s[ref] if 0 <= ref < len(s) else None

    def _region_name_array(self) -> np.ndarray:
        if self._region_names is None:
            n = max((r.id for r in self.regions), default=-1) + 2
            names = np.full(n, None, dtype=object)
            for r in self.regions:
                names[r.id] = r.name
            self._region_names = names
        return self._region_names

    def _metric_values(self, first: int, count: int) -> list:
        out = []
        for k in range(first, first + count):
            raw = int(self.events.metric_values[k])
            t = int(self.events.metric_value_types[k])
            if t == otf2names.TYPE_DOUBLE:
                out.append(struct.unpack("<d", struct.pack("<Q", raw))[0])
            elif t == otf2names.TYPE_INT64:
                out.append(struct.unpack("<q", struct.pack("<Q", raw))[0])
            else:
                out.append(raw)
        return out


ProgressFn = Callable[[str, int, int], None]


def open(path, threads: int = 0, progress: Optional[ProgressFn] = None,  # noqa: A001
         salvage: bool = False, parts: Optional[str] = None, memory=None,
         collectives: str = "all") -> Trace:
    """Read the OTF2 archive at `path`: its anchor file (NAME.otf2), or the folder
    that holds it (its traces.otf2, else its only *.otf2 file).

    threads: reading threads (0: one per core); the result does not depend on it.
    progress: called as progress(phase, done, total) during long reads.
    salvage: an event file cut short (a crashed run) keeps every record that lies
    whole before its end, with an `event_file_cut_short` warning per location
    saying how much was lost, instead of failing the open.
    parts: "mpi" to read only this MPI process's part of the trace (collective:
    every process of the job calls it; docs/parallel.md); the trace then holds
    that part's events, and earlc.analyze(trace) gives the whole trace's report.
    None: the whole trace.
    collectives: with parts="mpi", "all" (every member of the collectives the
    part takes part in; any analysis), "representatives" (only the members
    the built-in wait states read, and the ghosts' message calls without the
    LEAVEs those do not read: less memory, for earlc.analyze without the
    root causes or plugins) or "delayers" (those and what the root causes
    read: for the built-in properties, root causes included);
    earlc.parts.collectives_for(properties, plugins) says which an analysis
    needs; docs/parallel.md.
    memory: the memory the open may take ("8G", "512M", bytes; default: what
    the machine has available; "unlimited": no check).  A trace that would
    take more is not read: earlc.TraceTooLarge (a TraceError) says how much it
    needs and how to analyse it in parts (earlc.analyze(path, memory=...),
    earlc.parts.in_turn(path), docs/memory.md), instead of the system
    swapping or killing the process.
    Raises earlc.TraceError with a message naming the file and the problem.
    """
    path = os.fspath(path)
    # "run/" names the folder "run": its anchor is run/traces.otf2, not run//traces.otf2
    path = path.rstrip(os.sep) or path
    if parts is not None:
        if parts != "mpi":
            raise ValueError("parts must be None or 'mpi', not %r" % (parts,))
        from .parts import mpi_exchange, open_part

        return open_part(path, mpi_exchange(), threads=threads, progress=progress,
                         salvage=salvage, collectives=collectives).trace
    reading = _core.Reading(path, threads=threads, progress=progress, salvage=bool(salvage))
    if not (isinstance(memory, str) and memory.strip().lower() == "unlimited"):
        _check_fits(path, reading.definitions(), memory)
    reading.read(b"\x01" * reading.n_locations())
    return Trace(reading.finish(), threads)


def _check_fits(path, defs: dict, memory) -> None:
    """TraceTooLarge when the open of this trace would take more than memory
    (None: what is available now)."""
    from .parts.budget import DEFAULT, available_memory, format_size, parse_size, resident_now
    from .parts.inturn import declared_events

    if memory is None:
        room = available_memory()
        if room is None:
            return
        budget, what = room + resident_now(), "available"
    else:
        budget, what = parse_size(memory), "given"
    declared = declared_events(path, defs)
    need = DEFAULT.opening(int(declared.sum()), len(declared))
    if need <= budget:
        return
    raise TraceTooLarge(
        "%s: its %s events take about %s to open, more than the %s %s: analyse it in parts "
        "within the memory (earlc analyze --memory SIZE; earlc.analyze(path, memory=...)), "
        "or take its parts one at a time with "
        "earlc.parts.in_turn(path) (docs/memory.md)"
        % (defs.get("path") or path, format(int(declared.sum()), ","), format_size(need),
           format_size(budget), what))
