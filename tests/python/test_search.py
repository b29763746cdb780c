"""The causal pattern search (earlc.search, trace.search, earlc search): every
operator and variable kind against a brute-force evaluation over an explicit
happened-before graph (search_brute.py) on random and generated traces, the
figure 2.8 patterns on a client/server trace with a known answer, limits, errors."""
import json
import random
import subprocess
import sys

import numpy as np
import pytest

import earlc
from earlc import PatternError, TraceWriter

from conftest import ROOT
from search_brute import Model, cls, evaluate, partner, pattern

# ---- traces ------------------------------------------------------------------------


def random_trace(path, seed, ranks=3, steps=34):
    """Random MPI traffic: user regions, blocking and non-blocking messages whose
    receives come later (so that messages cross), barriers."""
    rng = random.Random(seed)
    t = 10
    req = [0]
    with TraceWriter(path, ranks=ranks, resolution=1000) as w:
        queued = []   # messages sent, not yet received: (src, dst, tag, nonblocking, request)
        waits = []    # isend requests to complete: (rank, request)

        def receive(m):
            nonlocal t
            src, dst, tag, nb, r = m
            if nb:
                w.enter(dst, t, "MPI_Irecv"); w.irecv_request(dst, t + 1, request=r)
                w.leave(dst, t + 2, "MPI_Irecv")
                w.enter(dst, t + 3, "MPI_Wait"); w.irecv(dst, t + 4, source=src, request=r, tag=tag)
                w.leave(dst, t + 5, "MPI_Wait")
            else:
                w.enter(dst, t, "MPI_Recv"); w.recv(dst, t + 1, source=src, tag=tag)
                w.leave(dst, t + 2, "MPI_Recv")
            t += 6

        for _ in range(steps):
            a = rng.random()
            if a < 0.25:
                r = rng.randrange(ranks)
                w.enter(r, t, "work"); w.leave(r, t + 1, "work")
                t += 2
            elif a < 0.6:
                src, dst = rng.sample(range(ranks), 2)
                tag = rng.randrange(2)
                nb = rng.random() < 0.4
                req[0] += 1
                if nb:
                    w.enter(src, t, "MPI_Isend"); w.isend(src, t + 1, dest=dst, request=req[0], tag=tag)
                    w.leave(src, t + 2, "MPI_Isend")
                    waits.append((src, req[0]))
                else:
                    w.enter(src, t, "MPI_Send"); w.send(src, t + 1, dest=dst, tag=tag)
                    w.leave(src, t + 2, "MPI_Send")
                queued.append((src, dst, tag, nb, req[0]))
                t += 3
            elif a < 0.85 and queued:
                # the oldest message of a random (src, dst, tag): MPI's non-overtaking order
                m = rng.choice(queued)
                m = next(q for q in queued if q[:3] == m[:3])
                queued.remove(m)
                receive(m)
            elif a < 0.93 and waits:
                r, q = waits.pop(rng.randrange(len(waits)))
                w.enter(r, t, "MPI_Wait"); w.isend_complete(r, t + 1, request=q)
                w.leave(r, t + 2, "MPI_Wait")
                t += 3
            else:
                for r in range(ranks):
                    w.collective(r, t + r, t + ranks + 2, "MPI_Barrier")
                t += ranks + 3
        for m in list(queued):
            receive(m)
        for r, q in waits:
            w.enter(r, t, "MPI_Wait"); w.isend_complete(r, t + 1, request=q)
            w.leave(r, t + 2, "MPI_Wait")
            t += 3
    return earlc.open(path)


def synth_trace(path, kind, **options):
    earlc.synth(kind, path, **options)
    return earlc.open(path)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("search")
    out = [random_trace(d / ("random%d" % s), seed=s) for s in range(4)]
    out.append(synth_trace(d / "ring", "ring", ranks=3, iterations=2))
    out.append(synth_trace(d / "halo", "halo", ranks=3, iterations=2))
    out.append(synth_trace(d / "hybrid", "hybrid", ranks=3, threads=2, iterations=1))
    return [(t, Model(t)) for t in out]


# ---- the patterns: text for earlc, description for the brute force ------------------

CLASSES = """
Send := ["", "MPI_*SEND", ""];
Recv := ["", "MPI_*RECV", ""];
Send0 := ["rank 0", "MPI_*SEND", ""];
Recv1 := ["rank 1 thread 0", "MPI_*RECV", ""];
Ent2 := ["rank 2", "ENTER", ""];
Bar := ["", "MPI_COLLECTIVE_END", ""];
Leave1 := ["rank 1", "LEAVE", ""];
Msg := Send.Recv;
"""
SEND, RECV = cls(kind="MPI_*SEND"), cls(kind="MPI_*RECV")
SEND0, RECV1 = cls("rank 0", "MPI_*SEND"), cls("rank 1 thread 0", "MPI_*RECV")
ENT2, LEAVE1 = cls("rank 2", "ENTER"), cls("rank 1", "LEAVE")
MSG = partner(SEND, RECV)

LATEST = ([("s", "$", SEND), ("r", "$", RECV1), ("others", "*", SEND)],
          lambda v, m: m.before(v["s"], v["r"]) and (not m.before(v["others"], v["r"])
                                                     or not m.before(v["s"], v["others"])))

PATTERNS = {
    "concurrent pairs": (
        "Send $a, $b; Q := $a || $b;",
        ([("a", "$", SEND), ("b", "$", SEND)], lambda v, m: m.concurrent(v["a"], v["b"]))),
    "before, one side on one location": (
        "Send0 $x; Recv $r; P := $x --> $r;",
        ([("x", "$", SEND0), ("r", "$", RECV)], lambda v, m: m.before(v["x"], v["r"]))),
    "before, the later variable on one location": (
        "Recv $r; Send0 $x; P := $x -> $r & $r --> $x | $r -> $x;",
        ([("r", "$", RECV), ("x", "$", SEND0)],
         lambda v, m: (m.before(v["x"], v["r"]) and m.before(v["r"], v["x"]))
         or m.before(v["r"], v["x"]))),
    "pruned: the later variable precedes": (
        "Recv $r; Send0 $x; P := $x --> $r;",
        ([("r", "$", RECV), ("x", "$", SEND0)], lambda v, m: m.before(v["x"], v["r"]))),
    "pruned: the later variable follows": (
        "Recv $r; Send0 $x; P := $r --> $x;",
        ([("r", "$", RECV), ("x", "$", SEND0)], lambda v, m: m.before(v["r"], v["x"]))),
    "pruned: negations": (
        "Recv $r; Send0 $x; Recv1 $y; P := $x !--> $r & $y !--> $x & $r --> $y;",
        ([("r", "$", RECV), ("x", "$", SEND0), ("y", "$", RECV1)],
         lambda v, m: not m.before(v["x"], v["r"]) and not m.before(v["y"], v["x"])
         and m.before(v["r"], v["y"]))),
    "pruned: negations the other way": (
        "Recv $r; Send0 $x; Recv1 $y; P := $r !--> $x & $x !--> $y;",
        ([("r", "$", RECV), ("x", "$", SEND0), ("y", "$", RECV1)],
         lambda v, m: not m.before(v["r"], v["x"]) and not m.before(v["x"], v["y"]))),
    "not before and not concurrent": (
        "Send $a; Recv1 $y; P := $a !--> $y & $y !|| $a;",
        ([("a", "$", SEND), ("y", "$", RECV1)],
         lambda v, m: not m.before(v["a"], v["y"]) and not m.concurrent(v["y"], v["a"]))),
    "concurrent with a one-location class": (
        "Ent2 $e; Recv1 $y; P := $e || $y;",
        ([("e", "$", ENT2), ("y", "$", RECV1)], lambda v, m: m.concurrent(v["e"], v["y"]))),
    "or and parentheses": (
        "Send $a; Recv1 $y; Ent2 $e; P := ($a --> $y | $y --> $a) & ($e || $a | $a --> $e);",
        ([("a", "$", SEND), ("y", "$", RECV1), ("e", "$", ENT2)],
         lambda v, m: (m.before(v["a"], v["y"]) or m.before(v["y"], v["a"]))
         and (m.concurrent(v["e"], v["a"]) or m.before(v["a"], v["e"])))),
    "existential variables": (
        "Recv ~r; Send $s; Ent2 ~e; P := $s --> ~r & ~r --> ~e;",
        ([("r", "~", RECV), ("s", "$", SEND), ("e", "~", ENT2)],
         lambda v, m: m.before(v["s"], v["r"]) and m.before(v["r"], v["e"]))),
    "universal: the sends that precede no other send": (
        "Send $s, *all; Last := $s !--> *all;",
        ([("s", "$", SEND), ("all", "*", SEND)], lambda v, m: not m.before(v["s"], v["all"]))),
    "universal inside an or (the latest send before a receive)": (
        "Send $s, *others; Recv1 $r; P := $s --> $r & (*others !--> $r | $s !--> *others);",
        LATEST),
    "two universal variables": (
        "Send0 $x, *u; Recv1 *w; P := *u --> $x | $x !--> *w;",
        ([("x", "$", SEND0), ("u", "*", SEND0), ("w", "*", RECV1)],
         lambda v, m: m.before(v["u"], v["x"]) or not m.before(v["x"], v["w"]))),
    "limited precedence": (
        "Send0 $x; Recv $y; P := $x -(Leave1)-> $y;",
        ([("x", "$", SEND0), ("y", "$", RECV), ("c", "*", LEAVE1)],
         lambda v, m: m.before(v["x"], v["y"])
         and (not m.before(v["x"], v["c"]) or not m.before(v["c"], v["y"])))),
    "a class used directly is existential": (
        "Send0 $x; P := $x --> [\"rank 2\", \"ENTER\", \"\"] & $x || Recv1;",
        ([("x", "$", SEND0), ("e", "~", ENT2), ("y", "~", RECV1)],
         lambda v, m: m.before(v["x"], v["e"]) and m.concurrent(v["x"], v["y"]))),
    "partner class": (
        "Msg $m; Ent2 $e; P := $m || $e;",
        ([("m", "$", MSG), ("e", "$", ENT2)], lambda v, m: m.concurrent(v["m"], v["e"]))),
    "partner classes compared both ways": (
        "Msg $m, $n; P := $m --> $n & $n --> $m;",
        ([("m", "$", MSG), ("n", "$", MSG)],
         lambda v, m: m.before(v["m"], v["n"]) and m.before(v["n"], v["m"]))),
    "a clause as an operand": (
        "Send0 $a; Recv1 $b; Ent2 $e; P := ($a --> $b) || $e;",
        ([("a", "$", SEND0), ("b", "$", RECV1), ("e", "$", ENT2)],
         lambda v, m: m.before(v["a"], v["b"]) and m.concurrent(v["a"] + v["b"], v["e"]))),
    "sub-pattern variables": (
        "Send $s, *others; Recv1 $r; Latest := $s --> $r & (*others !--> $r | $s !--> *others);"
        "Latest $l, *l_all; First := *l_all !--> $l;",
        ([("l", "$", pattern(LATEST)), ("l_all", "*", pattern(LATEST))],
         lambda v, m: not m.before(v["l_all"], v["l"]))),
    "a bare variable": (
        "Ent2 $e; P := $e;",
        ([("e", "$", ENT2)], lambda v, m: True)),
}


def run(trace, text, **kw):
    return trace.search(CLASSES + text, **kw)


@pytest.mark.parametrize("name", list(PATTERNS))
def test_search_equals_brute_force(traces, name):
    text, spec = PATTERNS[name]
    informative = 0
    for trace, model in traces:
        m = run(trace, text)
        expected = evaluate(model, spec)
        got = [tuple(int(x) for x in row) for row in m.events]
        assert got == expected, "%s on %s" % (name, trace.path)
        assert m.events.dtype == np.int64 and m.events.shape == (len(expected), len(m.columns))
        informative += 0 < len(expected)
    # the comparison says something: the pattern matched somewhere
    assert informative, "%s matched nothing on any trace" % name


PARTNERS = """
Fork := ["", "THREAD_FORK", ""].["", "THREAD_TEAM_BEGIN", ""];
Req := ["", "MPI_ISEND", ""].["", "MPI_ISEND_COMPLETE", ""];
Posted := ["", "MPI_IRECV_REQUEST", ""].["", "MPI_IRECV", ""];
Lock := ["", "THREAD_ACQUIRE_LOCK", ""];
"""
FORK = partner(cls(kind="THREAD_FORK"), cls(kind="THREAD_TEAM_BEGIN"))
REQ = partner(cls(kind="MPI_ISEND"), cls(kind="MPI_ISEND_COMPLETE"))
POSTED = partner(cls(kind="MPI_IRECV_REQUEST"), cls(kind="MPI_IRECV"))
LOCK = cls(kind="THREAD_ACQUIRE_LOCK")


@pytest.mark.parametrize("text, spec", [
    ("Fork $f; Lock $l; P := $f --> $l & $l !--> $f;",
     ([("f", "$", FORK), ("l", "$", LOCK)],
      lambda v, m: m.before(v["f"], v["l"]) and not m.before(v["l"], v["f"]))),
    ("Req $q; Posted $p; P := $q || $p;",
     ([("q", "$", REQ), ("p", "$", POSTED)], lambda v, m: m.concurrent(v["q"], v["p"]))),
    ("Lock $a, $b; P := $a || $b;",
     ([("a", "$", LOCK), ("b", "$", LOCK)], lambda v, m: m.concurrent(v["a"], v["b"]))),
])
def test_thread_and_request_partners(traces, text, spec):
    """Fork -> team begin and request partners, and the thread rules of the order,
    on the hybrid trace (MPI ranks with OpenMP teams and locks)."""
    trace, model = traces[-1]
    m = trace.search(PARTNERS + text)
    expected = evaluate(model, spec)
    assert 0 < len(expected)
    assert [tuple(r) for r in m.events.tolist()] == expected
    if "Fork" in text:
        # every fork is paired with the team begin of each of its threads
        assert len(evaluate(model, ([("f", "$", FORK)], lambda v, m: True))) == 3 * 2


def test_columns_and_statistics(traces):
    trace, _ = traces[0]
    m = run(trace, "Msg $m; Ent2 $e; Send $s; P := $m || $e & $s --> $m;")
    assert m.columns == ["m", "m.partner", "e", "s"]
    m = run(trace, PATTERNS["sub-pattern variables"][0])
    assert m.columns == ["l.s", "l.r"]
    assert [v["quantifier"] for v in m.variables] == ["$", "*"]
    m = run(trace, PATTERNS["concurrent with a one-location class"][0])
    assert m.stats["pruned"] > 0  # the range of the one-location class was narrowed
    assert m.stats["checks"] > 0 and m.stats["nodes"] > 0 and m.stats["stamped"] > 0
    single = {v["name"]: v["single_location"] for v in m.variables}
    assert single == {"e": True, "y": True}


@pytest.mark.parametrize("name", list(PATTERNS))
def test_pruning_changes_nothing(traces, name):
    """Range pruning (one window per location) against trying every value."""
    text = PATTERNS[name][0]
    for trace, _ in traces:
        # one thread: the node counts do not depend on how tasks were shared
        a = run(trace, text, threads=1)
        b = run(trace, text, pruning=False, threads=1)
        assert np.array_equal(a.events, b.events)
        assert b.stats["pruned"] == 0
        assert a.stats["nodes"] <= b.stats["nodes"]


def test_pruning_over_several_locations(traces):
    """Classes spanning locations are pruned too: a window per location."""
    trace, _ = traces[0]
    m = run(trace, PATTERNS["concurrent pairs"][0])
    assert m.stats["pruned"] > 0
    assert not any(v["single_location"] for v in m.variables)


def test_universal_variables_without_any_assignment(tmp_path):
    """*u and *v must take distinct values other than $x's: with a class of two
    events there is no such assignment, so the pattern holds vacuously for both."""
    with TraceWriter(tmp_path / "t", ranks=2, resolution=1000) as w:
        w.enter(0, 1, "a"); w.leave(0, 2, "a")
        w.enter(0, 3, "a"); w.leave(0, 4, "a")
        w.enter(1, 1, "b"); w.leave(1, 2, "b")
    trace = earlc.open(tmp_path / "t")
    text = 'A := ["", "ENTER", "a"]; A $x, *u, *v; P := $x --> *u & *u --> *v;'
    spec = ([("x", "$", cls(kind="ENTER", text="a")), ("u", "*", cls(kind="ENTER", text="a")),
             ("v", "*", cls(kind="ENTER", text="a"))],
            lambda v, m: m.before(v["x"], v["u"]) and m.before(v["u"], v["v"]))
    expected = evaluate(Model(trace), spec)
    assert len(expected) == 2
    assert [tuple(r) for r in trace.search(text).events.tolist()] == expected
    # with one more event of the class the universal part bites
    text = 'A := ["", "ENTER", ""]; A $x, *u, *v; P := $x --> *u & *u --> *v;'
    spec = ([(n, q, cls(kind="ENTER")) for n, q in (("x", "$"), ("u", "*"), ("v", "*"))],
            spec[1])
    expected = evaluate(Model(trace), spec)
    assert [tuple(r) for r in trace.search(text).events.tolist()] == expected == []


@pytest.mark.parametrize("k", [1, 2, 5, 17])
def test_limit_is_a_prefix_of_the_canonical_order(traces, k):
    for trace, _ in traces[:3]:
        for text, _ in (PATTERNS["concurrent pairs"], PATTERNS["existential variables"],
                        PATTERNS["universal inside an or (the latest send before a receive)"]):
            full = run(trace, text)
            part = run(trace, text, limit=k)
            assert np.array_equal(part.events, full.events[:k])
            assert part.truncated == (len(full) >= k)
    # canonical: rows ascending, column by column
    rows = [tuple(r) for r in full.events.tolist()]
    assert rows == sorted(rows)


def test_to_dataframe(traces):
    trace, _ = traces[0]
    m = run(trace, "Msg $m; P := $m;")
    df = m.to_dataframe()
    assert len(df) == len(m) > 0
    ev = trace.events
    assert list(df["m"]) == list(m.events[:, 0])
    assert list(df["m.time_ticks"]) == list(ev.time[m.events[:, 0]])
    assert list(df["m.time"]) == list(trace.time_seconds(ev.time[m.events[:, 0]]))
    assert list(df["m.partner.location"]) == list(ev.location[m.events[:, 1]])
    assert set(df["m.kind"]) <= {"MPI_SEND", "MPI_ISEND"}
    assert set(df["m.region"]) <= {"MPI_Send", "MPI_Isend"}
    assert set(df["m.partner.region"]) <= {"MPI_Recv", "MPI_Wait"}


def test_name_selects_the_pattern(traces):
    trace, model = traces[0]
    text = PATTERNS["sub-pattern variables"][0]
    latest = run(trace, text, name="Latest")
    assert [tuple(r) for r in latest.events.tolist()] == evaluate(model, LATEST)
    assert latest.pattern == "Latest"
    with pytest.raises(PatternError, match="no pattern named 'Nope'.*Latest, First"):
        run(trace, text, name="Nope")


# ---- figure 2.8: first and last connection ----------------------------------------


def client_server(path, seed, clients=3, rounds=2):
    """Clients connect to the server (rank 0): a send in region "connect" that the
    server receives in "accept"; the server answers from "accept done" and the
    client receives in "connected".  The server accepts one connection after the
    other, in the order the requests were sent.  Returns the trace and the
    connections in accept order as (connect send, accept receive, answer, its receive)."""
    rng = random.Random(seed)
    order = [c for _ in range(rounds) for c in rng.sample(range(1, clients + 1), clients)]
    t = 10
    with TraceWriter(path, ranks=clients + 1, resolution=1000) as w:
        for c in range(1, clients + 1):  # some unrelated work everywhere
            w.enter(c, 1 + c, "work"); w.leave(c, 5 + c, "work")
        for c in order:
            w.enter(c, t, "connect"); w.send(c, t + 1, dest=0, tag=1); w.leave(c, t + 2, "connect")
            w.enter(0, t + 3, "accept"); w.recv(0, t + 4, source=c, tag=1); w.leave(0, t + 5, "accept")
            w.enter(0, t + 6, "accept done"); w.send(0, t + 7, dest=c, tag=2)
            w.leave(0, t + 8, "accept done")
            w.enter(c, t + 9, "connected"); w.recv(c, t + 10, source=0, tag=2)
            w.leave(c, t + 11, "connected")
            t += 20
    trace = earlc.open(path)
    ev = trace.events
    kinds = ev.kind
    sends0 = [int(e) for e in ev.of_location(0) if earlc.KIND_NAMES[kinds[e]] == "MPI_SEND"]
    recvs0 = [int(e) for e in ev.of_location(0) if earlc.KIND_NAMES[kinds[e]] == "MPI_RECV"]
    sendptr, recvptr = trace.states.sendptr, trace.states.recvptr
    conns = [(int(sendptr[r]), r, s, int(recvptr[s])) for r, s in zip(recvs0, sends0)]
    return trace, conns


FIGURE_2_8 = """
StartConnect := ["", "MPI_SEND", "connect"].["", "MPI_RECV", "accept"];
DoneConnect := ["", "MPI_SEND", "accept done"].["", "MPI_RECV", "connected"];
StartConnect $sc, *sc_all;
DoneConnect $dc;
ConnectionEstablished := ($sc --> $dc) & ((*sc_all !--> $dc) | ($sc !--> *sc_all));
ConnectionEstablished *ce_all, $ce;
FirstConnectionEstablished := (*ce_all !--> $ce);
LastConnectionEstablished := $ce !--> *ce_all;
"""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_figure_2_8_first_and_last_connection(tmp_path, seed):
    trace, conns = client_server(tmp_path / "cs", seed)
    est = trace.search(FIGURE_2_8, name="ConnectionEstablished")
    assert est.columns == ["sc", "sc.partner", "dc", "dc.partner"]
    assert [tuple(r) for r in est.events.tolist()] == sorted(conns)
    first = trace.search(FIGURE_2_8, name="FirstConnectionEstablished")
    last = trace.search(FIGURE_2_8)  # the last pattern of the text
    assert first.columns == ["ce.sc", "ce.sc.partner", "ce.dc", "ce.dc.partner"]
    assert [tuple(r) for r in first.events.tolist()] == [conns[0]]
    assert [tuple(r) for r in last.events.tolist()] == [conns[-1]]
    assert last.pattern == "LastConnectionEstablished"


# ---- errors ------------------------------------------------------------------------


@pytest.mark.parametrize("text, fragments", [
    ('S := ["", "MPI_SEND", ""]; S $a; P := $a --> $b;',
     ["line 1, column 46:", "the variable '$b' is not declared"]),
    ('S := ["", "MPI_SEND"]; S $a; P := $a;', ["line 1, column 21:", "expected ','"]),
    ('S := ["", "MPI_SNED", ""];\nS $a;\nP := $a;',
     ["line 1, column 11:", 'unknown event kind "MPI_SNED"']),
    ('S := ["", "MPI_SEND", ""];\nS $a;\nP := $a --> T;', ["line 3, column 13:", "unknown name 'T'"]),
    ('S := ["", "MPI_SEND", ""];\nS $a;\nP := ($a --> $a;', ["line 3, column 16:", "expected ')'"]),
    ('S := ["", "MPI_SEND", ""];\nS $a;\nP := $a --> ;', ["line 3, column 13:", "expected a class"]),
])
def test_bad_patterns(traces, text, fragments):
    trace, _ = traces[0]
    with pytest.raises(PatternError) as info:
        trace.search(text)
    for f in fragments:
        assert f in str(info.value)


# ---- classes that match no event: no error, zero matches (or vacuous *) ---------------

NOTHING = cls("rank 99")
EMPTY = {
    "a $ variable over nothing": (
        'Nothing := ["rank 99", "", ""]; Send $s; Nothing $n; P := $s --> $n;',
        ([("s", "$", SEND), ("n", "$", NOTHING)], lambda v, m: m.before(v["s"], v["n"])),
        ["column 12: the class 'Nothing' [\"rank 99\", \"\", \"\"] matches no event of this "
         "trace"]),
    "a * variable over nothing holds vacuously": (
        'Nothing := ["rank 99", "", ""]; Send $s; Nothing *n; P := $s !--> *n;',
        ([("s", "$", SEND), ("n", "*", NOTHING)], lambda v, m: not m.before(v["s"], v["n"])),
        ["the class 'Nothing'"]),
    "a ~ variable over nothing": (
        'Nothing := ["rank 99", "", ""]; Send $s; Nothing ~n; P := $s --> ~n;',
        ([("s", "$", SEND), ("n", "~", NOTHING)], lambda v, m: m.before(v["s"], v["n"])),
        ["the class 'Nothing'"]),
    # the conjunct without a * variable must hold even when the * part is vacuous
    # (docs/patterns.md, "What a match is"): A -(C)-> B is A --> B when C is empty
    "limited precedence through nothing": (
        'Nothing := ["rank 99", "", ""]; Send0 $x; Recv $y; P := $x -(Nothing)-> $y;',
        ([("x", "$", SEND0), ("y", "$", RECV)], lambda v, m: m.before(v["x"], v["y"])),
        ["the class 'Nothing'"]),
    "a partner class without pairs": (
        'NoMsg := ["", "MPI_*SEND", ""].["", "ENTER", ""]; NoMsg $m; Send *a; '
        'P := $m !--> *a;',
        ([("m", "$", partner(SEND, cls(kind="ENTER"))), ("a", "*", SEND)],
         lambda v, m: not m.before(v["m"], v["a"])),
        ["matches no pair of partner events"]),
    "a sub-pattern without a match": (
        'Nothing := ["rank 99", "", ""]; Nothing $n; Never := $n; Never *q; Send $s; '
        'P := $s !--> *q;',
        ([("s", "$", SEND)], lambda v, m: True),
        ["the class 'Nothing'", "the pattern 'Never', used as a variable type, has no match"]),
}


@pytest.mark.parametrize("name", list(EMPTY))
def test_a_class_matching_no_event_is_a_warning(traces, name):
    """A class that matches no event of the trace (scripts search many traces with
    one pattern): no error, a PatternWarning and m.warnings naming it, and the
    matches the semantics give (none for a $ or ~ variable over it, a * variable
    over it holds vacuously), on one thread and several, with and without
    pruning."""
    text, spec, messages = EMPTY[name]
    for trace, model in traces[:3] + traces[-1:]:
        expected = evaluate(model, spec)
        for threads, pruning in ((1, True), (2, True), (1, False)):
            with pytest.warns(earlc.PatternWarning) as caught:
                m = run(trace, text, threads=threads, pruning=pruning)
            assert [tuple(int(x) for x in r) for r in m.events] == expected, (name, threads)
            assert len(m.warnings) == len(messages) == len(caught)
            for message, warning, seen in zip(messages, m.warnings, caught):
                assert message in warning and str(seen.message) == warning
                assert warning.startswith("pattern: line ")
    assert ("vacuously" not in name and "without a match" not in name) or len(expected)


def test_a_class_matching_no_event_on_the_command_line(tmp_path):
    """Zero matches and one warning line naming the class; --strict: exit status 2."""
    text = 'S := ["", "MPI_SEND", "no such region"]; S $a; P := $a;'
    demo = ROOT / "traces" / "demo-ring"
    r = earlc_cli("search", demo, text)
    assert r.returncode == 0 and "P: 0 matches" in r.stdout
    assert r.stderr.strip().splitlines() == [
        "earlc: warning: pattern: line 1, column 6: the class 'S' [\"\", \"MPI_SEND\", "
        "\"no such region\"] matches no event of this trace"]
    r = earlc_cli("search", demo, text, "--format", "json")
    assert json.loads(r.stdout)["warnings"] == [r.stderr.strip()[len("earlc: warning: "):]]
    r = earlc_cli("search", demo, text, "--strict")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith("earlc: error: pattern: line 1, column 6: the class 'S'")


def test_bad_arguments(traces):
    trace, _ = traces[0]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="limit"):
            trace.search(CLASSES + PATTERNS["concurrent pairs"][0], limit=bad)
    with pytest.raises(TypeError):
        trace.search(42)


def earlc_cli(*args):
    return subprocess.run([sys.executable, "-m", "earlc", *map(str, args)],
                          capture_output=True, text=True)


def test_cli(tmp_path):
    trace, conns = client_server(tmp_path / "cs", 4)
    pfile = tmp_path / "connections.pat"
    pfile.write_text(FIGURE_2_8)
    r = earlc_cli("search", tmp_path / "cs", pfile, "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["pattern"] == "LastConnectionEstablished"
    assert out["matches"] == [list(conns[-1])]
    r = earlc_cli("search", tmp_path / "cs", FIGURE_2_8, "--name", "ConnectionEstablished",
                  "--limit", "2", "--threads", "3", "--teams", "2")
    assert r.returncode == 0, r.stderr
    assert "ConnectionEstablished: 2 matches, stopped at the limit" in r.stdout
    assert str(sorted(conns)[1][0]) in r.stdout
    for args, message in [
        ((FIGURE_2_8 + "X := $ce -->;",), "line 10, column 13: expected a class"),
        ((FIGURE_2_8, "--name", "Nope"), "no pattern named 'Nope'"),
        ((FIGURE_2_8, "--limit", "0"), "argument --limit: must be at least 1, not 0"),
        ((FIGURE_2_8, "--threads", "-2"), "argument --threads: must be from 0 to 4096"),
        ((FIGURE_2_8, "--teams", "0"), "argument --teams: must be from 1 to 4096"),
        ((FIGURE_2_8, "--limit", "many"), "'many' is not a whole number"),
        ((FIGURE_2_8, "-o", str(tmp_path / "nowhere" / "m.txt")), "does not exist"),
        ((FIGURE_2_8, "--format", "xml"), "invalid choice"),
        ((tmp_path / "missing.pat",), "neither a pattern file nor a pattern text"),
    ]:
        r = earlc_cli("search", tmp_path / "cs", *args)
        assert r.returncode == 2
        assert r.stdout == ""
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert message in r.stderr
        assert "Traceback" not in r.stderr
    r = earlc_cli("search", tmp_path / "missing", FIGURE_2_8)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_progress_and_accessors(traces):
    trace, _ = traces[0]
    for threads in (1, 2):
        seen = []
        m = run(trace, PATTERNS["concurrent pairs"][0], threads=threads,
                progress=lambda phase, done, total: seen.append((phase, done, total)))
        phases = {p for p, _, _ in seen}
        assert "search" in phases and "clocks" in phases
        last = [x for x in seen if x[0] == "search"][-1]
        assert last[1] == last[2] > 0
        assert [tuple(r) for r in m] == [tuple(int(x) for x in r) for r in m.events]
        assert list(m.column("b")) == list(m.events[:, 1])
        d = m.to_dict()
        assert d["columns"] == ["a", "b"] and d["matches"] == m.events.tolist()
        assert "Q" in repr(m) and str(len(m)) in repr(m)
    assert earlc.search.pattern_names(CLASSES + PATTERNS["sub-pattern variables"][0]) == [
        "Latest", "First"]
