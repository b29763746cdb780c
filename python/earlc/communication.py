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
