"""Causal pattern search: find sets of events by how they are ordered.

A pattern (docs/patterns.md) names event classes, declares variables over them
and relates the variables by the happened-before order of the trace:

    Send := ["", "MPI_*SEND", ""];
    Send $a, $b;
    Concurrent := $a || $b;

    m = trace.search(text)            # the last pattern of the text
    m = trace.search(text, name="Concurrent", limit=10)
    len(m), m.columns, m.events       # events: int64 array (matches, columns)
    m.to_dataframe()                  # ids, times, locations and regions

The search itself runs in C (earlc._core.search) without the GIL.  Matches come
in a canonical order (ascending by their event ids, column by column), so
`limit=K` returns the first K of the complete answer.

A class that matches no event of the trace (or a sub-pattern used as a type
that has no match) is no error: scripts search many traces with one pattern.
Its variables have no value (a $ or ~ variable: no match; a * variable holds
vacuously), `m.warnings` names it, and a PatternWarning says so.
"""
from __future__ import annotations

import os
import warnings
from typing import Callable, Dict, List, Optional

import numpy as np

from . import _core
from .display import time_columns, time_seconds

TraceError = _core.TraceError
#: matches the HTML report's timeline marks at most (earlc report --pattern)
MAX_MATCHES_DRAWN = 5000


class PatternError(_core.Error, ValueError):
    """A pattern that cannot be searched: a syntax error (with its line, column and
    what was expected), an unknown name or kind."""


class PatternWarning(UserWarning):
    """A pattern that can be searched but asks for what the trace lacks: a class
    matching no event, a sub-pattern used as a type without a match."""


def _pattern_error(exc: Exception) -> Exception:
    msg = exc.args[0] if exc.args else str(exc)
    if getattr(exc, "status", None) == "invalid argument" and str(msg).startswith("pattern:"):
        return PatternError(msg)
    return exc


def parse(text: str):
    """Parse a pattern text (PatternError when it is malformed); the result can be
    passed to search() in place of the text."""
    if isinstance(text, _core.SearchProgram):
        return text
    if not isinstance(text, str):
        raise TypeError("a pattern is a str, not %s" % type(text).__name__)
    try:
        return _core.SearchProgram(text)
    except TraceError as exc:
        raise _pattern_error(exc) from None


def pattern_names(text) -> List[str]:
    """The patterns a text defines, in text order (the last one is searched by default)."""
    return list(parse(text).patterns())


class Matches:
    """The matches of a pattern: one row per match, one column per event of a $
    variable (`a`; `m` and `m.partner` for a partner class; `ce.sc`, ... for a
    variable whose type is a sub-pattern), rows in canonical order."""

    def __init__(self, trace, raw: Dict, pattern: Optional[str], events=None):
        self._trace = trace
        self.pattern = pattern
        self.columns: List[str] = list(raw["columns"])
        self._events = np.frombuffer(raw["events"], dtype=np.int64).reshape(
            raw["rows"], len(self.columns)) if events is None else events
        #: True when the search stopped at the limit (more matches may exist)
        self.truncated: bool = raw["truncated"]
        #: nodes (bindings tried), checks (relations evaluated), pruned (values skipped
        #: by range pruning), seconds (the search), prepare_seconds (classes and
        #: timestamps before it), merge_seconds (of seconds: the tasks' matches put
        #: together), stamped events and the bytes of their stamps,
        #: tasks (made before the search), stolen (split off for idle threads) and
        #: threads: per searching thread its nodes, checks, tasks, idle_seconds, team
        self.stats: Dict = raw["stats"]
        #: the variables in search order with their quantifier and domain size
        self.variables: List[Dict] = raw["variables"]
        #: what the trace gives no value for ("pattern: line 1, column 6: the class
        #: 'S' [...] matches no event of this trace"), one message each
        self.warnings: List[str] = list(raw.get("warnings", ()))

    @property
    def events(self) -> np.ndarray:
        """int64 (matches, columns): event ids, canonical order."""
        return self._events

    @events.setter
    def events(self, rows: np.ndarray) -> None:
        self._events = rows

    def __len__(self) -> int:
        return self.events.shape[0]

    def _attributes(self, ids: np.ndarray):
        """(timestamps, locations, kinds, region ids) of events: the region of an
        ENTER or LEAVE, of the call around it for any other event (NO_REGION
        outside every region)."""
        from .events import NO_REGION

        ev = self._trace.events
        kind = ev.kind[ids]
        own = (kind == 0) | (kind == 1)  # ENTER, LEAVE
        enc = self._trace.states.enterptr_of(ids)
        rid = np.where(own, ev.region_of(ids),
                       np.where(enc >= 0, ev.region_of(np.maximum(enc, 0)), NO_REGION))
        return ev.time[ids], ev.location[ids], kind, rid.astype(np.int64)

    def __iter__(self):
        for row in self.events:
            yield tuple(int(x) for x in row)

    def __getitem__(self, k):
        return self.events[k]

    def column(self, name: str) -> np.ndarray:
        return self.events[:, self.columns.index(name)]

    def to_dataframe(self):
        """One row per match; per column its event id, time (seconds from the trace's
        start) and time_ticks (its timestamp), location (dense index), location name,
        kind and region (an ENTER's or LEAVE's region, the enclosing call's region for
        other events)."""
        import pandas as pd

        from .events import KIND_NAMES

        tr = self._trace
        names = tr._region_name_array()
        loc_names = np.array([l.name for l in tr.locations], dtype=object)
        kinds = np.array(KIND_NAMES, dtype=object)
        data = {}
        for j, c in enumerate(self.columns):
            ids = self.events[:, j]
            time, location, kind, rid = self._attributes(ids)
            rid = np.where((rid >= 0) & (rid < len(names) - 1), rid, len(names) - 1)  # None
            data[c] = ids
            for name, col in time_columns(tr, time, c + ".time").items():
                data[name] = col
            data[c + ".location"] = location
            data[c + ".location_name"] = loc_names[location] if len(ids) else []
            data[c + ".kind"] = kinds[kind] if len(ids) else []
            data[c + ".region"] = names[rid] if len(ids) else []
        return pd.DataFrame(data, columns=list(data))

    def to_dict(self) -> Dict:
        """The matches as plain data (docs/patterns.md, "JSON"): `matches` holds the
        event ids, `time` the same events' times in seconds from the trace's start
        and `time_ticks` their timestamps, row by row and column by column."""
        ids = self.events
        ticks = self._attributes(np.maximum(ids, 0).ravel())[0].astype(np.int64).reshape(
            ids.shape) if len(self) else np.empty((0, len(self.columns)), dtype=np.int64)
        seconds = time_seconds(self._trace, ticks)
        none = ids < 0  # no event (never in $ columns today): no time either
        return {"pattern": self.pattern, "columns": self.columns,
                "matches": ids.tolist(),
                "time": np.where(none, None, seconds).tolist(),
                "time_ticks": np.where(none, None, ticks).tolist(),
                "truncated": self.truncated, "warnings": self.warnings, "stats": self.stats}

    def __repr__(self) -> str:
        return "<earlc.Matches %s: %d matches of (%s)%s>" % (
            self.pattern, len(self), ", ".join(self.columns),
            ", truncated" if self.truncated else "")


class PartMatches(Matches):
    """The matches of a trace analysed in parts (earlc.parts): the whole
    trace's, with the events' ids in the whole trace; what a match shows of an
    event comes from the events gathered for the search (every part has them).
    Gathered on one process (`root`), the other processes' have no rows."""

    def __init__(self, trace, raw: Dict, pattern: Optional[str], table, here: bool,
                 root: Optional[int]):
        super().__init__(trace, raw, pattern)
        self._table, self._here, self._root = table, here, root

    @property
    def events(self) -> np.ndarray:
        if not self._here:
            raise RuntimeError("the matches were gathered on MPI process %d (root=%d): read "
                               "them there, or search with root=None to have them on every "
                               "process" % (self._root, self._root))
        return self._events

    def _attributes(self, ids: np.ndarray):
        a = self._table.attrs[self._table.rows(np.asarray(ids, dtype=np.int64))]
        return a["time"], a["location"], a["kind"], a["region"]


ProgressFn = Callable[[str, int, int], None]


def _open_path(path, memory, scratch, threads, progress):
    """The trace at path for a search or the races: this process's part under
    mpiexec, the whole trace when it fits in memory, else an InTurn (the parts
    one after another, every collective member in each)."""
    from .parts import mpi_world_size
    from .trace import open as open_trace

    path = os.fspath(path).rstrip(os.sep) or os.fspath(path)
    threads = 0 if threads is None else threads
    if (mpi_world_size() or 1) > 1:
        if memory is not None or scratch is not None:
            raise ValueError("memory and scratch apply to an analysis in one process: under "
                             "mpiexec each process holds its part of the trace")
        return open_trace(path, threads=threads, progress=progress, parts="mpi")
    from .parts.inturn import InTurn, needs_parts

    need = needs_parts(path, memory)
    if need is None:
        return open_trace(path, threads=threads, progress=progress, memory="unlimited")
    return InTurn(path, need.budget, scratch=scratch, threads=threads, model=need.model,
                  representatives=False)


def _search_view(view, program, name, limit, progress, threads, teams, pruning) -> Matches:
    """The matches of the whole trace whose every event is in the view (earlc.view),
    the first `limit` of them in canonical order."""
    m = search(view.trace, program, name=name, progress=progress, threads=threads,
               teams=teams, pruning=pruning)
    keep = view.contains(m.events.ravel()).reshape(m.events.shape).all(axis=1) \
        if m.events.size else np.zeros(len(m), dtype=bool)
    rows = np.nonzero(keep)[0]
    truncated = limit is not None and len(rows) > limit
    if limit is not None:
        rows = rows[:limit]
    m.events = m.events[rows]
    m.truncated = truncated
    m._trace = view.trace
    return m


def search(trace, pattern, name: Optional[str] = None, limit: Optional[int] = None,
           progress: Optional[ProgressFn] = None, threads: Optional[int] = None,
           teams: int = 1, pruning: bool = True, root: Optional[int] = None,
           memory=None, scratch=None) -> Matches:
    """The matches of a pattern in trace (see the module doc and docs/patterns.md).

    pattern: the text (or parse(text)); name: the pattern to search (default: the
    last defined); limit: the first K matches in canonical order; progress: called
    as progress(phase, done, total); threads: searching (and timestamping) threads,
    0 one per core, default the trace's; teams: groups of threads that share work
    (the answer never depends on threads or teams); pruning=False tries every value
    instead of the windows range pruning selects (the same answer, slower: for tests
    and measurements).  Raises PatternError for a bad pattern; a class that
    matches no event is a PatternWarning (and m.warnings), not an error.

    Of a trace in parts (earlc.open(path, parts="mpi")) collective: every MPI
    process calls it with the same arguments; the matches are the whole trace's
    (event ids of the whole trace), on every process, or with root=R on process R
    only (the command line's choice: rank 0 writes them).

    trace may also be the path of an archive: it is opened (under mpiexec with
    several processes, in parts), or when its analysis needs more than memory
    ("8G", "512M", bytes; None: what the machine has available; "unlimited":
    never) searched in parts one after another within that budget, with what
    crosses parts in scratch (a folder; default the system's temporary folder;
    docs/memory.md): the same matches."""
    program = parse(pattern)
    if isinstance(trace, (str, os.PathLike)):
        from .parts.inturn import InTurn

        trace = _open_path(trace, memory, scratch, threads, progress)
        if isinstance(trace, InTurn):  # in parts one after another
            with trace as parts:
                return parts.search(program, name=name, limit=limit, threads=threads,
                                    teams=teams, pruning=pruning, progress=progress)
    elif memory is not None or scratch is not None:
        raise ValueError("memory and scratch apply to the search of a path: this trace is in "
                         "memory already")
    if getattr(trace, "is_view", False):  # a view: the whole trace's matches inside it
        return _search_view(trace, program, name, limit, progress, threads, teams, pruning)
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
            raise ValueError("limit must be a positive integer, not %r" % (limit,))
    names = program.patterns()
    if name is not None and name not in names:
        raise PatternError("pattern: no pattern named '%s' (the text defines: %s)"
                           % (name, ", ".join(names)))
    if threads is None:
        threads = trace.threads
    for what, value, low in (("threads", threads, 0), ("teams", teams, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError("%s must be an integer >= %d, not %r" % (what, low, value))
    pattern_name = name if name is not None else names[-1]
    try:
        if trace.part is not None:
            from .parts.search import search as search_parts

            raw, table, here = search_parts(trace, program, name, limit, progress, int(threads),
                                            int(teams), bool(pruning), root)
            m = PartMatches(trace, raw, pattern_name, table, here, root)
        else:
            raw = _core.search(trace.states._core, program, name=name, limit=int(limit or 0),
                               threads=int(threads), progress=progress, teams=int(teams),
                               pruning=bool(pruning))
            m = Matches(trace, raw, pattern_name)
    except TraceError as exc:
        raise _pattern_error(exc) from None
    except Exception as exc:
        from .parts import PartsFailed

        if isinstance(exc, PartsFailed) and str(exc).startswith("pattern:"):
            raise PatternError(str(exc)) from None  # another part's, the same words
        raise
    for message in m.warnings:
        warnings.warn(message, PatternWarning, stacklevel=2)
    return m
