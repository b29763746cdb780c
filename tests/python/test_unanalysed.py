"""A trace whose waiting calls lack the records their wait states are computed
from (an OMPT-only trace: barriers without thread team records; a collective
without its MPI_COLLECTIVE_BEGIN/END; a critical section without its lock
acquire) says so in a counted warning, never just "No inefficiency found"."""
import json

import pytest

import earlc
from conftest import ROOT, reference_trace

NOTHING_FOUND = "No inefficiency found by the selected properties."


def write(tmp_path, build, **kw):
    with earlc.TraceWriter(tmp_path / "t", **kw) as w:
        build(w)
    return earlc.open(tmp_path / "t")


def test_an_ompt_only_trace_says_its_barriers_cannot_be_analysed():
    trace = earlc.open(reference_trace("casita-ompt-nested"))
    report = earlc.analyze(trace)
    assert report.warnings == {"omp_barrier_without_team": 24}
    (u,) = report.unanalysed
    # the calls' time is the Barrier time of the metric tree (nested calls once)
    assert u.ticks == report.total("omp_barrier") and u.calls == 24
    text = report.to_text()
    assert NOTHING_FOUND not in text
    assert "24 waiting calls could not be analysed" in text
    assert "Warning (omp_barrier_without_team): 24 OpenMP barrier calls" in text
    (d,) = json.loads(report.to_json())["warning_details"]
    assert d["code"] == "omp_barrier_without_team" and d["calls"] == 24
    assert d["properties"] == ["omp_barrier_wait_explicit", "omp_barrier_wait_implicit"]


def test_a_collective_without_its_records(tmp_path):
    def build(w):
        for r in range(2):
            w.enter(r, 0, "main")
            w.collective(r, 10 + 5 * r, 40, "MPI_Allreduce", sent=8, received=8)  # recorded
            w.enter(r, 50 + 30 * r, "MPI_Bcast"); w.leave(r, 100, "MPI_Bcast")  # no records
            w.leave(r, 200, "main")
    report = earlc.analyze(write(tmp_path, build, ranks=2))
    assert report.warnings == {"collective_without_records": 2}
    (u,) = report.unanalysed
    assert u.ticks == 50 + 20 and "late_broadcast" in u.properties
    assert "2 MPI collective calls" in u.detail and "MPI_COLLECTIVE_END" in u.detail
    assert report.total("wait_at_nxn") == 5  # the recorded one is analysed
    # asked for properties that do not need them: no warning
    assert earlc.analyze(report.trace, properties=["late_sender"]).warnings == {}


def test_a_critical_section_without_its_lock_records(tmp_path):
    def build(w):
        for t in range(2):
            w.enter((0, t), 0, "main")
            w.enter((0, t), 10 + 10 * t, "!$omp critical")
            w.leave((0, t), 30 + 10 * t, "!$omp critical")
            w.leave((0, t), 100, "main")
    report = earlc.analyze(write(tmp_path, build, ranks=1, threads_per_rank=2))
    assert report.warnings == {"lock_call_without_records": 2}
    assert report.unanalysed[0].ticks == 40
    assert "2 waiting calls could not be analysed" in report.to_text()


@pytest.mark.parametrize("name", ["hybrid", "collectives", "omp-locks", "ring-late-sender"])
def test_complete_traces_warn_of_nothing(name):
    report = earlc.analyze(earlc.open(ROOT / "traces" / name), properties="all")
    assert report.unanalysed == []
