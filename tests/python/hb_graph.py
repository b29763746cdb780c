"""An explicit happened-before graph of a trace, built in Python from the rules of
docs/patterns.md, independently of the C replay: the reference the vector
timestamps (and the pattern search) are checked against.

reach[e] is a Python int used as a bit set: bit a is set when a --> e.
"""
from collections import defaultdict, deque

import numpy as np

import earlc

KIND = {name: k for k, name in enumerate(earlc.KIND_NAMES)}
ONE_TO_ALL = {1, 4, 5}       # BCAST, SCATTER, SCATTERV
ALL_TO_ONE = {2, 3, 12}      # GATHER, GATHERV, REDUCE
SCAN, EXSCAN = 14, 15


def edges(trace):
    ev, st = trace.events, trace.states
    kind, loc = ev.kind, ev.location
    out = defaultdict(set)
    per_loc = [ev.of_location(l) for l in range(len(trace.locations))]
    for ids in per_loc:
        for a, b in zip(ids[:-1], ids[1:]):
            out[int(a)].add(int(b))
    sendptr = st.sendptr
    for r in np.flatnonzero((kind == KIND["MPI_RECV"]) | (kind == KIND["MPI_IRECV"])):
        if sendptr[r] >= 0:
            out[int(sendptr[r])].add(int(r))

    def begin_of(m, omp):
        if omp:
            return int(st.enterptr[m])
        ids = per_loc[loc[m]]
        p = int(np.searchsorted(ids, m))
        while p > 0:
            p -= 1
            k = kind[ids[p]]
            if k == KIND["MPI_COLLECTIVE_BEGIN"]:
                return int(ids[p])
            if k == KIND["MPI_COLLECTIVE_END"]:
                break
        return -1

    comms = {c.id: c for c in trace.communicators}
    start = st.coll_member_start
    for k in range(len(st.coll_type)):
        members = [int(m) for m in st.coll_members[start[k]:start[k + 1]]]
        omp = st.coll_type[k] != 0
        op = int(st.coll_op[k])
        root = int(st.coll_root[k])
        comm = comms.get(int(st.coll_comm[k]))
        rank = {l: r for r, l in enumerate(comm.locations)} if comm and not omp else {}
        for m in members:
            b = begin_of(m, omp)
            if b < 0:
                continue
            for e in members:
                if omp or op not in ONE_TO_ALL | ALL_TO_ONE | {SCAN, EXSCAN}:
                    ok = True
                elif op in ONE_TO_ALL:
                    ok = loc[b] == root
                elif op in ALL_TO_ONE:
                    ok = loc[e] == root
                else:
                    rb, re = rank.get(int(loc[b]), -1), rank.get(int(loc[e]), -1)
                    ok = rb >= 0 and re >= 0 and (re >= rb if op == SCAN else re > rb)
                if ok and b != e:
                    out[b].add(e)
    if np.any((kind == KIND["OMP_FORK"]) | (kind == KIND["THREAD_FORK"])):
        forkptr = st.forkptr
        team_events = defaultdict(list)
        for e in np.flatnonzero(forkptr >= 0):
            out[int(forkptr[e])].add(int(e))
            team_events[int(forkptr[e])].append(int(e))
        for ids in per_loc:
            open_forks = []
            for e in ids:
                if kind[e] in (KIND["OMP_FORK"], KIND["THREAD_FORK"]):
                    open_forks.append(int(e))
                elif kind[e] in (KIND["OMP_JOIN"], KIND["THREAD_JOIN"]) and open_forks:
                    f = open_forks.pop()
                    for x in team_events[f]:
                        if x != e:
                            out[x].add(int(e))
    lockptr = st.lockptr
    releases = {KIND["OMP_RELEASE_LOCK"], KIND["THREAD_RELEASE_LOCK"]}
    for a in np.flatnonzero((kind == KIND["OMP_ACQUIRE_LOCK"]) | (kind == KIND["THREAD_ACQUIRE_LOCK"])):
        p = int(lockptr[a])
        if p >= 0 and kind[p] in releases:
            out[p].add(int(a))
    return out


def reachability(trace):
    """reach[e]: bit set of the events that happened before e (a DAG is assumed)."""
    n = len(trace)
    out = edges(trace)
    indeg = [0] * n
    for a, bs in out.items():
        for b in bs:
            indeg[b] += 1
    reach = [0] * n
    todo = deque(e for e in range(n) if indeg[e] == 0)
    seen = 0
    while todo:
        a = todo.popleft()
        seen += 1
        bit = reach[a] | (1 << a)
        for b in out.get(a, ()):
            reach[b] |= bit
            indeg[b] -= 1
            if indeg[b] == 0:
                todo.append(b)
    assert seen == n, "the rules gave a cycle"
    return reach


def ancestors(trace, targets, out=None):
    """For each target event, the set of events that happened before it (a reverse
    walk of the explicit graph; for traces too large for reachability())."""
    out = edges(trace) if out is None else out
    back = defaultdict(list)
    for a, bs in out.items():
        for b in bs:
            back[b].append(a)
    result = {}
    for t in targets:
        seen, todo = set(), [int(t)]
        while todo:
            x = todo.pop()
            for p in back.get(x, ()):
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        result[int(t)] = seen
    return result
