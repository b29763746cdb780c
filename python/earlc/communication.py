"""Who sent how much to whom: the communication matrix and the message-size
histogram of a trace's point-to-point messages, from the message table (each
send record names its receiver, so no matching is needed).
"""
from __future__ import annotations

import numpy as np

from .events import KINDS


def _sends(trace):
    """(sender location, receiver location, bytes) of every send record."""
    m = trace.events.messages
    kinds = trace.events.kind[m.event]
    is_send = (kinds == KINDS["MPI_SEND"]) | (kinds == KINDS["MPI_ISEND"])
    is_send &= m.peer >= 0
    if getattr(trace, "is_view", False):  # a view: its send records (earlc.view)
        is_send[is_send] &= trace.contains(m.event[is_send].astype(np.int64))
    src = trace.events.location[m.event[is_send]].astype(np.int64)
    return src, m.peer[is_send].astype(np.int64), m.bytes[is_send].astype(np.int64)


def comm_matrix(trace, output: str = "bytes", by: str = "location") -> np.ndarray:
    """matrix[sender, receiver]: bytes (output="bytes") or messages ("count") sent
    point to point, between locations (dense indices) or MPI ranks (by="rank")."""
    if output not in ("bytes", "count"):
        raise ValueError("output must be 'bytes' or 'count', not %r" % output)
    if by not in ("location", "rank"):
        raise ValueError("by must be 'location' or 'rank', not %r" % by)
    src, dst, size = _sends(trace)
    if by == "rank":
        ranks = np.array([l.rank for l in trace.locations], dtype=np.int64)
        n = int(ranks.max(initial=-1)) + 1
        src, dst = ranks[src], ranks[dst]
        ok = (src >= 0) & (dst >= 0)
        src, dst, size = src[ok], dst[ok], size[ok]
    else:
        n = len(trace.locations)
    key = src * n + dst
    if output == "count":
        return np.bincount(key, minlength=n * n).astype(np.int64).reshape(n, n)
    # bytes summed as integers (a float's 53 bits could round a large cell)
    out = np.zeros(n * n, dtype=np.int64)
    if len(key):
        order = np.argsort(key, kind="stable")
        cells, first = np.unique(key[order], return_index=True)
        out[cells] = np.add.reduceat(size[order], first)
    return out.reshape(n, n)


def message_histogram(trace, bins=20):
    """(counts, edges) of the sizes in bytes of all point-to-point messages, as
    numpy.histogram gives them (bins: a number or the edges)."""
    _, _, size = _sends(trace)
    return np.histogram(size, bins=bins)


def _receives(trace):
    """(receiver location, sender location, bytes, time) of every receive record whose
    sender is known (MPI_RECV, and MPI_IRECV completions)."""
    m = trace.events.messages
    kinds = trace.events.kind[m.event]
    is_recv = (kinds == KINDS["MPI_RECV"]) | (kinds == KINDS["MPI_IRECV"])
    is_recv &= m.peer >= 0
    if getattr(trace, "is_view", False):
        is_recv[is_recv] &= trace.contains(m.event[is_recv].astype(np.int64))
    ev = m.event[is_recv].astype(np.int64)
    return (trace.events.location[ev].astype(np.int64), m.peer[is_recv].astype(np.int64),
            m.bytes[is_recv].astype(np.int64), trace.events.time[ev].view(np.int64))


def comm_over_time(trace, output: str = "bytes", message: str = "send", bins: int = 50):
    """(values, edges): the bytes (output="bytes") or number ("count") of point-to-point
    messages sent (message="send", at the send record) or received ("receive", at the
    receive record) in each of `bins` equal time bins over the trace.  edges are
    bins + 1 absolute ticks (integers; bin k is [edges[k], edges[k+1]), the last one
    closed); values are int64."""
    if output not in ("bytes", "count"):
        raise ValueError("output must be 'bytes' or 'count', not %r" % output)
    if message not in ("send", "receive"):
        raise ValueError("message must be 'send' or 'receive', not %r" % message)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError("bins must be a whole number of at least 1, not %r" % (bins,))
    t0, span = trace.start_time, max(trace.duration_ticks, 1)
    if getattr(trace, "is_view", False):  # the view's window
        t0, span = trace.first, max(trace.last - trace.first, 1)
    edges = t0 + (np.arange(bins + 1, dtype=np.int64) * span) // bins
    if message == "send":
        m = trace.events.messages
        kinds = trace.events.kind[m.event]
        is_send = ((kinds == KINDS["MPI_SEND"]) | (kinds == KINDS["MPI_ISEND"])) & (m.peer >= 0)
        if getattr(trace, "is_view", False):
            is_send[is_send] &= trace.contains(m.event[is_send].astype(np.int64))
        time = trace.events.time[m.event[is_send].astype(np.int64)].view(np.int64)
        size = m.bytes[is_send].astype(np.int64)
    else:
        _, _, size, time = _receives(trace)
    which = np.clip(np.searchsorted(edges, time, side="right") - 1, 0, bins - 1)
    values = np.bincount(which, weights=None if output == "count" else size.astype(np.float64),
                         minlength=bins)
    return values.astype(np.int64), edges


def comm_by_process(trace, output: str = "bytes", by: str = "rank"):
    """Per process (MPI rank, or location with by="location"): the bytes (or number of
    messages, output="count") it sent and received point to point, as a DataFrame
    with columns sent and received, indexed by rank (location)."""
    import pandas as pd

    matrix = comm_matrix(trace, output=output, by=by)
    index = pd.Index(np.arange(len(matrix)), name=by)
    return pd.DataFrame({"sent": matrix.sum(axis=1), "received": matrix.sum(axis=0)},
                        index=index)
