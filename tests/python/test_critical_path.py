"""The critical paths on traces Scalasca's definition does not cover whole: a trace
cut to a phase (no MPI_Init, no MPI_Finalize) and programs without MPI; and the
long-term replay on a trace whose wait states depend on each other in a circle.
Every expected value is worked out by hand in the comments."""
import json

import earlc


def by_cell(report, metric):
    """{(call path, location): ticks} of a metric, non-zero cells only."""
    return {(cp, loc): v for cp, loc, v in report.by_callpath_and_location(metric) if v}


def write_phase(path):
    """Two ranks, no MPI_Init and no MPI_Finalize (a phase of a run):
    rank 0: compute 0-50, MPI_Send 50-52 (send at 51), compute 52-100;
    rank 1: compute 0-10, MPI_Recv 10-55 (receive at 54), compute 55-120.
    Rank 1 waits 40 ticks (50 - 10) for the late sender."""
    with earlc.TraceWriter(path, ranks=2) as w:
        w.enter(0, 0, "main")
        w.enter(0, 0, "compute"); w.leave(0, 50, "compute")
        w.enter(0, 50, "MPI_Send"); w.send(0, 51, dest=1, tag=1, bytes=8)
        w.leave(0, 52, "MPI_Send")
        w.enter(0, 52, "compute"); w.leave(0, 100, "compute")
        w.leave(0, 100, "main")
        w.enter(1, 0, "main")
        w.enter(1, 0, "compute"); w.leave(1, 10, "compute")
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 54, source=0, tag=1, bytes=8)
        w.leave(1, 55, "MPI_Recv")
        w.enter(1, 55, "compute"); w.leave(1, 120, "compute")
        w.leave(1, 120, "main")


def test_a_trace_cut_to_a_phase(tmp_path):
    write_phase(tmp_path / "phase")
    trace = earlc.open(tmp_path / "phase")
    r = earlc.analyze(trace, properties=["all"])
    assert r.total("late_sender") == 40
    # Scalasca's critical path starts at MPI_Finalize: none here, as in Scalasca, and
    # all the time without waiting is off the path (rank 1's receive: 45 - 40)
    for metric in ("critical_path", "critical_path_activities", "critical_imbalance_impact"):
        assert r.total(metric) == 0, metric
    assert by_cell(r, "non_critical_path_activities") == {
        ("main/compute", 0): 98, ("main/MPI_Send", 0): 2,
        ("main/compute", 1): 75, ("main/MPI_Recv", 1): 5}
    # said in a counted warning naming the trace and why
    assert r.warnings["critical_path_incomplete"] == 1
    detail = [d for d in r.warning_details if d["code"] == "critical_path_incomplete"]
    assert len(detail) == 1
    assert str(trace.path) in detail[0]["detail"]
    assert "no MPI_Init and no MPI_Finalize" in detail[0]["detail"]
    assert "critical_path_trace" in detail[0]["detail"]
    assert "critical_path_incomplete" in r.to_text()
    assert json.loads(r.to_json())["warnings"]["critical_path_incomplete"] == 1
    # earlc's path of the whole trace: from rank 1's end (the last event) back to
    # its wait at the receive (its compute 65, the receive's 45 less the wait 40),
    # then on rank 0 from its send back to the start (compute 0-50): the 120 ticks
    # of the run
    assert by_cell(r, "critical_path_trace") == {
        ("main/compute", 1): 65, ("main/MPI_Recv", 1): 5, ("main/compute", 0): 50}
    assert r.total("critical_path_trace") == 120


def test_a_complete_mpi_trace_has_no_warning_and_a_longer_whole_path(tmp_path):
    path = tmp_path / "run"
    with earlc.TraceWriter(path, ranks=2) as w:
        for rank, (init_end, fin_enter, end) in enumerate(((5, 60, 90), (8, 70, 80))):
            w.enter(rank, 0, "main")
            w.enter(rank, 2, "MPI_Init"); w.leave(rank, init_end, "MPI_Init")
            w.enter(rank, init_end, "compute"); w.leave(rank, fin_enter, "compute")
            w.enter(rank, fin_enter, "MPI_Finalize"); w.leave(rank, 75, "MPI_Finalize")
            w.leave(rank, end, "main")
    r = earlc.analyze(earlc.open(path), properties=["all"])
    assert "critical_path_incomplete" not in r.warnings
    assert r.total("wait_at_finalize") == 10
    # Scalasca's: from rank 1's Finalize (entered last, at 70) back to its MPI_Init:
    # the call left at 8 (2-8) and compute 8-70
    assert by_cell(r, "critical_path") == {("main/MPI_Init", 1): 6, ("main/compute", 1): 62}
    # the whole trace's: from rank 0's end (90, the last) back to its Finalize,
    # where it waited 10 of its 15 for rank 1 (main 75-90, Finalize 15 - 10); then
    # rank 1 from its Finalize back to the start (main 0-2, MPI_Init, compute)
    assert by_cell(r, "critical_path_trace") == {
        ("main", 0): 15, ("main/MPI_Finalize", 0): 5,
        ("main", 1): 2, ("main/MPI_Init", 1): 6, ("main/compute", 1): 62}
    assert r.total("critical_path_trace") == 90


def write_openmp(path):
    """One process, a master and a worker, two parallel regions, no MPI."""
    with earlc.TraceWriter(path, ranks=1, threads_per_rank=2) as w:
        m, wk = (0, 0), (0, 1)
        w.enter(m, 0, "main")
        for fork, tb, enter, leave, te, join, w_tb, w_enter, w_leave, w_te in (
                (10, 12, 14, 50, 52, 60, 20, 22, 48, 49),
                (110, 111, 112, 150, 151, 155, 120, 121, 149, 150)):
            w.fork(m, fork, 2)
            w.team_begin(m, tb)
            w.enter(m, enter, "!$omp parallel"); w.leave(m, leave, "!$omp parallel")
            w.team_end(m, te)
            w.join(m, join)
            w.team_begin(wk, w_tb)
            w.enter(wk, w_enter, "!$omp parallel"); w.leave(wk, w_leave, "!$omp parallel")
            w.team_end(wk, w_te)
            if fork == 10:
                w.enter(m, 70, "compute"); w.leave(m, 100, "compute")
        w.leave(m, 200, "main")


def test_an_openmp_program(tmp_path):
    write_openmp(tmp_path / "omp")
    r = earlc.analyze(earlc.open(tmp_path / "omp"), properties=["all"])
    assert not r.warnings
    # Scalasca's OpenMP analyzer: from the master's end back to its start; nobody
    # waits at a barrier, so the path stays on the master at every fork: all of its
    # time, per call path as Time counts it
    master_time = {k: v for k, v in by_cell(r, "time").items() if k[1] == 0}
    assert by_cell(r, "critical_path") == master_time
    assert r.total("critical_path") == 200
    # the master ends last: the whole trace's path is the same
    assert by_cell(r, "critical_path_trace") == master_time


def test_a_generated_openmp_program_moves_between_threads(tmp_path):
    earlc.synth("omp", tmp_path / "omp", ranks=1, threads=3, iterations=2, seed=4, delay=400,
                delay_rank=0, delay_thread=2)
    r = earlc.analyze(earlc.open(tmp_path / "omp"), properties=["all"])
    assert not r.warnings
    path = dict(r.by_location("critical_path"))
    # the delayed thread holds up the barriers: the path runs on it too
    assert path.get(2, 0) > 0 and path.get(0, 0) > 0
    assert by_cell(r, "critical_path_trace") == by_cell(r, "critical_path")
    # a path through the run: never longer than it, never shorter than its busiest thread
    assert r.total("critical_path") <= r.trace.duration_ticks
    assert r.total("critical_path") >= max(
        v - dict(r.by_location("omp_barrier")).get(l, 0) for l, v in r.by_location("time"))


def test_wait_states_in_a_circle_are_said(tmp_path):
    """Each rank receives before it sends, and each message arrives before it was
    sent (a violated clock condition): the late sender of each receive is the other
    rank, whose late point comes after the receive it must wait for.  The long-term
    replay can take them in no order that completes the costs: it says so."""
    path = tmp_path / "circle"
    with earlc.TraceWriter(path, ranks=2) as w:
        for rank in (0, 1):
            w.enter(rank, 0, "main")
            w.enter(rank, 10, "MPI_Recv"); w.recv(rank, 30, source=1 - rank, tag=1, bytes=8)
            w.leave(rank, 31, "MPI_Recv")
            w.enter(rank, 40, "MPI_Send"); w.send(rank, 41, dest=1 - rank, tag=1, bytes=8)
            w.leave(rank, 42, "MPI_Send")
            w.leave(rank, 50, "main")
    r = earlc.analyze(earlc.open(path), properties=["all"])
    assert r.total("late_sender") == 2 * 21  # min(send enter 40, receive leave 31) - 10
    assert r.warnings["rootcause_cycle"] == 1
    detail = [d["detail"] for d in r.warning_details if d["code"] == "rootcause_cycle"]
    assert str(path) in detail[0] and "clock condition" in detail[0]
