"""Where the locations of an incomplete trace stopped.

A trace recorded from a run that hung and was ended, that aborted or lost a
process to a signal marks the locations whose record ends early (the
`location_incomplete` warning, docs/record.md).  For such a trace this module
says, for every location, the call it was in when its record ended, the call
path of that call and since when it was there; locations stopped at the same
call path form one group, as STAT groups the stacks of a hung job, so that
a hang reads as "ranks 0-2 in MPI_Recv, rank 3 in MPI_Barrier".  When the
recorder could say where in the program the innermost call was made (the
`earlc::call_sites` location property), that place is part of the group's
key and of its line: "ranks 0-2 in MPI_Recv from main (prog.c:31)".

The open regions of a location are those ENTERs that no later LEAVE closes:
with depth[i] the nesting depth after event i, the ENTER at i is still open
when no later event brings the depth below depth[i].
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np

from ..display import time_fields
from ..events import KINDS

CALL_SITES = "earlc::call_sites"  # location properties written by `earlc record`
RUN_ENDED = "earlc::run_ended"
FINISHED = "(finished)"             # a whole record: it left every region
OUTSIDE = "(outside recorded calls)"  # ended early, but in none of the recorded regions


def _open_enters(kinds: np.ndarray) -> np.ndarray:
    """Positions (in this location's own order) of the ENTERs still open at
    its end, outermost first."""
    step = np.zeros(len(kinds), dtype=np.int64)
    step[kinds == KINDS["ENTER"]] = 1
    step[kinds == KINDS["LEAVE"]] = -1
    depth = np.cumsum(step)
    if not len(depth):
        return np.empty(0, dtype=np.int64)
    lowest_after = np.minimum.accumulate(depth[::-1])[::-1]
    return np.flatnonzero((step == 1) & (lowest_after >= depth))


def _ranks_text(ranks: List[int]) -> str:
    """'rank 3' or 'ranks 0-2,5'."""
    ranks = sorted(set(ranks))
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(str(ranks[i]) if i == j else "%d-%d" % (ranks[i], ranks[j]))
        i = j + 1
    return ("rank " if len(ranks) == 1 else "ranks ") + ",".join(parts)


def _innermost_site(sites: Optional[str], call: str) -> Optional[str]:
    """Where the innermost open call was made, from the call-sites property
    ("MPI_Recv from main (prog.c:31)"; several calls separated by "; ")."""
    if not sites:
        return None
    last = sites.split("; ")[-1]
    name, sep, place = last.partition(" from ")
    return place if sep and name == call else None


def stop_report(trace, callpath_of: Optional[Callable[[int], str]] = None) -> Optional[dict]:
    """Where every location stopped, or None when no location's record ends
    early.  callpath_of(event) names an ENTER's call path (the analysis's call
    tree); by default the open regions' names joined by '/'."""
    if not any(loc.incomplete is not None for loc in trace.locations):
        return None
    return group_stops(trace, location_stops(trace, callpath_of,
                                             [loc.index for loc in trace.locations]))


def location_stops(trace, callpath_of, locations) -> list:
    """Where each of these locations (dense indices) stopped: one entry each,
    as stop_report's "locations" lists them."""
    reasons = {loc.index: loc.incomplete for loc in trace.locations if loc.incomplete is not None}
    ev = trace.events
    out = []
    for index in locations:
        loc = trace.locations[int(index)]
        ids = ev.of_location(loc.index)
        open_ids = ids[_open_enters(ev.kind[ids])] if len(ids) else ids
        site = None
        if len(open_ids):
            innermost = int(open_ids[-1])
            names = [trace.regions[int(ev.region_of(e))].name for e in open_ids]
            path = callpath_of(innermost) if callpath_of else "/".join(names)
            since = int(ev.time[innermost])
            call = names[-1]
            site = _innermost_site(loc.properties.get(CALL_SITES), call)
        else:
            path, call = (OUTSIDE if loc.index in reasons else FINISHED), None
            since = int(ev.time[ids[-1]]) if len(ids) and loc.index in reasons else None
        last = int(ev.time[ids[-1]]) if len(ids) else None
        ended = loc.properties.get(RUN_ENDED)
        ended = int(ended) if ended and ended.isdigit() else None
        out.append({
            "location": loc.index, "name": str(loc), "rank": loc.rank,
            "incomplete": loc.index in reasons, "reason": reasons.get(loc.index),
            "call": call, "callpath": path, "call_site": site,
            **time_fields(trace, since, "since"), **time_fields(trace, last, "last_event"),
            **time_fields(trace, ended, "run_ended")})
    return out


def group_stops(trace, locations: list) -> dict:
    """stop_report's dict from the entries of every location, in location order
    (trace: for the times)."""
    groups: Dict[tuple, dict] = {}
    for s in locations:
        g = groups.setdefault((s["callpath"], s["call_site"]), {
            "callpath": s["callpath"], "call": s["call"], "call_site": s["call_site"],
            "locations": [], "ranks": [], "reasons": []})
        g["locations"].append(s["location"])
        if s["rank"] >= 0:
            g["ranks"].append(s["rank"])
        if s["reason"] and s["reason"] not in g["reasons"]:
            g["reasons"].append(s["reason"])
        if s["run_ended_ticks"] is not None:
            g.update(time_fields(trace, max(g.get("run_ended_ticks", 0), s["run_ended_ticks"]),
                                 "run_ended"))
        if s["since_ticks"] is not None:
            since = s["since_ticks"]
            g.update(time_fields(trace, min(g.get("since_first_ticks", since), since),
                                 "since_first"))
            g.update(time_fields(trace, max(g.get("since_last_ticks", since), since),
                                 "since_last"))
    # the largest group first, finished locations last
    ordered = sorted(groups.values(), key=lambda g: (g["callpath"] == FINISHED, -len(g["locations"]),
                                                     g["callpath"]))
    return {"incomplete": sum(1 for s in locations if s["incomplete"]), "groups": ordered,
            "locations": locations}


def format_stop_report(trace, stop: dict) -> str:
    """The text of `earlc analyze` for an incomplete trace."""
    lines = ["Where the locations stopped (%d of %d records end early):"
             % (stop["incomplete"], len(stop["locations"]))]
    for g in stop["groups"]:
        who = (_ranks_text(g["ranks"]) if len(g["ranks"]) == len(g["locations"])
               else "%d locations" % len(g["locations"]))
        if g["callpath"] == FINISHED:
            lines.append("  %-14s finished" % who)
            continue
        if "since_first_ticks" not in g:
            lines.append("  %-14s %s, nothing recorded" % (who, g["callpath"]))
            continue
        first, last = g["since_first"], g["since_last"]
        since = "%.6f s" % first if first == last else "%.6f-%.6f s" % (first, last)
        if "run_ended_ticks" in g:
            since += " until the run was ended at %.3f s" % g["run_ended"]
        if g["callpath"] == OUTSIDE:
            lines.append("  %-14s %s; its last record at %s" % (who, g["callpath"], since))
        else:
            where = g["callpath"] + (" from " + g["call_site"] if g["call_site"] else "")
            lines.append("  %-14s in %s since %s" % (who, where, since))
    reasons = sorted({r for g in stop["groups"] for r in g["reasons"]})
    for r in reasons:
        lines.append("  why: %s" % r)
    return "\n".join(lines)
