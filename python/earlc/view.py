"""Views of a trace: `trace.filter(start=, end=, locations=, regions=)`, as pipit's
filters, returning a TraceView that every analysis accepts.

    v = trace.filter(start=0.5, end=0.6, locations=[0, 1], regions=["solve"])
    len(v), v.ids                        # the event ids in the view
    earlc.analyze(v)                     # the analysis of the view (below)
    v.search(pattern); v.flat_profile(); v.comm_matrix(); v.logical_time()
    v.filter(locations=[0])              # views narrow further

An event is in the view when it happened in the window (its timestamp between start
and end, seconds from the trace's start, both included), on one of the locations,
and, given regions, inside an instance of one of them (its call path holds the
region; the region's own ENTER and LEAVE included).  A view holds no copy of the
trace: it is the trace, a window, a location set and a call path filter.

What each analysis gives for a view (docs/python.md, "Views"):

- `earlc.analyze(view)`: the whole analysis restricted to the view, cell by cell
  (analysis/view.py): call-tree times clipped to the window, occurrences counted
  whole where the event they are charged to is in the view; views that split a trace
  add up to its whole analysis.  The root causes need the whole trace.
- `search`: the matches of the whole trace whose every event is in the view.
- profiles: the same, clipped to the view; `time_profile` bins the window.
- communication: the messages whose send record (for receives: receive record) is
  in the view.
- `logical_time`: the steps of the whole trace (an order needs all of it), rows of
  the view's events; `races`: the wildcard receives in the view, their alternatives
  from the whole trace; `detect_iterations`: the iterations inside the window.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .trace import ProfileMethods


#: attributes a view keeps for itself (caches made for the view, not the trace)
_OWN = {"_view_calltree", "_clocks", "_states"}


class TraceView(ProfileMethods):
    """A time window, a set of locations and (optionally) regions of a Trace.  It
    answers what a Trace answers about its definitions (path, locations, regions,
    timer_resolution, ...); the analyses restrict themselves to its events."""

    is_view = True

    def __init__(self, trace, start: Optional[float] = None, end: Optional[float] = None,
                 locations: Optional[Sequence] = None, regions: Optional[Sequence[str]] = None,
                 _ticks=None):
        from .timeline import selected_locations, window_ticks

        self.trace = trace
        if _ticks is not None:
            self.first, self.last = _ticks
        else:
            self.first, self.last = window_ticks(trace, start, end)
        #: the selected locations' indices, ascending (`locations` are the trace's
        #: Location definitions, as for a Trace)
        self.location_indices = selected_locations(trace, locations)
        if isinstance(regions, str):
            regions = [regions]
        #: the region filters: an event must be inside one region of each
        self.region_filters = [tuple(regions)] if regions is not None else []
        if regions is not None:
            known = {r.name for r in trace.regions}
            missing = [r for r in regions if r not in known]
            if missing:
                raise ValueError("no region named %s in %s" % (
                    ", ".join(repr(r) for r in missing), trace.path))
        time = trace.events.time
        self.lo = int(np.searchsorted(time, np.uint64(self.first), side="left"))
        self.hi = int(np.searchsorted(time, np.uint64(self.last), side="right"))
        self._selected = np.zeros(len(trace.locations), dtype=bool)
        self._selected[self.location_indices] = True
        self._ids = None
        self._cnode_mask = None
        self._view_calltree = None

    @property
    def calltree(self):
        """The whole trace's call tree with the rows of the view (analysis/view.py)."""
        if getattr(self, "_view_calltree", None) is None:
            from .analysis.view import ViewCallTree

            self._view_calltree = ViewCallTree(self, self.trace.calltree)
        return self._view_calltree

    # -- what a Trace answers about itself --------------------------------------------
    def __getattr__(self, name):
        # definitions and facts of the trace (path, locations, regions, events,
        # states, timer_resolution, its helpers, ...); analyses are methods of the
        # view below.  What a view caches for itself is never the trace's.
        if name.startswith("__") or name in _OWN:
            raise AttributeError(name)
        return getattr(self.trace, name)

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        res = self.trace.timer_resolution
        return "<earlc.TraceView of %s: %d events, %.9g-%.9g s, %d locations%s>" % (
            self.trace.path, len(self), (self.first - self.trace.start_time) / res,
            (self.last - self.trace.start_time) / res, len(self.location_indices),
            ", in %s" % " and ".join("/".join(f) for f in self.region_filters)
            if self.region_filters else "")

    @property
    def filter_regions(self):
        """The region names of the filters (None without one); `regions` are the
        trace's region definitions, as for a Trace."""
        if not self.region_filters:
            return None
        return tuple(dict.fromkeys(r for f in self.region_filters for r in f))

    @property
    def start(self) -> float:
        """Seconds from the trace's start to the window's start."""
        return (self.first - self.trace.start_time) / self.trace.timer_resolution

    @property
    def end(self) -> float:
        return (self.last - self.trace.start_time) / self.trace.timer_resolution

    @property
    def duration_ticks(self) -> int:
        return self.last - self.first

    @property
    def duration(self) -> float:
        return self.duration_ticks / self.trace.timer_resolution

    # -- membership ---------------------------------------------------------------------
    def base_calltree(self):
        """The whole trace's call tree (built once, shared with its profiles)."""
        from .profiles import _calltree

        return _calltree(self.trace)

    def cnode_mask(self, tree=None):
        """Per call path: whether it is inside one of the view's regions (None when the
        view has no region filter)."""
        if not self.region_filters:
            return None
        if self._cnode_mask is None:
            from .profiles import depth_first_order

            tree = tree or self.base_calltree()
            parent = np.asarray(tree.parent, dtype=np.int64)
            order = depth_first_order(parent).tolist()
            result = np.ones(len(parent), dtype=bool)
            for names in self.region_filters:
                refs = np.array([r.id for r in self.trace.regions if r.name in names],
                                dtype=np.int64)
                mask = np.isin(np.asarray(tree.region, dtype=np.int64), refs)
                for c in order:  # parents first: inside a region means below it too
                    if parent[c] >= 0 and mask[parent[c]]:
                        mask[c] = True
                result &= mask
            self._cnode_mask = result
        return self._cnode_mask

    def contains(self, ids) -> np.ndarray:
        """Whether each event id is in the view."""
        ids = np.asarray(ids, dtype=np.int64)
        ev = self.trace.events
        inside = (ids >= self.lo) & (ids < self.hi)
        inside[inside] &= self._selected[ev.location[ids[inside]]]
        if self.region_filters and inside.any():
            cn = self.base_calltree().event_cnode[ids[inside]].astype(np.int64)
            mask = self.cnode_mask()
            inside[inside] = (cn >= 0) & mask[np.maximum(cn, 0)]
        return inside

    def mask(self) -> np.ndarray:
        """One bool per event of the trace: in the view."""
        m = np.zeros(len(self.trace), dtype=bool)
        m[self.ids] = True
        return m

    @property
    def ids(self) -> np.ndarray:
        """The event ids in the view, ascending (int64)."""
        if self._ids is None:
            rng = np.arange(self.lo, self.hi, dtype=np.int64)
            self._ids = rng[self.contains(rng)] if len(rng) else rng
        return self._ids

    def filter(self, start: Optional[float] = None, end: Optional[float] = None,
               locations: Optional[Sequence] = None, regions: Optional[Sequence[str]] = None):
        """A narrower view: the events in this view and in the one the arguments
        describe (window, locations and region filters of both)."""
        other = TraceView(self.trace, start, end, locations, regions)
        view = TraceView(self.trace,
                         locations=np.intersect1d(self.location_indices,
                                                  other.location_indices).tolist(),
                         _ticks=(max(self.first, other.first), min(self.last, other.last)))
        view.region_filters = self.region_filters + other.region_filters
        return view

    # -- analyses -------------------------------------------------------------------------
    def analyze(self, **options):
        """earlc.analyze(view): the analysis of the view (see the module doc)."""
        from .analysis import analyze

        return analyze(self, **options)

    def search(self, pattern, name=None, limit=None, progress=None, threads=None, teams=1):
        """The matches of the whole trace whose events all lie in the view."""
        from .search import search

        return search(self, pattern, name=name, limit=limit, progress=progress,
                      threads=threads, teams=teams)

    def logical_time(self, progress=None):
        """The whole trace's logical steps, the rows of the view's events."""
        from .logical import LogicalTime

        return LogicalTime(self.trace, ids=self.ids, progress=progress)

    def detect_iterations(self, region=None, location: Optional[int] = None,
                          max_period: int = 64):
        """The iterations on a location of the view (default: its first) that lie
        inside the window."""
        from .phases import detect_iterations

        loc = int(self.location_indices[0]) if location is None else int(location)
        if not self._selected[loc]:
            raise ValueError("location %d is not in the view" % loc)
        it = detect_iterations(self.trace, region=region, location=loc, max_period=max_period)
        keep = (it.start >= self.first) & (it.end <= self.last)
        return type(it)(self.trace, loc, it.phase, it.first_event[keep], it.last_event[keep],
                        it.region)

    def to_perfetto(self, path, report=None, wait_states: bool = True) -> dict:
        """The view's window and locations as trace-event JSON for Perfetto."""
        return self.trace.to_perfetto(path, start=self.start, end=self.end,
                                      locations=self.location_indices.tolist(), report=report,
                                      wait_states=wait_states)

    def plot_timeline(self, path=None, **options):
        """The timeline picture of the view's window and locations."""
        from .plot import plot_timeline

        return plot_timeline(self.trace, path, start=self.start, end=self.end,
                             locations=self.location_indices.tolist(), **options)


def is_view(obj) -> bool:
    return getattr(obj, "is_view", False) is True


__all__ = ["TraceView", "is_view"]
