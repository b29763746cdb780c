"""Matches and wait states back into the trace: OTF2 markers.

An OTF2 archive may carry a marker file beside its definitions and events: marker
definitions (group, category, severity) and markers (a time span, a scope such as one
location, a text).  Vampir shows them on its timelines; `otf2-marker` lists and edits
them.  `annotate` writes a marker for every match of a pattern and for each of the
worst occurrences of the properties, grouped by pattern or property:

    result = earlc.annotate(trace, out="run1-annotated")            # a copy
    result = earlc.annotate(trace, in_place=True, pattern=text)     # the archive itself
    trace.markers                                                   # read back

The C core writes the file through libotf2's marker writer (csrc/markers); the event
and definition files are never written, and a copy is byte for byte the original
apart from the marker file.  earlc's groups are named "earlc: ..." and an annotation
replaces them (all of them, or with keep=True those it writes again); groups other
tools wrote stay as they were.  docs/workflow.md describes what each marker holds.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

from . import _core
from .readable import event_text, location_text, moment_text, ticks_text

#: the prefix of every marker group earlc writes
GROUP_PREFIX = "earlc: "
SEVERITIES = ("none", "low", "medium", "high")
SCOPES = ("global", "location", "location_group", "system_tree_node", "group", "comm")
#: the most severe occurrences annotated per property, and matches per pattern
DEFAULT_TOP = 20
DEFAULT_MATCHES = 1000


class AnnotateError(_core.Error, ValueError):
    """An annotation that cannot be done as asked: the message says what to change."""


@dataclass(frozen=True)
class Marker:
    """One marker of an archive: `time` and `duration` in ticks (time is absolute, as
    the events'), `group`, `category`, `severity` (none, low, medium, high), `scope`
    (global, location, ...), `scope_ref` (the OTF2 reference of the scope: a
    location's id), `location` (its index for a location scope, else None), `text`."""

    time: int
    duration: int
    group: str
    category: str
    severity: str
    scope: str
    scope_ref: int
    location: Optional[int]
    text: str


class Markers(list):
    """The markers of an archive, in file order (a list of Marker); `trace` is the
    trace they were read for (None when read from a path)."""

    trace = None

    def groups(self) -> Dict[str, int]:
        """Markers per group."""
        out: Dict[str, int] = {}
        for m in self:
            out[m.group] = out.get(m.group, 0) + 1
        return out

    def to_dataframe(self, trace=None):
        """One row per marker: time (seconds from the trace's start, given the trace
        they belong to; else none) and time_ticks, duration (seconds with the trace)
        and duration_ticks, group, category, severity, scope, scope_ref, location,
        text."""
        import pandas as pd

        cols = ["group", "category", "severity", "scope", "scope_ref", "location", "text"]
        df = pd.DataFrame([[getattr(m, c) for c in cols] for m in self], columns=cols)
        ticks = np.array([m.time for m in self], dtype=np.int64)
        length = np.array([m.duration for m in self], dtype=np.int64)
        trace = trace if trace is not None else self.trace
        if trace is not None:
            from .display import duration_columns, time_columns

            front = {**time_columns(trace, ticks), **duration_columns(trace, length, "duration")}
        else:
            front = {"time_ticks": ticks, "duration_ticks": length}
        for k, (name, col) in enumerate(front.items()):
            df.insert(k, name, col)
        return df


def _anchor(trace_or_path) -> str:
    """The archive of a Trace, or a path (its anchor or folder, found by the C core)."""
    return getattr(trace_or_path, "path", None) or os.fspath(trace_or_path)


def read_markers(trace_or_path) -> Markers:
    """The markers of an archive (a Trace, its anchor file NAME.otf2 or the folder that
    holds it); empty when it has no marker file.  Raises earlc.TraceError for an archive
    that cannot be read."""
    defs, raw = _core.read_markers(_anchor(trace_or_path))
    by_id = {}
    trace = trace_or_path if hasattr(trace_or_path, "locations") else None
    if trace is not None:
        by_id = {l.id: l.index for l in trace.locations}
    out = Markers()
    out.trace = trace
    for time, duration, d, scope, ref, text in raw:
        group, category, severity = defs[d] if d >= 0 else ("", "", 0)
        scope_name = SCOPES[scope] if scope < len(SCOPES) else str(scope)
        out.append(Marker(int(time), int(duration), group, category,
                          SEVERITIES[severity] if severity < len(SEVERITIES) else str(severity),
                          scope_name, int(ref),
                          by_id.get(int(ref)) if scope_name == "location" else None, text))
    return out


# -- what to write ----------------------------------------------------------------------

class _Builder:
    """Marker definitions (group, category, severity) made on first use, and markers."""

    def __init__(self):
        self.defs: List[tuple] = []
        self._index: Dict[tuple, int] = {}
        self.markers: List[tuple] = []
        self.groups: Dict[str, int] = {}

    def add(self, group, category, severity, time, duration, scope, ref, text) -> None:
        key = (group, category, severity)
        d = self._index.get(key)
        if d is None:
            d = self._index[key] = len(self.defs)
            self.defs.append(key)
        self.markers.append((int(time), int(duration), d, scope, int(ref), text))
        self.groups[group] = self.groups.get(group, 0) + 1


#: columns of an occurrence that name the event it waited for (or that waited on it)
_PARTNER_COLUMNS = ("send", "recv", "release", "acquire")


def _partner(trace, inst, k: int, where: int) -> str:
    ev = trace.events
    loc = int(ev.location[where])
    for c in _PARTNER_COLUMNS:
        if c in inst.columns:
            e = int(inst.columns[c][k])
            if e >= 0 and int(ev.location[e]) != loc:
                return "partner %s" % event_text(trace, e)
    if "instance" in inst.columns:  # a collective: the member that entered last
        members = np.asarray(trace.states.collective(int(inst.columns["instance"][k])).members,
                             dtype=np.int64)
        if len(members):
            enters = trace.states.enterptr_of(members)
            enters = enters[enters >= 0]
            if len(enters):
                last = int(enters[np.argmax(ev.time[enters])])
                if int(ev.location[last]) != loc:
                    return "last to enter: %s" % event_text(trace, last)
    return ""


def _severity_class(value: int, largest: int) -> int:
    """HIGH from half the largest annotated occurrence up, MEDIUM from a tenth."""
    if largest <= 0:
        return 1
    share = value / largest
    return 3 if share >= 0.5 else 2 if share >= 0.1 else 1


def property_markers(b: _Builder, trace, report, names: Optional[Sequence[str]] = None,
                     top: int = DEFAULT_TOP) -> None:
    """A marker for each of the `top` most severe occurrences of every detected time
    property with a value (or of `names`): its waiting span, on its location."""
    from .timeline import Window

    window = Window(trace, trace.start_time, trace.start_time + trace.duration_ticks)
    for p in report.properties:
        if names is not None and p.name not in names:
            continue
        if p.unit != "sec" or p.region_class is not None or p.name not in report.worst:
            continue
        inst = report.worst[p.name]
        if inst is None or not len(inst) or report.total(p.name) <= 0:
            continue
        n = min(top, len(inst))
        largest = int(inst.severity[:n].max())
        group = GROUP_PREFIX + p.title
        for k in range(n):
            where = int(inst.where[k])
            sev = int(inst.severity[k])
            span = window.waiting_spans(p.name, inst.where[k:k + 1], inst.severity[k:k + 1])
            if span is None:
                start, end = int(trace.events.time[where]), int(trace.events.time[where])
            else:
                start, end = int(span[2][0]), int(span[3][0])
            loc = int(trace.events.location[where])
            path = report.callpath_of(where)
            text = "%s: %s lost on %s in %s" % (p.title, ticks_text(trace, sev),
                                               location_text(trace, loc), path or "-")
            partner = _partner(trace, inst, k, where)
            if partner:
                text += ", " + partner
            text += " (event #%d, %s)" % (where, p.name)
            b.add(group, path or p.name, _severity_class(sev, largest), start, end - start, 1,
                  trace.locations[loc].id, text)


def match_markers(b: _Builder, trace, matches) -> None:
    """A marker for each match of a pattern: from its earliest to its latest event, on
    their location when they share one, global otherwise."""
    from .display import time_seconds
    from .events import KIND_NAMES
    from .readable import seconds_text

    ev = trace.events
    group = GROUP_PREFIX + "pattern " + matches.pattern
    rows = matches.events.astype(np.int64)
    if not len(rows):
        return
    # the columns of every match at once; texts per location made once
    time = ev.time[rows].view(np.int64)
    loc = ev.location[rows].astype(np.int64)
    kind = ev.kind[rows]
    first, last = time.min(axis=1), time.max(axis=1)
    one = (loc == loc[:, :1]).all(axis=1)
    where = {l: location_text(trace, l) for l in np.unique(loc).tolist()}
    ids = trace.locations
    seconds = time_seconds(trace, time)  # from the trace's start
    for k in range(len(rows)):
        parts = ["%s=#%d %s on %s at %s" % (c, rows[k, j], KIND_NAMES[kind[k, j]],
                                            where[int(loc[k, j])], seconds_text(seconds[k, j]))
                 for j, c in enumerate(matches.columns)]
        scope, ref = (1, ids[int(loc[k, 0])].id) if one[k] else (0, 0)
        b.add(group, matches.pattern, 0, int(first[k]), int(last[k] - first[k]), scope, ref,
              "match %d of %s: %s" % (k + 1, matches.pattern, ", ".join(parts)))


# -- writing --------------------------------------------------------------------------

@dataclass
class AnnotateResult:
    """What annotate wrote: the archive (`path`, its anchor file), markers per group it
    wrote, the markers of other groups kept, and those of earlier earlc groups
    replaced."""

    path: str
    groups: Dict[str, int]
    kept: int
    replaced: int

    @property
    def written(self) -> int:
        return sum(self.groups.values())


def _archive_files(anchor: str) -> List[str]:
    """The archive's own files and folder beside its anchor: NAME.otf2, NAME.def,
    NAME.marker, NAME/ and any other NAME.* (nothing else of the folder)."""
    folder, base = os.path.split(os.path.abspath(anchor))
    stem = base[:-len(".otf2")] if base.endswith(".otf2") else base
    out = []
    for entry in sorted(os.listdir(folder)):
        if entry == stem or entry.startswith(stem + "."):
            out.append(os.path.join(folder, entry))
    return out


def check_output(out, anchor: str) -> str:
    """The folder a copy goes to: it must not exist, and its parent must."""
    out = os.fspath(out)
    if os.path.exists(out):
        raise AnnotateError("%s exists already: give a new folder for the annotated copy, or "
                            "annotate the archive itself with --in-place" % out)
    parent = os.path.dirname(os.path.abspath(out)) or "."
    if not os.path.isdir(parent):
        raise AnnotateError("folder %s does not exist; create it first" % parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise AnnotateError("cannot create %s: %s is not writable" % (out, parent))
    if os.path.abspath(out) == os.path.dirname(os.path.abspath(anchor)):
        raise AnnotateError("%s is the archive's own folder: use --in-place" % out)
    return out


def copy_archive(anchor: str, out: str) -> str:
    """Copy the archive's files (byte for byte) into the new folder out; returns the
    anchor of the copy.  A failed copy leaves nothing at out."""
    out = os.fspath(out)
    tmp = out.rstrip("/") + ".tmp-earlc"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        os.makedirs(tmp)
        for path in _archive_files(anchor):
            target = os.path.join(tmp, os.path.basename(path))
            if os.path.isdir(path):
                shutil.copytree(path, target)
            else:
                shutil.copy2(path, target)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return os.path.join(out, os.path.basename(anchor))


def annotate(trace, out=None, in_place: bool = False, pattern=None, pattern_name=None,
             properties=None, top: int = DEFAULT_TOP, limit: int = DEFAULT_MATCHES,
             keep: bool = False, report=None, progress=None) -> AnnotateResult:
    """Write markers for the matches of `pattern` (a pattern text, or a list of them)
    and the `top` worst occurrences of `properties` (names; None: every detected time
    property with a value, unless only a pattern is given) into a copy of the archive
    at `out` (a folder that must not exist) or, with in_place, into the archive
    itself.  `report` reuses an analysis of the trace.  Returns an AnnotateResult;
    raises AnnotateError for impossible requests and earlc.PatternError for a bad
    pattern, before anything is written."""
    from . import open as open_trace
    from .search import search

    if in_place == (out is not None):
        raise AnnotateError("give either a folder for the annotated copy (out) or in_place, "
                            "not %s" % ("both" if in_place else "neither"))
    if isinstance(trace, (str, os.PathLike)):
        trace = open_trace(trace, progress=progress)
    view = trace if getattr(trace, "is_view", False) else None  # a view: its occurrences
    base = view.trace if view is not None else trace
    anchor = trace.path
    if out is not None:
        out = check_output(out, anchor)
    elif not os.access(os.path.dirname(os.path.abspath(anchor)), os.W_OK):
        raise AnnotateError("cannot write the marker file of %s: its folder is not writable "
                            "(write an annotated copy instead)" % anchor)
    if top < 1 or limit < 1:
        raise AnnotateError("top and limit must be at least 1")
    texts = [] if pattern is None else [pattern] if isinstance(pattern, str) else list(pattern)
    b = _Builder()
    for text in texts:
        m = search(trace, text, name=pattern_name, limit=limit, progress=progress)
        match_markers(b, base, m)
    if properties is not None or not texts or report is not None:
        if isinstance(properties, str):
            properties = [properties]
        if report is None:
            from .analysis import analyze

            report = analyze(trace, properties=properties, top=top, progress=progress)
        property_markers(b, base, report, names=properties, top=top)
    if out is not None:
        anchor = copy_archive(anchor, out)
    defs, old = _core.read_markers(anchor)
    ours = sorted({g for g, _, _ in defs if g.startswith(GROUP_PREFIX)})
    drop = [g for g in ours if not keep or g in b.groups]
    replaced = sum(1 for m in old if m[2] >= 0 and defs[m[2]][0] in drop)
    kept = _core.update_markers(anchor, drop, b.defs, b.markers)
    return AnnotateResult(anchor, dict(b.groups), kept, replaced)


__all__ = ["annotate", "read_markers", "Marker", "Markers", "AnnotateResult", "AnnotateError",
           "GROUP_PREFIX"]
