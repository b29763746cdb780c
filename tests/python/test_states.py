"""The EARL layer (issue 4): pointer attributes, collective instances, history queries.

Section 6's four compound events and section 7's fork/team/lock model are written with
earlc.TraceWriter and checked event by event; the reference traces must have every
receive matched; generated traces check the properties against a naive replay."""
import random

import numpy as np
import pytest

import earlc
from conftest import REFERENCE_NAMES, reference_trace

KINDS = earlc.events.KINDS


def find(t, loc, kind, time):
    """The id of the event of `kind` at `time` on location index `loc`."""
    ev = t.events
    ids = np.nonzero((ev.location == loc) & (ev.kind == KINDS[kind]) & (ev.time == time))[0]
    assert len(ids) == 1, (loc, kind, time, ids)
    return int(ids[0])


def loc_of(t, rank, thread=0):
    for l in t.locations:
        if l.rank == rank and l.thread == thread:
            return l.index
    raise KeyError((rank, thread))


def pointers(t, i):
    s = t.states
    return {name: int(getattr(s, name)[i]) for name in earlc.states.POINTERS}


def assert_pointers(t, i, **expected):
    got = pointers(t, i)
    want = {name: -1 for name in earlc.states.POINTERS}
    want.update(expected)
    assert got == want, "event %d: %s" % (i, t.event(i))
    # the single-event accessor agrees with the dense arrays
    for name in earlc.states.POINTERS:
        ptr = getattr(t.event(i), name)
        assert (ptr.id if ptr is not None else -1) == want[name]


# -- section 6.1: late sender ------------------------------------------------------


def test_late_sender(tmp_path):
    with earlc.TraceWriter(tmp_path / "ls", ranks=2) as w:
        w.enter(0, 0, "main"); w.enter(1, 0, "main")
        w.enter(1, 10, "MPI_Recv")
        w.enter(0, 50, "MPI_Send"); w.send(0, 55, dest=1, tag=7, bytes=64); w.leave(0, 60, "MPI_Send")
        w.recv(1, 70, source=0, tag=7, bytes=64); w.leave(1, 80, "MPI_Recv")
        w.leave(0, 90, "main"); w.leave(1, 90, "main")
    t = earlc.open(tmp_path / "ls")
    r0, r1 = loc_of(t, 0), loc_of(t, 1)
    m0, m1 = find(t, r0, "ENTER", 0), find(t, r1, "ENTER", 0)
    er = find(t, r1, "ENTER", 10)
    es = find(t, r0, "ENTER", 50)
    s = find(t, r0, "MPI_SEND", 55)
    ls = find(t, r0, "LEAVE", 60)
    r = find(t, r1, "MPI_RECV", 70)
    lr = find(t, r1, "LEAVE", 80)
    l0, l1 = find(t, r0, "LEAVE", 90), find(t, r1, "LEAVE", 90)
    assert_pointers(t, m0, leaveptr=l0)
    assert_pointers(t, m1, leaveptr=l1)
    assert_pointers(t, er, enterptr=m1, leaveptr=lr)
    assert_pointers(t, es, enterptr=m0, leaveptr=ls)
    assert_pointers(t, s, enterptr=es, recvptr=r)
    assert_pointers(t, ls, enterptr=es)
    assert_pointers(t, r, enterptr=er, sendptr=s)
    assert_pointers(t, lr, enterptr=er)
    assert_pointers(t, l0, enterptr=m0)
    assert_pointers(t, l1, enterptr=m1)
    # the compound event of section 6.1, read through the pointers
    root = t.event(r)
    e1, e2 = root.enterptr, root.sendptr.enterptr
    assert e1.region.name == "MPI_Recv" and e2.region.name == "MPI_Send"
    assert e2.time - e1.time == 40
    assert not t.states.warnings


# -- section 6.2: late receiver ----------------------------------------------------


def test_late_receiver(tmp_path):
    with earlc.TraceWriter(tmp_path / "lr", ranks=2) as w:
        w.enter(0, 10, "MPI_Send"); w.send(0, 12, dest=1, tag=1, bytes=1 << 20)
        w.enter(1, 40, "MPI_Recv"); w.recv(1, 45, source=0, tag=1, bytes=1 << 20)
        w.leave(0, 46, "MPI_Send"); w.leave(1, 50, "MPI_Recv")
    t = earlc.open(tmp_path / "lr")
    r0, r1 = loc_of(t, 0), loc_of(t, 1)
    es, s, ls = find(t, r0, "ENTER", 10), find(t, r0, "MPI_SEND", 12), find(t, r0, "LEAVE", 46)
    er, r, lr = find(t, r1, "ENTER", 40), find(t, r1, "MPI_RECV", 45), find(t, r1, "LEAVE", 50)
    assert_pointers(t, es, leaveptr=ls)
    assert_pointers(t, s, enterptr=es, recvptr=r)
    assert_pointers(t, er, leaveptr=lr)
    assert_pointers(t, r, enterptr=er, sendptr=s)
    assert_pointers(t, ls, enterptr=es)
    assert_pointers(t, lr, enterptr=er)
    # e2 in R^{s1.loc}(e1): the send's region instance is on the sender's stack
    # when the receive is entered
    root = t.event(r)
    e1, e2 = root.enterptr, root.sendptr.enterptr
    assert e2.time < e1.time
    assert e2.id in t.stack(e1.id, root.sendptr.location)
    assert t.stack(e1.id, r0) == [es]
    assert t.stack(ls, r0) == []
    # the message is in transfer from the send to the receive
    assert t.queue(s - 1, r0, r1) == []
    assert t.queue(s, r0, r1) == [s]
    assert t.queue(r - 1, r0, r1) == [s]
    assert t.queue(r, r0, r1) == []


# -- section 6.3: messages in wrong order --------------------------------------------


def test_messages_in_wrong_order(tmp_path):
    with earlc.TraceWriter(tmp_path / "wo", ranks=2) as w:
        w.enter(0, 10, "MPI_Send"); w.send(0, 11, dest=1, tag=1, bytes=8); w.leave(0, 12, "MPI_Send")
        w.enter(0, 20, "MPI_Send"); w.send(0, 21, dest=1, tag=2, bytes=16); w.leave(0, 22, "MPI_Send")
        w.enter(1, 30, "MPI_Recv"); w.recv(1, 31, source=0, tag=2, bytes=16); w.leave(1, 32, "MPI_Recv")
        w.enter(1, 40, "MPI_Recv"); w.recv(1, 41, source=0, tag=1, bytes=8); w.leave(1, 42, "MPI_Recv")
    t = earlc.open(tmp_path / "wo")
    r0, r1 = loc_of(t, 0), loc_of(t, 1)
    e1, s1, x1 = find(t, r0, "ENTER", 10), find(t, r0, "MPI_SEND", 11), find(t, r0, "LEAVE", 12)
    e2, s2, x2 = find(t, r0, "ENTER", 20), find(t, r0, "MPI_SEND", 21), find(t, r0, "LEAVE", 22)
    f1, q1, y1 = find(t, r1, "ENTER", 30), find(t, r1, "MPI_RECV", 31), find(t, r1, "LEAVE", 32)
    f2, q2, y2 = find(t, r1, "ENTER", 40), find(t, r1, "MPI_RECV", 41), find(t, r1, "LEAVE", 42)
    for e, x in ((e1, x1), (e2, x2), (f1, y1), (f2, y2)):
        assert_pointers(t, e, leaveptr=x)
        assert_pointers(t, x, enterptr=e)
    assert_pointers(t, s1, enterptr=e1, recvptr=q2)
    assert_pointers(t, s2, enterptr=e2, recvptr=q1)
    assert_pointers(t, q1, enterptr=f1, sendptr=s2)
    assert_pointers(t, q2, enterptr=f2, sendptr=s1)
    # section 6.3: when the root is received, an older message waits in M^{s,d}
    root = q1
    queued = t.queue(root - 1, r0, r1)
    assert queued == [s1, s2]
    assert any(t.event(e).time < t.event(root).sendptr.time for e in queued)
    assert t.queue(root, r0, r1) == [s1]
    assert t.queue(len(t) - 1, r0, r1) == []


# -- section 6.4: wait at barrier ----------------------------------------------------


def test_wait_at_barrier(tmp_path):
    enters = {0: 10, 1: 30, 2: 20}
    with earlc.TraceWriter(tmp_path / "bar", ranks=4) as w:
        sub = w.comm("first3", [0, 1, 2])
        for rank, te in enters.items():
            w.collective(rank, te, 50 + rank, "MPI_Barrier", comm=sub)
        w.collective(3, 5, 6, "MPI_Barrier", comm="MPI_COMM_SELF")
    t = earlc.open(tmp_path / "bar")
    ends = {r: find(t, loc_of(t, r), "MPI_COLLECTIVE_END", 49 + r) for r in enters}
    ents = {r: find(t, loc_of(t, r), "ENTER", enters[r]) for r in enters}
    root = max(ends.values())
    # coll(e) is empty for every member but the completing one
    for r, e in ends.items():
        assert t.coll(e) == ([] if e != root else sorted(ends.values()))
        assert t.event(e).enterptr.id == ents[r]
        assert t.states.instance_of(e).id == t.states.instance_of(root).id
    members = t.coll(root)
    entered = [t.event(e).enterptr for e in members]
    assert len({e.time for e in entered}) > 1
    waits = {e.location.rank: max(x.time for x in entered) - e.time for e in entered}
    assert waits == {0: 20, 1: 0, 2: 10}
    inst = t.states.instance_of(root)
    assert inst.is_complete and inst.expected == 3 and inst.operation == "BARRIER"
    self_end = find(t, loc_of(t, 3), "MPI_COLLECTIVE_END", 6)
    assert t.coll(self_end) == [self_end]
    assert t.states.n_collectives == 2
    assert not t.states.warnings


# -- section 7: fork, inherited stacks, team barriers, locks --------------------------


def test_openmp_fork_team_barrier_locks(tmp_path):
    par, bar = "!$omp parallel @jacobi.c:10", "!$omp barrier @jacobi.c:12"
    with earlc.TraceWriter(tmp_path / "omp", ranks=1, threads_per_rank=2) as w:
        m, k = (0, 0), (0, 1)
        w.enter(m, 0, "main"); w.enter(m, 5, "foo")
        w.fork(m, 10, threads=2)
        w.team_begin(m, 11); w.team_begin(k, 12)
        w.enter(m, 13, par); w.enter(k, 14, par)
        w.acquire_lock(k, 15, lock=1, order=1); w.release_lock(k, 16, lock=1, order=1)
        w.acquire_lock(m, 17, lock=1, order=2); w.release_lock(m, 19, lock=1, order=2)
        w.enter(m, 20, bar); w.enter(k, 25, bar)
        w.leave(m, 30, bar); w.leave(k, 31, bar)
        w.leave(m, 32, par); w.leave(k, 33, par)
        w.team_end(m, 34); w.team_end(k, 35)
        w.join(m, 36)
        w.leave(m, 40, "foo"); w.leave(m, 50, "main")
    t = earlc.open(tmp_path / "omp")
    M, K = loc_of(t, 0, 0), loc_of(t, 0, 1)
    main, foo = find(t, M, "ENTER", 0), find(t, M, "ENTER", 5)
    fork = find(t, M, "THREAD_FORK", 10)
    tbm, tbk = find(t, M, "THREAD_TEAM_BEGIN", 11), find(t, K, "THREAD_TEAM_BEGIN", 12)
    pm, pk = find(t, M, "ENTER", 13), find(t, K, "ENTER", 14)
    ak, rk = find(t, K, "THREAD_ACQUIRE_LOCK", 15), find(t, K, "THREAD_RELEASE_LOCK", 16)
    am, rm = find(t, M, "THREAD_ACQUIRE_LOCK", 17), find(t, M, "THREAD_RELEASE_LOCK", 19)
    bm, bk = find(t, M, "ENTER", 20), find(t, K, "ENTER", 25)
    xbm, xbk = find(t, M, "LEAVE", 30), find(t, K, "LEAVE", 31)
    xpm, xpk = find(t, M, "LEAVE", 32), find(t, K, "LEAVE", 33)
    tem, tek = find(t, M, "THREAD_TEAM_END", 34), find(t, K, "THREAD_TEAM_END", 35)
    join = find(t, M, "THREAD_JOIN", 36)
    xfoo, xmain = find(t, M, "LEAVE", 40), find(t, M, "LEAVE", 50)

    assert_pointers(t, main, leaveptr=xmain)
    assert_pointers(t, foo, enterptr=main, leaveptr=xfoo)
    assert_pointers(t, fork, enterptr=foo)
    assert_pointers(t, tbm, enterptr=foo, forkptr=fork)
    assert_pointers(t, tbk, enterptr=foo, forkptr=fork)       # inherited at the fork
    assert_pointers(t, pm, enterptr=foo, leaveptr=xpm, forkptr=fork)
    assert_pointers(t, pk, enterptr=foo, leaveptr=xpk, forkptr=fork)  # section 7
    assert_pointers(t, ak, enterptr=pk, forkptr=fork)
    assert_pointers(t, rk, enterptr=pk, forkptr=fork, lockptr=ak)
    assert_pointers(t, am, enterptr=pm, forkptr=fork, lockptr=rk)
    assert_pointers(t, rm, enterptr=pm, forkptr=fork, lockptr=am)
    assert_pointers(t, bm, enterptr=pm, leaveptr=xbm, forkptr=fork)
    assert_pointers(t, bk, enterptr=pk, leaveptr=xbk, forkptr=fork)
    assert_pointers(t, xbm, enterptr=bm, forkptr=fork)
    assert_pointers(t, xbk, enterptr=bk, forkptr=fork)
    assert_pointers(t, xpm, enterptr=pm, forkptr=fork)
    assert_pointers(t, xpk, enterptr=pk, forkptr=fork)
    assert_pointers(t, tem, enterptr=foo, forkptr=fork)
    assert_pointers(t, tek, enterptr=foo, forkptr=fork)
    assert_pointers(t, join, enterptr=foo)
    assert_pointers(t, xfoo, enterptr=foo)
    assert_pointers(t, xmain, enterptr=main)

    # stacks: the worker's includes the master's frames at the fork
    assert t.stack(bk, K) == [main, foo, pk, bk]
    assert t.stack(tbk, K) == [main, foo]
    assert t.stack(tek, K) == []
    assert t.stack(tbk - 1, K) == []
    assert t.stack(bm, M) == [main, foo, pm, bm]
    assert t.stack(len(t) - 1, M) == []
    # the team barrier is one instance of two members, completed by the last LEAVE
    assert t.coll(xbk) == [xbm, xbk]
    inst = t.states.instance_of(xbm)
    assert inst.type == "OMP_BARRIER" and inst.fork == fork and inst.expected == 2
    # lock state
    (lock,) = t.locks(ak)
    assert (lock.id, lock.last, lock.holder) == (1, ak, K)
    (lock,) = t.locks(rk)
    assert lock.holder is None
    (lock,) = t.locks(am)
    assert lock.holder == M
    assert t.locks(ak - 1) == []
    assert not t.states.warnings


def test_openmp_fork_without_team_records(tmp_path):
    par, bar = "!$omp parallel @a.c:3", "!$omp barrier @a.c:5"
    with earlc.TraceWriter(tmp_path / "ompf", ranks=1, threads_per_rank=2) as w:
        m, k = (0, 0), (0, 1)
        w.enter(m, 0, "main")
        w.omp_fork(m, 10, threads=2)
        w.enter(m, 11, par); w.enter(k, 12, par)
        w.omp_acquire_lock(k, 13, lock=4, order=1); w.omp_release_lock(k, 14, lock=4, order=1)
        w.omp_acquire_lock(m, 15, lock=4, order=2); w.omp_release_lock(m, 16, lock=4, order=2)
        w.enter(m, 20, bar); w.enter(k, 25, bar)
        w.leave(m, 27, bar); w.leave(k, 28, bar)
        w.leave(k, 29, par); w.leave(m, 30, par)
        w.omp_join(m, 32)
        w.enter(k, 50, "idle"); w.leave(k, 51, "idle")
        w.leave(m, 60, "main")
    t = earlc.open(tmp_path / "ompf")
    M, K = loc_of(t, 0, 0), loc_of(t, 0, 1)
    main, fork = find(t, M, "ENTER", 0), find(t, M, "OMP_FORK", 10)
    pm, pk = find(t, M, "ENTER", 11), find(t, K, "ENTER", 12)
    ak, rk = find(t, K, "OMP_ACQUIRE_LOCK", 13), find(t, K, "OMP_RELEASE_LOCK", 14)
    am, rm = find(t, M, "OMP_ACQUIRE_LOCK", 15), find(t, M, "OMP_RELEASE_LOCK", 16)
    bm, bk = find(t, M, "ENTER", 20), find(t, K, "ENTER", 25)
    xbm, xbk = find(t, M, "LEAVE", 27), find(t, K, "LEAVE", 28)
    xpk, xpm = find(t, K, "LEAVE", 29), find(t, M, "LEAVE", 30)
    join = find(t, M, "OMP_JOIN", 32)
    idle, xidle = find(t, K, "ENTER", 50), find(t, K, "LEAVE", 51)
    xmain = find(t, M, "LEAVE", 60)
    assert_pointers(t, main, leaveptr=xmain)
    assert_pointers(t, fork, enterptr=main)
    assert_pointers(t, pm, enterptr=main, leaveptr=xpm, forkptr=fork)
    assert_pointers(t, pk, enterptr=main, leaveptr=xpk, forkptr=fork)   # inherited
    assert_pointers(t, ak, enterptr=pk, forkptr=fork)
    assert_pointers(t, rk, enterptr=pk, forkptr=fork, lockptr=ak)
    assert_pointers(t, am, enterptr=pm, forkptr=fork, lockptr=rk)
    assert_pointers(t, rm, enterptr=pm, forkptr=fork, lockptr=am)
    assert_pointers(t, bm, enterptr=pm, leaveptr=xbm, forkptr=fork)
    assert_pointers(t, bk, enterptr=pk, leaveptr=xbk, forkptr=fork)
    assert_pointers(t, xbm, enterptr=bm, forkptr=fork)
    assert_pointers(t, xbk, enterptr=bk, forkptr=fork)
    assert_pointers(t, xpk, enterptr=pk, forkptr=fork)
    assert_pointers(t, xpm, enterptr=pm, forkptr=fork)
    assert_pointers(t, join, enterptr=main)
    assert_pointers(t, idle, leaveptr=xidle)       # out of the team again
    assert_pointers(t, xidle, enterptr=idle)
    assert_pointers(t, xmain, enterptr=main)
    assert t.stack(bk, K) == [main, pk, bk]
    assert t.stack(idle, K) == [idle]
    assert t.coll(xbk) == [xbm, xbk]
    assert t.states.instance_of(xbm).expected == 2
    assert not t.states.warnings


# -- non-blocking messages ------------------------------------------------------------


def test_nonblocking_messages(tmp_path):
    with earlc.TraceWriter(tmp_path / "nb", ranks=2) as w:
        w.enter(1, 5, "MPI_Irecv"); w.irecv_request(1, 6, request=9); w.leave(1, 7, "MPI_Irecv")
        w.enter(0, 10, "MPI_Isend"); w.isend(0, 11, dest=1, request=3, tag=4, bytes=32)
        w.leave(0, 12, "MPI_Isend")
        w.enter(0, 20, "MPI_Wait"); w.isend_complete(0, 21, request=3); w.leave(0, 22, "MPI_Wait")
        w.enter(1, 30, "MPI_Wait"); w.irecv(1, 31, source=0, request=9, tag=4, bytes=32)
        w.leave(1, 32, "MPI_Wait")
    t = earlc.open(tmp_path / "nb")
    r0, r1 = loc_of(t, 0), loc_of(t, 1)
    isend = find(t, r0, "MPI_ISEND", 11)
    irecv = find(t, r1, "MPI_IRECV", 31)
    assert t.event(irecv).sendptr.id == isend
    assert t.event(isend).recvptr.id == irecv
    assert t.event(irecv).enterptr.region.name == "MPI_Wait"
    # the request halves are linked by the trace model
    assert t.event(isend).partner == find(t, r0, "MPI_ISEND_COMPLETE", 21)
    assert t.queue(irecv - 1, r0, r1) == [isend]
    assert not t.states.warnings


# -- inconsistent traces ---------------------------------------------------------------


def test_inconsistent_trace_warnings(tmp_path):
    with earlc.TraceWriter(tmp_path / "bad", ranks=2) as w:
        w.enter(0, 1, "main")
        w.recv(0, 2, source=1, tag=5, bytes=4)          # a receive with no send
        w.send(1, 3, dest=0, tag=6, bytes=4)            # a send never received
        w.send(1, 4, dest=0, tag=7, bytes=4)            # received below: matched
        w.recv(0, 5, source=1, tag=7, bytes=4)
        w.collective(0, 6, 7, "MPI_Allreduce")           # rank 1 never joins
        w.leave(0, 8, "main")
        w.leave(1, 9, "work")                           # a LEAVE with no ENTER
    t = earlc.open(tmp_path / "bad")
    s = t.states
    c = s.warnings.counts
    assert c["recv_without_send"] == 1
    assert c["send_not_received"] == 1
    assert c["coll_incomplete"] == 1
    assert c["leave_unmatched"] == 1
    r0, r1 = loc_of(t, 0), loc_of(t, 1)
    lonely_recv, lost_send = find(t, r0, "MPI_RECV", 2), find(t, r1, "MPI_SEND", 3)
    bad_leave = find(t, r1, "LEAVE", 9)
    events = {d[0]: d[2] for d in s.warnings.details}
    assert events["recv_without_send"] == lonely_recv
    assert events["send_not_received"] == lost_send
    assert events["leave_unmatched"] == bad_leave
    assert events["coll_incomplete"] == find(t, r0, "MPI_COLLECTIVE_END", 7)
    assert s.sendptr[lonely_recv] == -1 and s.recvptr[lost_send] == -1
    assert s.enterptr[bad_leave] == -1
    # everything else is still computed
    good_recv = find(t, r0, "MPI_RECV", 5)
    assert s.sendptr[good_recv] == find(t, r1, "MPI_SEND", 4)
    assert t.event(good_recv).enterptr.region.name == "main"
    (inst,) = s.collectives()
    assert not inst.is_complete and inst.members == [find(t, r0, "MPI_COLLECTIVE_END", 7)]
    assert t.coll(inst.members[0]) == []
    assert s.warnings.to_dataframe().shape[0] == 4


def test_more_inconsistencies(tmp_path):
    with earlc.TraceWriter(tmp_path / "odd", ranks=2, threads_per_rank=2) as w:
        w.recv(1, 5, source=0, tag=1, bytes=4)               # ordered before its send
        w.send(0, 10, dest=1, tag=1, bytes=4)
        w.collective(0, 20, 30, "MPI_Bcast", root=0)
        w.collective(1, 21, 31, "MPI_Bcast", root=1)         # members disagree on the root
        w.team_begin((1, 1), 40)                             # no fork is open
        w.team_end((1, 1), 41)
        w.team_end((1, 1), 42)                               # no team is open
        w.release_lock((0, 1), 50, lock=3, order=1)          # never acquired
    t = earlc.open(tmp_path / "odd")
    s = t.states
    c = s.warnings.counts
    assert c["recv_before_send"] == 1 and c["recv_without_send"] == 0
    assert c["coll_mismatch"] == 1 and c["coll_incomplete"] == 0
    assert c["team_without_fork"] == 1 and c["team_end_unmatched"] == 1
    assert c["lock_release_unheld"] == 1
    recv, send = find(t, loc_of(t, 1), "MPI_RECV", 5), find(t, loc_of(t, 0), "MPI_SEND", 10)
    assert s.sendptr[recv] == send and s.recvptr[send] == recv   # matched, pointing forward
    assert t.queue(recv, loc_of(t, 0), loc_of(t, 1)) == []
    assert t.queue(send, loc_of(t, 0), loc_of(t, 1)) == []     # already received
    assert all(d[2] >= 0 for d in s.warnings.details)


# -- reference traces ------------------------------------------------------------------


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_reference_receives_matched(name):
    t = earlc.open(reference_trace(name))
    s, ev = t.states, t.events
    recv = np.nonzero(np.isin(ev.kind, [KINDS["MPI_RECV"], KINDS["MPI_IRECV"]]))[0]
    send = np.nonzero(np.isin(ev.kind, [KINDS["MPI_SEND"], KINDS["MPI_ISEND"]]))[0]
    sp = s.sendptr[recv]
    assert (sp >= 0).all(), "unmatched receives in %s" % name
    assert (ev.communicator[sp] == ev.communicator[recv]).all()
    assert (ev.tag[sp] == ev.tag[recv]).all()
    assert (ev.bytes[sp] == ev.bytes[recv]).all()
    assert (ev.peer[recv] == ev.location[sp]).all()
    assert (ev.peer[sp] == ev.location[recv]).all()
    assert (s.recvptr[sp] == recv).all()
    assert (s.recvptr[send] >= 0).all()
    assert len(set(sp.tolist())) == len(sp)
    assert not s.warnings, s.warnings
    # every queue drains by the end
    last = len(t) - 1
    for a, b in {(int(ev.location[i]), int(ev.peer[i])) for i in send}:
        assert t.queue(last, a, b) == []


def test_sstmacro_collective_instances():
    t = earlc.open(reference_trace("sstmacro-mpi-coverage"))
    s = t.states
    comms = {c.id: c for c in t.communicators}
    by_comm = {}
    for inst in s.collectives():
        assert inst.is_complete, inst
        assert len(inst.members) == inst.expected
        by_comm.setdefault(inst.communicator, set()).add(len(inst.members))
        assert len({t.events.location[e] for e in inst.members}) == len(inst.members)
        assert t.coll(inst.complete) == inst.members
    assert by_comm[0] == {10}                       # MPI_COMM_WORLD
    for c in (1, 2, 3, 4):
        assert by_comm[c] == {2}                    # the split communicators
    for c in (6, 7):
        assert by_comm[c] == {1}                    # COMM_SELF groups
    assert comms[0].size == 10
    ends = np.nonzero(t.events.kind == KINDS["MPI_COLLECTIVE_END"])[0]
    assert (s.coll_instance[ends] >= 0).all()
    assert not s.warnings


def test_hybrid_trace_teams_and_locks():
    t = earlc.open(reference_trace("casita-jacobi-hybrid"))
    s, ev = t.states, t.events
    assert not s.warnings, s.warnings
    in_team = s.forkptr >= 0
    assert in_team.any()
    forks = s.forkptr[in_team]
    assert np.isin(ev.kind[forks], [KINDS["THREAD_FORK"], KINDS["OMP_FORK"]]).all()
    assert (forks < np.nonzero(in_team)[0]).all()
    locks = np.nonzero(s.lockptr >= 0)[0]
    assert len(locks) and (s.lockptr[locks] < locks).all()
    for inst in s.collectives():
        assert inst.is_complete
    # worker threads' outermost frames in a team are the master's
    workers = [l.index for l in t.locations if l.thread > 0]
    e = int(np.nonzero(np.isin(ev.location, workers) & (ev.kind == KINDS["ENTER"]))[0][0])
    assert t.events.location[s.enterptr[e]] != t.events.location[e]


# -- property tests on generated traces ---------------------------------------------------


def generate(path, seed, ranks=4, steps=150):
    """A clean random MPI trace: nested regions, messages on a few tags and two
    communicators, and collectives; every message received, every region left."""
    rng = random.Random(seed)
    clock = [0] * ranks
    depth = [0] * ranks

    def tick(r, dt=None):
        clock[r] += dt if dt is not None else rng.randint(1, 5)
        return clock[r]

    with earlc.TraceWriter(path, ranks=ranks) as w:
        pair = w.comm("pair01", [0, 1])
        for _ in range(steps):
            what = rng.random()
            if what < 0.3:
                r = rng.randrange(ranks)
                if depth[r] < 4 and (depth[r] == 0 or rng.random() < 0.6):
                    w.enter(r, tick(r), "f%d" % depth[r]); depth[r] += 1
                elif depth[r]:
                    depth[r] -= 1; w.leave(r, tick(r), "f%d" % depth[r])
            elif what < 0.85:
                a, b = rng.sample(range(ranks), 2)
                comm, dest, src = "MPI_COMM_WORLD", b, a
                if {a, b} == {0, 1} and rng.random() < 0.5:
                    comm = pair
                tag = rng.randrange(3)
                w.enter(a, tick(a), "MPI_Send")
                ts = tick(a)
                w.send(a, ts, dest=dest, tag=tag, bytes=8, comm=comm)
                w.leave(a, tick(a), "MPI_Send")
                w.enter(b, tick(b), "MPI_Recv")
                clock[b] = max(clock[b], ts)
                w.recv(b, tick(b), source=src, tag=tag, bytes=8, comm=comm)
                w.leave(b, tick(b), "MPI_Recv")
            else:
                for r in range(ranks):
                    w.collective(r, tick(r), tick(r), "MPI_Allreduce", sent=8, received=8)
        for r in range(ranks):
            while depth[r]:
                depth[r] -= 1; w.leave(r, tick(r), "f%d" % depth[r])
    return earlc.open(path)


def replay(t, keep=None):
    """Naive replay: the stack of every location and every queue after each event
    (after the events in `keep` only, when given; None elsewhere)."""
    ev, s = t.events, t.states
    stacks = {l.index: [] for l in t.locations}
    queues = {}
    stack_at, queue_at = [], []
    for i in range(len(t)):
        l, k = int(ev.location[i]), int(ev.kind[i])
        if k == KINDS["ENTER"]:
            stacks[l].append(i)
        elif k == KINDS["LEAVE"]:
            stacks[l].pop()
        elif k in (KINDS["MPI_SEND"], KINDS["MPI_ISEND"]):
            queues.setdefault((l, int(ev.peer[i])), []).append(i)
        elif k in (KINDS["MPI_RECV"], KINDS["MPI_IRECV"]):
            q = queues[(int(ev.peer[i]), l)]
            # the least recent send with the receive's communicator and tag
            j = next(x for x in q if ev.communicator[x] == ev.communicator[i] and ev.tag[x] == ev.tag[i])
            assert s.sendptr[i] == j
            q.remove(j)
        if keep is None or i in keep:
            stack_at.append({l: list(v) for l, v in stacks.items()})
            queue_at.append({p: list(v) for p, v in queues.items()})
        else:
            stack_at.append(None)
            queue_at.append(None)
    return stack_at, queue_at


@pytest.mark.parametrize("name", ["pipit-ping-pong", "pipit-ping-pong-papi",
                                  "sstmacro-mpi-coverage"])
def test_reference_replay(name):
    """MPI reference traces: sendptr is the least recent matching send (the replay
    asserts it), and stack and queue queries equal the replayed states."""
    t = earlc.open(reference_trace(name))
    n = len(t)
    rng = random.Random(7)
    sample = set(rng.sample(range(n), min(n, 60))) | {n - 1}
    stack_at, queue_at = replay(t, sample)
    locs = [l.index for l in t.locations]
    for i in sorted(sample):
        for l in locs:
            assert t.stack(i, l) == stack_at[i][l], (i, l)
        for (a, b), q in queue_at[i].items():
            assert t.queue(i, a, b) == q, (i, a, b)
    assert all(not q for q in queue_at[n - 1].values())


@pytest.mark.parametrize("seed", range(4))
def test_properties_generated(tmp_path, seed):
    t = generate(tmp_path / ("g%d" % seed), seed)
    s, ev = t.states, t.events
    n = len(t)
    ids = np.arange(n)
    assert not s.warnings, s.warnings
    for name in ("enterptr", "sendptr", "lockptr", "forkptr"):
        p = getattr(s, name)
        assert (p[p >= 0] < ids[p >= 0]).all(), name          # back in time
    for name in ("leaveptr", "recvptr"):
        p = getattr(s, name)
        assert (p[p >= 0] > ids[p >= 0]).all(), name          # the forward twins
    has = s.enterptr >= 0
    assert (ev.location[s.enterptr[has]] == ev.location[has]).all()
    assert (ev.kind[s.enterptr[has]] == KINDS["ENTER"]).all()
    leaves = ev.kind == KINDS["LEAVE"]
    assert (s.leaveptr[s.enterptr[leaves]] == ids[leaves]).all()
    assert (ev.region[s.enterptr[leaves]] == ev.region[leaves]).all()
    stack_at, queue_at = replay(t)
    rng = random.Random(seed)
    locs = [l.index for l in t.locations]
    for i in sorted(rng.sample(range(n), min(n, 150))) + [n - 1]:
        for l in locs:
            st = t.stack(i, l)
            assert st == stack_at[i][l], (i, l)
            # stacks nest: each frame encloses the next and is still open at i
            for outer, inner in zip(st, st[1:]):
                assert s.enterptr[inner] == outer
                assert s.leaveptr[outer] > s.leaveptr[inner] > i or s.leaveptr[inner] == -1
        for (a, b), q in queue_at[i].items():
            assert t.queue(i, a, b) == q, (i, a, b)
    for (a, b) in queue_at[-1]:
        assert t.queue(n - 1, a, b) == []                    # queues drain
    for inst in s.collectives():
        assert inst.is_complete and len(inst.members) == 4
        assert inst.complete == max(inst.members)


def generate_openmp(path, seed, threads=3, regions=12):
    """A clean random OpenMP trace with team records: parallel regions with barriers
    (every thread passes the same number) and lock pairs, the master nested in regions."""
    rng = random.Random(seed)
    clock = [0]

    def now():
        clock[0] += rng.randint(1, 3)
        return clock[0]

    with earlc.TraceWriter(path, ranks=1, threads_per_rank=threads) as w:
        m = (0, 0)
        w.enter(m, now(), "main")
        order = 0
        for r in range(regions):
            outer = rng.random() < 0.5
            if outer:
                w.enter(m, now(), "solver")
            w.fork(m, now(), threads=threads)
            ths = [(0, k) for k in range(threads)]
            for th in ths:
                w.team_begin(th, now())
            for th in ths:
                w.enter(th, now(), "!$omp parallel @s.c:%d" % r)
            for _ in range(rng.randint(0, 3)):
                for th in rng.sample(ths, len(ths)):
                    if rng.random() < 0.5:
                        order += 1
                        lock = rng.randrange(2)
                        w.acquire_lock(th, now(), lock=lock, order=order)
                        w.release_lock(th, now(), lock=lock, order=order)
                for th in ths:
                    w.enter(th, now(), "!$omp barrier @s.c:99")
                for th in ths:
                    w.leave(th, now(), "!$omp barrier @s.c:99")
            for th in ths:
                w.leave(th, now(), "!$omp parallel @s.c:%d" % r)
            for th in ths:
                w.team_end(th, now())
            w.join(m, now())
            if outer:
                w.leave(m, now(), "solver")
        w.leave(m, now(), "main")
    return earlc.open(path)


@pytest.mark.parametrize("seed", range(3))
def test_properties_generated_openmp(tmp_path, seed):
    t = generate_openmp(tmp_path / ("o%d" % seed), seed)
    s, ev = t.states, t.events
    n = len(t)
    ids = np.arange(n)
    assert not s.warnings, s.warnings
    for name in ("enterptr", "lockptr", "forkptr"):
        p = getattr(s, name)
        assert (p[p >= 0] < ids[p >= 0]).all(), name
    lp = s.leaveptr
    assert (lp[lp >= 0] > ids[lp >= 0]).all()
    # lock events point to the previous event on the same lock
    locks = np.nonzero(s.lockptr >= 0)[0]
    th = t.events.threading
    lock_id = {int(e): int(i) for e, i in zip(th.event, th.id)}
    for e in locks:
        assert lock_id[int(e)] == lock_id[int(s.lockptr[e])]
    # every event between a thread's team begin and end has the fork of its team
    forks = np.nonzero(ev.kind == KINDS["THREAD_FORK"])[0]
    M = loc_of(t, 0, 0)
    for f in forks:
        members = np.nonzero(s.forkptr == f)[0]
        assert len(set(ev.location[members].tolist())) == 3
        base = t.stack(int(f), M)
        for e in members:
            if ev.kind[e] == KINDS["THREAD_TEAM_END"]:
                continue                           # just after it, the thread has left
            st = t.stack(int(e), int(ev.location[e]))
            assert st[:len(base)] == base          # inherited from the master at the fork
            for outer, inner in zip(st, st[1:]):
                assert s.enterptr[inner] == outer
    for inst in s.collectives():
        assert inst.type == "OMP_BARRIER" and inst.is_complete and len(inst.members) == 3
        assert s.forkptr[inst.members[0]] == inst.fork
    for l in t.locations:
        assert t.stack(n - 1, l) == []


def test_gather_equals_the_dense_arrays():
    """states.gather computes pointers for chosen events without the dense array
    (leaveptr by walking the location, sendptr/recvptr/lockptr from the pass's
    records); it must agree with the dense arrays everywhere."""
    for name in ("casita-cuda-simple", "sstmacro-mpi-coverage"):
        trace = earlc.open(reference_trace(name))
        ids = np.arange(len(trace), dtype=np.int64)
        fresh = earlc.open(reference_trace(name)).states  # no dense array built yet
        for ptr in ("leaveptr", "sendptr", "recvptr", "lockptr", "forkptr", "enterptr"):
            got = fresh.gather(ptr, ids)
            assert np.array_equal(got, getattr(trace.states, ptr)), (name, ptr)
        assert list(fresh.gather("leaveptr", np.array([-5, len(trace)]))) == [-1, -1]


def test_states_do_not_depend_on_threads(tmp_path):
    """Large enough (>= 65536 events, no threading records) for the pass to run as
    two halves: the pointers, instances and warnings equal those of one thread, and
    a trace's States use the threads it was opened with."""
    earlc.synth("ring", tmp_path / "ls", ranks=4, events=100000)
    t = earlc.open(tmp_path / "ls", threads=1)
    assert len(t) >= 1 << 16 and t.threads == 1
    one = earlc.states.States(t, threads=1)
    two = earlc.states.States(t, threads=2)
    for name in earlc.states.POINTERS:
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    assert np.array_equal(one.coll_complete, two.coll_complete)
    assert one.warnings.counts == two.warnings.counts
    assert one.warnings.details == two.warnings.details
