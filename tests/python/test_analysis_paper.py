"""The four compound events of section 6 of the EARL/EXPERT paper, written with
earlc.TraceWriter and checked by hand, including the time-stamp conditions (a
late receiver only while the send is still on the sender's stack); the report's
views; a user plugin subscribing to a built-in compound event."""
import json
import subprocess
import sys

import pytest

import earlc
from earlc.analysis import Instances, Property
from conftest import ROOT


def scenario(tmp_path, build, ranks=2):
    with earlc.TraceWriter(tmp_path / "t", ranks=ranks) as w:
        for r in range(ranks):
            w.enter(r, 0, "main")
        end = build(w)
        for r in range(ranks):
            w.leave(r, end, "main")
    return earlc.open(tmp_path / "t")


def totals(report, *names):
    return {n: report.total(n) for n in names}


def test_6_1_late_sender(tmp_path):
    def build(w):
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 70, source=0, tag=7, bytes=8); w.leave(1, 80, "MPI_Recv")
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=8); w.leave(0, 60, "MPI_Send")
        return 100
    r = earlc.analyze(scenario(tmp_path, build))
    assert totals(r, "late_sender", "late_receiver") == {"late_sender": 40, "late_receiver": 0}
    assert r.by_callpath("late_sender") == [("main/MPI_Recv", 40)]
    assert r.by_location("late_sender") == [(1, 40)]
    (inst,) = [r.worst["late_sender"]]
    assert r.trace.event(int(inst.where[0])).region.name == "MPI_Recv"
    assert r.trace.event(int(inst["send"][0])).kind == "MPI_SEND"


def test_6_2_late_receiver_only_while_the_send_blocks(tmp_path):
    def blocking(w):
        w.enter(0, 10, "MPI_Send"); w.send(0, 12, dest=1, bytes=1 << 20); w.leave(0, 90, "MPI_Send")
        w.enter(1, 60, "MPI_Recv"); w.recv(1, 85, source=0, bytes=1 << 20); w.leave(1, 88, "MPI_Recv")
        return 100
    r = earlc.analyze(scenario(tmp_path, blocking))
    assert totals(r, "late_receiver", "late_sender") == {"late_receiver": 50, "late_sender": 0}
    assert r.by_callpath("late_receiver") == [("main/MPI_Send", 50)]
    assert r.by_location("late_receiver") == [(0, 50)]

    def buffered(w):  # the send returned before the receive was entered: no wait
        w.enter(0, 10, "MPI_Send"); w.send(0, 12, dest=1, bytes=64); w.leave(0, 40, "MPI_Send")
        w.enter(1, 60, "MPI_Recv"); w.recv(1, 85, source=0, bytes=64); w.leave(1, 88, "MPI_Recv")
        return 100
    r = earlc.analyze(scenario(tmp_path / "b", buffered))
    assert totals(r, "late_receiver", "late_sender") == {"late_receiver": 0, "late_sender": 0}


def test_6_3_messages_in_wrong_order(tmp_path):
    def build(w):
        w.enter(0, 5, "MPI_Send"); w.send(0, 10, dest=1, tag=1, bytes=8); w.leave(0, 15, "MPI_Send")
        w.enter(0, 25, "MPI_Send"); w.send(0, 30, dest=1, tag=2, bytes=8); w.leave(0, 35, "MPI_Send")
        w.enter(1, 40, "MPI_Recv"); w.recv(1, 45, source=0, tag=2, bytes=8); w.leave(1, 50, "MPI_Recv")
        w.enter(1, 60, "MPI_Recv"); w.recv(1, 65, source=0, tag=1, bytes=8); w.leave(1, 70, "MPI_Recv")
        return 100
    r = earlc.analyze(scenario(tmp_path, build))
    assert r.total("messages_in_wrong_order") == 10 and r.occurrences("messages_in_wrong_order") == 1
    inst = r.worst["messages_in_wrong_order"]
    assert r.trace.event(int(inst["recv"][0])).tag == 2


def test_6_4_unbalanced_barrier(tmp_path):
    def build(w):
        for rank, (t_in, t_out) in enumerate([(10, 80), (30, 81), (70, 82)]):
            w.collective(rank, t_in, t_out, "MPI_Barrier")
        return 100
    r = earlc.analyze(scenario(tmp_path, build, ranks=3))
    assert r.total("wait_at_barrier") == 60 + 40
    assert dict(r.by_location("wait_at_barrier")) == {0: 60, 1: 40}
    assert r.total("barrier_completion") == 0 + 1 + 2
    assert r.by_callpath("wait_at_barrier") == [("main/MPI_Barrier", 100)]


def test_late_sender_wrong_order_and_waitall(tmp_path):
    """Rank 2 waits for rank 0's message while rank 1's older one is queued: a
    late sender of the different-source kind; a Waitall taking both at once is
    not wrong order."""
    def build(w):
        w.enter(1, 5, "MPI_Send"); w.send(1, 6, dest=2, tag=0, bytes=8); w.leave(1, 7, "MPI_Send")
        w.enter(2, 10, "MPI_Recv"); w.recv(2, 52, source=0, tag=0, bytes=8); w.leave(2, 53, "MPI_Recv")
        w.enter(0, 50, "MPI_Send"); w.send(0, 51, dest=2, tag=0, bytes=8); w.leave(0, 52, "MPI_Send")
        w.enter(2, 60, "MPI_Recv"); w.recv(2, 61, source=1, tag=0, bytes=8); w.leave(2, 62, "MPI_Recv")
        return 100
    r = earlc.analyze(scenario(tmp_path, build, ranks=3))
    assert totals(r, "late_sender", "late_sender_wrong_order_different_source",
                  "late_sender_wrong_order_same_source") == {
        "late_sender": 40, "late_sender_wrong_order_different_source": 40,
        "late_sender_wrong_order_same_source": 0}


def test_a_waitall_that_also_waits_for_a_late_sender_is_charged_there(tmp_path):
    """Rank 0's first MPI_Waitall completes an Isend whose receiver is late (40)
    and an Irecv whose sender is late (50): a Late Sender only.  Its second
    completes an Isend only, received late: a Late Receiver of 30."""
    def build(w):
        w.enter(0, 4, "MPI_Isend"); w.isend(0, 5, dest=1, request=1, bytes=8); w.leave(0, 6, "MPI_Isend")
        w.enter(0, 7, "MPI_Irecv"); w.irecv_request(0, 8, request=2); w.leave(0, 9, "MPI_Irecv")
        w.enter(0, 10, "MPI_Waitall"); w.isend_complete(0, 90, request=1)
        w.irecv(0, 95, source=2, request=2, bytes=8); w.leave(0, 100, "MPI_Waitall")
        w.enter(1, 50, "MPI_Recv"); w.recv(1, 91, source=0, bytes=8); w.leave(1, 92, "MPI_Recv")
        w.enter(2, 60, "MPI_Send"); w.send(2, 61, dest=0, bytes=8); w.leave(2, 62, "MPI_Send")
        w.enter(0, 104, "MPI_Isend"); w.isend(0, 105, dest=1, request=3, bytes=8); w.leave(0, 106, "MPI_Isend")
        w.enter(0, 120, "MPI_Waitall"); w.isend_complete(0, 190, request=3); w.leave(0, 200, "MPI_Waitall")
        w.enter(1, 150, "MPI_Recv"); w.recv(1, 194, source=0, bytes=8); w.leave(1, 195, "MPI_Recv")
        return 300
    r = earlc.analyze(scenario(tmp_path, build, ranks=3))
    assert totals(r, "late_sender", "late_receiver") == {"late_sender": 50, "late_receiver": 30}
    assert r.occurrences("late_receiver") == 1
    assert r.by_location("late_receiver") == [(0, 30)]


def test_report_views(tmp_path):
    def build(w):
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 70, source=0, tag=7, bytes=8); w.leave(1, 80, "MPI_Recv")
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=8); w.leave(0, 60, "MPI_Send")
        return 100
    trace = scenario(tmp_path, build)
    r = earlc.analyze(trace)
    df = r.to_dataframe()
    assert list(df.columns) == ["metric", "callpath", "location", "rank", "thread", "unit",
                                "value", "seconds", "occurrences"]
    row = df[df.metric == "late_sender"].iloc[0]
    assert (row["callpath"], row["rank"], row["value"], row["occurrences"]) == ("main/MPI_Recv", 1, 40, 1)
    assert row.seconds == pytest.approx(40e-9)
    assert r.total("time") == 200 and r.percent("late_sender") == pytest.approx(20.0)
    m = r.metrics_dataframe().set_index("metric")
    assert m.loc["late_sender", "parent"] == "mpi_point2point"
    data = json.loads(r.to_json())
    assert data["schema"] == "earlc-report/2"
    names = [x["name"] for x in data["metrics"]]
    assert names.index("late_sender") > names.index("mpi_point2point") > names.index("mpi")
    ls = [s for s in data["severities"] if s["metric"] == "late_sender"]
    assert ls == [{"metric": "late_sender", "callpath": ls[0]["callpath"], "location": 1, "value": 40}]
    assert data["callpaths"][ls[0]["callpath"]]["path"] == "main/MPI_Recv"
    assert data["instances"]["late_sender"][0]["severity"] == 40
    text = r.to_text()
    assert "Late Sender" in text and "main/MPI_Recv" in text and "20.00%" in text


class SlowReceive(Property):
    """A user plugin: receive calls longer than 50 ticks, subscribing to the
    built-in matched messages."""
    name, title, parent, subscribes = "slow_receive", "Slow receive", "mpi_point2point", "p2p_messages"
    description = "A receive call that lasts more than 50 ticks."
    diagnosis = "Look at what the sender does meanwhile."

    def detect(self, ctx, msgs):
        call = msgs["recv_call"]
        dur = ctx.time_of(ctx.leave_of(call)) - ctx.time_of(call)
        keep = dur > 50
        return Instances(call[keep], dur[keep], {"recv": msgs["recv"][keep]})


def test_user_plugin_subscribes_to_a_builtin_compound_event(tmp_path):
    def build(w):
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 70, source=0, tag=7, bytes=8); w.leave(1, 80, "MPI_Recv")
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=8); w.leave(0, 60, "MPI_Send")
        return 100
    trace = scenario(tmp_path, build)
    r = earlc.analyze(trace, properties=[SlowReceive()])
    assert r.total("slow_receive") == 70
    assert [p.name for p in r.properties] == ["time", "execution", "mpi", "mpi_communication",
                                              "mpi_point2point", "slow_receive"]
    r = earlc.analyze(trace, properties=["late_sender", SlowReceive()])
    assert r.total("slow_receive") == 70 and r.total("late_sender") == 40


def test_bad_plugins_and_names(tmp_path):
    trace = earlc.open(ROOT / "traces" / "demo-ring")

    class Orphan(Property):
        name, parent = "orphan", "no_such_parent"

        def detect(self, ctx, subscribed):
            return None

    with pytest.raises(ValueError, match="parent"):
        earlc.analyze(trace, properties=[Orphan()])
    with pytest.raises(ValueError, match="unknown property no_such_property"):
        earlc.analyze(trace, properties=["no_such_property"])
    with pytest.raises(ValueError, match="unknown property no_such_property"):
        earlc.analyze(trace, properties="no_such_property")  # one name, not its letters
    one = earlc.analyze(trace, properties="late_sender")
    assert [p.name for p in one.properties] == [p.name for p in earlc.analyze(
        trace, properties=["late_sender"]).properties]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "earlc", *args], capture_output=True,
                          text=True, cwd=ROOT / "python")


def test_cli_analyze(tmp_path):
    demo = str(ROOT / "traces" / "demo-ring")
    r = run_cli("analyze", demo)
    assert r.returncode == 0, r.stderr
    assert "Late Sender" in r.stdout and "worst call paths" in r.stdout
    out = tmp_path / "r.json"
    r = run_cli("analyze", demo, "--format", "json", "-o", str(out), "--properties", "late_sender")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert {m["name"] for m in data["metrics"]} == {"time", "execution", "mpi",
                                                   "mpi_communication", "mpi_point2point",
                                                   "late_sender"}
    assert sum(m["value"] for m in data["metrics"] if m["name"] == "late_sender") > 0
    r = run_cli("analyze", demo, "--properties", "bogus")
    assert r.returncode == 2 and "unknown property bogus" in r.stderr
    r = run_cli("analyze", str(tmp_path / "missing"))
    assert r.returncode == 2 and "missing" in r.stderr


def test_docs_properties_md_is_generated_from_the_declarations():
    from earlc.analysis.docs import render

    committed = (ROOT / "docs" / "properties.md").read_text()
    assert committed == render(), "run `make docs` after changing a property declaration"


def test_idle_threads_and_thread_management_by_hand(tmp_path):
    """One process, a master and a worker, two parallel regions."""
    with earlc.TraceWriter(tmp_path / "t", ranks=1, threads_per_rank=2) as w:
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
    trace = earlc.open(tmp_path / "t")
    r = earlc.analyze(trace)
    # the worker, between its own events, with only the master's frames open:
    # 20-22, 48-49, 49-120, 120-121, 149-150
    assert r.total("idle_threads") == 2 + 1 + 71 + 1 + 1
    assert r.by_location("idle_threads") == [(1, 76)]
    assert r.by_callpath("idle_threads") == [("main", 76)]
    # thread management as Scalasca charges it, on each thread of the team: fork to the
    # thread's enter of the parallel region, its leave to the join
    # master: (14-10)+(60-50), (112-110)+(155-150); worker: (22-10)+(60-48), (121-110)+(155-149)
    assert r.total("omp_management") == 14 + 7 + 24 + 17
    assert r.occurrences("omp_management") == 4
    assert r.by_location("omp_management") == [(1, 41), (0, 21)]
    assert r.total("omp_fork") == 4 + 2 + 12 + 11
    assert r.by_callpath("omp_management") == [("main/!$omp parallel", 62)]
    # Time: the master's 200 (its management moves from main to the parallel region);
    # the worker's own regions, 26 + 28, and its management, 41
    assert r.total("time") == 200 + 26 + 28 + 41
    assert dict(r.by_callpath("time"))["main/!$omp parallel"] == 36 + 38 + 21 + 26 + 28 + 41


def test_rooted_collectives_on_a_communicator_of_one(tmp_path):
    """A root alone in its communicator waits for nobody (no sentinel arithmetic)."""
    with earlc.TraceWriter(tmp_path / "t", ranks=2) as w:
        solo = w.comm("solo", [1])
        for r in range(2):
            w.enter(r, 0, "main")
        w.collective(1, 10, 20, "MPI_Reduce", comm=solo, root=0, sent=8, received=8)
        w.collective(1, 30, 40, "MPI_Bcast", comm=solo, root=0, sent=8, received=8)
        w.collective(0, 5, 50, "MPI_Reduce", root=0, sent=8, received=8)
        w.collective(1, 45, 50, "MPI_Reduce", root=0, sent=8)
        for r in range(2):
            w.leave(r, 100, "main")
    r = earlc.analyze(earlc.open(tmp_path / "t"))
    assert r.total("early_reduce") == 45 - 5  # the world reduce only
    assert r.total("late_broadcast") == 0


def test_inconsistent_traces_are_analysed_with_a_warning(tmp_path):
    def build(w):
        w.enter(1, 10, "MPI_Recv"); w.recv(1, 70, source=0, tag=7, bytes=8); w.leave(1, 80, "MPI_Recv")
        w.leave(0, 20, "MPI_Send")  # a LEAVE with no ENTER
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=8); w.leave(0, 60, "MPI_Send")
        w.enter(0, 61, "MPI_Send"); w.send(0, 62, dest=1, tag=9, bytes=8); w.leave(0, 63, "MPI_Send")
        return 100
    r = earlc.analyze(scenario(tmp_path, build))
    assert r.total("late_sender") == 40  # what can be computed still is
    assert r.warnings["leave_without_enter"] == 1
    assert r.warnings["send_not_received"] == 1
    assert "Warning: the trace is inconsistent" in r.to_text()
    assert json.loads(r.to_json())["warnings"]["send_not_received"] == 1


def test_wrong_order_counts_a_waitall_once(tmp_path):
    """Two messages overtaking an older one and completed by one MPI_Waitall:
    one occurrence, the call's duration once (not once per message)."""
    def build(w):
        for t, tag in ((5, 1), (10, 2), (15, 3)):      # A, then B and C
            w.enter(0, t, "MPI_Send"); w.send(0, t + 1, dest=1, tag=tag, bytes=8)
            w.leave(0, t + 2, "MPI_Send")
        for t, req in ((20, 1), (22, 2)):
            w.enter(1, t, "MPI_Irecv"); w.irecv_request(1, t, request=req)
            w.leave(1, t + 1, "MPI_Irecv")
        w.enter(1, 30, "MPI_Waitall")
        w.irecv(1, 40, source=0, request=1, tag=2, bytes=8)
        w.irecv(1, 41, source=0, request=2, tag=3, bytes=8)
        w.leave(1, 50, "MPI_Waitall")
        w.enter(1, 60, "MPI_Recv"); w.recv(1, 61, source=0, tag=1, bytes=8)
        w.leave(1, 62, "MPI_Recv")
        return 100
    r = earlc.analyze(scenario(tmp_path, build), packages=False)
    assert r.total("messages_in_wrong_order") == 20
    assert r.occurrences("messages_in_wrong_order") == 1
    assert not r.exceeding


def test_wait_at_finalize_ends_at_the_own_leave(tmp_path):
    """Scalasca's Wait at Finalize: min(latest enter of all processes, own leave)
    - own enter.  Where the clock condition is violated (rank 0 leaves
    MPI_Finalize before rank 2 enters it), the wait is limited to the time spent
    inside MPI_Finalize: 0 for a call that takes no time."""
    def build(calls):
        def at(w):
            for rank, (enter, leave) in enumerate(calls):
                w.enter(rank, enter, "MPI_Finalize"); w.leave(rank, leave, "MPI_Finalize")
            return 1000
        return at

    def waits(folder, calls):
        r = earlc.analyze(scenario(tmp_path / folder, build(calls), ranks=len(calls)))
        return dict(r.by_location("wait_at_finalize"))

    # synchronised clocks: everybody leaves after the last one entered
    assert waits("sync", [(100, 520), (300, 515), (500, 510)]) == {0: 400, 1: 200}
    # rank 0 leaves at 110, before rank 2 entered at 500: 10 ticks inside, not 400
    assert waits("ccv", [(100, 110), (300, 515), (500, 510)]) == {0: 10, 1: 200}
    # calls that take no time wait for nobody, whatever the others' clocks say
    assert waits("zero", [(100, 100), (300, 300), (500, 500)]) == {}
