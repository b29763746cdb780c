"""Message races (earlc.races): the scenarios of Vo's dissertation with their answers,
generated master-worker runs whose answer is known by construction, a brute-force
check of the matches-before rules on small random runs, the wildcard choices, the
other findings and bad input."""
import json
import random

import numpy as np
import pytest

import earlc
from mpi_script import Script, lamport_pairs, pairs
from races_brute import brute_force_pairs, random_run


# -- figures 2.1 / 2.2: what vector clocks tell apart ----------------------------------


def test_figure_2_1_vector_clocks(tmp_path):
    # a: P0 -> P1 (b); c: P1 -> P2 (d); e: P0 -> P2 (f).  e [2,0,0] and c [1,2,0] are
    # concurrent; so is e with P2's first receive d, which could have taken e.
    s = Script(3)
    s.send(0, 1, name="a")
    s.recv(1, 0, name="b")
    s.send(1, 2, name="c")
    s.send(0, 2, name="e")
    s.recv(2, 1, name="d")
    s.recv(2, 0, name="f")
    st = s.write(tmp_path / "fig21")
    r = earlc.races(st.trace, wildcard="all")
    assert pairs(st, r) == {("d", "e")}
    assert lamport_pairs(st, r) == {("d", "e")}
    assert r.lamport_missed == 0
    # f took e and nothing else was left for it; b had one sender only
    assert sorted(st.name(int(x)) for x in r.recv) == ["b", "d", "f"]


# -- figure 3.1: a match that Lamport clocks cannot show ---------------------------------


def fig31(tmp_path):
    s = Script(3)
    s.send(1, 0, name="s10")
    s.recv(0, 1, name="r0a")      # P0's first recv(*)
    s.send(1, 2, name="s12")
    s.recv(2, 1, name="r2")
    s.send(2, 0, name="s20")
    s.recv(0, 2, name="r0b")      # P0's second recv(*)
    return s.write(tmp_path / "fig31")


def test_figure_3_1(tmp_path):
    st = fig31(tmp_path)
    r = earlc.races(st.trace, wildcard="all")
    assert pairs(st, r) == {("r0a", "s20")}
    # the send from P2 follows P2's own wildcard receive: its Lamport clock exceeds P0's
    assert lamport_pairs(st, r) == set()
    assert r.lamport_missed == 1
    lam = earlc.races(st.trace, wildcard="all", clocks="lamport")
    assert len(lam) == 0 and lam.clocks == "lamport"
    # only P0's receives as wildcards: P2 does not tick, LLCP sees it too
    r0 = earlc.races(st.trace, wildcard=[0])
    assert pairs(st, r0) == {("r0a", "s20")} and lamport_pairs(st, r0) == {("r0a", "s20")}


# -- figures 3.2 / 5.2: the crooked barrier ------------------------------------------------


def crooked_barrier(tmp_path):
    s = Script(3)
    isend0, q0 = s.isend(0, 1, name="isend0")
    post, q1 = s.irecv(1, name="irecv_post")
    s.barrier()
    isend2, q2 = s.isend(2, 1, name="isend2")
    s.recv(1, 2, name="recv")
    s.wait_recv(1, q1, 0, name="irecv")
    s.wait_send(0, q0)
    s.wait_send(2, q2)
    return s.write(tmp_path / "crooked")


def test_crooked_barrier(tmp_path):
    st = crooked_barrier(tmp_path)
    r = earlc.races(st.trace, wildcard="all")
    # P2's isend after the barrier could have matched P1's irecv(*) posted before it
    assert pairs(st, r) == {("irecv", "isend2")}
    assert lamport_pairs(st, r) == {("irecv", "isend2")}   # LLCP finds this one (fig. 5.2)
    df = r.to_dataframe()
    assert list(df["recv_posted"]) == [st.id("irecv_post")]
    assert list(df["actual_send"]) == [st.id("isend0")]
    # a naive barrier clock orders the post before the send: the post precedes P1's
    # barrier, the send follows P2's, so happened-before says post --> send
    t = st.trace
    assert t.events.time[st.id("irecv_post")] < t.events.time[st.id("isend2")]


# -- figure 5.1: late messages -----------------------------------------------------------


def test_figure_5_1_late_message(tmp_path):
    s = Script(3)
    s.send(0, 1, name="s0")
    s.send(2, 1, name="s2")       # sent before the barrier, received after it
    s.recv(1, 0, name="r1")
    s.barrier()
    s.recv(1, 2, name="r2")
    st = s.write(tmp_path / "fig51")
    r = earlc.races(st.trace, wildcard="all")
    assert pairs(st, r) == lamport_pairs(st, r) == {("r1", "s2")}


# -- figure 5.3: LVCP finds what LLCP misses ------------------------------------------------


def test_figure_5_3_lvcp_finds_more(tmp_path):
    s = Script(3)
    s.send(1, 0, name="s10")
    s.recv(0, 1, name="r0")        # P0 recv(*)
    s.send(0, 2, name="s02")
    s.send(1, 2, name="s12")
    s.recv(2, 1, name="r2a")       # P2 recv(*) took P1's send
    s.recv(2, 0, name="r2b")       # P2 recv(0)
    st = s.write(tmp_path / "fig53")
    only_wild = lambda e: e.location.rank == 0 or st.id("r2a") == e.id  # noqa: E731
    r = earlc.races(st.trace, wildcard=only_wild)
    assert pairs(st, r) == {("r2a", "s02")}
    assert lamport_pairs(st, r) == set() and r.lamport_missed == 1
    assert len(earlc.races(st.trace, wildcard=only_wild, clocks="lamport")) == 0
    assert r.assumption["wildcard"] == "predicate"


# -- figure 5.4: synchronous sends ----------------------------------------------------------


def ssend_run(tmp_path, sync):
    s = Script(4)
    s.send(0, 1, name="s0")                   # P0's send, received last
    s.send(2, 1, sync=sync, name="ss2")       # P2's (synchronous) send ...
    s.recv(1, 2, name="r1")                   # ... taken by P1's first recv(*)
    s.send(2, 3, name="s23")                  # after the ssend returned
    s.recv(3, 2, name="r3")
    s.send(3, 1, name="s31")                  # so this one follows r1
    s.recv(1, 3, name="r2")
    s.recv(1, 0, name="r3b")
    return s.write(tmp_path / ("ssend" if sync else "send"))


def test_figure_5_4_synchronous_send(tmp_path):
    st = ssend_run(tmp_path, True)
    r = earlc.races(st.trace, wildcard="all")
    assert pairs(st, r) == {("r1", "s0"), ("r2", "s0")}
    # the same run with a plain send: P3's send no longer follows r1
    st2 = ssend_run(tmp_path, False)
    r2 = earlc.races(st2.trace, wildcard="all")
    assert pairs(st2, r2) == {("r1", "s0"), ("r1", "s31"), ("r2", "s0")}


def test_issend_with_irecv(tmp_path):
    # an Issend matched by an irecv(*): the receive is taken as matched where it was posted,
    # and the sender after its wait follows it
    s = Script(3)
    s.send(0, 1, name="s0")
    post, q = s.irecv(1, name="post")
    i2, q2 = s.isend(2, 1, sync=True, name="iss2")
    s.wait_send(2, q2)
    s.send(2, 1, name="s2b")
    s.wait_recv(1, q, 2, name="irecv")
    s.recv(1, 2, name="rb")
    s.recv(1, 0, name="rc")
    st = s.write(tmp_path / "issend")
    r = earlc.races(st.trace, wildcard="all")
    assert pairs(st, r) == {("irecv", "s0"), ("rb", "s0")}


# -- collectives order by their shape ------------------------------------------------------


@pytest.mark.parametrize("region,root,race", [
    ("MPI_Barrier", None, False),
    ("MPI_Allreduce", None, False),
    ("MPI_Bcast", 1, False),    # the root P1's past reaches every member's end
    ("MPI_Bcast", 0, True),     # P1's past does not reach the root's end
    ("MPI_Reduce", 0, False),   # every member's past reaches the root's end
    ("MPI_Reduce", 1, True),    # nothing reaches a member's end
    ("MPI_Scan", None, True),   # rank 0's end waits for nobody
])
def test_collective_shapes(tmp_path, region, root, race):
    s = Script(3)
    s.send(2, 1, name="s2")
    s.recv(1, 2, name="r")          # P1's recv(*) before the collective
    s.collective(region, root=root)
    s.send(0, 1, name="s0")         # P0's send after it
    s.recv(1, 0, name="r2")
    st = s.write(tmp_path / "coll")
    r = earlc.races(st.trace, wildcard=[1])
    assert pairs(st, r) == ({("r", "s0")} if race else set())


# -- generated master-worker runs ------------------------------------------------------------


def master_worker(tmp_path, workers, rounds, seed):
    """Workers send results (tag 0), the master takes them with recv(*) in a random
    order and answers each with more work (tag 1) until a worker has sent `rounds`.
    Returns the trace and, per master receive, the sends that could have been taken
    instead: every other worker's next result."""
    rng = random.Random(seed)
    s = Script(workers + 1)
    left = {w: rounds for w in range(1, workers + 1)}
    in_flight = {}
    for w in left:
        in_flight[w] = s.send(w, 0, tag=0, user="worker")
        left[w] -= 1
    expected = {}
    order = []
    while in_flight:
        w = rng.choice(sorted(in_flight))
        r = s.recv(0, w, tag=0, user="master")
        order.append((r, w))
        expected[r] = {in_flight[v] for v in in_flight if v != w}
        del in_flight[w]
        if left[w]:
            s.send(0, w, tag=1, user="master")
            s.recv(w, 0, tag=1, user="worker")
            in_flight[w] = s.send(w, 0, tag=0, user="worker")
            left[w] -= 1
    # a receive's alternatives are the results in flight when it happened, plus the next
    # result of a worker whose answer was sent before it but whose result came later
    return s.write(tmp_path / ("mw-%d-%d-%d" % (workers, rounds, seed))), order


def expected_master_worker(st, order):
    """Per master receive: for every other worker with a result received later, the
    first such result (every worker's next send is independent of the receive)."""
    out = {}
    for k, (r, w) in enumerate(order):
        later = {}
        for r2, v in order[k + 1:]:
            if v != w and v not in later:
                later[v] = r2
        out[r] = set()
        for v, r2 in later.items():
            send = st.trace.states.sendptr[st.id(r2)]
            out[r].add(st.name(int(send)))
    return out


@pytest.mark.parametrize("workers,rounds,seed", [(2, 1, 0), (3, 2, 1), (5, 3, 2), (8, 4, 3)])
def test_master_worker(tmp_path, workers, rounds, seed):
    st, order = master_worker(tmp_path, workers, rounds, seed)
    want = expected_master_worker(st, order)
    for choice in ([0], "master"):
        r = earlc.races(st.trace, wildcard=choice)
        got = {}
        for rr, ss in pairs(st, r):
            got.setdefault(rr, set()).add(ss)
        assert {k: v for k, v in want.items() if v} == got
        assert len(r.recv) == len(order)
        # the receives with most alternatives come first
        n = r.n_alternatives
        assert list(n) == sorted(n, reverse=True)
    # the first receive could have taken every other worker's first result
    first, w = order[0]
    assert len(want[first]) == workers - 1


def test_same_result_for_any_thread_count(tmp_path):
    st, _ = master_worker(tmp_path, 6, 3, 7)
    ref = earlc.races(st.trace, wildcard="all").to_dataframe()
    for threads in (1, 2, 4):
        t = earlc.open(st.trace.path, threads=threads)
        df = earlc.races(t, wildcard="all").to_dataframe()
        assert df.equals(ref)


# -- brute force on small random runs ------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_brute_force_matches_before(tmp_path, seed):
    run = random_run(random.Random(seed), tmp_path / ("rnd%d" % seed))
    st = run.trace
    chosen = run.wildcards
    r = earlc.races(st.trace, wildcard=lambda e: e.id in {st.id(n) for n in chosen})
    assert pairs(st, r) == brute_force_pairs(run), run.describe()
    # Lamport clocks find a subset
    assert lamport_pairs(st, r) <= pairs(st, r)


# -- the result's faces --------------------------------------------------------------------


def test_dataframe_json_text(tmp_path):
    st = crooked_barrier(tmp_path)
    r = earlc.races(st.trace, wildcard="all")
    df = r.to_dataframe()
    for col in ("recv", "send", "recv_location", "send_location", "recv_rank", "send_rank",
                "recv_tag", "send_tag", "recv_time", "send_time", "recv_callpath",
                "send_callpath", "lamport"):
        assert col in df.columns
    row = df.iloc[0]
    assert row["recv_rank"] == 1 and row["send_rank"] == 2
    assert row["recv_callpath"] == "main/MPI_Wait"
    assert row["send_callpath"] == "main/MPI_Isend"
    d = json.loads(r.to_json())
    assert d["assumption"]["wildcard"] == "all"
    assert d["summary"] == {"wildcard_receives": 2, "receives_with_alternatives": 1,
                            "alternatives": 1, "lamport_missed": 0}
    rec = d["receives"][0]
    assert rec["event"] == st.id("irecv") and rec["took"] == st.id("isend0")
    assert [a["event"] for a in rec["alternatives"]] == [st.id("isend2")]
    text = r.to_text()
    assert "every receive taken as asking for any source" in text
    assert "#%d" % st.id("isend2") in text
    assert r.memory["peak"] > 0
    phases = set()
    earlc.races(st.trace, wildcard="all", progress=lambda p, d, t: phases.add(p))
    assert phases == {"races", "matches"}


def test_findings(tmp_path):
    s = Script(2)
    s.other(0, "MPI_Waitany", name="wa")
    s.other(0, "MPI_Waitany")
    s.other(1, "MPI_Iprobe", name="pr")
    s.other(1, "MPI_Comm_dup", name="dup1")
    s.other(1, "MPI_Comm_split", name="dup2")
    s.other(1, "MPI_Comm_free")
    s.other(0, "MPI_Comm_dup")
    s.other(0, "MPI_Comm_free")
    lost, q = s.isend(0, 1, name="lost")          # never completed
    s.recv(1, 0)
    st = s.write(tmp_path / "findings")
    r = earlc.races(st.trace, wildcard="all")
    got = {(f.kind, st.trace.locations[f.location].rank, st.name(f.event), f.count)
           for f in r.findings}
    assert got == {("waitany", 0, "wa", 2), ("probe", 1, "pr", 1),
                   ("comm_not_freed", 1, "dup2", 1),
                   ("request_not_completed", 0, "lost", 1)}
    assert "request_not_completed" in r.to_text()


# -- wildcard choices and bad input --------------------------------------------------------


def test_wildcard_choices(tmp_path):
    st = fig31(tmp_path)
    t = st.trace
    with pytest.raises(ValueError, match="does not say which asked for any source.*predicate"):
        earlc.races(t)
    from earlc.races import WildcardsNotRecorded

    with pytest.raises(WildcardsNotRecorded, match="wildcard='all'"):
        earlc.races(t, wildcard="recorded")
    with pytest.raises(ValueError, match="no region named 'nowhere'"):
        earlc.races(t, wildcard="nowhere")
    with pytest.raises(ValueError, match="no MPI rank 7"):
        earlc.races(t, wildcard=[0, 7])
    with pytest.raises(ValueError, match="clocks"):
        earlc.races(t, wildcard="all", clocks="sundial")
    with pytest.raises(ValueError, match="wildcard must be"):
        earlc.races(t, wildcard=3.5)
    r = earlc.races(t, wildcard="MPI_Recv")
    assert len(r.recv) == 3 and r.assumption["value"] == "MPI_Recv"
    r = earlc.races(t, wildcard=[2])
    assert [st.name(int(x)) for x in r.recv] == ["r2"] and len(r) == 0


def test_recorded_requests_from_the_model(tmp_path, monkeypatch):
    """A trace model with requested_source/requested_tag columns (the recorder's
    contract): the default takes them, -1 meaning any."""
    st = fig31(tmp_path)
    t = st.trace
    m = t.events.messages
    source = np.full(len(m), -2, dtype=np.int32)
    source[t.events.ref_of(st.id("r0a"))] = -1          # only P0's first receive was (*)
    tag = np.full(len(m), -2, dtype=np.int32)
    m.requested_source, m.requested_tag = source, tag
    r = earlc.races(t)
    assert r.assumption["wildcard"] == "recorded"
    assert [st.name(int(x)) for x in r.recv] == ["r0a"]
    assert pairs(st, r) == {("r0a", "s20")}
    source[:] = -5
    with pytest.raises(earlc.TraceError, match="not a rank or tag"):
        earlc.races(t)


def test_any_tag(tmp_path):
    s = Script(3)
    s.send(1, 0, tag=5, name="s1")
    s.send(2, 0, tag=6, name="s2")
    s.recv(0, 1, tag=5, name="r1")
    s.recv(0, 2, tag=6, name="r2")
    st = s.write(tmp_path / "tags")
    t = st.trace
    # asked for tag 5 only: the tag-6 message is no alternative
    assert pairs(st, earlc.races(t, wildcard="all")) == set()
    m = t.events.messages
    tag = np.full(len(m), -2, dtype=np.int32)
    tag[t.events.ref_of(st.id("r1"))] = -1
    m.requested_source = np.full(len(m), -1, dtype=np.int32)
    m.requested_tag = tag
    assert pairs(st, earlc.races(t)) == {("r1", "s2")}


def test_unmatched_and_hung(tmp_path):
    # a send nobody received (the run hung) is a candidate like any other
    # (the second message of r's own sender is none: r had to take the first)
    s = Script(3)
    s.send(1, 0, name="s1")
    s.send(1, 0, name="s1b")
    s.send(2, 0, name="s2")
    s.recv(0, 1, name="r")
    st = s.write(tmp_path / "hung")
    r = earlc.races(st.trace, wildcard="all")
    assert pairs(st, r) == {("r", "s2")}


# -- the command line ------------------------------------------------------------------------


def test_cli(tmp_path, capsys):
    from earlc.cli import main

    st = crooked_barrier(tmp_path)
    path = st.trace.path
    assert main(["races", path, "--wildcard", "all", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["summary"]["alternatives"] == 1
    assert main(["races", path, "--wildcard", "1"]) == 0
    out = capsys.readouterr().out
    assert "receives of ranks 1" in out and "could also have taken" in out
    out_file = tmp_path / "r.txt"
    assert main(["races", path, "--wildcard", "MPI_Recv", "-o", str(out_file)]) == 0
    assert "inside MPI_Recv" in out_file.read_text()
    for bad, words in ((["--wildcard", "3-1"], "bad rank range"),
                       (["--wildcard", "0,9"], "no MPI rank 9"),
                       (["--wildcard", "nowhere"], "no region named"),
                       ([], "does not say which asked for any source")):
        assert main(["races", path] + bad) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err and err.startswith("earlc: error: ")
        if not bad:  # the advice is what the command line takes: --wildcard, no predicate
            assert "--wildcard all" in err and "--wildcard RANKS" in err
            assert "predicate" not in err and "wildcard=" not in err
    assert main(["races", str(tmp_path / "missing"), "--wildcard", "all"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_parse_wildcard():
    from earlc.races import parse_wildcard

    assert parse_wildcard(None) is None
    assert parse_wildcard("all") == "all"
    assert parse_wildcard("0,2-4") == [0, 2, 3, 4]
    assert parse_wildcard("main") == "main"
    with pytest.raises(ValueError):
        parse_wildcard("1-")


def test_completion_without_posting(tmp_path):
    # an MPI_IRECV whose request the trace never posted is matched where it completes
    s = Script(3)
    s.send(0, 1, name="s0")
    s.send(2, 1, name="s2")
    s.wait_recv(1, 77, 0, name="irecv")
    s.recv(1, 2, name="r")
    st = s.write(tmp_path / "unposted")
    assert st.trace.warnings.counts["request_unknown"] == 1
    r = earlc.races(st.trace, wildcard="all")
    assert pairs(st, r) == {("irecv", "s2")}


def _garbage_run(rng, path):
    """Random MPI records with no regard for consistency: receives before or without
    their sends, requests completed twice or never, members missing from collectives."""
    n = rng.randint(2, 4)
    with earlc.TraceWriter(path, ranks=n) as w:
        t = [0] * n
        for _ in range(rng.randint(5, 60)):
            p, q, tag = rng.randrange(n), rng.randrange(n), rng.randrange(2)
            t[p] += rng.randint(1, 5)
            a = rng.random()
            if a < 0.25:
                w.send(p, t[p], dest=q, tag=tag)
            elif a < 0.45:
                w.recv(p, t[p], source=q, tag=tag)
            elif a < 0.55:
                w.isend(p, t[p], dest=q, request=rng.randint(1, 5), tag=tag)
            elif a < 0.62:
                w.irecv_request(p, t[p], request=rng.randint(1, 5))
            elif a < 0.72:
                w.irecv(p, t[p], source=q, request=rng.randint(1, 5), tag=tag)
            elif a < 0.78:
                w.isend_complete(p, t[p], request=rng.randint(1, 5))
            elif a < 0.9:
                region = rng.choice(["MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Scan"])
                root = rng.randrange(n) if region in ("MPI_Bcast", "MPI_Reduce") else None
                w.collective(p, t[p], t[p] + 2, region, root=root)
                t[p] += 2
            else:
                region = rng.choice(["MPI_Ssend", "MPI_Issend"])
                w.enter(p, t[p], region)
                if region == "MPI_Ssend":
                    w.send(p, t[p] + 1, dest=q, tag=tag)
                else:
                    w.isend(p, t[p] + 1, dest=q, request=9, tag=tag)
                w.leave(p, t[p] + 2, region)
                t[p] += 2
    return earlc.open(path)


@pytest.mark.parametrize("seed", range(30))
def test_inconsistent_traces(tmp_path, seed):
    """Whatever the records, the analysis ends (cycles broken with a counted warning) and
    every pair is a receive record and a send to its location."""
    t = _garbage_run(random.Random(seed), tmp_path / "g")
    kinds = earlc.events.KINDS
    ev = t.events
    for clocks in ("vector", "lamport"):
        r = earlc.races(t, wildcard="all", clocks=clocks)
        df = r.to_dataframe()
        assert set(ev.kind[df["recv"]]) <= {kinds["MPI_RECV"], kinds["MPI_IRECV"]}
        assert set(ev.kind[df["send"]]) <= {kinds["MPI_SEND"], kinds["MPI_ISEND"]}
        assert (ev.messages.peer[ev.ref_of(df["send"])] == ev.location[df["recv"]]).all()
        assert set(r.warnings) == {"cycle_broken", "recv_without_send"}
        json.loads(r.to_json())


@pytest.mark.parametrize("incomplete", [False, True])
def test_a_trace_without_a_completed_receive(tmp_path, capsys, incomplete):
    """A recorded run whose receives never completed (a deadlock ended by a timeout)
    has no receive record: no wildcard receive, not an error, whatever it records."""
    from earlc.cli import main

    with earlc.TraceWriter(tmp_path / "t", ranks=2) as w:
        w.requested_attributes()  # as `earlc record` defines them
        for r in range(2):
            w.enter(r, 10, "main")
        w.enter(0, 20, "MPI_Send"); w.send(0, 21, dest=1, tag=0, bytes=4); w.leave(0, 22, "MPI_Send")
        w.enter(1, 15, "MPI_Recv")
        if incomplete:
            w.mark_incomplete(1, "ended by the test")
        else:
            w.leave(1, 30, "MPI_Recv")
        w.leave(0, 40, "main")
        if not incomplete:
            w.leave(1, 41, "main")
    trace = earlc.open(tmp_path / "t")
    r = earlc.races(trace)
    assert len(r.recv) == 0 and len(r) == 0 and r.assumption["wildcard"] == "recorded"
    assert "no receive completed" in r.assumption["description"]
    assert "No wildcard receive" in r.to_text()
    assert ("still waiting when the run ended" in r.to_text()) == incomplete
    assert main(["races", str(tmp_path / "t")]) == 0
    assert "No wildcard receive" in capsys.readouterr().out
