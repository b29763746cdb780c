"""The race analysis of a trace bigger than memory (earlc.parts.races_inturn,
docs/memory.md, "Races"): its parts replayed one after another in one process,
through the scratch folder, give the races of the analysis in one piece
(receives, alternatives, the Lamport marks, findings, warnings, every field of
the JSON, the text and the DataFrame) on every generated program shape, the
bundled and the real traces and Vo's scenarios, in 2 parts up to one part per
process, with both wildcard choices and both clocks; the command line chooses
parts from --memory and stays within the budget; the Lamport value, a longest
path, is right where it comes through an older event of another part; an
inconsistent trace whose cycles cross parts is refused in one line."""
import json
import os
import random

import pytest

import earlc
import earlc.parts
from earlc.parts.budget import parse_size
from earlc import TraceWriter
from earlc.parts import races_inturn
from earlc.parts.causal_inturn import CycleAcrossParts
from earlc.races import RacesError, WildcardsNotRecorded
from conftest import trace_folders
from mpi_script import Script
from races_brute import random_run
from test_inturn import earlc_cli, peak_of, processes
from test_parts_causal import BUNDLED, PROGRAMS
from test_races import crooked_barrier, master_worker, ssend_run


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return trace_folders(tmp_path_factory.mktemp("races-inturn"), PROGRAMS,
                         BUNDLED + ["ring-late-sender"], bundled_prefix="bundled-")


def result(fn):
    """The races as every face shows them, or the error's type and message."""
    try:
        r = fn()
    except (WildcardsNotRecorded, RacesError) as exc:
        return type(exc).__name__, str(exc)
    df = r.to_dataframe()
    return (r.to_dict(), r.to_text(top=1000), df.to_dict("list"),
            r.receives_dataframe().to_dict("list"), r.findings_dataframe().to_dict("list"))


def in_turn(path, parts, scratch, **kw):
    with earlc.parts.in_turn(path, parts=parts, scratch=scratch) as it:
        return result(lambda: it.races(**kw))


def test_races_equal_the_analysis_in_one_piece(traces, tmp_path):
    for name, path in traces.items():
        whole = earlc.open(path)
        n = processes(path)
        for wildcard in ("all", "recorded"):
            for clocks in ("vector", "lamport"):
                want = result(lambda: earlc.races(whole, wildcard=wildcard, clocks=clocks))
                refused = isinstance(want[0], str)  # the trace records no wildcards
                if refused and clocks == "lamport":
                    continue
                for parts in sorted({min(2, n)} if refused else {min(2, n), n}):
                    got = in_turn(path, parts, tmp_path, wildcard=wildcard, clocks=clocks)
                    assert got == want, (name, wildcard, clocks, parts)
                    assert os.listdir(tmp_path) == []


def _same_in_parts(st, tmp_path, wildcard="all"):
    path = st.trace.path
    n = processes(path)
    for clocks in ("vector", "lamport"):
        want = result(lambda: earlc.races(st.trace, wildcard=wildcard, clocks=clocks))
        assert in_turn(path, n, tmp_path, wildcard=wildcard, clocks=clocks) == want, clocks


def test_vos_scenarios_one_part_per_process(tmp_path):
    """The crooked barrier, synchronous sends (whose receivers' clocks go back to
    the sender's part), generated master-worker runs and small random runs."""
    _same_in_parts(crooked_barrier(tmp_path), tmp_path)
    _same_in_parts(ssend_run(tmp_path, True), tmp_path)
    _same_in_parts(master_worker(tmp_path, 5, 3, 2)[0], tmp_path, wildcard=[0])
    for seed in range(8):
        run = random_run(random.Random(seed), tmp_path / ("rnd%d" % seed))
        ev = run.trace.trace.events
        # a predicate sees a part's events: chosen by place and time, not by id
        chosen = {(int(ev.location[run.trace.id(n)]), int(ev.time[run.trace.id(n)]))
                  for n in run.wildcards}
        _same_in_parts(run.trace, tmp_path,
                       wildcard=lambda e: (e.location.index, e.time) in chosen)


def older_foreign_path(tmp_path):
    """Rank 2 takes two messages from rank 0 (its Lamport value is 2), then
    sends four to rank 1 without a tick between them; rank 1 takes them, one
    tick each, and sends x to rank 0.  x's Lamport value is 5, a path through
    rank 2's *first* send (2, then four ticks of rank 1 from there); the
    latest send of rank 2 that reaches x says only 2, and rank 1's own ticks
    say 4.  Rank 0 takes four messages from rank 3 (its value is then 4) and
    then one more while x is in flight: x is an alternative of that receive,
    which Lamport clocks miss (5 > 4) unless x's value were taken too low."""
    s = Script(4)
    s.send(0, 2, name="a0")
    s.send(0, 2, name="a1")
    s.recv(2, 0, name="ra0")
    s.recv(2, 0, name="ra1")
    for k in range(4):
        s.send(2, 1, name="g%d" % k)
    for k in range(4):
        s.recv(1, 2, name="rg%d" % k)
    for k in range(5):
        s.send(3, 0, name="d%d" % k)
    for k in range(4):
        s.recv(0, 3, name="rd%d" % k)
    s.send(1, 0, name="x")
    s.recv(0, 3, name="q")
    s.recv(0, 1, name="rx")
    return s.write(tmp_path / "older")


def test_the_lamport_value_through_an_older_event_of_another_part(tmp_path, monkeypatch):
    st = older_foreign_path(tmp_path)
    path = st.trace.path
    r = earlc.races(st.trace, wildcard="all")
    q = st.id("q")
    alternatives = set(r.alternatives(q).tolist())
    assert st.id("x") in alternatives
    # LLCP misses x: its value (5) is above the receive's (4)
    assert not r.alt_lamport[int(r.alt_start[list(r.recv).index(q)]) +
                             sorted(alternatives).index(st.id("x"))]
    want = [result(lambda: earlc.races(st.trace, wildcard="all", clocks=c))
            for c in ("vector", "lamport")]
    got = [in_turn(path, 4, tmp_path, wildcard="all", clocks=c) for c in ("vector", "lamport")]
    assert got == want
    # with the values of the solve alone (the latest foreign event of each
    # location and the part's own ticks), x's value is 4: a wrong race
    monkeypatch.setattr(races_inturn, "SETTLE", False)
    wrong = [in_turn(path, 4, tmp_path, wildcard="all", clocks=c) for c in ("vector", "lamport")]
    assert wrong[0] != want[0] and wrong[1] != want[1]
    assert wrong[0][0]["summary"]["lamport_missed"] == want[0][0]["summary"][
        "lamport_missed"] - 1


def test_the_sweeps_are_counted(tmp_path):
    st = older_foreign_path(tmp_path)
    with earlc.parts.in_turn(st.trace.path, parts=4, scratch=tmp_path) as it:
        r = it.races(wildcard="all")
    assert r.replay.extra["sweeps"] == 2 and r.replay.extra["method"] == "sweeps"
    # the second sweep replays only the part that read a changed clock
    assert r.replay.extra["part_runs"] == 5


def test_progress_counts_the_extra_sweeps(tmp_path):
    """A second sweep is one pass more on the bar (pass 4), over the part that
    runs again, and the share shown only grows, to the end."""
    st = older_foreign_path(tmp_path)
    seen = []
    with earlc.parts.in_turn(st.trace.path, parts=4, scratch=tmp_path,
                             progress=lambda *a: seen.append(a)) as it:
        r = it.races(wildcard="all")
    assert r.replay.extra["sweeps"] == 2
    labels = [phase.split(":")[0] for phase, _, _ in seen]
    fourth = sorted({l for l in labels if l.startswith("pass 4,")})
    assert len(fourth) == 1 and fourth[0].endswith("of 4"), fourth
    done = [d for _, d, _ in seen]
    assert done == sorted(done) and done[-1] <= 1000
    assert done[labels.index(fourth[0])] >= done[labels.index("pass 3, part 4 of 4")]


def test_the_path_api(traces, tmp_path):
    path = traces["halo"]
    want = result(lambda: earlc.races(earlc.open(path), wildcard="all"))
    assert result(lambda: earlc.races(str(path), wildcard="all", memory="unlimited")) == want
    # 170M: a budget below the analysis in one piece of this small trace
    assert result(lambda: earlc.races(str(path), wildcard="all", memory="170M",
                                      scratch=str(tmp_path))) == want
    assert os.listdir(tmp_path) == []
    with pytest.raises(earlc.parts.BudgetError, match="smallest budget that works"):
        earlc.races(str(path), wildcard="all", memory="2M")
    with pytest.raises(ValueError, match="memory and scratch apply to the races of a path"):
        earlc.races(earlc.open(path), memory="8G")


def test_a_cycle_across_parts_is_refused_in_one_line(tmp_path):
    """Each rank receives what its neighbour sends after its own receive."""
    with TraceWriter(tmp_path / "t", ranks=3, resolution=1000) as w:
        for k in range(3):
            for r in range(3):
                w.recv(r, 100 * k + 10 + r, source=(r + 2) % 3, tag=0, bytes=4)
                w.send(r, 100 * k + 30 + r, dest=(r + 1) % 3, tag=0, bytes=4)
    for clocks in ("vector", "lamport"):
        with earlc.parts.in_turn(tmp_path / "t", parts=3) as it:
            with pytest.raises(CycleAcrossParts, match="cycle across its parts"):
                it.races(wildcard="all", clocks=clocks)
        # in one part the cycle is broken as in one piece
        want = result(lambda: earlc.races(earlc.open(tmp_path / "t"), wildcard="all",
                                          clocks=clocks))
        assert in_turn(tmp_path / "t", 1, None, wildcard="all", clocks=clocks) == want
    r = earlc_cli("races", tmp_path / "t", "--wildcard", "all", "--memory", "163M")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "cycle across its parts" in r.stderr


def test_the_command_line_within_its_budget(halo_2m, tmp_path):
    one = earlc_cli("races", halo_2m, "--wildcard", "all", "--format", "json")
    assert one.returncode == 0, one.stderr
    budget = 300 << 20
    got = tmp_path / "r.json"
    r, peak = peak_of(["races", halo_2m, "--wildcard", "all", "--format", "json",
                       "--memory", "300M", "--scratch", tmp_path, "-o", got])
    assert r.returncode == 0, r.stderr
    assert got.read_text() == one.stdout
    assert peak <= budget, "the races in parts peaked at %.0f MB, above its %.0f MB budget" % (
        peak / 2 ** 20, budget / 2 ** 20)
    assert os.listdir(tmp_path) == ["r.json"]


@pytest.fixture(scope="module")
def halo_64(tmp_path_factory):
    """2 M events of a 64-rank halo exchange: its crossing events' clocks (65
    entries each) and the solve's edges between them weigh as much as a part."""
    return earlc.synth("halo", tmp_path_factory.mktemp("halo-64") / "h", ranks=64,
                       events=2_000_000).path


def test_what_crosses_parts_is_counted_in_the_budget(halo_64, tmp_path):
    """At 200M the parts alone fit, but not with the clocks held across them
    (the races peaked at 243 MB when only the parts were counted): the budget
    is refused in one line with the smallest budget that works, and that
    budget is kept."""
    one = earlc_cli("races", halo_64, "--wildcard", "all", "--format", "json")
    assert one.returncode == 0, one.stderr
    r, peak = peak_of(["races", halo_64, "--wildcard", "all", "--format", "json",
                       "--memory", "200M", "--scratch", tmp_path, "-o", tmp_path / "r.json"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert peak <= 200 << 20, "peaked at %.0f MB" % (peak / 2 ** 20)
    budget = r.stderr.split("the smallest budget that works is ")[1].strip()
    assert os.listdir(tmp_path) == []
    got = tmp_path / "r.json"
    r, peak = peak_of(["races", halo_64, "--wildcard", "all", "--format", "json",
                       "--memory", budget, "--scratch", tmp_path, "-o", got])
    assert r.returncode == 0, r.stderr
    assert got.read_text() == one.stdout
    limit = parse_size(budget)
    assert peak <= limit, "the races in parts peaked at %.0f MB, above its %s budget" % (
        peak / 2 ** 20, budget)
    assert os.listdir(tmp_path) == ["r.json"]


def test_the_parts_are_planned_again_after_pass_a(halo_2m, tmp_path, monkeypatch):
    """A first plan with no room for the crossing clocks (4 parts at 240M)
    overflows once pass A counted them: pass 1 and pass A run again in more
    parts, which give the races of the analysis in one piece."""
    from earlc.parts import inturn

    monkeypatch.setattr(races_inturn, "CROSSING_SHARE", 0.0)
    want = result(lambda: earlc.races(earlc.open(halo_2m), wildcard="all"))
    need = inturn.needs_parts(halo_2m, "240M")
    with inturn.InTurn(halo_2m, need.budget, scratch=tmp_path, model=need.model,
                       representatives=False) as it:
        first = it.pp.parts
        got = it.races(wildcard="all")
        assert got.replay.extra["plans"] == 2 and it.pp.parts > first
        assert result(lambda: got) == want


def test_a_merge_beyond_the_budget_is_refused(traces, tmp_path, monkeypatch):
    monkeypatch.setattr(races_inturn, "MERGE_COPIES", 1e9)
    with pytest.raises(earlc.parts.BudgetError, match="to merge; the smallest budget that "
                                                      "works is [0-9.]+[MG]$"):
        earlc.races(str(traces["halo"]), wildcard="all", memory="170M", scratch=str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_bad_budgets_and_scratch_folders_are_one_line(traces, tmp_path):
    path = traces["halo"]
    (tmp_path / "file").write_text("")
    for args in (["--memory", "lots"], ["--memory", "0"], ["--memory", "2M"],
                 ["--memory", "170M", "--scratch", tmp_path / "none"],
                 ["--memory", "170M", "--scratch", tmp_path / "file"]):
        r = earlc_cli("races", path, "--wildcard", "all", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr
    # which receives are wildcards is decided from the whole trace, once
    r = earlc_cli("races", path, "--memory", "170M", "--scratch", tmp_path)
    assert r.returncode == 2 and "has 96 receives" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_progress_names_the_passes(traces):
    seen = []
    with earlc.parts.in_turn(traces["halo"], parts=3,
                             progress=lambda phase, done, total: seen.append(phase)) as it:
        it.races(wildcard="all")
    labels = {phase.split(":")[0] for phase in seen}
    assert {"pass %d, part %d of 3" % (a, b) for a in (1, 2, 3) for b in (1, 2, 3)} <= labels
    json.dumps(seen)


def test_a_plan_made_again_in_pass_1(tmp_path, monkeypatch):
    """A plan that assumed no ghosts overflows once the first part showed its
    share: pass 1 plans again with more parts, which the races then use."""
    from earlc.parts import inturn

    path = earlc.synth("halo", tmp_path / "h", ranks=16, events=300_000).path
    plan = inturn.plan_parts
    monkeypatch.setattr(inturn, "plan_parts",
                        lambda *a, **kw: plan(*a, **dict(kw, ghost_share=0.0)))
    monkeypatch.setattr(races_inturn, "CROSSING_SHARE", 0.0)  # nor room for the clocks
    want = result(lambda: earlc.races(earlc.open(path), wildcard="all"))
    need = inturn.needs_parts(path, "182M")
    with inturn.InTurn(path, need.budget, scratch=tmp_path, model=need.model,
                       representatives=False) as it:
        first = it.pp.parts
        assert result(lambda: it.races(wildcard="all")) == want
        assert it.passes > 1 and it.pp.parts > first
