"""A trace window as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev,
offline too), chrome://tracing and speedscope open.

One track per location (pid: its process, tid: the location), grouped under its
process; region instances as complete slices ("X") coloured by category
(computation, mpi_p2p, mpi_collective, mpi_other, openmp), each wait state as a
slice of its own on top of the call that waits (named by the property, category
"wait_state", severity in its arguments; drawn when the call overlaps the window), and messages as flow arrows from the
send to the receive.  Only messages with both ends in the window and on selected
locations are drawn, so every arrow has two ends.

Timestamps are microseconds from the trace start, with as many decimals as the
timer resolution needs; the window's exact ticks are in "otherData".
"""
from __future__ import annotations

import json
import math
import os
from typing import Optional, Sequence

import numpy as np

from ..timeline import DISPLAY_KINDS, Window, display_kinds, window_ticks


def _location_label(loc) -> str:
    if loc.rank >= 0 and loc.thread >= 0:
        return "rank %d thread %d" % (loc.rank, loc.thread)
    return "%s (%d)" % (loc.name or loc.type.lower(), loc.index)


def write_perfetto(trace, path, start: Optional[float] = None, end: Optional[float] = None,
                   locations: Optional[Sequence[int]] = None, report=None,
                   wait_states: bool = True) -> dict:
    """Write the window [start, end] (seconds from the trace start; None: the
    whole trace) of the selected locations (dense indices; None: all) to path.

    Wait states (those whose waiting call overlaps the window) come from report,
    or, when report is None and wait_states is true, from the built-in properties
    evaluated on the window and the events its events point to (the same
    occurrences as the whole analysis, at the cost of the window).  Returns what
    was written: {"slices", "wait_states", "flows", "tracks"}.
    """
    from ..version import __version__

    path = os.fspath(path)
    first, last = window_ticks(trace, start, end)
    win = Window(trace, first, last, locations)
    slices = win.slices()
    messages = win.messages()
    waits = win.wait_states(report) if wait_states else None

    t0 = trace.start_time
    res = trace.timer_resolution
    decimals = min(6, max(0, math.ceil(math.log10(res / 1e6)))) if res > 1e6 else 0
    scale = 1e6 / res

    def ts(ticks: np.ndarray) -> list:
        us = (np.asarray(ticks, dtype=np.int64) - t0) * scale
        return ["%.*f" % (decimals, x) for x in us.tolist()]

    locs = trace.locations
    pid_of = np.array([loc.process.id + 1 for loc in locs], dtype=np.int64)  # 0 is reserved
    tid_of = np.arange(len(locs), dtype=np.int64) + 1
    region_names = trace._region_name_array()
    kinds = display_kinds(trace)
    spare = len(kinds) - 1

    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write('{"displayTimeUnit":"ns","otherData":%s,"traceEvents":[\n' % json.dumps({
            "creator": "earlc %s" % __version__, "trace": trace.path,
            "timer_resolution": res, "window_ticks": [first, last],
            "locations": win.locations.tolist()}))
        lines = []
        seen = set()
        for index in win.locations.tolist():
            loc = locs[index]
            pid = int(pid_of[index])
            if pid not in seen:
                seen.add(pid)
                name = loc.process.name or "process %d" % loc.process.id
                lines.append('{"ph":"M","pid":%d,"name":"process_name","args":{"name":%s}}'
                             % (pid, json.dumps(name)))
                lines.append('{"ph":"M","pid":%d,"name":"process_sort_index",'
                             '"args":{"sort_index":%d}}' % (pid, pid))
            tid = int(tid_of[index])
            lines.append('{"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":%s}}'
                         % (pid, tid, json.dumps(_location_label(loc))))
            lines.append('{"ph":"M","pid":%d,"tid":%d,"name":"thread_sort_index",'
                         '"args":{"sort_index":%d}}' % (pid, tid, tid))
        out = _ArrayWriter(f)
        out.write_rows(lines)

        # regions, outer before inner, then the wait states inside them
        order = np.lexsort((slices.depth, slices.start, slices.location))
        reg = np.minimum(slices.region[order], spare)
        # name and category per region ref, encoded once: a window has few regions
        # but many slices
        head = np.array(['"name":%s,"cat":"%s"}' % (
            json.dumps(region_names[r] if r < len(region_names) and region_names[r] is not None
                       else "?"), DISPLAY_KINDS[kinds[r]]) for r in range(len(kinds))],
            dtype=object)
        names = head[reg].tolist()
        loc = slices.location[order]
        rows = zip(pid_of[loc].tolist(), tid_of[loc].tolist(), ts(slices.start[order]),
                   ts(slices.end[order] - slices.start[order] + t0), names)
        out.write_rows(('{"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s,%s' % r for r in rows))
        n_waits = 0
        if waits is not None and len(waits):
            titles = [json.dumps(t) for t in waits.titles]
            wloc = waits.location
            sev_s = (waits.severity / res).tolist()
            rows = zip(pid_of[wloc].tolist(), tid_of[wloc].tolist(), ts(waits.start),
                       ts(waits.end - waits.start + t0), waits.prop.tolist(),
                       waits.severity.tolist(), sev_s, waits.where.tolist())
            out.write_rows(('{"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s,"name":%s,'
                            '"cat":"wait_state","args":{"property":"%s","severity_ticks":%d,'
                            '"severity_seconds":%r,"event":%d}}'
                            % (p, t, s, d, titles[k], waits.names[k], sv, ss, w)
                            for p, t, s, d, k, sv, ss, w in rows))
            n_waits = len(waits)
        if len(messages):
            rows = zip(messages.send.tolist(), pid_of[messages.src].tolist(),
                       tid_of[messages.src].tolist(), ts(messages.send_time),
                       pid_of[messages.dst].tolist(), tid_of[messages.dst].tolist(),
                       ts(messages.recv_time), messages.bytes.tolist())
            out.write_rows(('{"ph":"s","id":%d,"pid":%d,"tid":%d,"ts":%s,"name":"message",'
                            '"cat":"message","args":{"bytes":%d}},\n'
                            '{"ph":"f","bp":"e","id":%d,"pid":%d,"tid":%d,"ts":%s,'
                            '"name":"message","cat":"message"}'
                            % (i, sp, st, s, b, i, dp, dt, r)
                            for i, sp, st, s, dp, dt, r, b in rows))
        f.write("\n]}\n")
    os.replace(tmp, path)
    return {"slices": len(slices), "wait_states": n_waits, "flows": len(messages),
            "tracks": len(win.locations)}


class _ArrayWriter:
    """Appends JSON objects (given as text) to an open JSON array, in chunks so
    that a big window never sits in memory as one string."""

    def __init__(self, f, chunk: int = 20000):
        self.f, self.chunk, self.empty = f, chunk, True

    def write_rows(self, rows) -> None:
        buf = []
        for r in rows:
            buf.append(r)
            if len(buf) == self.chunk:
                self._flush(buf)
                buf = []
        if buf:
            self._flush(buf)

    def _flush(self, buf) -> None:
        self.f.write(("" if self.empty else ",\n") + ",\n".join(buf))
        self.empty = False
