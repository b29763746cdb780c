"""Hardware counters as metrics per call path and location, against the
increases derived by hand from `otf2-print` output of the PAPI reference trace:
each METRIC record precedes an ENTER or LEAVE at the same time; the increase up
to the location's next METRIC record belongs to the call path innermost after
that ENTER or LEAVE (exclusive values, as Score-P profiles show them)."""
import re
import subprocess
from collections import defaultdict

import earlc
from conftest import need_otf2_print, reference_trace

LINE = re.compile(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s+(.*)$")
VALUE = re.compile(r'\("([^"]+)" <\d+>; UINT64; (\d+)\)')
REGION = re.compile(r'Region: "([^"]*)"')


def by_hand(anchor):
    need_otf2_print()
    out = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True,
                         check=True).stdout
    stack = defaultdict(list)
    pending = {}                       # location -> counter values of its last record
    charge_to = {}                     # location -> path the pending interval belongs to
    got = defaultdict(int)             # (counter, path, location) -> increase
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        kind, loc, rest = m.group(1), int(m.group(2)), m.group(4)
        if kind == "METRIC":
            values = {name: int(v) for name, v in VALUE.findall(rest)}
            if loc in pending and charge_to.get(loc):
                for name, v in values.items():
                    got[(name, charge_to[loc], loc)] += v - pending[loc][name]
            pending[loc] = values
            charge_to[loc] = None      # decided by the ENTER or LEAVE that follows
        elif kind in ("ENTER", "LEAVE"):
            if kind == "ENTER":
                stack[loc].append(REGION.search(rest).group(1))
            else:
                stack[loc].pop()
            if loc in charge_to and charge_to[loc] is None:
                charge_to[loc] = "/".join(stack[loc])
    return {k: v for k, v in got.items() if v}


def test_papi_counters_per_call_path_and_location():
    anchor = reference_trace("pipit-ping-pong-papi")
    expected = by_hand(anchor)
    assert expected
    report = earlc.analyze(earlc.open(anchor))
    got = {}
    ids = [l.id for l in report.trace.locations]
    for counter in ("PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP"):
        metric = "hwc_" + counter.lower()
        p = next(p for p in report.properties if p.name == metric)
        assert p.cube_id == counter and p.unit == "occ"
        c, l, v = report._tables[metric]
        for cn, loc, val in zip(c.tolist(), l.tolist(), v.tolist()):
            # below the program's root, as otf2-print's regions
            path = report.callpaths[cn].split("/", 1)[1]
            got[(counter, path, ids[loc])] = val
    assert got == expected


def test_traces_without_counters_have_no_counter_metrics():
    report = earlc.analyze(earlc.open(reference_trace("pipit-ping-pong")))
    assert not [p for p in report.properties if p.name.startswith("hwc_")]
