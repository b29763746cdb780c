"""The workload generator (earlc.synth): every kind writes a trace that opens without
warnings, whose event counts are expected.json's, that is physically consistent, and
whose expected severities agree with an independent computation from the opened trace's
events (late sender, late receiver, wait at barrier / NxN, late broadcast, early reduce,
early scan, OpenMP barriers, lock contention, exclusive time).  Plus hand-computed tiny
cases, bad parameters and an unwritable folder."""
import json
import os
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

import earlc
from conftest import ROOT

KIND = {name: i for i, name in enumerate(earlc.KIND_NAMES)}


# ---------------------------------------------------------------------------
# An independent reading of the trace: region instances, messages, collectives
# ---------------------------------------------------------------------------

class Replay:
    """Walks every location of an opened trace with its own region stack."""

    def __init__(self, trace, threads_per_rank):
        self.trace = trace
        ev = trace.events
        names = trace._region_name_array()
        self.T = threads_per_rank
        self.time = np.asarray(ev.time)
        self.kind = np.asarray(ev.kind)
        self.peer = np.asarray(ev.peer)
        self.tag = np.asarray(ev.tag)
        self.comm = np.asarray(ev.communicator)
        coll = ev.collectives
        self.root = dict(zip(np.asarray(coll.event).tolist(), np.asarray(coll.root).tolist()))
        self.call = {}        # event id -> (path, enter, leave, loc) of its enclosing region
        self.instances = []   # (path, loc, enter, leave, name)
        self.by_loc = {}      # loc -> list of event ids in order
        self.fork_path = {}   # rank -> path of master at the last THREAD_FORK
        n_loc = len(trace.locations)
        for loc in range(n_loc):
            ids = np.asarray(ev.of_location(loc))
            self.by_loc[loc] = ids
        # masters first so that workers can inherit the path at the fork
        order = sorted(range(n_loc), key=lambda l: (l % self.T != 0, l))
        base_at_fork = defaultdict(list)
        for loc in order:
            ids = self.by_loc[loc]
            stack = []  # [name, enter, pending event ids]
            forks = base_at_fork[loc // self.T]
            n_team = 0
            for i in ids.tolist():
                k = self.kind[i]
                if k == KIND["THREAD_FORK"]:
                    forks.append("/".join(s[0] for s in stack))
                if k == KIND["THREAD_TEAM_BEGIN"] and loc % self.T:
                    base = forks[n_team]
                    n_team += 1
                    stack = [[p, None, []] for p in base.split("/")] if base else []
                if k == KIND["ENTER"]:
                    stack.append([names[ev.region[i]], int(self.time[i]), []])
                elif k == KIND["LEAVE"]:
                    name, enter, pending = stack[-1]
                    path = "/".join(s[0] for s in stack)
                    leave = int(self.time[i])
                    for p in pending:
                        self.call[p] = (path, enter, leave, loc)
                    self.instances.append((path, loc, enter, leave, name))
                    stack.pop()
                elif stack:
                    stack[-1][2].append(i)
        self.names = names

    # messages: FIFO pairing per (source loc, dest loc, communicator, tag)
    def messages(self):
        sends, recvs = defaultdict(list), defaultdict(list)
        for loc, ids in self.by_loc.items():
            for i in ids.tolist():
                k = self.kind[i]
                if k in (KIND["MPI_SEND"], KIND["MPI_ISEND"]):
                    sends[(loc, int(self.peer[i]), int(self.comm[i]), int(self.tag[i]))].append(i)
                elif k in (KIND["MPI_RECV"], KIND["MPI_IRECV"]):
                    recvs[(int(self.peer[i]), loc, int(self.comm[i]), int(self.tag[i]))].append(i)
        pairs = []
        assert sends.keys() == recvs.keys()
        for key in sends:
            assert len(sends[key]) == len(recvs[key])
            pairs += list(zip(sends[key], recvs[key]))
        return pairs

    # collective instances: the k-th COLLECTIVE_END of every member of a communicator
    def collectives(self):
        per = defaultdict(lambda: defaultdict(list))
        for loc, ids in self.by_loc.items():
            for i in ids.tolist():
                if self.kind[i] == KIND["MPI_COLLECTIVE_END"]:
                    per[int(self.comm[i])][loc].append(i)
        out = []
        for comm, members in per.items():
            n = {len(v) for v in members.values()}
            assert len(n) == 1
            for k in range(n.pop()):
                out.append([members[loc][k] for loc in sorted(members)])
        return out


def add(d, key, value):
    if value > 0:
        d[key] = d.get(key, 0) + value


def expected_map(exp, prop):
    return {(e["callpath"], e["location"]): e["severity"]
            for e in exp["properties"][prop]["entries"] if e["severity"]}


def independent(trace, exp):
    """The catalog's rules of docs/generator.md, computed from the opened trace."""
    rp = Replay(trace, exp["threads_per_rank"])
    got = defaultdict(dict)
    # late sender (per receive call: max over its messages) and late receiver
    late, msgs, late_msg, calls = {}, [], {}, defaultdict(list)
    for s, r in rp.messages():
        spath, senter, sleave, sloc = rp.call[s]
        rpath, renter, rleave, rloc = rp.call[r]
        key = (rpath, rloc, renter)
        m = (sloc, rloc, int(rp.comm[s]), senter, renter, s, r)
        msgs.append(m)
        calls[key + (rleave,)].append(m)
        if senter - renter > late.get(key, 0):
            late[key] = senter - renter
            late_msg[key] = m
        # physical consistency: the receive ends after its send began
        assert rp.time[r] >= rp.time[s] and rleave > senter
        if spath.endswith("MPI_Send") and exp["generator"]["options"]["bytes"] > \
                exp["generator"]["options"]["eager_limit"]:
            assert sleave >= renter or renter < senter  # a synchronous send waits for its receive
            if renter > senter and sleave >= renter:
                add(got["late_receiver"], (spath, sloc), renter - senter)
    for (path, loc, renter), v in late.items():
        add(got["late_sender"], (path, loc), v)
        m = late_msg[(path, loc, renter)]
        # wrong order (Scalasca): a later call on this location receives a message
        # sent before this one; the first such receive tells the source
        later = sorted(p[6] for p in msgs if p[1] == loc and renter < p[4] and
                       int(rp.time[p[5]]) < int(rp.time[m[5]]))
        if later:
            first = next(p for p in msgs if p[6] == later[0])
            add(got["late_sender_wrong_order_same_source" if first[0] == m[0] else
                    "late_sender_wrong_order_different_source"], (path, loc), v)
    for (path, loc, renter, rleave), ms in calls.items():
        if any(p[0] == m[0] and p[1] == loc and p[2] == m[2] and p[3] < m[3] and
               renter < p[4] for m in ms for p in msgs):
            add(got["messages_in_wrong_order"], (path, loc), rleave - renter)
    # collectives
    fam = {"MPI_Barrier": "barrier", "MPI_Allreduce": "nxn", "MPI_Alltoall": "nxn",
           "MPI_Bcast": "one2all", "MPI_Scatter": "one2all", "MPI_Reduce": "all2one",
           "MPI_Gather": "all2one", "MPI_Scan": "scan"}
    for inst in rp.collectives():
        calls = [rp.call[i] for i in inst]
        name = calls[0][0].rsplit("/", 1)[1]
        enters = [c[1] for c in calls]
        leaves = [c[2] for c in calls]
        f = fam[name]
        if f in ("barrier", "nxn"):
            assert min(leaves) >= max(enters)
            for (path, e, l, loc) in calls:
                add(got["wait_at_barrier" if f == "barrier" else "wait_at_nxn"], (path, loc),
                    max(enters) - e)
                add(got["barrier_completion" if f == "barrier" else "nxn_completion"],
                    (path, loc), l - min(leaves))
        elif f == "one2all":
            root = rp.root[inst[0]]
            root_enter = [c[1] for c in calls if c[3] == root][0]
            for (path, e, l, loc) in calls:
                assert l >= root_enter
                if loc != root:
                    add(got["late_broadcast"], (path, loc), root_enter - e)
        elif f == "all2one":
            root = rp.root[inst[0]]
            for (path, e, l, loc) in calls:
                if loc == root:
                    assert l >= max(enters)
                    others = [c[1] for c in calls if c[3] != root]
                    if others:
                        add(got["early_reduce"], (path, loc), max(others) - e)
        else:  # scan: members in rank order = location order within the communicator
            for n, (path, e, l, loc) in enumerate(calls):
                assert l >= max(enters[:n + 1])
                if n:
                    add(got["early_scan"], (path, loc), max(enters[:n]) - e)
    # OpenMP team barriers: the k-th barrier instance of each thread of a rank
    T = rp.T
    per_rank = defaultdict(lambda: defaultdict(list))
    for (path, loc, enter, leave, name) in rp.instances:
        if name in ("!$omp barrier", "!$omp implicit barrier"):
            per_rank[loc // T][loc].append((enter, leave, path, name))
    for rank, threads in per_rank.items():
        for k in range(len(threads[rank * T])):
            group = [(loc, threads[loc][k]) for loc in sorted(threads)]
            m = max(g[1][0] for g in group)
            for loc, (enter, leave, path, name) in group:
                assert leave >= m
                prop = "omp_barrier_wait_explicit" if name == "!$omp barrier" \
                    else "omp_barrier_wait_implicit"
                add(got[prop], (path, loc), m - enter)
    # lock contention: acquisitions per (rank, lock) in time order
    thr = trace.events.threading
    ids = dict(zip(np.asarray(thr.event).tolist(), np.asarray(thr.id).tolist()))
    acq = defaultdict(list)
    for loc, evs in rp.by_loc.items():
        for i in evs.tolist():
            if rp.kind[i] in (KIND["THREAD_ACQUIRE_LOCK"], KIND["THREAD_RELEASE_LOCK"]):
                acq[(loc // T, ids[i])].append((int(rp.time[i]), rp.kind[i] ==
                                                KIND["THREAD_ACQUIRE_LOCK"], i, loc))
    for key, evs in acq.items():
        evs.sort(key=lambda x: (x[0], not x[1]))  # a release before an acquire at the same tick
        last_release = None
        for t, is_acq, i, loc in evs:
            if is_acq:
                path, enter, _, _ = rp.call[i]
                if last_release is not None:
                    assert t > last_release  # the lock is free when acquired
                    add(got["lock_contention"], (path, loc), last_release - enter)
                    child = "critical" if path.endswith("!$omp critical") else "api"
                    add(got["lock_contention_" + child], (path, loc), last_release - enter)
            else:
                last_release = t
    # exclusive time per (call path, location)
    child = defaultdict(int)
    for (path, loc, enter, leave, name) in rp.instances:
        parent = path.rsplit("/", 1)[0] if "/" in path else None
        if parent is not None:
            child[(parent, loc)] += leave - enter
    for (path, loc, enter, leave, name) in rp.instances:
        got["time"][(path, loc)] = got["time"].get((path, loc), 0) + leave - enter
    for key, c in child.items():
        if key in got["time"]:
            got["time"][key] -= c
    # thread management (Scalasca's rule): every thread of a team, the team's fork to
    # its enter of the parallel region and its leave to the join, in the parallel
    # region's time; on the master it was the forking path's own time
    T = exp["threads_per_rank"]
    teams = {}
    for loc in range(0, len(rp.by_loc), T):
        ids = rp.by_loc[loc].tolist()
        forks = [int(rp.time[i]) for i in ids if rp.kind[i] == KIND["THREAD_FORK"]]
        joins = [int(rp.time[i]) for i in ids if rp.kind[i] == KIND["THREAD_JOIN"]]
        teams[loc // T] = list(zip(forks, joins))
    seen = defaultdict(int)
    for (path, loc, enter, leave, name) in sorted(rp.instances, key=lambda x: (x[1], x[2])):
        if name != "!$omp parallel":
            continue
        fork, join = teams[loc // T][seen[loc]]
        seen[loc] += 1
        cost = (enter - fork) + (join - leave)
        got["time"][(path, loc)] = got["time"].get((path, loc), 0) + cost
        if loc % T == 0 and "/" in path:
            parent = (path.rsplit("/", 1)[0], loc)
            got["time"][parent] = got["time"].get(parent, 0) - cost
    got["time"] = {k: v for k, v in got["time"].items() if v}
    return got, rp


CHECKED = ["late_sender", "late_sender_wrong_order_same_source",
           "late_sender_wrong_order_different_source", "messages_in_wrong_order", "late_receiver", "wait_at_barrier", "barrier_completion", "wait_at_nxn",
           "nxn_completion", "late_broadcast", "early_reduce", "early_scan",
           "omp_barrier_wait_explicit", "omp_barrier_wait_implicit", "lock_contention",
           "lock_contention_critical", "lock_contention_api", "time"]


def check_trace(path):
    trace = earlc.open(path)
    with open(os.path.join(path, "expected.json")) as f:
        exp = json.load(f)
    assert exp["schema"] == "earlc-expected/1"
    assert not trace.warnings, trace.warnings
    counts = {k: v for k, v in trace.kind_counts().items() if v}
    assert counts == exp["events"]["by_kind"]
    assert len(trace) == exp["events"]["total"]
    for l in exp["locations"]:
        assert len(trace.events.of_location(l["location"])) == l["events"]
    # per-location time never goes back
    t = np.asarray(trace.events.time)
    for loc in range(len(trace.locations)):
        ids = np.asarray(trace.events.of_location(loc))
        assert np.all(np.diff(t[ids].astype(np.int64)) >= 0)
    got, _ = independent(trace, exp)
    for prop in CHECKED:
        assert got.get(prop, {}) == expected_map(exp, prop), prop
    # totals are the sums of the entries
    for prop, v in exp["properties"].items():
        assert v["total"] == sum(e["severity"] for e in v["entries"])
        assert v["total"] == sum(v["by_location"])
        assert v["total"] == sum(v["by_callpath"].values())
    return trace, exp


# ---------------------------------------------------------------------------
# Every kind
# ---------------------------------------------------------------------------

CASES = [
    ("ping-pong", dict(ranks=3, iterations=6, delay=300, delay_rank=1)),
    ("ping-pong", dict(ranks=2, iterations=6, wrong_order=True)),
    ("ping-pong", dict(ranks=2, iterations=6, bytes=1 << 20, delay=200, delay_rank=1)),
    ("ring", dict(ranks=4, iterations=5, delay=400, delay_rank=2)),
    ("ring", dict(ranks=5, iterations=5, bytes=1 << 20)),
    ("halo", dict(ranks=6, iterations=4, delay=250, delay_rank=4)),
    ("master-worker", dict(ranks=5, iterations=5, imbalance=100)),
    ("master-worker", dict(ranks=5, iterations=5, imbalance=100, any_source=False)),
    ("collectives", dict(ranks=6, iterations=3, split=2, root=3, sub_root=1, delay=300,
                         delay_rank=5)),
    ("collectives", dict(ranks=3, iterations=2, threads=2, split=1)),
    ("omp", dict(ranks=1, threads=4, iterations=4, delay=200, delay_rank=0, delay_thread=3)),
    ("hybrid", dict(ranks=4, threads=3, iterations=3, delay=300, delay_rank=1, delay_thread=2)),
]


@pytest.mark.parametrize("kind,options", CASES, ids=["%s-%d" % (k, i) for i, (k, _) in
                                                     enumerate(CASES)])
def test_kind(tmp_path, kind, options):
    out = tmp_path / "t"
    r = earlc.synth(kind, out, seed=7, **options)
    assert r.events > 0 and (out / "traces.otf2").exists() and (out / "expected.json").exists()
    trace, exp = check_trace(str(out))
    assert r.events == exp["events"]["total"] and r.by_kind == exp["events"]["by_kind"]
    assert exp["generator"]["kind"] == kind


def test_wrong_order_variants(tmp_path):
    r = earlc.synth("ping-pong", tmp_path / "a", ranks=2, iterations=4, wrong_order=True)
    p = r.expected()["properties"]
    assert p["late_sender_wrong_order_same_source"]["total"] > 0
    assert p["messages_in_wrong_order"]["instances"] == 4
    check_trace(str(tmp_path / "a"))
    r = earlc.synth("master-worker", tmp_path / "b", ranks=6, iterations=6, imbalance=100,
                    any_source=False)
    p = r.expected()["properties"]
    assert p["late_sender_wrong_order_different_source"]["total"] > 0
    # the children never exceed their parent, and an instance counts once
    ls = p["late_sender"]
    assert (p["late_sender_wrong_order_same_source"]["total"]
            + p["late_sender_wrong_order_different_source"]["total"]) <= ls["total"]
    r = earlc.synth("master-worker", tmp_path / "c", ranks=6, iterations=6, imbalance=100)
    p = r.expected()["properties"]  # MPI_ANY_SOURCE takes whoever is ready: never wrong order
    assert p["late_sender_wrong_order_different_source"]["total"] == 0
    assert p["late_sender"]["total"] > 0


def test_any_source_takes_arrival_order(tmp_path):
    earlc.synth("master-worker", tmp_path / "m", ranks=5, iterations=3, imbalance=100, seed=3)
    trace = earlc.open(tmp_path / "m")
    ev = trace.events
    master = np.asarray(ev.of_location(0))
    recvs = [i for i in master.tolist() if ev.kind[i] == KIND["MPI_RECV"]]
    assert len({int(ev.peer[i]) for i in recvs[:4]}) == 4
    # each round, the master receives in the order the workers sent
    sends = {}
    for loc in range(1, 5):
        s = [i for i in np.asarray(ev.of_location(loc)).tolist() if ev.kind[i] == KIND["MPI_SEND"]]
        sends[loc] = s
    for rnd in range(3):
        order = [int(ev.peer[i]) for i in recvs[4 * rnd:4 * rnd + 4]]
        times = [int(ev.time[sends[p][rnd]]) for p in order]
        assert times == sorted(times)


# ---------------------------------------------------------------------------
# Hand-computed tiny cases (docs/generator.md's worked example)
# ---------------------------------------------------------------------------

def test_pingpong_by_hand(tmp_path):
    r = earlc.synth("ping-pong", tmp_path / "p", ranks=2, iterations=1, compute=100, imbalance=0,
                    latency=10, delay=50, delay_rank=0)
    exp = r.expected()
    ls = expected_map(exp, "late_sender")
    # rank 0 computes 150 and sends (buffered: no time) at 150; rank 1 entered MPI_Recv at
    # 100: 50 ticks late.  Rank 1 receives at 150 + 10 = 160, leaves 161 and sends at 161;
    # rank 0 entered MPI_Recv at 150: 11.
    assert ls == {("main/iteration/pingpong/MPI_Recv", 1): 50,
                  ("main/iteration/pingpong/MPI_Recv", 0): 11}
    assert exp["properties"]["late_sender"]["instances"] == 2
    # rank 0 receives at max(151, 161 + 10) = 171 and leaves main at 172
    assert exp["duration"] == 172
    t = expected_map(exp, "time")
    assert t[("main/iteration/compute", 0)] == 150 and t[("main/iteration/compute", 1)] == 100
    check_trace(str(tmp_path / "p"))


def test_barrier_and_broadcast_by_hand(tmp_path):
    r = earlc.synth("collectives", tmp_path / "c", ranks=3, iterations=1, compute=100,
                    imbalance=0, delay=30, delay_rank=2, root=2, split=1)
    exp = r.expected()
    # every compute phase of rank 2 lasts 130 instead of 100: it enters MPI_Barrier 30 late
    wb = expected_map(exp, "wait_at_barrier")
    assert wb == {("main/iteration/collectives_world/MPI_Barrier", 0): 30,
                  ("main/iteration/collectives_world/MPI_Barrier", 1): 30}
    # the root (rank 2) of MPI_Bcast is late by its 30 extra ticks of compute, give or take
    # the 0..2 ticks of exit skew of the MPI_Alltoall before it
    lb = expected_map(exp, "late_broadcast")
    assert set(lb) == {("main/iteration/collectives_world/MPI_Bcast", 0),
                       ("main/iteration/collectives_world/MPI_Bcast", 1),
                       ("main/iteration/collectives_world/MPI_Scatter", 0),
                       ("main/iteration/collectives_world/MPI_Scatter", 1)}
    assert all(28 <= v <= 32 for v in lb.values())
    check_trace(str(tmp_path / "c"))


def test_lock_contention_by_hand(tmp_path):
    r = earlc.synth("omp", tmp_path / "o", ranks=1, threads=2, iterations=1, compute=0,
                    imbalance=0, hold=100, lock_rounds=1)
    exp = r.expected()
    lc = exp["properties"]["lock_contention"]
    # two threads want the critical section, then the lock, within hold ticks of each
    # other (random start offsets): a waiter waits at most for one hold (+2 for the lock
    # calls around it)
    assert 1 <= lc["instances"] <= 2 and 0 < lc["total"] <= 2 * 102
    check_trace(str(tmp_path / "o"))


def test_determinism(tmp_path):
    a = earlc.synth("hybrid", tmp_path / "a", ranks=2, threads=2, iterations=2, seed=5)
    b = earlc.synth("hybrid", tmp_path / "b", ranks=2, threads=2, iterations=2, seed=5)
    ea, eb = a.expected(), b.expected()
    assert ea == eb


def test_events_target(tmp_path):
    r = earlc.synth("ring", tmp_path / "r", ranks=4, events=20000)
    assert 20000 <= r.events < 20000 + 100
    assert r.expected()["events"]["total"] == r.events


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind,options,words", [
    ("ring", dict(ranks=0), "ranks must be at least 1"),
    ("ring", dict(ranks=1), "at least 2 ranks"),
    ("omp", dict(threads=0), "threads must be at least 1"),
    ("collectives", dict(ranks=4, root=4), "root 4 is outside MPI_COMM_WORLD"),
    ("collectives", dict(ranks=4, split=2, sub_root=2), "sub_root 2 is outside"),
    ("ring", dict(delay=-5, delay_rank=0), "breaks causality"),
    ("omp", dict(delay=5, delay_rank=0, delay_thread=4), "delay_thread 4"),
    ("ring", dict(latency=-1), "breaks causality"),
    ("ring", dict(delay_rank=9), "delay_rank 9"),
    ("ring", dict(delay=100), "needs delay_rank"),
    ("halo", dict(ranks=6, px=4), "process grid"),
    ("ping-pong", dict(wrong_order=True, bytes=1 << 20), "deadlocks"),
    ("warp-drive", dict(), "unknown kind"),
    ("ring", dict(colour=3), "unknown option"),
])
def test_bad_parameters(tmp_path, kind, options, words):
    out = tmp_path / "bad"
    with pytest.raises(earlc.TraceError) as e:
        earlc.synth(kind, out, **options)
    assert words in str(e.value)
    assert not out.exists()
    assert os.listdir(tmp_path) == []


def test_unwritable_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        with pytest.raises(earlc.TraceError):
            earlc.synth("ring", ro / "t", iterations=2)
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o700)


def test_folder_that_cannot_be_made(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(earlc.TraceError):
        earlc.synth("ring", tmp_path / "file" / "t", iterations=2)
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_existing_archive_needs_overwrite(tmp_path):
    earlc.synth("ring", tmp_path / "r", iterations=1)
    with pytest.raises(earlc.TraceError):
        earlc.synth("ring", tmp_path / "r", iterations=1)
    r = earlc.synth("ring", tmp_path / "r", iterations=2, overwrite=True)
    assert r.expected()["iterations"] == 2


def test_cli(tmp_path):
    out = tmp_path / "cli"
    p = subprocess.run([sys.executable, "-m", "earlc", "synth", "ring", "-o", str(out),
                        "--ranks", "3", "--iterations", "2", "--delay", "100",
                        "--delay-rank", "1"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "events" in p.stdout and "late_sender" in p.stdout
    assert (out / "expected.json").exists()
    p = subprocess.run([sys.executable, "-m", "earlc", "synth", "ring", "-o", str(tmp_path / "x"),
                        "--ranks", "0"], capture_output=True, text=True)
    assert p.returncode == 2 and "ranks must be at least 1" in p.stderr
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------
# The examples checked into traces/
# ---------------------------------------------------------------------------

TRACES = os.path.join(os.path.dirname(__file__), "..", "..", "traces")
EXAMPLES = ["ring-late-sender", "pingpong-wrong-order", "collectives", "omp-locks", "hybrid"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_bundled_examples(tmp_path, name):
    path = os.path.join(TRACES, name)
    trace, exp = check_trace(path)
    # regenerating with the recorded options gives the same expected values
    opts = dict(exp["generator"]["options"])
    for k in ("px", "py"):
        if not opts[k]:
            del opts[k]
    r = earlc.synth(exp["generator"]["kind"], tmp_path / "again", **opts)
    assert r.expected() == exp


def test_progress_and_interrupt(tmp_path):
    seen = []
    r = earlc.synth("ring", tmp_path / "p", ranks=4, events=600000,
                    progress=lambda phase, done, total: seen.append((phase, done, total)))
    assert seen and all(p == "synth" and t == 600000 for p, _, t in seen)
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)
    assert r.events >= 600000

    def stop(phase, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        earlc.synth("ring", tmp_path / "stopped", ranks=4, events=600000, progress=stop)
    assert sorted(os.listdir(tmp_path)) == ["p"]


def test_sigterm_leaves_nothing_as_ctrl_c_does(tmp_path):
    """`earlc synth` ended by SIGTERM (kill, a batch system) removes its half-written
    archive, as Ctrl-C does, and exits with 143."""
    import signal
    import subprocess
    import sys
    import time

    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.Popen([sys.executable, "-m", "earlc", "synth", "ring", "-o",
                          str(tmp_path / "t"), "--events", "2000000000"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not [f for f in os.listdir(tmp_path) if f.startswith("t.tmp-")]:
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.02)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert err == "earlc: terminated; nothing was written to %s\n" % (tmp_path / "t")
    assert os.listdir(tmp_path) == []


def test_a_trace_the_disk_cannot_hold_is_refused_first(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    from earlc.synth import estimate

    e = estimate("ring", ranks=4, events=10 ** 11)
    assert 10 ** 11 <= e.events < 10 ** 11 + 1000
    assert 4 * 10 ** 11 < e.bytes < 4 * 10 ** 12  # 6 to 10 bytes an event
    small = estimate("ring", ranks=4, iterations=300)
    r = earlc.synth("ring", tmp_path / "r", ranks=4, iterations=300)
    written = sum(f.stat().st_size for f in (tmp_path / "r").rglob("*") if f.is_file())
    assert small.events == r.events and 0.5 < small.bytes / written < 2
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10 ** 12, 0, 10 ** 9))
    with pytest.raises(earlc.TraceError, match=r"would take about .* GB .* than the 1.0 GB free"):
        earlc.synth("ring", tmp_path / "big", events=10 ** 9)
    assert sorted(os.listdir(tmp_path)) == ["r"]
    earlc.synth("ring", tmp_path / "fits", events=10 ** 5)  # 1 MB: fits


def test_the_command_refuses_what_the_disk_cannot_hold(tmp_path):
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-m", "earlc", "synth", "ring", "-o", str(tmp_path / "t"),
                        "--events", str(10 ** 17)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "would take about" in p.stderr and "free in %s" % tmp_path in p.stderr
    assert os.listdir(tmp_path) == []
