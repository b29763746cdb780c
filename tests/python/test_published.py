"""How long an analysis keeps published occurrences (analysis/published.py):
kept while a later property subscribes to them or reads them, let go after,
and detected again, identical, when read later."""
from pathlib import Path

import numpy as np
import pytest

import earlc
from earlc.analysis import Instances, Property, PropertyError
from earlc.analysis.published import let_go_after

from conftest import reference_trace


@pytest.fixture(scope="module")
def halo(tmp_path_factory):
    d = tmp_path_factory.mktemp("halo")
    earlc.synth("halo", d / "t", ranks=4, events=60000)
    return earlc.open(d / "t")


def _same(a: Instances, b: Instances):
    assert np.array_equal(a.where, b.where) and np.array_equal(a.severity, b.severity)
    assert sorted(a.columns) == sorted(b.columns)
    for name in a.columns:
        assert np.array_equal(a[name], b[name]), name


def _kept_in(ctx):
    """What the engine's store keeps (a property itself sees only what it declares)."""
    store = ctx._published
    return [n for n in store if store.is_kept(n)]


def test_instances_let_go_are_detected_again_identically(halo):
    report = earlc.analyze(halo, properties="all")
    pub = report._ctx.published
    assert "p2p_messages" in pub and not _kept_in(report._ctx)  # all let go at the end
    # the same occurrences as an analysis that keeps them (strict order, one property)
    fresh = earlc.analyze(halo, properties=["late_sender_wrong_order"])
    for name in ("late_sender", "late_sender_wrong_order", "p2p_messages"):
        _same(report.instances(name), fresh._ctx.published[name])
        assert pub.is_kept(name)  # read again: kept for the reader


def test_root_causes_run_without_the_matched_messages(halo):
    """What the root causes read is kept; the matched messages, which no later
    property uses, are let go before them, and the refinements kept or in
    report.worst no longer hold their columns.  On one thread: with several, the
    root causes start as soon as their inputs are done (engine.Evaluation), beside
    properties that still read the matched messages."""
    seen = {}

    class Probe(Property):
        name, title, parent, unit, group = "probe", "Probe", None, "occ", "root_cause"
        description = diagnosis = "looks at what is kept"
        reads = ("late_sender",)

        def totals(self, ctx):
            seen["kept"] = _kept_in(ctx)
            seen["late_sender"] = ctx.published["late_sender"]
            e = np.empty(0, np.int64)
            return e, e, e

    report = earlc.analyze(halo, properties=["all", Probe()], threads=1)
    assert "late_sender" in seen["kept"] and "p2p_messages" not in seen["kept"]
    p2p = report.instances("p2p_messages")
    for inst in [seen["late_sender"], *report.worst.values()]:
        assert not (hasattr(inst.columns, "selects_from") and
                    inst.columns.selects_from(p2p.columns))
    assert len(seen["late_sender"]) and "send_call" in seen["late_sender"]


def test_reads_orders_and_selects_what_it_names(halo):
    order = []

    class Reader(Property):
        name, title, parent, unit = "reader", "Reader", None, "occ"
        description = diagnosis = "reads two published events"
        reads = ("late_receiver", "mpi_collectives")

        def totals(self, ctx):
            order.append([n for n in ("late_receiver", "mpi_collectives") if n in ctx.published])
            e = np.empty(0, np.int64)
            return e, e, e

    report = earlc.analyze(halo, properties=[Reader()])
    assert order == [["late_receiver", "mpi_collectives"]]
    assert "late_receiver" in {p.name for p in report.properties}  # selected: it is read


@pytest.mark.parametrize("how", ["item", "get", "in"])
def test_an_undeclared_read_switches_the_property_off(halo, how):
    """A property sees only what it declares: reading another name (by [], get
    or in) raises, naming the property and the name, and the property is
    switched off as for any other failure; strict=True makes it an error."""
    class Sneaky(Property):
        name, title, parent, unit = "sneaky", "Sneaky", None, "occ"
        description = diagnosis = "reads p2p_messages without declaring it"
        reads = ("late_sender",)

        def totals(self, ctx):
            pub = ctx.published
            assert list(pub) == ["late_sender"] and len(pub) == 1  # declared, published
            if how == "item":
                pub["p2p_messages"]
            elif how == "get":
                pub.get("p2p_messages")
            else:
                "p2p_messages" in pub
            e = np.empty(0, np.int64)
            return e, e, e

    report = earlc.analyze(halo, plugins=[Sneaky()])
    (off,) = report.switched_off
    assert (off.name, off.exception) == ("sneaky", "UndeclaredRead")
    assert "property sneaky reads 'p2p_messages'" in off.message and "reads" in off.message
    assert off.line is not None and off.file.endswith("test_published.py")
    assert "p2p_messages" in report._ctx.published  # the store itself, after the analysis
    with pytest.raises(PropertyError, match="sneaky.*UndeclaredRead.*p2p_messages"):
        earlc.analyze(halo, plugins=[Sneaky()], strict=True)


def test_declared_inputs_are_evaluated_whatever_was_selected(halo):
    """What a property declares is evaluated even when nothing else asks for it:
    here a property of the default catalog reads a root cause, which the
    default selection leaves out otherwise."""
    class ReadsARootCause(Property):
        name, title, parent, unit = "reads_a_root_cause", "Reader", None, "occ"
        description = diagnosis = "reads an optional (root cause) property"
        reads = ("delay_latesender",)

        def detect(self, ctx, subscribed):
            ctx.published.get("delay_latesender")  # declared: no error (None: no instances)
            return None

    report = earlc.analyze(halo, plugins=[ReadsARootCause()])
    assert not report.switched_off
    names = {p.name for p in report.properties}
    assert "delay_latesender" in names and "delay_barrier" not in names


def test_late_receiver_alone_equals_the_whole_analysis():
    """Late Receiver leaves out the calls that also wait for a Late Sender: it
    reads Late Sender, so asked for alone it gives what the whole analysis
    gives (before it declared the read: 1,396 ticks alone, 0 in the whole)."""
    trace = earlc.open(Path(__file__).resolve().parents[2] / "traces" / "hybrid")
    alone = earlc.analyze(trace, properties=["late_receiver"])
    assert alone.total("late_receiver") == earlc.analyze(trace).total("late_receiver") == 0
    assert "late_sender" in {p.name for p in alone.properties}


@pytest.mark.parametrize("reads, message", [
    ("late_sender", "reads must be a tuple of property names"),
    ((3,), "reads must be a tuple of property names"),
    (("nonexistent",), "reads 'nonexistent', which is no property"),
    (("me",), "cannot read its own instances"),
])
def test_bad_reads_is_one_clear_error(halo, reads, message):
    class Bad(Property):
        name, title, parent, unit = "me", "Me", None, "occ"
        description = diagnosis = "declares reads wrongly"

        def totals(self, ctx):
            return None

    Bad.reads = reads
    with pytest.raises(PropertyError, match=message):
        earlc.analyze(halo, properties=[Bad()])


def test_a_reader_of_a_switched_off_property_is_switched_off(halo):
    class Failing(Property):
        name, title, parent, unit = "failing", "Failing", None, "occ"
        description = diagnosis = "raises"

        def detect(self, ctx, subscribed):
            raise RuntimeError("on purpose")

    class Reader(Property):
        name, title, parent, unit = "reader_of_failing", "Reader", None, "occ"
        description = diagnosis = "reads a failing property"
        reads = ("failing",)

        def totals(self, ctx):
            e = np.empty(0, np.int64)
            return e, e, e

    report = earlc.analyze(halo, properties=[Failing(), Reader()])
    off = {s.name: s.message for s in report.switched_off}
    assert off["reader_of_failing"] == "it reads failing, which was switched off"


def test_let_go_after_is_the_last_use():
    class P(Property):
        def __init__(self, name, subscribes=None, reads=()):
            self.name, self.subscribes, self.reads = name, subscribes, reads

    order = [P("a"), P("b", "a"), P("c"), P("d", reads=("a",)), P("e", "c")]
    after = [[p.name for p in step] for step in let_go_after(order)]
    assert after == [[], ["b"], [], ["a", "d"], ["c", "e"]]


def test_reference_trace_report_unchanged_by_letting_go():
    """The JSON report of a real trace is the same whether instances are let go
    or read again afterwards (report.instances of every detected property)."""
    t = earlc.open(reference_trace("sstmacro-mpi-coverage"))
    report = earlc.analyze(t, properties="all")
    before = report.to_json()
    for name in list(report._ctx.published):
        report.instances(name)
    assert report.to_json() == before
