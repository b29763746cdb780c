"""What makes the analysis in turn faster (earlc.parts.inturn, docs/memory.md,
"What it costs") keeps its report: the catalog of a part that exchanges
nothing runs on threads, and the one of a part that does (the root causes)
one property after another; pass 1 reads the next part on a thread while the
current one is spilled, where two readings fit in the budget, and not where
they do not; pass 2 opens the next part (read, ghosts added, ordered) on a
thread while the current one is analysed, where both fit; the ghosts are
exported packed narrow, the same records as the wide export's; a failure of
a part read or opened ahead is raised by the driver; and EARLC_PROFILE prints
where the time went."""
import threading

import numpy as np
import pytest

import earlc
from earlc import _core
from earlc.analysis import engine
from earlc.parts import inturn
from earlc.parts.ahead import Ahead
from earlc.parts.inturn import InTurn
from earlc.parts.part import GHOST_RECORD
from earlc.parts.plan import plan


@pytest.fixture(scope="module")
def halo(tmp_path_factory):
    return earlc.synth("halo", tmp_path_factory.mktemp("speed") / "h", ranks=16,
                       iterations=40).path


@pytest.fixture(scope="module")
def whole(halo):
    return earlc.analyze(earlc.open(halo)).to_json()


def test_the_catalog_of_a_part_runs_on_threads(halo, whole, tmp_path, monkeypatch):
    parallel = []
    run_parallel = engine.Evaluation._run_parallel

    def counted(self, order, value, progress, threads):
        parallel.append(threads)
        return run_parallel(self, order, value, progress, threads)
    monkeypatch.setattr(engine.Evaluation, "_run_parallel", counted)
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=4, threads=2) as it:
        got = it.analyze().to_json()
    assert parallel == [2] * 4
    assert got == whole
    # the root causes exchange with the other parts in the catalog's order: one
    # property after another
    parallel.clear()
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=2, threads=2,
                collectives="delayers") as it:
        it.analyze(properties="all")
    assert parallel == []


def counting_ahead(monkeypatch, opened=None):
    """The parts pass 1 reads ahead (and, into `opened`, those pass 2 opens
    ahead), as they start."""
    started = []

    class Counted(Ahead):
        def __init__(self, start):
            if start.func.__name__ == "_open_now":
                if opened is not None:
                    opened.append(start.args[0])
            else:
                started.append(start.args[0])  # the part read ahead
            super().__init__(start)
    monkeypatch.setattr(inturn, "Ahead", Counted)
    return started


def test_pass1_reads_the_next_part_ahead_where_two_fit(halo, whole, tmp_path, monkeypatch):
    started = counting_ahead(monkeypatch)
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=5) as it:
        got = it.analyze().to_json()
    assert started == [1, 2, 3, 4]
    assert got == whole
    # a budget in which a part fits, but not two readings at once: one by one
    started.clear()
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=4) as it:
        pp, model = it.pp, it.model
        it.budget = max(model.opening(int(pp.own_events[p]), int(pp.locations[p]))
                        for p in range(4))
        assert not any(it._ahead_fits(p) for p in range(3))
        got = it.analyze().to_json()
    assert started == []
    assert got == whole


def test_a_failure_of_a_part_read_ahead_is_raised_by_the_driver(halo, tmp_path, monkeypatch):
    read = InTurn._read

    def failing(self, p, progress):
        if p == 2:
            raise earlc.TraceError("part 2 cannot be read")
        return read(self, p, progress)
    monkeypatch.setattr(InTurn, "_read", failing)
    started = counting_ahead(monkeypatch)
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=4) as it:
        with pytest.raises(earlc.TraceError, match="part 2 cannot be read"):
            it.pass1()
    assert 2 in started
    with pytest.raises(KeyError):
        Ahead(lambda: {}["nothing"]).result()
    assert Ahead(lambda: 42).result() == 42


def test_pass2_opens_the_next_part_ahead_where_both_fit(halo, whole, tmp_path, monkeypatch):
    opened = []
    counting_ahead(monkeypatch, opened)
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=5) as it:
        got = it.analyze().to_json()
        assert "pass 2: wait for the part opened ahead" in it.phases.totals
    assert opened == [1, 2, 3, 4]
    assert got == whole
    # the same in the root causes' runs of pass 2, each run from part 0 again
    opened.clear()
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=3, collectives="delayers") as it:
        all_in_turn = it.analyze(properties="all").to_json()
        runs = it.steps_taken + 1
    assert opened == [1, 2] * runs
    assert all_in_turn == earlc.analyze(earlc.open(halo), properties="all").to_json()
    # a budget in which a part analysed fits, but not beside the next one's
    # opening: one after another
    opened.clear()
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=4) as it:
        it.pass1()
        pp, model = it.pp, it.model
        it.budget = max(model.part(int(pp.own_events[p]), int(pp.ghosts[p]),
                                   int(pp.locations[p])) for p in range(4))
        assert not any(it._open_ahead_fits(p) for p in range(3))
        got = it.analyze().to_json()
    assert opened == []
    assert got == whole


def test_a_failure_of_a_part_opened_ahead_is_raised_by_the_driver(halo, tmp_path,
                                                                   monkeypatch):
    add = InTurn._add_ghosts

    def failing(self, reading, p):
        if p == 2:
            raise earlc.TraceError("part 2's ghosts cannot be added")
        return add(self, reading, p)
    monkeypatch.setattr(InTurn, "_add_ghosts", failing)
    opened = []
    counting_ahead(monkeypatch, opened)
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=4) as it:
        with pytest.raises(earlc.TraceError, match="part 2's ghosts cannot be added"):
            it.analyze()
    assert 2 in opened
    assert not [t for t in threading.enumerate() if t.name == "earlc-read-ahead"]


def test_a_part_opened_ahead_and_not_taken_is_let_go(halo, tmp_path, monkeypatch):
    """A loop over the parts left early (the caller stops): the part opened
    ahead is dropped and its thread ends, with the loop or with the InTurn."""
    opened = []
    counting_ahead(monkeypatch, opened)
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=4) as it:
        for part in it.parts():
            break
        del part
        assert opened == [1]
        assert it._opening is None
        parts = it.parts()
        next(parts)
        assert it._opening is not None  # the generator is not closed yet
    assert it._opening is None
    assert not [t for t in threading.enumerate() if t.name == "earlc-read-ahead"]
    parts.close()


def test_the_ghosts_exported_packed_are_the_wide_records(halo):
    defs = _core.Reading(str(halo)).definitions()
    partition = plan(defs, 3)
    for p in range(3):
        reading = _core.Reading(str(halo))
        reading.read(partition.mask(p))
        for members in (False, True):
            wide = reading.export(partition.part_of, 3, p, members=members)
            narrow = reading.export(partition.part_of, 3, p, members=members, packed=True)
            offsets = np.frombuffer(wide[0], dtype=np.uint64)
            counts = np.frombuffer(narrow[0], dtype=np.uint64)
            at = np.frombuffer(narrow[1], dtype=np.uint64)
            packed = np.frombuffer(narrow[2], dtype=np.uint8)
            assert (counts == offsets).all()
            assert counts[-1] > 0
            records = np.frombuffer(wide[1], dtype=np.uint8)
            for q in range(3):
                n = int(counts[q + 1] - counts[q])
                got = _core.unpack_ghosts(packed[int(at[q]):int(at[q + 1])], n) if n else b""
                want = records[int(offsets[q]) * GHOST_RECORD.itemsize:
                               int(offsets[q + 1]) * GHOST_RECORD.itemsize]
                assert bytes(memoryview(got)) == want.tobytes(), (p, q, members)
            if members:
                assert bytes(memoryview(narrow[3])) == bytes(memoryview(wide[2]))
            assert packed.nbytes * 3 < records.nbytes


def test_earlc_profile_prints_the_phases(halo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EARLC_PROFILE", "1")
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=3) as it:
        it.analyze()
    err = capsys.readouterr().err
    for phase in ("pass 1: read", "pass 1: export ghosts", "pass 2: catalog", "merge"):
        assert phase in err
    monkeypatch.setenv("EARLC_PROFILE", "0")
    with InTurn(halo, 1 << 50, scratch=tmp_path, parts=3) as it:
        it.analyze()
    assert "pass 1: read" not in capsys.readouterr().err
