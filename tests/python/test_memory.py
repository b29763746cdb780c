"""The memory of an open: its peak stays near the size of the finished trace.

The open reads every location into buffers, then merges them into the trace's columns;
it moves the buffers' pages under the trace's columns as the merge consumes them
(docs/model.md, "Memory"), so its peak is the trace plus a few bytes per event, not the
trace plus the buffers, and it faults in little more than the trace's bytes.
A second open in the same process reuses the memory the first trace left rather than
mapping new memory beside it.  Measured in a fresh process each time, where the peak
resident set (VmHWM) starts clean.
"""
import json
import os
import subprocess
import sys

import pytest

import earlc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PEAK = r"""
import gc, json, sys
import earlc

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

before = status("VmRSS")
trace = earlc.open(sys.argv[1], threads=int(sys.argv[2]))
first = status("VmHWM") - before
n, store = len(trace), trace.memory()["total"]
del trace
gc.collect()
trace = earlc.open(sys.argv[1], threads=int(sys.argv[2]))
second = status("VmHWM") - before
print(json.dumps({"events": n, "store": store, "first": first, "second": second,
                  "mapped": earlc.memory_stats()["mapped"]}))
"""

#: bytes per event the open may need beyond the finished store (measured on this trace:
#: 6-11, of which 7 are the fixed 28 MB of definitions, libotf2's buffers and thread
#: stacks; the reading buffers kept until the end of the merge took 44)
ABOVE_STORE = 20


@pytest.fixture(scope="module")
def halo(tmp_path_factory):
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc to read the resident set")
    out = tmp_path_factory.mktemp("memory") / "halo"
    return earlc.synth("halo", out, ranks=4, events=4_000_000)


def peak(path, threads):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("EARLC_MEM_GUARD", None)  # the guard mode reuses nothing: no measurement
    out = subprocess.run([sys.executable, "-c", PEAK, str(path), str(threads)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("threads", [1, 2])
def test_open_peaks_near_the_finished_store(halo, threads):
    m = peak(halo.anchor, threads)
    if m["mapped"] == 0:
        pytest.skip("large blocks come from malloc (AddressSanitizer build): no pages to give "
                    "back while merging")
    n = m["events"]
    assert n >= 4_000_000
    assert m["first"] <= m["store"] + ABOVE_STORE * n, \
        "the open peaked at %.1f bytes per event for a store of %.1f" % (
            m["first"] / n, m["store"] / n)
    # the second open recycles what the first trace left instead of adding to it
    assert m["second"] <= m["first"] + 4 * n, \
        "a second open raised the peak from %.1f to %.1f bytes per event" % (
            m["first"] / n, m["second"] / n)


ADVICE = r"""
import sys
import earlc

trace = earlc.open(sys.argv[1], threads=1)
col = trace.events.time
start = col.__array_interface__["data"][0]
flags, inside = "", False
for line in open("/proc/self/smaps"):
    head = line.split()
    if "-" in head[0] and ":" not in head[0]:
        lo, hi = (int(x, 16) for x in head[0].split("-"))
        inside = lo <= start < hi
    elif inside and line.startswith("VmFlags:"):
        flags = line.split(":", 1)[1].split()
print(earlc.memory_stats()["mapped"], " ".join(flags))
"""


@pytest.mark.parametrize("setting, advised", [(None, False), ("1", True), ("0", False)])
def test_huge_page_advice_only_when_asked(halo, setting, advised):
    """The store's columns are advised for transparent huge pages (VmFlags "hg")
    only with EARLC_HUGE_PAGES=1: the system's policy decides otherwise."""
    if not os.path.exists("/proc/self/smaps"):
        pytest.skip("needs /proc/self/smaps")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("EARLC_MEM_GUARD", None)  # the guard mode reuses nothing: no measurement
    env.pop("EARLC_HUGE_PAGES", None)
    if setting is not None:
        env["EARLC_HUGE_PAGES"] = setting
    mapped, *flags = subprocess.run([sys.executable, "-c", ADVICE, str(halo.anchor)], env=env,
                                    capture_output=True, text=True, check=True).stdout.split()
    if int(mapped) == 0:
        pytest.skip("large blocks come from malloc (AddressSanitizer build): nothing to advise")
    assert flags, "the time column's mapping was not found in /proc/self/smaps"
    assert ("hg" in flags) == advised, flags


MOVES = r"""
import hashlib, json, resource, sys
import numpy as np
import earlc

faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
trace = earlc.open(sys.argv[1], threads=int(sys.argv[2]))
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
digest = hashlib.sha256()
ev = trace.events
for name in ("time", "location", "kind", "payload", "loc_start", "loc_events"):
    digest.update(np.ascontiguousarray(getattr(ev, name)).tobytes())
for table in (ev.messages, ev.collectives):
    frame = table.to_dataframe()
    for column in frame.columns:
        digest.update(np.ascontiguousarray(frame[column].to_numpy()).tobytes())
stats = earlc.memory_stats()
print(json.dumps({"events": len(trace), "faults": faults, "digest": digest.hexdigest(),
                  "mapped": stats["mapped"], "moved": stats["moved_bytes"]}))
"""


def open_moving(path, threads, move):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("EARLC_MEM_GUARD", None)  # the guard mode reuses nothing: no measurement
    env["EARLC_MOVE_PAGES"] = "1" if move else "0"
    out = subprocess.run([sys.executable, "-c", MOVES, str(path), str(threads)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("threads", [1, 2])
def test_open_moves_its_reading_pages_into_the_store(halo, threads):
    """The merge and the side-table copy move the pages of the reading buffers they
    consumed under the trace's columns instead of giving them back and faulting new
    ones: the same store with a third fewer page faults (docs/model.md, "Memory")."""
    moved, given = open_moving(halo.anchor, threads, True), open_moving(halo.anchor, threads, False)
    if moved["mapped"] == 0:
        pytest.skip("large blocks come from malloc (AddressSanitizer build): nothing to move")
    assert moved["digest"] == given["digest"]
    assert given["moved"] == 0
    n = moved["events"]
    # about 13 bytes per event of the core columns and 9 of the side tables are read
    assert moved["moved"] >= 15 * n, "%.1f bytes per event moved" % (moved["moved"] / n)
    assert moved["faults"] <= 0.75 * given["faults"], (moved["faults"], given["faults"])


GUARDED = r"""
import json, sys
import earlc

def guards():
    # bytes of the reservations guard mode leaves where freed blocks were (PROT_NONE,
    # anonymous; without it, only the guard pages of thread stacks)
    n = 0
    for line in open("/proc/self/maps"):
        fields = line.split()
        if fields[1] == "---p" and len(fields) == 5:
            lo, hi = fields[0].split("-")
            n += int(hi, 16) - int(lo, 16)
    return n

before = guards()
digests = []
for threads in (1, 2, 2):
    trace = earlc.open(sys.argv[1], threads=threads)
    states = trace.states
    digests.append(int(states.enterptr.sum()) + int(trace.events.time[-1]))
    del states, trace
print(json.dumps({"same": len(set(digests)) == 1, "guarded": guards() - before,
                  "events": len(earlc.open(sys.argv[1])),
                  "moved": earlc.memory_stats()["moved_bytes"],
                  "mapped": earlc.memory_stats()["mapped"]}))
"""


@pytest.mark.parametrize("move", [True, False])
def test_guard_mode_finds_no_dead_memory_touched(halo, move):
    """EARLC_MEM_GUARD=1 (csrc/base/mem.h) makes the consumed pages of the reading
    buffers and every freed large block fault when touched, instead of reading zeros or
    a later block's data: opens on one and two threads, with and without the page
    moves, and the EARL layer over their stores touch none of it, and agree."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), EARLC_MEM_GUARD="1",
               EARLC_MOVE_PAGES="1" if move else "0")
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", GUARDED, str(halo.anchor)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.splitlines()[-1])
    if out["mapped"] == 0:
        pytest.skip("large blocks come from malloc (AddressSanitizer build): nothing to guard")
    assert out["same"]
    # at least the reading buffers' core columns of the three opens (13 bytes an event)
    assert out["guarded"] >= 3 * 13 * out["events"], "guard mode left no reservations"
    assert (out["moved"] > 0) == move
