"""A Report as a hatchet GraphFrame, so that Hatchet and Thicket users can query,
filter and compare earlc's results with their other profiles.

The graph is earlc's call tree (one hatchet Node per call path, its frame named
by the region); the DataFrame has one row per (call path, location), zeros
included, indexed by ("node", "rank", "thread") as hatchet's multi-process
readers do (see hatchet_ids): hatchet's own views (`gf.tree()`, which looks up
every node at one rank and thread) expect every node on every location, so the
frame is dense rather than sparse.  Its columns are "name", "location"
(earlc's index) and two columns per metric (seconds for time metrics, counts
and bytes as integers): NAME, the call path's own (exclusive) value as earlc
charges it, and "NAME (inc)", with its subtree's.

hatchet is an optional dependency: `pip install llnl-hatchet`.
"""
from __future__ import annotations

import numpy as np

from ..optional import require
from ..profiles import depth_first_order, frame_names


def require_hatchet():
    return require("hatchet", "report.to_hatchet()", "llnl-hatchet")


def hatchet_ids(trace):
    """(rank, thread) of every location, unique as hatchet's index needs: the MPI
    rank (the process number for a process without one) and the thread number;
    locations that are no CPU thread (accelerator streams, metric locations) count
    -1, -2, ... within their process."""
    rank = np.empty(len(trace.locations), dtype=np.int64)
    thread = np.empty(len(trace.locations), dtype=np.int64)
    others = {}
    for loc in trace.locations:
        rank[loc.index] = loc.rank if loc.rank >= 0 else loc.process.id
        if loc.thread >= 0:
            thread[loc.index] = loc.thread
        else:
            others[loc.process.id] = others.get(loc.process.id, 0) - 1
            thread[loc.index] = others[loc.process.id]
    return rank, thread


def graphframe(report):
    """The GraphFrame of report (see the module doc)."""
    require_hatchet()
    import pandas as pd
    from hatchet import GraphFrame
    from hatchet.frame import Frame
    from hatchet.graph import Graph
    from hatchet.node import Node

    trace = report.trace
    parents = np.asarray(report.callpath_parents, dtype=np.int64)
    names = frame_names(report.callpaths, parents)
    order = depth_first_order(parents)
    nodes = [None] * len(parents)
    roots = []
    for c in order.tolist():  # parents before their children
        parent = nodes[parents[c]] if parents[c] >= 0 else None
        node = Node(Frame({"name": names[c], "type": "function"}), parent)
        if parent is None:
            roots.append(node)
        else:
            parent.add_child(node)
        nodes[c] = node
    graph = Graph(roots)
    graph.enumerate_traverse()

    n_loc = len(trace.locations)
    n_cells = len(parents) * n_loc

    def own_and_inclusive(name):
        """Dense (call path x location) arrays of one metric: its own values, and
        with each call path's subtree added (one sweep, children first)."""
        c, l, v = report.cells(name)
        own = np.zeros(n_cells, dtype=np.int64)
        own[c * n_loc + l] = v
        inc = own.reshape(len(parents), n_loc).copy()
        for k in order[::-1].tolist():  # children before their parents
            if parents[k] >= 0:
                inc[parents[k]] += inc[k]
        return own, inc.ravel()

    # every (call path, location) cell, zeros too: hatchet's views look each node
    # up at one (rank, thread) and fail on a missing row (row k is call path
    # k // n_loc on location k % n_loc, the layout of own_and_inclusive's arrays)
    cnode = np.repeat(np.arange(len(parents), dtype=np.int64), n_loc)
    loc = np.tile(np.arange(n_loc, dtype=np.int64), len(parents))
    rank_of, thread_of = hatchet_ids(trace)
    data = {"node": [nodes[k] for k in cnode.tolist()], "rank": rank_of[loc],
            "thread": thread_of[loc], "name": [nodes[k].frame["name"] for k in cnode.tolist()],
            "location": loc}
    metrics, inclusive = [], []
    for p in report.properties:
        own, inc = own_and_inclusive(p.name)
        if p.unit == "sec":
            own, inc = own / report.resolution, inc / report.resolution
        data[p.name] = own
        data[p.name + " (inc)"] = inc
        metrics.append(p.name)
        inclusive.append(p.name + " (inc)")
    df = pd.DataFrame(data).set_index(["node", "rank", "thread"]).sort_index()
    default = "time" if "time" in metrics else (metrics[0] if metrics else "time")
    return GraphFrame(graph, df, exc_metrics=metrics, inc_metrics=inclusive,
                      default_metric=default,
                      metadata={"earlc_trace": trace.path,
                                "timer_resolution": trace.timer_resolution})
