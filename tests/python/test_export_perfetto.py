"""Perfetto (Chrome trace-event JSON) export, read back by the format's rules:
slices well nested on every track, every flow with both ends inside slices of
their tracks, wait states on top of the call that waits; and compared with the
trace: region instances found by walking each location's ENTER/LEAVE events here,
messages matched here first-in first-out per (sender, receiver, communicator,
tag), severities summing to the report's totals."""
import json
import subprocess
import sys
from collections import Counter, defaultdict, deque
from pathlib import Path

import pytest

import earlc
from earlc.timeline import WAIT_AROUND, WAIT_BEFORE
from conftest import reference_trace

ROOT = Path(__file__).resolve().parents[2]
ENTER, LEAVE = earlc.KINDS["ENTER"], earlc.KINDS["LEAVE"]
SENDS = {earlc.KINDS["MPI_SEND"], earlc.KINDS["MPI_ISEND"]}
RECVS = {earlc.KINDS["MPI_RECV"], earlc.KINDS["MPI_IRECV"]}


def to_ticks(trace, us):
    return trace.start_time + round(us * trace.timer_resolution / 1e6)


def read_back(trace, path):
    doc = json.loads(Path(path).read_text())
    events = doc["traceEvents"]
    tid_name = {}
    regions = defaultdict(list)   # tid -> [(name, start, end)]
    waits = defaultdict(list)     # tid -> [(property, start, end, severity)]
    flows = defaultdict(dict)     # id -> {"s": (tid, t), "f": (tid, t)}
    for e in events:
        ph = e["ph"]
        if ph == "M":
            if e["name"] == "thread_name":
                tid_name[e["tid"]] = e["args"]["name"]
            continue
        if ph == "X":
            start = to_ticks(trace, e["ts"])
            end = to_ticks(trace, e["ts"] + e["dur"])
            if e["cat"] == "wait_state":
                waits[e["tid"]].append((e["args"]["property"], start, end,
                                        e["args"]["severity_ticks"]))
            else:
                regions[e["tid"]].append((e["name"], start, end))
        elif ph in ("s", "f"):
            assert ph not in flows[e["id"]], "flow %s has two %s ends" % (e["id"], ph)
            flows[e["id"]][ph] = (e["tid"], to_ticks(trace, e["ts"]))
        else:
            raise AssertionError("unexpected phase %r" % ph)
    return doc, tid_name, regions, waits, flows


def check_nesting(slices):
    """Slices on one track either nest or follow each other."""
    stack = []
    for name, start, end in sorted(slices, key=lambda s: (s[1], -s[2])):
        while stack and stack[-1][2] <= start and not (stack[-1][1] == stack[-1][2] == start):
            stack.pop()
        if stack:
            assert end <= stack[-1][2], "%s [%d, %d] overlaps %s" % (name, start, end, stack[-1])
        stack.append((name, start, end))


def inside_some(slices, start, end):
    return any(s <= start and end <= e for _, s, e in slices)


def expected_regions(trace, first, last, locations):
    """Region instances of each location overlapping [first, last], clipped."""
    ev = trace.events
    names = {r.id: r.name for r in trace.regions}
    out = {}
    for loc in locations:
        stack, inst = [], []
        for i in ev.of_location(loc).tolist():
            k = int(ev.kind[i])
            if k == ENTER:
                stack.append((int(ev.region[i]), int(ev.time[i])))
            elif k == LEAVE and stack:
                region, t = stack.pop()
                inst.append((region, t, int(ev.time[i])))
        inst += [(region, t, None) for region, t in stack]
        rows = []
        for region, t, leave in inst:
            end = last if leave is None else min(leave, last)
            start = max(t, first)
            if t > last or end < start or (t < first and end == first):
                continue
            rows.append((names[region], start, end))
        out[loc] = sorted(rows)
    return out


def expected_messages(trace, first, last, locations):
    """(sender, receiver, send time, receive time) matched FIFO per channel."""
    ev = trace.events
    queues = defaultdict(deque)
    out = []
    sel = set(locations)
    for i in range(len(trace)):
        k = int(ev.kind[i])
        if k in SENDS:
            key = (int(ev.location[i]), int(ev.peer[i]), int(ev.communicator[i]), int(ev.tag[i]))
            queues[key].append(i)
        elif k in RECVS:
            key = (int(ev.peer[i]), int(ev.location[i]), int(ev.communicator[i]), int(ev.tag[i]))
            s = queues[key].popleft()
            ts, tr = int(ev.time[s]), int(ev.time[i])
            if first <= ts and tr <= last and key[0] in sel and key[1] in sel:
                out.append((key[0], key[1], ts, tr))
    return sorted(out)


CASES = {
    "hybrid": (lambda: ROOT / "traces" / "hybrid", {}),
    "hybrid-window": (lambda: ROOT / "traces" / "hybrid",
                      dict(start=1.5e-6, end=4.2e-6, locations=[0, 1, 4, 5, 6])),
    "pingpong-wrong-order": (lambda: ROOT / "traces" / "pingpong-wrong-order", {}),
    "collectives": (lambda: ROOT / "traces" / "collectives", dict(start=1e-6)),
    "omp-locks": (lambda: ROOT / "traces" / "omp-locks", {}),
    "pipit-ping-pong": (lambda: reference_trace("pipit-ping-pong"), {}),
    "jacobi-window": (lambda: reference_trace("casita-jacobi-hybrid"),
                      dict(start=0.5, end=0.52, wait_states=False)),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def exported(request, tmp_path_factory):
    where, opts = CASES[request.param]
    trace = earlc.open(where())
    out = tmp_path_factory.mktemp("perfetto") / "trace.json"
    written = trace.to_perfetto(out, **opts)
    return trace, opts, written, read_back(trace, out)


def test_slices_nest_on_every_track(exported):
    trace, opts, written, (doc, tid_name, regions, waits, flows) = exported
    for tid, slices in regions.items():
        check_nesting(slices)
        # a wait state sits inside the call that waits; thread management beside
        # the parallel region it is charged to (before it: the fork part, after
        # it: the join part)
        for prop, start, end, _ in waits.get(tid, []):
            if prop in WAIT_BEFORE or prop in WAIT_AROUND:
                assert any(end == s or start == e for _, s, e in slices), (prop, start, end)
            else:
                assert inside_some(slices, start, end), (prop, start, end)
    assert sum(len(s) for s in regions.values()) == written["slices"]


def test_regions_equal_the_trace(exported):
    trace, opts, written, (doc, tid_name, regions, waits, flows) = exported
    first, last = doc["otherData"]["window_ticks"]
    locations = opts.get("locations", range(len(trace.locations)))
    want = expected_regions(trace, first, last, locations)
    for loc in locations:
        assert sorted(regions.get(loc + 1, [])) == want[loc], loc
    assert set(regions) <= {loc + 1 for loc in locations}
    assert set(tid_name) == {loc + 1 for loc in locations}


def test_flows_have_both_ends_and_equal_the_messages(exported):
    trace, opts, written, (doc, tid_name, regions, waits, flows) = exported
    first, last = doc["otherData"]["window_ticks"]
    got = []
    for fid, ends in flows.items():
        assert set(ends) == {"s", "f"}, fid
        (stid, ts), (rtid, tr) = ends["s"], ends["f"]
        assert ts <= tr
        assert inside_some(regions[stid], ts, ts) and inside_some(regions[rtid], tr, tr)
        got.append((stid - 1, rtid - 1, ts, tr))
    locations = opts.get("locations", range(len(trace.locations)))
    assert sorted(got) == expected_messages(trace, first, last, locations)
    assert len(got) == written["flows"]


def test_wait_states_sum_to_the_report(exported):
    trace, opts, written, (doc, tid_name, regions, waits, flows) = exported
    if opts.get("wait_states") is False:
        assert not waits and written["wait_states"] == 0
        return
    if opts:  # a window cuts occurrences; the whole trace must add up exactly
        return
    report = earlc.analyze(trace)
    total = Counter()
    for rows in waits.values():
        for prop, start, end, severity in rows:
            total[prop] += severity
            assert end - start <= severity
    for p in report.properties:
        if p.unit == "sec" and p.region_class is None and p.name in report.worst:
            assert total[p.name] == report.total(p.name), p.name
    assert any(total.values()) == any(report.total(p) for p in total)


def test_cli_export_window(tmp_path):
    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, "-m", "earlc", "export", str(ROOT / "traces" / "hybrid"),
                        "--format", "perfetto", "-o", str(out), "--from", "1500ns", "--to",
                        "4.2us", "--locations", "0-1,4-6"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["otherData"]["locations"] == [0, 1, 4, 5, 6]
    trace = earlc.open(ROOT / "traces" / "hybrid")
    assert doc["otherData"]["window_ticks"] == [trace.start_time + 1500, trace.start_time + 4200]


@pytest.mark.parametrize("args,words", [
    (["--from", "soon"], "no time"),
    (["--to=-3ms"], "no time"),
    (["--from", "2us", "--to", "1us"], "before"),
    (["--locations", "0,x"], "location"),
    (["--locations", "3-1"], "empty"),
    (["--locations", "99"], "does not exist"),
    (["--from", "5"], "outside the trace"),
])
def test_cli_export_bad_values(tmp_path, capsys, args, words):
    from earlc.cli import main

    try:  # a value argparse refuses exits from the parser, one checked later returns
        code = main(["export", str(ROOT / "traces" / "hybrid"), "-o", str(tmp_path / "t.json")]
                    + args)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(("earlc: error:", "earlc export: error:"))
    assert words in err
    assert not (tmp_path / "t.json").exists()


def test_empty_windows_are_valid_files(tmp_path):
    trace = earlc.open(ROOT / "traces" / "hybrid")
    out = tmp_path / "t.json"
    assert trace.to_perfetto(out, locations=[])["tracks"] == 0
    assert json.loads(out.read_text())["traceEvents"] == []
    written = trace.to_perfetto(out, start=2e-6, end=2e-6, wait_states=False)
    doc, _, regions, _, flows = read_back(trace, out)
    assert written["flows"] == 0 and not flows
    assert all(s == e for rows in regions.values() for _, s, e in rows)
