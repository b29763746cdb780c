"""report.to_hatchet(): the GraphFrame's graph is the call tree, its rows the
(call path, location) cells of the JSON report, its "(inc)" columns the sums over
each subtree; without hatchet, one clear message."""
import json
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import earlc
from conftest import REFERENCE_NAMES, reference_trace
from earlc.optional import MissingDependency

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    return earlc.analyze(earlc.open(ROOT / "traces" / "hybrid"))


def test_message_without_hatchet(report, monkeypatch):
    monkeypatch.setitem(sys.modules, "hatchet", None)  # import fails as if absent
    with pytest.raises(MissingDependency) as err:
        report.to_hatchet()
    assert str(err.value) == ("report.to_hatchet() needs hatchet, which is not installed: "
                              "pip install llnl-hatchet")
    assert isinstance(err.value, ImportError)


def test_graphframe_equals_the_json_report(report):
    pytest.importorskip("hatchet")
    rep = json.loads(report.to_json())
    gf = report.to_hatchet()
    res = rep["trace"]["timer_resolution"]
    # graph: one node per call path, with the same paths
    paths = sorted("/".join(f.frame["name"] for f in node.path()) for node in gf.graph.traverse())
    assert paths == sorted(c["path"] for c in rep["callpaths"])
    df = gf.dataframe.reset_index()
    assert list(gf.dataframe.index.names) == ["node", "rank", "thread"]
    df["path"] = ["/".join(f.frame["name"] for f in n.path()) for n in df["node"]]
    units = {m["name"]: m["unit"] for m in rep["metrics"]}
    want = defaultdict(dict)
    for s in rep["severities"]:
        path = rep["callpaths"][s["callpath"]]["path"]
        want[s["metric"]][(path, s["location"])] = s["value"]
    for name, unit in units.items():
        scale = res if unit == "sec" else 1
        cells = list(zip(df["path"], df["location"]))
        got = {k: round(v * scale) for k, v in zip(cells, df[name]) if v}
        assert got == want[name], name
        # inclusive: the subtree's sum per location
        inc = {}
        for (path, loc), v in want[name].items():
            parts = path.split("/")
            for k in range(1, len(parts) + 1):
                key = ("/".join(parts[:k]), loc)
                inc[key] = inc.get(key, 0) + v
        got = {k: round(v * scale) for k, v in zip(cells, df[name + " (inc)"]) if v}
        assert got == inc, name
    # rows: every (call path, location), zeros included (hatchet's views look up
    # every node on the rank and thread they show)
    assert sorted(zip(df["path"], df["location"])) == sorted(
        (c["path"], l["index"]) for c in rep["callpaths"] for l in rep["locations"])
    ranks = {(l["rank"], l["thread"]) for l in rep["locations"]}
    assert set(zip(df["rank"], df["thread"])) == ranks
    assert "late_sender" in gf.exc_metrics and "late_sender (inc)" in gf.inc_metrics
    assert "MPI_Waitall" in gf.tree(metric_column="time (inc)")


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_tree_of_every_reference_trace(name):
    """The example of docs/exports.md on every real trace: gf.tree() reads every node
    at rank 0, thread 0, which a sparse frame lacks for a call path that location never
    entered (a CUDA kernel, a worker thread's task)."""
    pytest.importorskip("hatchet")
    gf = earlc.analyze(earlc.open(reference_trace(name))).to_hatchet()
    text = gf.tree(metric_column="time (inc)")
    for node in gf.graph.traverse():
        assert node.frame["name"][:15] in text  # hatchet shortens long names
    for rank, thread in set(zip(gf.dataframe.index.get_level_values("rank"),
                                gf.dataframe.index.get_level_values("thread"))):
        gf.tree(metric_column="time (inc)", rank=rank, thread=thread)


def test_thicket_compares_runs():
    """Thicket stacks the GraphFrames of two runs; each run's values stay its own."""
    pytest.importorskip("hatchet")
    thicket = pytest.importorskip("thicket")
    reports = {name: earlc.analyze(earlc.open(ROOT / "traces" / name))
               for name in ("ring-late-sender", "demo-ring")}
    runs = [thicket.Thicket.thicketize_graphframe(r.to_hatchet(), name)
            for name, r in reports.items()]
    tk = thicket.Thicket.concat_thickets(runs, disable_tqdm=True)
    assert list(tk.dataframe.index.names) == ["node", "profile", "rank", "thread"]
    by_trace = dict(zip(tk.metadata["earlc_trace"], tk.metadata.index))
    for name, r in reports.items():
        profile = by_trace[r.trace.path]
        rows = tk.dataframe.xs(profile, level="profile")
        assert round(rows["late_sender"].sum() * r.resolution) == r.total("late_sender")
        assert int(rows["visits"].sum()) == r.total("visits")
