"""A Report as a CUBE4 file (.cubex), the format Cube 4.x and Scalasca 2.x read.

A .cubex file is a plain tar archive holding
    anchor.xml       the three trees: metrics, call paths (with their regions) and the
                     system (machine > node > process > thread)
    N.index, N.data  the severities of the metric with id N: the index lists the call
                     paths that have a value, the data holds one row per listed call
                     path with one value per location

Conventions this writer follows (and the tests' reader checks):
- ids of metrics, call paths, system nodes, processes and locations are their
  positions in a depth-first walk of their tree, so a call path's id is also its
  position in Cube's depth-first enumeration, which sparse indices refer to;
- metric values are stored exclusive in both trees, as Cube expects: a call path's
  own value (earlc's severities are charged to one call path, never propagated) and
  the metric's own share (earlc's value less its children's, as Cube adds the
  children back when a metric is folded);
- a child whose unit differs from its parent's becomes a root of the metric tree
  (Cube adds children into parents, which only means something in one unit);
- times are stored as DOUBLE seconds, counts and bytes as UINT64 (INT64 if a
  metric's own share is negative somewhere);
- a metric with no value anywhere has no index and data files (Cube reads zeros).
"""
from __future__ import annotations

import io
import os
import struct
import tarfile
from typing import Dict, List
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ..sums import sum_by_key

INDEX_MAGIC = b"CUBEX.INDEX"
DATA_MAGIC = b"CUBEX.DATA"
INDEX_FORMAT_VERSION = 0
INDEX_SPARSE = 1
ANCHOR_SYNTAX = "4.4"

_PARADIGMS = {"MPI": "mpi", "OPENMP": "openmp", "USER": "user", "COMPILER": "compiler",
              "CUDA": "cuda", "PTHREAD": "pthread", "MEASUREMENT_SYSTEM": "measurement",
              "OPENCL": "opencl", "OPENACC": "openacc", "SHMEM": "shmem", "HIP": "hip",
              "KOKKOS": "kokkos", "SAMPLING": "sampling"}
_LOCATION_TYPES = {"CPU_THREAD": "thread", "ACCELERATOR_STREAM": "accelerator stream",
                   "METRIC": "metric"}
_GROUP_TYPES = {"PROCESS": "process", "ACCELERATOR": "accelerator"}


def cube_name(metric) -> str:
    """The metric's name in Cube: Scalasca's id where it has this metric, so that
    Cube users see the names (and documentation) they know; earlc's otherwise."""
    return getattr(metric, "cube_id", None) or metric.name


def write(report, path) -> str:
    """Write report to path (conventionally *.cubex); returns the path."""
    path = os.fspath(path)
    metrics = _metric_tree(report)
    for entry in metrics:
        entry["own"] = _own_cells(report, entry, metrics)
    calls = _call_tree(report)
    system = _system_tree(report.trace)
    tmp = path + ".part"
    with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tar:
        _add(tar, "anchor.xml", _anchor(report, metrics, calls, system).encode("utf-8"))
        for m in metrics:  # one metric at a time: only its own table is in memory
            files = _metric_files(report, m, calls, system)
            if files is not None:
                _add(tar, "%d.index" % m["id"], files[0])
                _add(tar, "%d.data" % m["id"], files[1])
    os.replace(tmp, path)  # never leave half a file under the real name
    return path


def _add(tar, name: str, payload: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(payload))


# -- the three trees -------------------------------------------------------------------
def _metric_tree(report) -> List[dict]:
    """The metrics in Cube's depth-first order: dicts with id, property, parent index
    (-1 for a root) and the indices of the children."""
    props = report.properties
    by_name = {p.name: p for p in props}

    def cube_parent(p):
        parent = by_name.get(p.parent) if p.parent else None
        return parent.name if parent is not None and parent.unit == p.unit else None

    children: Dict[object, list] = {}
    for p in props:  # report.properties is depth first: children stay in catalog order
        children.setdefault(cube_parent(p), []).append(p)
    out: List[dict] = []

    def walk(p, parent_index):
        entry = {"id": len(out), "property": p, "parent": parent_index, "children": []}
        out.append(entry)
        if parent_index >= 0:
            out[parent_index]["children"].append(entry["id"])
        for c in children.get(p.name, []):
            walk(c, entry["id"])

    for root in children.get(None, []):
        walk(root, -1)
    return out


def _call_tree(report) -> dict:
    """Cube ids of earlc's call paths (depth first), their children, and the region
    each calls: its Cube region index, regions first in the trace's order, then one
    per frame that is no region of the trace (the program at the root, say)."""
    from ..profiles import depth_first_order, frame_names

    parent = np.asarray(report.callpath_parents, dtype=np.int64)
    n = len(parent)
    order = depth_first_order(parent)
    kids: List[List[int]] = [[] for _ in range(n)]
    roots = []
    for c in range(n):
        (kids[parent[c]] if parent[c] >= 0 else roots).append(c)
    cube_id = np.empty(n, dtype=np.int64)
    cube_id[order] = np.arange(n)
    regions = list(report.trace.regions)
    index_of = {r.id: k for k, r in enumerate(regions)}
    names = frame_names(report.callpaths, parent)
    refs = np.asarray(report.callpath_regions, dtype=np.int64).tolist()
    region, extra = [], {}
    for c in range(n):
        k = index_of.get(refs[c])
        if k is None or regions[k].name != names[c]:
            k = extra.setdefault(names[c], len(regions) + len(extra))
        region.append(k)
    return {"cube_id": cube_id, "kids": kids, "roots": roots,
            "region": np.asarray(region, dtype=np.int64), "extra_regions": extra}


def _system_tree(trace) -> dict:
    """Machine and nodes (OTF2's system tree), processes and locations, with Cube's
    location id (depth-first position) of every earlc location index."""
    nodes = list(trace.system_tree)
    node_kids: Dict[object, list] = {}
    for n in nodes:
        node_kids.setdefault(n.parent, []).append(n.id)
    groups: Dict[int, list] = {}
    group_of: Dict[int, object] = {}
    for loc in trace.locations:
        groups.setdefault(loc.process.id, []).append(loc.index)
        group_of[loc.process.id] = loc.process
    known_nodes = {n.id for n in nodes}
    root_ids = node_kids.get(None, [])
    fallback = root_ids[0] if root_ids else None  # processes outside the system tree
    groups_at: Dict[object, list] = {}
    for gid in groups:
        node = group_of[gid].system_node
        groups_at.setdefault(node if node in known_nodes else fallback, []).append(gid)
    location_id = np.full(len(trace.locations), -1, dtype=np.int64)
    order: List[int] = []  # earlc location indices in Cube's order
    group_order: List[int] = []

    def place_groups(node):
        for gid in groups_at.get(node, []):
            group_order.append(gid)
            for index in groups[gid]:
                location_id[index] = len(order)
                order.append(index)

    def walk(node_id):
        place_groups(node_id)
        for k in node_kids.get(node_id, []):
            walk(k)

    if root_ids:
        for r in root_ids:
            walk(r)
    else:
        place_groups(None)  # no system tree: one synthetic machine holds everything
    by_id = {n.id: n for n in nodes}
    return {"nodes": by_id, "node_kids": node_kids, "roots": root_ids, "groups": groups,
            "group_of": group_of, "groups_at": groups_at, "location_id": location_id,
            "order": order}


# -- anchor.xml --------------------------------------------------------------------------
def _text(tag: str, value) -> str:
    return "<%s>%s</%s>" % (tag, escape(str(value)), tag)


def _anchor(report, metrics, calls, system) -> str:
    from ..version import __version__

    trace = report.trace
    out = ['<?xml version="1.0" encoding="UTF-8"?>', '<cube version="%s">' % ANCHOR_SYNTAX]
    for key, value in (("Creator", "earlc %s" % __version__),
                       ("Cube anchor.xml syntax version", ANCHOR_SYNTAX),
                       ("CUBE_CT_AGGR", "SUM"),
                       ("earlc::trace", trace.path),
                       ("earlc::timer_resolution", trace.timer_resolution)):
        out.append("<attr key=%s value=%s/>" % (quoteattr(key), quoteattr(str(value))))
    out.append("<metrics>")

    def metric_xml(entry):
        p = entry["property"]
        own = _dtype_name(p.unit, entry["own"][2])
        out.append('<metric id="%d" type="EXCLUSIVE">' % entry["id"])
        out.extend([_text("disp_name", p.title or p.name), _text("uniq_name", cube_name(p)),
                    _text("dtype", own), _text("uom", p.unit), "<url></url>",
                    _text("descr", " ".join(x for x in (p.description, p.diagnosis) if x))])
        for c in entry["children"]:
            metric_xml(metrics[c])
        out.append("</metric>")

    for entry in metrics:
        if entry["parent"] < 0:
            metric_xml(entry)
    out.append("</metrics>")

    out.append("<program>")
    for k, r in enumerate(trace.regions):
        out.append('<region id="%d" mod=%s begin="%d" end="%d">' % (
            k, quoteattr(r.source_file or ""), _line(r.begin_line), _line(r.end_line)))
        out.extend([_text("name", r.name), _text("mangled_name", r.canonical_name or r.name),
                    _text("paradigm", _PARADIGMS.get(r.paradigm, r.paradigm.lower())),
                    _text("role", r.role.lower().replace("_", " ")), "<url></url>",
                    _text("descr", r.description or "")])
        out.append("</region>")
    for name, k in calls["extra_regions"].items():  # frames that are no OTF2 region
        out.append('<region id="%d" mod="" begin="-1" end="-1">%s%s<paradigm>user</paradigm>'
                   '<role>artificial</role><url></url><descr></descr></region>'
                   % (k, _text("name", name), _text("mangled_name", name)))
    cube_id, kids, region = calls["cube_id"], calls["kids"], calls["region"]
    stack = [("open", c) for c in reversed(calls["roots"])]
    while stack:  # iterative: call trees can be deeper than Python's recursion limit
        action, c = stack.pop()
        if action == "close":
            out.append("</cnode>")
            continue
        out.append('<cnode id="%d" calleeId="%d">' % (cube_id[c], region[c]))
        stack.append(("close", c))
        stack.extend(("open", k) for k in reversed(kids[c]))
    out.append("</program>")

    out.append("<system>")
    counters = {"node": 0, "group": 0}
    locations = trace.locations

    def groups_xml(node):
        for gid in system["groups_at"].get(node, []):
            proc = system["group_of"][gid]
            out.append('<locationgroup Id="%d">' % counters["group"])
            counters["group"] += 1
            rank = proc.rank if proc.rank >= 0 else gid
            out.extend([_text("name", proc.name or "process %d" % rank), _text("rank", rank),
                        _text("type", _GROUP_TYPES.get(proc.type, "process"))])
            members = system["groups"][gid]
            # CPU threads by their number, other locations (streams) after the threads
            after = max([locations[i].thread for i in members] + [-1]) + 1
            for index in members:
                loc = locations[index]
                if loc.thread >= 0:
                    rank_in_group = loc.thread
                else:
                    rank_in_group, after = after, after + 1
                out.append('<location Id="%d">' % system["location_id"][index])
                out.extend([_text("name", loc.name or "location %d" % index),
                            _text("rank", rank_in_group),
                            _text("type", _LOCATION_TYPES.get(loc.type, "thread"))])
                out.append("</location>")
            out.append("</locationgroup>")

    def node_xml(node_id):
        n = system["nodes"][node_id]
        out.append('<systemtreenode Id="%d">' % counters["node"])
        counters["node"] += 1
        out.extend([_text("name", n.name), _text("class", n.class_name or "node")])
        groups_xml(node_id)
        for k in system["node_kids"].get(node_id, []):
            node_xml(k)
        out.append("</systemtreenode>")

    if system["roots"]:
        for r in system["roots"]:
            node_xml(r)
    else:
        out.append('<systemtreenode Id="0">%s%s' % (_text("name", "machine"),
                                                     _text("class", "machine")))
        groups_xml(None)
        out.append("</systemtreenode>")
    out.append("</system>")
    out.append("</cube>")
    return "\n".join(out) + "\n"


def _line(n: int) -> int:
    return n if n and n > 0 else -1


# -- severities --------------------------------------------------------------------------
def _own_cells(report, entry, metrics):
    """(cnode, location, value): the metric's value less its Cube children's, per cell."""
    c, l, v = report.cells(entry["property"].name)
    parts_c, parts_l, parts_v = [c], [l], [v]
    for k in entry["children"]:
        cc, cl, cv = report.cells(metrics[k]["property"].name)
        parts_c.append(cc)
        parts_l.append(cl)
        parts_v.append(-cv)
    c = np.concatenate(parts_c).astype(np.int64)
    l = np.concatenate(parts_l).astype(np.int64)
    v = np.concatenate(parts_v).astype(np.int64)
    n_loc = len(report.trace.locations)
    keys, sums = sum_by_key(c * n_loc + l, v)
    keep = sums != 0
    keys, sums = keys[keep], sums[keep]
    return keys // n_loc, keys % n_loc, sums


def _dtype_name(unit: str, own_values: np.ndarray) -> str:
    if unit == "sec":
        return "DOUBLE"
    return "INT64" if len(own_values) and own_values.min() < 0 else "UINT64"


def _metric_files(report, entry, calls, system):
    """(index bytes, data bytes) of one metric, or None when it is zero everywhere."""
    cnode, loc, value = entry["own"]
    if not len(value):
        return None
    p = entry["property"]
    rows_cube = calls["cube_id"][cnode]
    listed = np.unique(rows_cube)  # Cube reads rows in ascending call path id
    row = np.searchsorted(listed, rows_cube)
    col = system["location_id"][loc]
    n_loc = len(system["order"])
    if p.unit == "sec":
        table = np.zeros((len(listed), n_loc), dtype="<f8")
        table[row, col] = value / report.resolution
    else:
        dtype = "<i8" if value.min() < 0 else "<u8"
        table = np.zeros((len(listed), n_loc), dtype=dtype)
        table[row, col] = value
    index = (INDEX_MAGIC + struct.pack("<iHBI", 1, INDEX_FORMAT_VERSION, INDEX_SPARSE, len(listed))
             + listed.astype("<u4").tobytes())
    return index, DATA_MAGIC + table.tobytes()
