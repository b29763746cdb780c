"""An independent check of the race analysis: small random MPI runs, and the potential
matches computed from the matches-before rules of Vo's chapter 3 written out as an
explicit relation (rules C1 to C5 and C10, closed transitively), without clocks.

A potential match of a wildcard receive r on process i is a send s to i with r's tag that
  - is the first send of its source not taken by a receive posted before r
    (non-overtaking), and not the send r took,
  - and is neither matches-before r nor after it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from mpi_script import Script


@dataclass
class Node:
    kind: str                 # send, recv, post, wait, barrier (any collective)
    proc: int
    name: str                 # the script name of its record
    peer: int = -1            # dst of a send, actual source of a receive
    tag: int = 0
    sync: bool = False
    wild: bool = False
    match: Optional[int] = None   # send <-> receive node (recv or post)
    post: Optional[int] = None    # wait -> its post
    record: Optional[str] = None  # post -> the name of its completion record
    instance: int = -1


@dataclass
class Run:
    trace: object
    nodes: List[Node]
    wildcards: List[str]      # names of the wildcard receive records
    log: List[str] = field(default_factory=list)

    def describe(self) -> str:
        return "\n".join(self.log)


COLLECTIVES = ("MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Scan",
               "MPI_Exscan")
ROOTED = ("MPI_Bcast", "MPI_Reduce")


def waits_for(region, root, member, other) -> bool:
    """Does the collective's end on process `member` wait for the begin on `other`?
    (The shapes of docs/races.md: world ranks are processes here.)"""
    if region == "MPI_Bcast":
        return other == root
    if region == "MPI_Reduce":
        return member == root
    if region == "MPI_Scan":
        return other <= member
    if region == "MPI_Exscan":
        return other < member
    return True


def random_run(rng, path, max_steps=None) -> Run:
    """A random run of 2 to 4 processes: sends (some synchronous, some non-blocking),
    blocking receives, posted receives completed later, collectives of every shape."""
    n = rng.randint(2, 4)
    steps = max_steps or rng.randint(10, 40)
    s = Script(n)
    nodes: List[Node] = []
    log: List[str] = []
    flight: Dict[tuple, List[int]] = {}   # (src, dst, tag) -> send nodes in order
    pending: Dict[int, List[int]] = {p: [] for p in range(n)}   # posted receive nodes
    requests = {}
    barriers = 0

    def take(dst, tag, src=None):
        chans = [k for k, v in flight.items() if v and k[1] == dst and k[2] == tag
                 and (src is None or k[0] == src)]
        if not chans:
            return None
        k = rng.choice(sorted(chans))
        return flight[k].pop(0)

    def add(node):
        nodes.append(node)
        return len(nodes) - 1

    for _ in range(steps):
        p = rng.randrange(n)
        action = rng.random()
        if action < 0.35:                          # a send
            q = rng.choice([x for x in range(n) if x != p])
            tag = rng.randrange(2)
            sync = rng.random() < 0.2 and not pending[q] and not flight.get((p, q, tag))
            if rng.random() < 0.3 and not sync:
                name, req = s.isend(p, q, tag=tag)
                s.wait_send(p, req)
                k = add(Node("send", p, name, q, tag))
                add(Node("wait", p, name + "w"))
                log.append("%s: P%d isend -> P%d tag %d" % (name, p, q, tag))
            else:
                name = s.send(p, q, tag=tag, sync=sync)
                k = add(Node("send", p, name, q, tag, sync=sync))
                log.append("%s: P%d %s -> P%d tag %d" % (name, p, "ssend" if sync else "send",
                                                        q, tag))
            flight.setdefault((p, q, tag), []).append(k)
            if sync:                                # the receiver takes it at once
                flight[(p, q, tag)].pop()
                wild = rng.random() < 0.6
                r = s.recv(q, p, tag=tag)
                rk = add(Node("recv", q, r, p, tag, wild=wild, match=k))
                nodes[k].match = rk
                log.append("%s: P%d recv%s <- P%d tag %d" % (r, q, "(*)" if wild else "", p, tag))
        elif action < 0.55:                         # a blocking receive
            if pending[p]:
                continue
            tag = rng.randrange(2)
            k = take(p, tag)
            if k is None:
                continue
            wild = rng.random() < 0.6
            r = s.recv(p, nodes[k].proc, tag=tag)
            rk = add(Node("recv", p, r, nodes[k].proc, tag, wild=wild, match=k))
            nodes[k].match = rk
            log.append("%s: P%d recv%s <- P%d tag %d" % (r, p, "(*)" if wild else "",
                                                         nodes[k].proc, tag))
        elif action < 0.7:                          # post a receive
            tag = rng.randrange(2)
            name, req = s.irecv(p)
            k = add(Node("post", p, name, -1, tag, wild=rng.random() < 0.6))
            requests[k] = req
            pending[p].append(k)
            log.append("%s: P%d irecv%s tag %d" % (name, p, "(*)" if nodes[k].wild else "", tag))
        elif action < 0.9:                          # complete the oldest posted receive
            if not pending[p]:
                continue
            post = pending[p][0]
            k = take(p, nodes[post].tag)
            if k is None:
                continue
            pending[p].pop(0)
            rec = s.wait_recv(p, requests[post], nodes[k].proc, tag=nodes[post].tag)
            nodes[post].peer = nodes[k].proc
            nodes[post].match = k
            nodes[post].record = rec
            nodes[k].match = post
            add(Node("wait", p, rec, post=post))
            log.append("%s: P%d wait <- P%d (post %s)" % (rec, p, nodes[k].proc,
                                                         nodes[post].name))
        else:                                       # a collective of every process
            region, root = rng.choice(COLLECTIVES), rng.randrange(n)
            name = s.collective(region, root=root if region in ROOTED else None)
            for q in range(n):
                add(Node("barrier", q, name, peer=root if region in ROOTED else -1,
                         instance=barriers, record=region))
            barriers += 1
            log.append("%s: %s root %d" % (name, region, root))
    # posted receives never completed are left out of the analysis: drop them here too
    keep = [k for k, nd in enumerate(nodes) if not (nd.kind == "post" and nd.record is None)]
    remap = {old: new for new, old in enumerate(keep)}
    kept = []
    for old in keep:
        nd = nodes[old]
        nd.match = remap.get(nd.match) if nd.match is not None else None
        nd.post = remap.get(nd.post) if nd.post is not None else None
        kept.append(nd)
    st = s.write(path)
    wildcards = [nd.name if nd.kind == "recv" else nd.record for nd in kept
                 if nd.kind in ("recv", "post") and nd.wild]
    return Run(st, kept, wildcards, log)


def matches_before(nodes: List[Node]) -> List[int]:
    """succ[e]: bitset of the events e matches before."""
    n = len(nodes)
    by_proc: Dict[int, List[int]] = {}
    for k, nd in enumerate(nodes):
        by_proc.setdefault(nd.proc, []).append(k)
    succ = [0] * n
    blocking = {"recv", "wait", "barrier"}
    for seq in by_proc.values():
        for a_i, a in enumerate(seq):
            na = nodes[a]
            for b in seq[a_i + 1:]:
                nb = nodes[b]
                if na.kind in blocking or (na.kind == "send" and na.sync):          # C1
                    succ[a] |= 1 << b
                if na.kind == "send" and nb.kind == "send" and na.peer == nb.peer \
                        and na.tag == nb.tag:                                        # C3
                    succ[a] |= 1 << b
                if na.kind in ("recv", "post") and nb.kind in ("recv", "post") \
                        and na.tag == nb.tag and (na.wild or na.peer == nb.peer):    # C4, C4'
                    succ[a] |= 1 << b
    for k, nd in enumerate(nodes):
        if nd.kind == "wait" and nd.post is not None:                                # C2
            succ[nd.post] |= 1 << k
    sets = []
    for k, nd in enumerate(nodes):
        if nd.kind == "send" and nd.match is not None:
            sets.append(("p2p", k, nd.match))
    barrier_members: Dict[int, List[int]] = {}
    for k, nd in enumerate(nodes):
        if nd.kind == "barrier":
            barrier_members.setdefault(nd.instance, []).append(k)
    while True:
        before = list(succ)
        for m in range(n):                                                           # C6
            bit = 1 << m
            for i in range(n):
                if succ[i] & bit:
                    succ[i] |= succ[m]
        for _, s, r in sets:
            for e1 in range(n):                                                      # C5
                if succ[e1] >> s & 1:
                    succ[e1] |= succ[r]
            if nodes[s].sync:                                                        # C10
                succ[r] |= succ[s]
                succ[s] |= succ[r]
        for members in barrier_members.values():                                    # C5
            for m in members:
                nm = nodes[m]
                sources = [j for j in members if j != m and
                           waits_for(nm.record, nm.peer, nm.proc, nodes[j].proc)]
                for e1 in range(n):
                    if any(succ[e1] >> j & 1 for j in sources):
                        succ[e1] |= succ[m]
        if succ == before:
            return succ


def brute_force_pairs(run: Run) -> set:
    nodes = run.nodes
    succ = matches_before(nodes)
    position = {}
    for k, nd in enumerate(nodes):
        position[k] = sum(1 for j in range(k) if nodes[j].proc == nd.proc)
    out = set()
    for r, nr in enumerate(nodes):
        if nr.kind not in ("recv", "post") or not nr.wild:
            continue
        name = nr.name if nr.kind == "recv" else nr.record
        first = {}
        for s, ns in enumerate(nodes):
            if ns.kind != "send" or ns.peer != nr.proc or ns.tag != nr.tag:
                continue
            taker = ns.match
            if taker is not None and position[taker] < position[r]:
                continue      # taken by a receive posted before r
            if ns.proc not in first:
                first[ns.proc] = s
        for s in first.values():
            if s == nr.match:
                continue      # r's own sender had nothing else for it
            if not (succ[r] >> s & 1) and not (succ[s] >> r & 1):
                out.add((name, nodes[s].name))
    return out
