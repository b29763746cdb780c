"""Plugins a user can trust: loading from files and packages, the paper's form of
a compound event, the checks of declarations and returned values (messages
that name the property and say what to change), failing plugins switched off
with their own line, and the metric tree kept a tree."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import earlc
from conftest import ROOT, reference_trace
from earlc.analysis import (CompoundEvent, Fraction, Instances, PluginError, Property,
                            PropertyError, load_file)
from earlc.analysis.compound import Root

BLOCKING_RECEIVES = ("MPI_Recv", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                     "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Mrecv")


class LateSenderPaper(CompoundEvent):
    """Late Sender as in section 6.1 of the paper."""
    name, title, parent = "late_sender_paper", "Late Sender (paper form)", "mpi_point2point"
    root = Root("MPI_RECV", "MPI_IRECV")                     # type(root) = Receive
    s1 = Fraction("root.sendptr")                            # s1 = root.sendptr
    e1 = Fraction("root.enterptr", region=BLOCKING_RECEIVES)
    e2 = Fraction("s1.enterptr", where="e2.time > e1.time")
    severity = "e2.time - e1.time"
    charge = "e1"
    one_per = "e1"


class WaitAtBarrierPaper(CompoundEvent):
    """Unbalanced barrier as in section 6.4, charged to each member."""
    name, title, parent = "wait_at_barrier_paper", "Wait at Barrier (paper)", "mpi_synchronization"
    root = Root("MPI_COLLECTIVE_END")
    r1 = Fraction("root.enterptr", region="MPI_Barrier")
    E1 = Fraction("coll(root)")
    E2 = Fraction("E1.enterptr")
    condition = "max(E2.time) != min(E2.time)"
    severity = "max(E2.time) - E2.time"
    charge = "E2"


def tables_equal(report, a, b):
    ta, tb = report._tables[a], report._tables[b]
    return all(np.array_equal(x, y) for x, y in zip(ta, tb))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    base = tmp_path_factory.mktemp("gen")
    out = {}
    for kind, opts in (("ring", dict(ranks=4, iterations=6, delay=400, delay_rank=2)),
                       ("halo", dict(ranks=6, iterations=3)),
                       ("master-worker", dict(ranks=4, iterations=3, any_source=1)),
                       ("collectives", dict(ranks=6, iterations=2, split=2, delay=300,
                                            delay_rank=4)),
                       ("ping-pong", dict(ranks=2, iterations=4, wrong_order=1))):
        earlc.synth(kind, base / kind, **opts)
        out[kind] = earlc.open(base / kind)
    return out


# -- the paper's form -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["ring", "halo", "master-worker", "ping-pong"])
def test_paper_form_late_sender_equals_the_builtin_on_generated_traces(generated, kind):
    r = earlc.analyze(generated[kind], plugins=[LateSenderPaper()], packages=False)
    assert not r.switched_off
    assert r.total("late_sender_paper") == r.total("late_sender")
    assert r.occurrences("late_sender_paper") == r.occurrences("late_sender")
    assert tables_equal(r, "late_sender", "late_sender_paper")


@pytest.mark.parametrize("name", ["sstmacro-mpi-coverage", "casita-jacobi-hybrid",
                                  "pipit-ping-pong"])
def test_paper_forms_equal_the_builtins_on_reference_traces(name):
    trace = earlc.open(reference_trace(name))
    r = earlc.analyze(trace, plugins=[LateSenderPaper(), WaitAtBarrierPaper()], packages=False)
    assert not r.switched_off and not r.exceeding
    for builtin, paper in (("late_sender", "late_sender_paper"),
                           ("wait_at_barrier", "wait_at_barrier_paper")):
        assert r.total(paper) == r.total(builtin)
        assert r.occurrences(paper) == r.occurrences(builtin)
        assert tables_equal(r, builtin, paper)
    if name == "sstmacro-mpi-coverage":
        assert r.total("late_sender") > 0


def test_paper_form_wait_at_barrier_equals_the_builtin(generated):
    r = earlc.analyze(generated["collectives"], plugins=[WaitAtBarrierPaper()], packages=False)
    assert r.total("wait_at_barrier") > 0
    assert tables_equal(r, "wait_at_barrier", "wait_at_barrier_paper")


def test_paper_form_state_query_on_stack(generated):
    """Late Receiver's condition of section 6.2: the send call still on the
    sender's stack when the receive call is entered."""

    class LateReceiverPaper(CompoundEvent):
        name, title, parent = "late_receiver_paper", "Late Receiver (paper)", "mpi_point2point"
        root = Root("MPI_RECV", "MPI_IRECV")
        s1 = Fraction("root.sendptr")
        e1 = Fraction("root.enterptr")
        e2 = Fraction("s1.enterptr", region=("MPI_Send", "MPI_Ssend", "MPI_Rsend"),
                      where="e2.time < e1.time and on_stack(e2, e1)")
        severity = "e1.time - e2.time"
        charge = "e2"

    for trace in generated.values():
        r = earlc.analyze(trace, plugins=[LateReceiverPaper()], packages=False)
        assert not r.switched_off
        # earlc's built-in compares the leave's time, the paper the event order:
        # the paper form can only find fewer
        assert r.total("late_receiver_paper") <= r.total("late_receiver")


def test_paper_form_mistakes_are_named():
    class NoRoot(CompoundEvent):
        name, severity = "no_root", "root.time"
    with pytest.raises(PropertyError, match="no_root.*root must be Root"):
        earlc.analysis.catalog.assemble(plugins=[NoRoot()], packages=False)

    class Forward(CompoundEvent):
        name, root, severity = "forward", Root("MPI_RECV"), "e1.time"
        e1 = Fraction("e2.enterptr")
    with pytest.raises(PropertyError, match="e1 = Fraction.*starts from e2"):
        earlc.analysis.catalog.assemble(plugins=[Forward()], packages=False)
    with pytest.raises(ValueError, match="nextptr is no pointer"):
        Fraction("root.nextptr")
    with pytest.raises(ValueError, match="MPI_RECIEVE"):
        Root("MPI_RECIEVE")


def test_paper_form_bad_expression_switches_it_off(generated):
    class BadExpression(CompoundEvent):
        name, root = "bad_expression", Root("MPI_RECV")
        s1 = Fraction("root.sendptr")
        severity = "s1.tim - root.time"

    r = earlc.analyze(generated["ring"], plugins=[BadExpression()], packages=False)
    [off] = r.switched_off
    assert off.name == "bad_expression" and "tim is no attribute" in off.message
    assert off.file == os.path.abspath(__file__)


# -- loading --------------------------------------------------------------------------------------

def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


GOOD = """
    from earlc.analysis import Instances, Property
    from earlc.analysis import Property as Imported   # not a class of this file

    class _Base(Property):          # a base: its name starts with _
        parent = "mpi_point2point"

    class LongReceive(_Base):
        name, title = "long_receive", "Long receive"

        def detect(self, ctx, subscribed):
            return None
"""


def test_load_file_takes_the_public_property_classes_of_the_file(tmp_path):
    props = load_file(write(tmp_path, "good.py", GOOD))
    assert [p.name for p in props] == ["long_receive"]
    assert props[0].source == "plugin %s" % (tmp_path / "good.py")


@pytest.mark.parametrize("text,needle", [
    ("def f(:\n    pass\n", "line 1: syntax error"),
    ("x = 1\nraise RuntimeError('boom')\n", "line 2: loading it raised RuntimeError: boom"),
    ("x = 1\n", "defines no Property class"),
    ("from earlc.analysis import Property\nclass NoName(Property):\n"
     "    def detect(self, ctx, s):\n        return None\n",
     "class NoName has no name; set name"),
    ("from earlc.analysis import Property\nclass Idle(Property):\n    name = 'idle'\n",
     "property idle (plugin %s) defines neither detect"),
    ("from earlc.analysis import Property\nclass Bad(Property):\n    name, unit = 'bad', 's'\n"
     "    def detect(self, ctx, s):\n        return None\n", "unit must be one of sec, occ, bytes"),
    ("from earlc.analysis import Property\nclass Bad(Property):\n    name = 'bad name'\n"
     "    def detect(self, ctx, s):\n        return None\n", "name must be an identifier"),
])
def test_load_file_errors_name_the_file_and_what_to_change(tmp_path, text, needle):
    path = write(tmp_path, "plugin.py", text)
    with pytest.raises(PluginError) as info:
        load_file(path)
    assert str(path) in str(info.value)
    assert (needle % path if "%s" in needle else needle) in str(info.value)


def test_load_file_of_what_is_no_python_file(tmp_path):
    with pytest.raises(PluginError, match="no such file"):
        load_file(tmp_path / "missing.py")
    with pytest.raises(PluginError, match="not a Python file"):
        load_file(write(tmp_path, "notes.txt", "hello"))


def test_names_taken_and_replacements(tmp_path, generated):
    taken = write(tmp_path, "taken.py", """
        from earlc.analysis import Property
        class Mine(Property):
            name = "late_sender"
            def detect(self, ctx, s):
                return None
    """)
    with pytest.raises(PluginError, match='taken by the built-in Late Sender.*replaces = '
                                          '\'late_sender\''):
        earlc.analysis.catalog.assemble(files=[taken], packages=False)
    twice = write(tmp_path, "twice.py", GOOD)
    with pytest.raises(PluginError, match="long_receive is taken by property long_receive"):
        earlc.analysis.catalog.assemble(files=[twice, write(tmp_path, "again.py", GOOD)],
                                        packages=False)
    # the same file named twice, however spelt, is loaded once: no clash with itself
    for same in ([twice, twice], [twice, str(twice.parent) + "//" + twice.name]):
        catalog = earlc.analysis.catalog.assemble(files=same, packages=False)
        assert [p.name for p in catalog.properties].count("long_receive") == 1

    class Nowhere(LateSenderPaper):
        name, replaces = "nowhere", "late_sendr"
    with pytest.raises(PluginError, match="replaces = 'late_sendr' names no built-in"):
        earlc.analysis.catalog.assemble(plugins=[Nowhere()], packages=False)


def test_a_replacement_serves_the_subscribers_or_they_are_refused_by_name(generated):
    trace = generated["ping-pong"]
    builtin = earlc.analyze(trace, packages=False)

    class PaperReplacement(LateSenderPaper):
        name, replaces = "late_sender", "late_sender"

    r = earlc.analyze(trace, plugins=[PaperReplacement()], packages=False)
    assert r.total("late_sender") == builtin.total("late_sender")
    # the subscribers read recv_call, send, ..., which this form publishes as
    # s1, e1, ...: they are switched off, by name, and so are theirs
    off = {s.name: s for s in r.switched_off}
    assert off and {s.name for s in r.properties if s.subscribes == "late_sender"} <= set(off)
    for s in off.values():
        assert ("late_sender publishes where, severity, root, s1, e1, e2" in s.message
                or "which was switched off" in s.message), s.message

    class ReplacementWithTheColumns(CompoundEvent):
        name, title, parent = "my_late_sender", "Late Sender (mine)", "mpi_point2point"
        replaces = "late_sender"
        root = Root("MPI_RECV", "MPI_IRECV")
        recv = Fraction("root")
        send = Fraction("root.sendptr")
        recv_call = Fraction("root.enterptr", region=BLOCKING_RECEIVES)
        send_call = Fraction("send.enterptr", where="send_call.time > recv_call.time")
        severity = "send_call.time - recv_call.time"
        charge, one_per = "recv_call", "recv_call"

    r = earlc.analyze(trace, plugins=[ReplacementWithTheColumns()], packages=False)
    assert not r.switched_off, [str(s) for s in r.switched_off]
    assert r.total("my_late_sender") == builtin.total("late_sender")
    kids = {p.name for p in r.properties if p.parent == "my_late_sender"}
    assert kids and kids == {p.name for p in builtin.properties if p.parent == "late_sender"}
    followers = {p.name for p in builtin.properties if p.subscribes == "late_sender"}
    for name in kids | followers:
        assert r.total(name) == builtin.total(name), name
    assert sum(builtin.total(n) for n in kids) > 0


# -- what detect returns ----------------------------------------------------------------------

def returning(value_fn, name="returns"):
    class Returns(Property):
        title, parent = "Returns", "mpi_point2point"
        subscribes = "p2p_messages"

        def detect(self, ctx, msgs):
            return value_fn(ctx, msgs)
    p = Returns()
    p.name = name
    return p


@pytest.mark.parametrize("fn,needle", [
    (lambda ctx, m: Instances(m["recv_call"], np.ones(len(m)) * 1.5),
     "severity holds float64 values; it must hold integers"),
    (lambda ctx, m: Instances(m["recv_call"], -np.ones(len(m), np.int64)),
     "severity is negative in"),
    (lambda ctx, m: Instances(m["recv_call"], np.ones(len(m) + 1, np.int64)),
     "entries but where has"),
    (lambda ctx, m: Instances(m["recv_call"] + 10 ** 9, np.ones(len(m), np.int64)),
     "outside the trace"),
    (lambda ctx, m: [1, 2, 3], "detect returned list; return earlc.analysis.Instances"),
    (lambda ctx, m: Instances(m["recv_cal"], np.ones(len(m), np.int64)),
     "no column 'recv_cal': p2p_messages publishes where, severity, recv, send"),
])
def test_returned_values_are_checked_and_the_property_switched_off(generated, fn, needle):
    trace = generated["ring"]
    r = earlc.analyze(trace, plugins=[returning(fn)], packages=False)
    [off] = r.switched_off
    assert off.name == "returns" and needle in off.message, off.message
    assert off.file == os.path.abspath(__file__) and off.line
    # the rest of the analysis is complete
    assert r.total("late_sender") == earlc.analyze(trace, packages=False).total("late_sender")
    text = r.to_text()
    assert "property returns" in text and "switched off" in text
    data = json.loads(r.to_json())
    assert data["switched_off"] == ["returns"]
    detail = [d for d in data["warning_details"] if d["code"] == "property_switched_off"]
    assert detail[0]["property"] == "returns" and detail[0]["line"] == off.line
    with pytest.raises(PropertyError, match="property returns"):
        earlc.analyze(trace, plugins=[returning(fn)], packages=False, strict=True)


def test_floats_are_refused_even_when_whole():
    with pytest.raises(TypeError, match="floats are refused"):
        Instances(np.arange(3), np.array([1.0, 2.0, 3.0]))
    assert len(Instances([], [])) == 0  # an empty list is no float


def test_a_raising_plugin_is_named_with_its_own_line(tmp_path, generated):
    path = write(tmp_path, "raises.py", """
        from earlc.analysis import Property

        class Raises(Property):
            name, title, parent = "raises", "Raises", "mpi_point2point"

            def detect(self, ctx, subscribed):
                values = ctx.events.time[:3]
                return values["no such field"]    # line 9

        class Follows(Property):
            name, title, parent, subscribes = "follows", "Follows", "mpi_point2point", "raises"

            def detect(self, ctx, subscribed):
                return subscribed
    """)
    r = earlc.analyze(generated["ring"], plugins=load_file(path), packages=False)
    off = {s.name: s for s in r.switched_off}
    assert off["raises"].file == str(path) and off["raises"].line == 9
    assert off["raises"].exception in ("IndexError", "ValueError")
    assert "subscribes to raises, which was switched off" in off["follows"].message
    out = subprocess.run([sys.executable, "-m", "earlc", "analyze",
                          str(ROOT / "traces" / "ring-late-sender"), "--plugin", str(path)],
                         capture_output=True, text=True, cwd=ROOT / "python")
    assert out.returncode == 0 and "%s:9" % path in out.stdout
    strict = subprocess.run([sys.executable, "-m", "earlc", "analyze",
                             str(ROOT / "traces" / "ring-late-sender"), "--plugin", str(path),
                             "--strict"], capture_output=True, text=True, cwd=ROOT / "python")
    assert strict.returncode == 2 and strict.stderr.count("\n") == 1
    assert "property raises" in strict.stderr and "%s:9" % path in strict.stderr


def test_an_undeclared_read_is_one_line_on_the_command_line(tmp_path):
    """A plugin reading a published name it does not declare: the report's one
    warning line names it, the name and the line; --strict: one error line."""
    path = tmp_path / "sneaky.py"
    path.write_text(textwrap.dedent("""\
        from earlc.analysis import Property


        class Sneaky(Property):
            name, title, parent, unit = "sneaky", "Sneaky", None, "occ"

            def detect(self, ctx, subscribed):
                return ctx.published.get("late_sender")    # line 8
    """))
    trace = str(ROOT / "traces" / "ring-late-sender")
    out = subprocess.run([sys.executable, "-m", "earlc", "analyze", trace, "--plugin", str(path)],
                         capture_output=True, text=True, cwd=ROOT / "python")
    (line,) = [l for l in out.stdout.splitlines() if "UndeclaredRead" in l]
    assert out.returncode == 0 and "%s:8" % path in line
    assert "property sneaky reads 'late_sender' from ctx.published without declaring it" in line
    strict = subprocess.run([sys.executable, "-m", "earlc", "analyze", trace, "--plugin",
                             str(path), "--strict"], capture_output=True, text=True,
                            cwd=ROOT / "python")
    assert strict.returncode == 2 and strict.stderr.count("\n") == 1
    assert "UndeclaredRead" in strict.stderr and "'late_sender'" in strict.stderr


# -- the metric tree stays a tree ---------------------------------------------------------------

class ReceiveCallTimePerMessage(Property):
    """What not to do: the receive call's duration once per message, so a call
    completing several receives (MPI_Waitall) is counted several times."""
    name, title, parent = "receive_time_per_message", "Receive time per message", "mpi_point2point"
    subscribes = "p2p_messages"

    def detect(self, ctx, msgs):
        call = msgs["recv_call"]
        leave = ctx.leave_of(call)
        ok = leave >= 0
        return Instances(call[ok], ctx.time_of(leave[ok]) - ctx.time_of(call[ok]))


def test_a_child_exceeding_its_parent_is_reported_beside_it():
    trace = earlc.open(reference_trace("sstmacro-mpi-coverage"))
    r = earlc.analyze(trace, plugins=[ReceiveCallTimePerMessage()], packages=False)
    x = r.exceeding["receive_time_per_message"]
    assert x.parent == "mpi_point2point" and x.cells > 0 and x.value > x.parent_value
    line = next(l for l in r.to_text().splitlines() if "Receive time per message" in l)
    assert "exceeds its parent" in line
    m = next(m for m in json.loads(r.to_json())["metrics"]
             if m["name"] == "receive_time_per_message")
    assert m["exceeds_parent"]["cells"] == x.cells
    assert "late_sender" not in r.exceeding  # the built-ins form a tree


# -- packages and `earlc properties` ----------------------------------------------------------------

def fake_package(tmp_path, entry_value, module_text):
    site = tmp_path / "site"
    (site / "mypkg").mkdir(parents=True)
    (site / "mypkg" / "__init__.py").write_text(textwrap.dedent(module_text))
    dist = site / "mypkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mypkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[earlc.properties]\nmine = %s\n" % entry_value)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", ""),
                                         str(ROOT / "python")])
    return env


def earlc_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "earlc", *args], capture_output=True,
                          text=True, cwd=ROOT / "python", env=env, timeout=300)


def test_installed_packages_contribute_properties(tmp_path):
    env = fake_package(tmp_path, "mypkg", GOOD)
    r = earlc_cli("properties", "--format", "json", env=env)
    assert r.returncode == 0, r.stderr
    rows = {p["name"]: p for p in json.loads(r.stdout)["properties"]}
    assert rows["long_receive"]["source"].startswith("package mypkg (entry point mine")
    assert rows["late_sender"]["source"] == "built-in"
    r = earlc_cli("analyze", str(ROOT / "traces" / "demo-ring"), "--properties",
                  "long_receive", env=env)
    assert r.returncode == 0, r.stderr


def test_a_broken_package_is_a_warning_or_with_strict_an_error(tmp_path):
    env = fake_package(tmp_path, "mypkg:Missing", GOOD)
    r = earlc_cli("analyze", str(ROOT / "traces" / "demo-ring"), env=env)
    assert r.returncode == 0 and "package mypkg" in r.stdout and "left out" in r.stdout
    r = earlc_cli("analyze", str(ROOT / "traces" / "demo-ring"), "--strict", env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "mypkg" in r.stderr


def test_properties_lists_builtins_and_plugin_files(tmp_path):
    path = write(tmp_path, "good.py", GOOD)
    r = earlc_cli("properties", "--plugin", str(path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["name", "title", "parent", "unit", "subscribes", "to", "from"]
    row = next(l for l in lines if "long_receive" in l)
    assert "Long receive" in row and "mpi_point2point" in row and str(path) in row
    row = next(l for l in lines if l.strip().startswith("late_sender "))
    assert "p2p_messages" in row and "built-in" in row
    assert any(l.startswith("p2p_messages (event)") for l in lines)


def test_json_and_text_say_the_same_about_each_occurrence():
    trace = earlc.open(ROOT / "traces" / "ring-late-sender")
    r = earlc.analyze(trace, packages=False)
    data = json.loads(r.to_json())
    assert data["trace"]["start_time_ticks"] == trace.start_time
    text = r.to_text()
    res = data["trace"]["timer_resolution"]
    locs = {l["index"]: l for l in data["locations"]}
    paths = {c["id"]: c["path"] for c in data["callpaths"]}
    from earlc.analysis.text import _fmt_value

    assert res == trace.timer_resolution
    for occ in data["instances"]["late_sender"][:5]:
        # the time: seconds from the start, and its raw tick beside it
        since_start = occ["time_ticks"] - data["trace"]["start_time_ticks"]
        assert occ["time"] == since_start / res
        loc = locs[occ["location"]]
        shown = "%s  event %d at %s on rank %d in %s" % (
            _fmt_value(r, "sec", occ["severity"]), occ["event"],
            earlc.display.format_seconds(occ["time"]), loc["rank"], paths[occ["callpath"]])
        assert shown in text, shown


@pytest.mark.parametrize("name", ["sstmacro-mpi-coverage", "casita-jacobi-hybrid",
                                  "casita-ompt-nested", "casita-cuda-simple"])
def test_the_builtin_time_tree_is_a_tree_on_reference_traces(name):
    from earlc.analysis.engine import exceeding_parents

    r = earlc.analyze(earlc.open(reference_trace(name)), packages=False)
    assert r.exceeding == {} and r.switched_off == []
    builtin = exceeding_parents(r.properties, r._store, builtins=True)
    assert {k for k in builtin if r._by_name[k].unit == "sec"} == set()


def test_properties_shows_the_root_of_the_paper_form(tmp_path):
    path = write(tmp_path, "paper.py", """
        from earlc.analysis import CompoundEvent, Fraction, Root

        class Paper(CompoundEvent):
            name, title, parent = "paper", "Paper", "mpi_point2point"
            root = Root("MPI_RECV", "MPI_IRECV")
            e1 = Fraction("root.enterptr")
            severity = "root.time - e1.time"
    """)
    r = earlc_cli("properties", "--plugin", str(path), "--format", "json")
    rows = {p["name"]: p for p in json.loads(r.stdout)["properties"]}
    assert rows["paper"]["root"] == ["MPI_RECV", "MPI_IRECV"]
    assert rows["late_sender"]["root"] is None
