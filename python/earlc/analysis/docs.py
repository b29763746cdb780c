"""Generate docs/properties.md from the property declarations, so that the
catalog's documentation and its code never disagree.

    python -m earlc.analysis.docs > docs/properties.md     (make docs)
"""
from __future__ import annotations

from .catalog import builtin_properties
from .ranking import measures_of
from .report import _tree_order

HEADER = """# The property catalog

Generated from the declarations in `properties/` by `python -m earlc.analysis.docs`
(`make docs`); do not edit by hand.

Severities are integer ticks of the trace's timer (unit `sec`), counts (`occ`) or bytes,
summed per (call path, location).  A metric's value includes its children's.  Time
counts, on each location, the intervals during which the location itself has a region
open (a worker thread between parallel regions is idle, not in its master's call path),
the thread management of each parallel region on every thread of its team, and, where
the trace records PROGRAM_BEGIN and PROGRAM_END, the rest of the program's run.
Compound events that are no metric (marked *published*) are computed once and shared by
the properties that subscribe to them, as in EXPERT.

Each metric says what it measures: an **inefficiency** (time lost: wait states, idle
threads, thread management), a plain **time** (where the time goes: Time, Computation,
MPI, OpenMP), a **cause** (lost time charged to what caused it: the root causes' delay
costs, a second view of an inefficiency's time, not more of it) or a **quantity** (counts
and bytes).  Only inefficiencies are ranked as the most severe, in one order
for every output (text, JSON `ranking`, HTML, pictures), and drawn red.  Measurement
overhead (buffer flushes) is a plain time: it is the tracer's cost, not the program's.

The time tree is the one Scalasca's reports show in Cube: Time splits into Execution and
the measurement system's Overhead; Execution into Computation (user code and the bodies
of parallel regions and worksharing constructs), MPI and OpenMP (the runtime's own time:
thread management and synchronisation).  Accelerator streams hold no CPU time.  Idle
threads, earlc's own metric, stays outside Time, as Time counts what the locations run.

Hardware counters the trace records with its ENTER and LEAVE events (PAPI and the like)
become one metric each, `hwc_` and the counter's name: the counter's increase while a call
path is the innermost one on a location, as Score-P profiles show it.  Counters sampled on
their own METRIC locations (GPU power, temperature) belong to no call path: they are time
series (`trace.metrics`, docs/model.md), not metrics of this tree.

Root causes (group `root_cause`: the delay costs, the indirect and propagating waits, the
critical path) follow Scalasca's definitions: every wait state happens at a
synchronisation point; the late side's excess time per call path since the two last met is
the delay that caused it (short-term costs); waiting time passed on through other wait
states is traced back to its origin (long-term costs, through point-to-point and MPI
collective wait states, OpenMP barriers and idle threads).  Costs are computed exactly and
rounded to timer ticks once per location, so each location's value is within half a tick
of the exact one.  They are computed when asked for:
`earlc analyze TRACE --properties all` (or `root_cause`, or their names), or
`earlc.analyze(trace, properties=["all"])`; the text report then lists under each wait
state the call paths and locations whose delays cause most of it.

Long-term costs flow backwards: a wait state passes the cost that arrived at its waiting
point on to the delays of its late side and to the waits of the late side since the two
last met.  The order in which wait states are taken is Scalasca's parallel backward
replay: every location walks its own events backwards and takes each wait state it
delayed at its own point there (the late side's event: the send of a Late Sender, the
posting of the receive of a Late Receiver, its event in a collective), and the cost a wait
state reads at its waiting point is complete once the waiting location has walked past
that point, that is once every wait state that location delayed later has added its cost
there.  The rule matters where a waiting point comes before the late side's point in time:
a Late Receiver's send completes (its MPI_Send event, or MPI_Isend's completion inside
MPI_Wait*) before the late receiver posts its receive.  Taking the wait states simply by
their waiting events, latest first, would pass such a Late Receiver's cost on after the
wait states that read it, and lose it: on traces of 3 or more processes that misses most
of the long-term Late Receiver costs and some of the others.  A trace whose wait states
wait for each other in a circle (messages received before they were sent: a violated clock
condition) has no such order; earlc then takes the latest wait state first anyway and says
so in a counted warning, `rootcause_cycle`.

The critical path (`critical_path` and its metrics) is Scalasca's: from the process that
enters MPI_Finalize last back to MPI_Init.  A trace without MPI_Finalize (a trace cut to a
phase of a run) has none, as in Scalasca: the path and its activities and imbalance impact
are 0, and all the time without waiting is off the path (`non_critical_path_activities`);
a trace without MPI_Init has the path without its first stretch.  A counted warning,
`critical_path_incomplete`, names the trace and says which call is missing.  A program
without MPI (OpenMP, serial) has the path of Scalasca's OpenMP analyzer, from the end of the
master thread back to its start.  `critical_path_trace` is earlc's own critical path of the
whole trace, from the end of the thread whose events end last back to the start of the
trace: it needs neither MPI_Init nor MPI_Finalize, and on complete MPI traces it also
counts the time before MPI_Init and after MPI_Finalize.

Metrics that compute Scalasca's value carry Scalasca's metric id (`cube_id` in the JSON
report) and give the values Scalasca 2.6 gives; metrics without one are earlc's own.
Where the definitions differ:
- Messages in Wrong Order follows the paper (section 6.3: an older message of the same
  sender still queued when a message is received) and takes the receives one call
  completes (MPI_Waitall) as one, unordered.  Late Sender, wrong order is Scalasca's: a
  Late Sender whose message was sent after a message the same location receives later
  (the first such later receive tells same or different source).  Scalasca remembers
  only the last 100 Late Senders of a location when it looks for wrong order; earlc
  remembers all, so it can find more on traces with long runs of unmatched Late Senders.
"""


def render() -> str:
    props = builtin_properties()
    metrics = _tree_order([p for p in props if p.metric])
    by_name = {p.name: p for p in props}
    out = [HEADER, "## Metric tree", ""]
    depth = {}
    for p in metrics:
        depth[p.name] = depth[p.parent] + 1 if p.parent in depth else 0
        cube = ", Scalasca `%s`" % p.cube_id if p.cube_id else ""
        what = measures_of(p)
        mark = "**%s**" % what if what == "inefficiency" else what
        out.append("%s- %s (`%s`, %s, %s%s)" % ("  " * depth[p.name], p.title, p.name, p.unit,
                                              mark, cube))
    out += ["", "## Properties", ""]
    for p in metrics + [p for p in props if not p.metric]:
        out.append("### %s (`%s`)" % (p.title, p.name))
        out.append("")
        facts = ["unit: %s" % p.unit, "measures: %s" % measures_of(p)]
        if p.partner:
            facts.append("waits for: the event in column `%s`" % p.partner)
        if p.cube_id:
            facts.append("Scalasca: `%s`" % p.cube_id)
        if p.group:
            facts.append("computed when asked for (group `%s`)" % p.group)
        if p.parent:
            facts.append("parent: %s" % by_name[p.parent].title)
        if p.subscribes:
            facts.append("subscribes to: `%s`" % p.subscribes)
        if p.reads:
            facts.append("reads: %s" % ", ".join("`%s`" % n for n in p.reads))
        if not p.metric:
            facts.append("published compound event, no metric")
        if p.region_class:
            classes = p.region_class if isinstance(p.region_class, str) else ", ".join(p.region_class)
            facts.append("exclusive time of the regions of class: %s" % classes)
        out.append("*" + "; ".join(facts) + "*")
        out.append("")
        if p.description:
            out += [p.description, ""]
        if p.diagnosis:
            out += ["Diagnosis: " + p.diagnosis, ""]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
