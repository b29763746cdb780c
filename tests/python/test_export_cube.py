"""CUBE4 export: a reader written here from the format's description (tar of
anchor.xml and per-metric .index/.data files) reads back every cell of the
.cubex and the values must equal the JSON report's exactly, per metric, call
path and location, after adding each metric's children back as Cube does."""
import json
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import earlc
from conftest import reference_trace

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "traces" / "demo-ring"
TRACES = {
    "demo-ring": lambda: ROOT / "traces" / "demo-ring",
    "hybrid": lambda: ROOT / "traces" / "hybrid",
    "collectives": lambda: ROOT / "traces" / "collectives",
    "casita-cuda-simple": lambda: reference_trace("casita-cuda-simple"),
    "pipit-ping-pong": lambda: reference_trace("pipit-ping-pong"),
}
DTYPES = {"DOUBLE": "<f8", "UINT64": "<u8", "INT64": "<i8"}


class CubeFile:
    """What a .cubex holds: metric tree, call paths, locations and every value."""

    def __init__(self, path):
        with tarfile.open(path) as tar:
            self.members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
        root = ET.fromstring(self.members["anchor.xml"])
        assert root.tag == "cube" and root.get("version").startswith("4.")
        self.attrs = {a.get("key"): a.get("value") for a in root.findall("attr")}
        # metrics: nesting is the tree
        self.metrics = {}  # id -> dict
        self.metric_children = defaultdict(list)

        def walk_metric(el, parent):
            mid = int(el.get("id"))
            self.metrics[mid] = {"name": el.findtext("uniq_name"), "unit": el.findtext("uom"),
                                 "dtype": el.findtext("dtype"), "parent": parent,
                                 "title": el.findtext("disp_name")}
            if parent is not None:
                self.metric_children[parent].append(mid)
            for c in el.findall("metric"):
                walk_metric(c, mid)

        for m in root.find("metrics").findall("metric"):
            walk_metric(m, None)
        # call tree: the depth-first position of a cnode is what sparse indices name
        program = root.find("program")
        regions = {int(r.get("id")): r.findtext("name") for r in program.findall("region")}
        self.cnode_path = {}
        self.depth_first = []

        def walk_cnode(el, prefix):
            cid = int(el.get("id"))
            path = regions[int(el.get("calleeId"))] if not prefix else \
                prefix + "/" + regions[int(el.get("calleeId"))]
            self.cnode_path[cid] = path
            self.depth_first.append(cid)
            for c in el.findall("cnode"):
                walk_cnode(c, path)

        for c in program.findall("cnode"):
            walk_cnode(c, "")
        # system tree: locations keyed by (process rank, location name)
        self.location_key = {}
        self.system_classes = []

        def walk_system(el):
            self.system_classes.append(el.findtext("class"))
            for g in el.findall("locationgroup"):
                rank = int(g.findtext("rank"))
                members = g.findall("location")
                ranks = [int(loc.findtext("rank")) for loc in members]
                assert len(set(ranks)) == len(ranks)  # a location's rank names it in its group
                for loc in members:
                    self.location_key[int(loc.get("Id"))] = (rank, loc.findtext("name"))
            for c in el.findall("systemtreenode"):
                walk_system(c)

        for node in root.find("system").findall("systemtreenode"):
            walk_system(node)
        assert sorted(self.location_key) == list(range(len(self.location_key)))
        self.own = {mid: self._read_values(mid) for mid in self.metrics}

    def _read_values(self, mid):
        """{(cnode id, location id): the metric's own value} from N.index and N.data."""
        index = self.members.get("%d.index" % mid)
        if index is None:
            assert "%d.data" % mid not in self.members
            return {}
        assert index[:11] == b"CUBEX.INDEX"
        one = int.from_bytes(index[11:15], "little", signed=True)
        assert one == 1  # written little-endian
        kind = index[17]
        n = int.from_bytes(index[18:22], "little")
        assert kind == 1 and len(index) == 22 + 4 * n
        rows = np.frombuffer(index[22:], dtype="<u4")
        data = self.members["%d.data" % mid]
        assert data[:10] == b"CUBEX.DATA"
        n_loc = len(self.location_key)
        values = np.frombuffer(data[10:], dtype=DTYPES[self.metrics[mid]["dtype"]])
        assert len(values) == n * n_loc
        values = values.reshape(n, n_loc)
        out = {}
        for r, tree_index in enumerate(rows.tolist()):
            cnode = self.depth_first[tree_index]
            for loc in range(n_loc):
                if values[r, loc] != 0:
                    out[(cnode, loc)] = values[r, loc].item()
        return out

    def inclusive(self, mid):
        """Own values plus the children's, as Cube shows a folded metric."""
        total = defaultdict(float)
        stack = [mid]
        while stack:
            m = stack.pop()
            for k, v in self.own[m].items():
                total[k] += v
            stack += self.metric_children[m]
        return total


@pytest.fixture(scope="module", params=sorted(TRACES))
def exported(request, tmp_path_factory):
    trace = earlc.open(TRACES[request.param]())
    report = earlc.analyze(trace)
    out = tmp_path_factory.mktemp("cube") / "report.cubex"
    assert report.to_cube(out) == str(out)
    return trace, json.loads(report.to_json()), CubeFile(out)


def test_every_cell_equals_the_json_report(exported):
    trace, rep, cube = exported
    resolution = rep["trace"]["timer_resolution"]
    paths = {c["id"]: c["path"] for c in rep["callpaths"]}
    loc_key = {l["index"]: (l["rank"], l["name"]) for l in rep["locations"]}
    assert len(set(loc_key.values())) == len(loc_key)  # the key identifies a location
    by_cube_name = {m["name"]: mid for mid, m in cube.metrics.items()}
    assert len(by_cube_name) == len(rep["metrics"])
    want = defaultdict(dict)
    for s in rep["severities"]:
        want[s["metric"]][(paths[s["callpath"]], loc_key[s["location"]])] = s["value"]
    for m in rep["metrics"]:
        mid = by_cube_name[m.get("cube_id") or m["name"]]
        assert cube.metrics[mid]["unit"] == m["unit"]
        assert cube.metrics[mid]["title"] == m["title"]
        got = {}
        for (cnode, loc), v in cube.inclusive(mid).items():
            ticks = round(v * resolution) if m["unit"] == "sec" else int(v)
            if ticks:
                got[(cube.cnode_path[cnode], cube.location_key[loc])] = ticks
        assert got == want[m["name"]], m["name"]
        assert sum(got.values()) == m["value"], m["name"]


def test_trees_match_the_report(exported):
    trace, rep, cube = exported
    assert sorted(cube.cnode_path.values()) == sorted(c["path"] for c in rep["callpaths"])
    assert len(cube.location_key) == len(rep["locations"])
    assert cube.attrs["Creator"].startswith("earlc")
    # a child sits under its parent in Cube when both have the same unit
    names = {mid: m["name"] for mid, m in cube.metrics.items()}
    for m in rep["metrics"]:
        mid = [k for k, v in names.items() if v == (m.get("cube_id") or m["name"])][0]
        parent = cube.metrics[mid]["parent"]
        if parent is not None:
            assert names[parent] in [(p.get("cube_id") or p["name"]) for p in rep["metrics"]
                                     if p["name"] == m["parent"]]


def test_system_tree_has_machine_and_nodes(tmp_path):
    trace = earlc.open(reference_trace("casita-jacobi-hybrid"))
    report = earlc.analyze(trace, properties=["visits"])
    cube = CubeFile(report.to_cube(tmp_path / "r.cubex"))
    assert cube.system_classes[:1] == ["machine"] and cube.system_classes.count("node") == 2
    ranks = {rank for rank, _ in cube.location_key.values()}
    assert ranks == {l.rank for l in trace.locations}
    assert len(cube.location_key) == len(trace.locations)


def test_cube_id_names_the_metric(tmp_path):
    """Properties that carry Scalasca's id are named by it in Cube."""
    trace = earlc.open(ROOT / "traces" / "demo-ring")
    report = earlc.analyze(trace)
    late = report._by_name["late_sender"]
    had = "cube_id" in type(late).__dict__
    old = getattr(type(late), "cube_id", None)
    type(late).cube_id = "mpi_latesender"
    try:
        cube = CubeFile(report.to_cube(tmp_path / "r.cubex"))
    finally:
        if had:
            type(late).cube_id = old
        else:
            del type(late).cube_id
    names = {m["name"] for m in cube.metrics.values()}
    assert "mpi_latesender" in names and "late_sender" not in names


def test_third_party_reader_reads_it(tmp_path):
    """pyCubexR (a reader of Cube files by others) finds the same values."""
    pycubexr = pytest.importorskip("pycubexr")
    trace = earlc.open(ROOT / "traces" / "demo-ring")
    report = earlc.analyze(trace)
    path = report.to_cube(tmp_path / "r.cubex")
    resolution = trace.timer_resolution
    with pycubexr.CubexParser(path) as cube:
        visits = [m for m in cube.get_metrics() if m.name == "visits"][0]
        values = cube.get_metric_values(metric=visits)
        total = sum(int(np.sum(values.cnode_values(cube.get_cnode(c))))
                    for c in values.cnode_indices)
        assert total == report.total("visits")
        # a time metric with its own share in the file: the largest leaf
        leaves = [p for p in report.properties if p.unit == "sec" and report.total(p.name)
                  and not any(q.parent == p.name for q in report.properties)]
        leaf = max(leaves, key=lambda p: report.total(p.name))
        name = getattr(leaf, "cube_id", None) or leaf.name
        metric = [m for m in _all_metrics(cube.get_metrics()) if m.name == name][0]
        values = cube.get_metric_values(metric=metric)
        own = sum(float(np.sum(values.cnode_values(cube.get_cnode(c))))
                  for c in values.cnode_indices)
        assert round(own * resolution) == report.total(leaf.name)


def _all_metrics(metrics):
    for m in metrics:
        yield m
        yield from _all_metrics(getattr(m, "childs", []))


def test_cli_writes_cube(tmp_path):
    out = tmp_path / "r.cubex"
    r = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(DEMO),
                        "--format", "cube", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert CubeFile(out).metrics


def test_cli_cube_needs_an_output_file():
    r = subprocess.run([sys.executable, "-m", "earlc", "analyze", str(DEMO),
                        "--format", "cube"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "-o" in r.stderr
