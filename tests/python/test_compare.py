"""`earlc compare` and earlc.comparison on generated traces whose differences are known
by construction (expected.json): one more delayed iteration, twice the ranks."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

import earlc
from earlc.comparison import TOTAL, CompareError, compare

ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
RECV = "main/iteration/ring_exchange/MPI_Recv"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three rings: rank 2 delayed in iterations 0 and 3 (a), in 0, 2 and 4 (b: one more
    late sender), and the same as a on 8 ranks (c)."""
    base = tmp_path_factory.mktemp("compare")
    common = dict(iterations=6, delay=400, delay_rank=2)
    a = earlc.synth("ring", base / "a", ranks=4, delay_every=3, **common)
    b = earlc.synth("ring", base / "b", ranks=4, delay_every=2, **common)
    c = earlc.synth("ring", base / "c", ranks=8, delay_every=3, **common)
    return {k: (base / k, r.expected()) for k, r in (("a", a), ("b", b), ("c", c))}


def total(expected, name):
    return expected["properties"][name]["total"]


def test_one_more_late_sender(runs):
    (pa, ea), (pb, eb) = runs["a"], runs["b"]
    c = compare(pa, pb)
    assert c.labels == ["a", "b"] and not c.different_scale
    # exact integer values, aligned by name
    for name in ("late_sender", "time"):
        assert c.runs[0].values[(name, TOTAL)] == total(ea, name)
        assert c.runs[1].values[(name, TOTAL)] == total(eb, name)
    by_path = eb["properties"]["late_sender"]["by_callpath"]
    assert c.runs[1].values[("late_sender", RECV)] == by_path[RECV]
    ch = c.changes()
    assert ch.attrs["basis"] == "total"
    row = ch.loc[("late_sender", RECV)]
    grown = total(eb, "late_sender") - total(ea, "late_sender")
    assert grown > 0
    assert row["diff: b"] == pytest.approx(grown / 1e9, rel=1e-12, abs=1e-15)
    assert row["ratio: b"] == pytest.approx(total(eb, "late_sender") / total(ea, "late_sender"))
    # the largest growth of a time first
    assert ch.iloc[0]["diff: b"] == ch[ch["unit"] == "sec"]["diff: b"].max()
    top = c.top_changes(5)
    assert top.index[0] == ("late_sender", RECV)
    text = c.to_text()
    from earlc.display import format_seconds

    assert "late_sender" in text and "b +%s" % format_seconds(grown / 1e9) in text


def test_twice_the_ranks(runs):
    (pa, ea), (pc, ec) = runs["a"], runs["c"]
    c = compare(pa, pc)
    assert c.processes == [4, 8] and c.different_scale
    t = c.table
    assert list(t.columns) == ["a", "c"]
    assert t.loc[("late_sender", TOTAL), "c"] == pytest.approx(total(ec, "late_sender") / 1e9)
    p = c.per_process
    assert p.loc[("late_sender", TOTAL), "a"] == pytest.approx(total(ea, "late_sender") / 4e9)
    assert p.loc[("late_sender", TOTAL), "c"] == pytest.approx(total(ec, "late_sender") / 8e9)
    ch = c.changes()
    assert ch.attrs["basis"] == "per_process"
    want = total(ec, "late_sender") / 8e9 - total(ea, "late_sender") / 4e9
    assert ch.loc[("late_sender", TOTAL), "diff: c"] == pytest.approx(want, abs=1e-15)
    tot = c.changes(basis="total")
    assert tot.loc[("visits", TOTAL), "ratio: c"] == pytest.approx(2.0)
    assert "per process" in c.to_text()


def test_three_runs_and_outputs(runs, tmp_path):
    c = compare(*(runs[k][0] for k in "abc"), labels=["before", "after", "big"])
    assert list(c.table.columns) == ["before", "after", "big"]
    ch = c.changes()
    assert {"diff: after", "ratio: after", "diff: big", "ratio: big"} <= set(ch.columns)
    pytest.importorskip("matplotlib")
    from matplotlib.patches import Rectangle

    fig = c.plot(tmp_path / "top.png")
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(bars) == 2 * len(c.top_changes(12))
    assert (tmp_path / "top.png").read_bytes()[:4] == b"\x89PNG"


def test_to_thicket(runs):
    pytest.importorskip("thicket")
    c = compare(runs["a"][0], runs["b"][0])
    tk = c.to_thicket()
    assert sorted(tk.metadata["run"]) == ["a", "b"]
    assert "late_sender" in tk.dataframe.columns


def test_runs_that_share_no_call_path(tmp_path):
    for name, region in (("x", "alpha"), ("y", "beta")):
        with earlc.TraceWriter(tmp_path / name, ranks=1) as w:
            w.enter(0, 10, region)
            w.leave(0, 20, region)
    with pytest.raises(CompareError, match="share no call path"):
        compare(tmp_path / "x", tmp_path / "y")
    r = subprocess.run([sys.executable, "-m", "earlc", "compare", str(tmp_path / "x"),
                        str(tmp_path / "y")], capture_output=True, text=True, env=ENV)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "share no call path" in r.stderr


def test_cli(runs, tmp_path):
    pa, pb = runs["a"][0], runs["b"][0]
    r = subprocess.run([sys.executable, "-m", "earlc", "compare", str(pa), str(pb), "--format",
                        "json", "--plot", str(tmp_path / "p.png")],
                       capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [x["label"] for x in data["runs"]] == ["a", "b"]
    rows = {(x["metric"], x["callpath"]): x for x in data["changes"]}
    assert rows[("late_sender", RECV)]["diff: b"] > 0
    assert (tmp_path / "p.png").exists()
    for args, message in (([str(pa)], "two traces or more"),
                          ([str(pa), str(tmp_path / "nope")], "no such file"),
                          ([str(pa), str(pb), "--labels", "one"], "names 1 runs"),
                          ([str(pa), str(pb), "--plot", str(tmp_path / "x.gif")], ".png")):
        r = subprocess.run([sys.executable, "-m", "earlc", "compare", *args],
                           capture_output=True, text=True, env=ENV)
        assert r.returncode == 2 and message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
