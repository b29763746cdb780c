"""The pattern search of a trace bigger than memory (earlc.parts.causal_inturn,
docs/memory.md, "Search"): its parts stamped one after another in one process,
in three exchanges through the scratch folder, give the matches of the search
in one piece (ids, order, times, limits, warnings) on every generated program
shape, the bundled traces and the real traces, in 2 parts up to one part per
process; the command line chooses parts from --memory and stays within the
budget; an inconsistent trace whose cycles cross parts is refused in one line."""
import json
import os
import warnings

import numpy as np
import pytest

import earlc
import earlc.parts
from earlc import TraceWriter
from earlc.parts.causal_inturn import CycleAcrossParts
from earlc.search import search
from causal_patterns import PATTERNS
from test_parts_causal import BUNDLED, LARGE, PROGRAMS, REAL
from conftest import trace_folders
from test_inturn import earlc_cli, peak_of, processes


pytestmark = pytest.mark.filterwarnings("ignore::earlc.PatternWarning")


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return trace_folders(tmp_path_factory.mktemp("causal-inturn"), PROGRAMS, BUNDLED, REAL,
                         bundled_prefix="bundled-")


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", earlc.PatternWarning)
        return fn(*args, **kw)


#: what each kind of trace is searched for: the generated programs for every
#: pattern in 2 parts and one part per process, the others for a few in 2 parts
#: (the search in parts on threads, test_parts_causal.py, covers every pattern)
FEW = ("last", "partner", "limited")


def test_matches_equal_the_search_in_one_piece(traces, tmp_path):
    for name, path in traces.items():
        whole = earlc.open(path)
        generated = name in PROGRAMS
        chosen = {k: v for k, v in PATTERNS.items()
                  if (generated or k in FEW) and (name not in LARGE or k != "partner")}
        want = {k: quiet(whole.search, text, threads=1) for k, text in chosen.items()}
        n = processes(path)
        for parts in sorted({min(2, n), n} if generated else {min(2, n)}):
            with earlc.parts.in_turn(path, parts=parts, scratch=tmp_path) as it:
                for k, text in chosen.items():
                    if parts > 2 and k not in FEW:
                        continue
                    m = quiet(it.search, text, threads=1 + parts % 2)
                    w = want[k]
                    assert np.array_equal(m.events, w.events), (name, parts, k)
                    assert m.warnings == w.warnings, (name, parts, k)
                    d, e = m.to_dict(), w.to_dict()
                    assert (d["time_ticks"], d["time"], d["columns"]) == \
                        (e["time_ticks"], e["time"], e["columns"]), (name, parts, k)
                    if k in FEW:
                        m3 = quiet(it.search, text, limit=3)
                        assert np.array_equal(m3.events, w.events[:3]), (name, parts, k)
                        assert m3.truncated == (len(w) >= 3)
                    if parts > 1:  # stamped in three exchanges
                        assert m.stats["rounds"] == 2 and m.stats["parts"] == parts
            assert os.listdir(tmp_path) == [], name  # the scratch files are gone


def test_the_path_api_and_its_memory(traces, tmp_path):
    path = traces["halo"]
    text = PATTERNS["sub"]
    want = quiet(earlc.open(path).search, text)
    # fits: in one piece, the same
    got = quiet(search, str(path), text, memory="unlimited")
    assert np.array_equal(got.events, want.events)
    with pytest.raises(earlc.parts.BudgetError, match="smallest budget that works"):
        search(str(path), text, memory="2M")
    with pytest.raises(ValueError, match="memory and scratch apply to the search of a path"):
        search(earlc.open(path), text, memory="8G")


def test_a_cycle_across_parts_is_refused_in_one_line(tmp_path):
    """Each rank receives what its neighbour sends after its own receive: the
    cycle crosses every part, which the stamps in turn cannot break."""
    with TraceWriter(tmp_path / "t", ranks=3, resolution=1000) as w:
        for k in range(3):
            for r in range(3):
                w.recv(r, 100 * k + 10 + r, source=(r + 2) % 3, tag=0, bytes=4)
                w.send(r, 100 * k + 30 + r, dest=(r + 1) % 3, tag=0, bytes=4)
    text = PATTERNS["pairs"]
    with earlc.parts.in_turn(tmp_path / "t", parts=3) as it:
        with pytest.raises(CycleAcrossParts, match="cycle across its parts"):
            it.search(text)
    # in one part: no crossing, the same matches as in one piece
    with earlc.parts.in_turn(tmp_path / "t", parts=1) as it:
        assert np.array_equal(it.search(text).events,
                              earlc.open(tmp_path / "t").search(text).events)


def test_the_command_line_within_its_budget(halo_2m, tmp_path):
    text = ('A := ["rank 0", "MPI_*SEND", ""]; B := ["rank 15", "MPI_*SEND", ""]; A $a; B $b;'
            ' P := $a || $b;')
    one = earlc_cli("search", halo_2m, text, "--limit", "200", "--format", "json")
    assert one.returncode == 0, one.stderr
    budget = 300 << 20
    got = tmp_path / "m.json"
    r, peak = peak_of(["search", halo_2m, text, "--limit", "200", "--format", "json",
                       "--memory", "300M", "--scratch", tmp_path, "-o", got])
    assert r.returncode == 0, r.stderr
    want, have = json.loads(one.stdout), json.loads(got.read_text())
    assert have["stats"]["parts"] > 1 and have["stats"]["rounds"] == 2
    for k in ("matches", "time", "time_ticks", "columns", "truncated"):
        assert have[k] == want[k], k
    assert peak <= budget, "the search in parts peaked at %.0f MB, above its %.0f MB budget" % (
        peak / 2 ** 20, budget / 2 ** 20)
    assert os.listdir(tmp_path) == ["m.json"]
    # the scratch folder and the budget: one line, exit status 2
    r = earlc_cli("search", halo_2m, text, "--memory", "300M", "--scratch", tmp_path / "none")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = earlc_cli("search", halo_2m, text, "--memory", "20M")
    assert r.returncode == 2 and "smallest budget that works" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_progress_names_the_three_passes(traces):
    seen = []
    with earlc.parts.in_turn(traces["halo"], parts=3,
                             progress=lambda phase, done, total: seen.append((phase, done))) as it:
        it.search(PATTERNS["last"])
    labels = {phase.split(":")[0] for phase, _ in seen}
    assert {"pass %d, part %d of 3" % (a, b) for a in (1, 2, 3) for b in (1, 2, 3)} <= labels
    done = [d for _, d in seen]
    assert done == sorted(done) and done[-1] > 850  # forward, into the last part
