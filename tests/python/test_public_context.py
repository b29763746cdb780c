"""The built-in properties (properties/, except the root causes, which move to it
separately) use only the public interface a plugin has: no earlc._core, no
private name of the context, the trace or anything else.  Checked three ways:
their source (imports and attribute names), their run (a context that refuses
private names), and their copies loaded as plugins from outside the package,
which give the same numbers as the built-ins in every cell."""
import ast
import importlib.util
import shutil
import sys

import numpy as np
import pytest

import earlc
from conftest import ROOT, SHARED_TRACES

PROPERTIES = ROOT / "properties"
#: the built-in modules held to the public interface (the root causes are not yet)
MODULES = sorted(p for p in PROPERTIES.glob("*.py") if p.name != "__init__.py")


def private_uses(path):
    """(line, what) of every import of a private module or name and every
    attribute starting with _ (not a dunder) read on anything but self/cls."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = getattr(node, "module", None) or ""
            names = [a.name for a in node.names]
            if any(part.startswith("_") for part in module.split(".") + names
                   for part in part.split(".") if part):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scan_finds_what_it_must():
    probe = PROPERTIES.parent / "build" / "scan_probe.py"
    probe.parent.mkdir(exist_ok=True)
    probe.write_text("from earlc import _core\nimport earlc._core\n"
                     "x = ctx._region_tables[1]\ny = ctx.trace._core\nz = self._ok\n")
    try:
        assert sorted(line for line, _ in private_uses(probe)) == [1, 2, 3, 4]
    finally:
        probe.unlink()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_builtins_use_no_private_name(path):
    assert private_uses(path) == [], "%s uses private names" % path.name


class PublicOnly:
    """The object, refusing its private attributes (the trace and the EARL
    layer reached from it too).  Methods are the object's own, bound to it."""

    def __init__(self, obj, what, seen):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_what", what)
        object.__setattr__(self, "_seen", seen)

    def __getattr__(self, name):
        if name.startswith("_") and not name.startswith("__"):
            self._seen.append("%s.%s" % (self._what, name))
            raise AttributeError("%s.%s is private" % (self._what, name))
        value = getattr(self._obj, name)
        if name in ("trace", "states"):
            return PublicOnly(value, "%s.%s" % (self._what, name), self._seen)
        return value


@pytest.fixture
def public_only(monkeypatch):
    """Every built-in's detect, totals and expand receive a PublicOnly context;
    returns the private names they tried."""
    from earlc.analysis import Property
    from earlc.properties import MODULES as builtin_modules

    seen = []
    for module in builtin_modules:
        if module.__name__.endswith("rootcause"):
            continue
        for cls in vars(module).values():
            if not (isinstance(cls, type) and issubclass(cls, Property)) or cls is Property:
                continue
            for method in ("detect", "totals", "expand"):
                if method in vars(cls):
                    fn = vars(cls)[method]
                    monkeypatch.setattr(cls, method, lambda self, ctx, *a, _fn=fn:
                                        _fn(self, PublicOnly(ctx, "ctx", seen), *a))
    return seen


@pytest.mark.parametrize("name", ["hybrid", "collectives", "omp-locks", "pingpong-wrong-order"])
def test_builtins_touch_no_private_name_at_run_time(public_only, name):
    trace = earlc.open(ROOT / "traces" / name)
    report = earlc.analyze(trace)
    assert public_only == [] and not report.switched_off, \
        (public_only, [str(s) for s in report.switched_off])


def test_counters_touch_no_private_name_at_run_time(public_only):
    path = SHARED_TRACES / "pipit-ping-pong-papi" / "traces.otf2"
    if not path.exists():
        pytest.skip("reference trace pipit-ping-pong-papi is absent")
    report = earlc.analyze(earlc.open(path))
    assert public_only == [] and not report.switched_off
    assert any(p.name.startswith("hwc_") for p in report.properties)


# -- the built-ins as plugins -------------------------------------------------------------

@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """Every built-in property, from a copy of its module outside the package,
    each replacing the built-in of its name."""
    folder = tmp_path_factory.mktemp("copies")
    out = []
    for path in MODULES:
        if path.name == "groups.py":
            continue  # no properties: helpers the built-ins no longer need
        copy = folder / ("copy_of_" + path.name)
        shutil.copy(path, copy)
        spec = importlib.util.spec_from_file_location(copy.stem, copy)
        module = importlib.util.module_from_spec(spec)
        sys.modules[copy.stem] = module
        spec.loader.exec_module(module)
        for cls in module.PROPERTIES:
            p = cls()
            p.replaces = p.name
            out.append(p)
    return out


def cells(report, name):
    c, l, v = report._store.table(name)
    return {(report.callpaths[int(a)], int(b)): int(x) for a, b, x in zip(c, l, v) if x}


@pytest.mark.parametrize("name", ["hybrid", "collectives", "omp-locks", "pingpong-wrong-order",
                                  "sstmacro-mpi-coverage", "pipit-ping-pong-papi"])
def test_the_builtins_copied_as_plugins_give_the_same_numbers(copies, name):
    path = ROOT / "traces" / name
    if not (path / "traces.otf2").exists():
        path = SHARED_TRACES / name
        if not (path / "traces.otf2").exists():
            pytest.skip("reference trace %s is absent" % name)
    trace = earlc.open(path)
    builtin = earlc.analyze(trace, properties="all")
    plugged = earlc.analyze(trace, properties="all", plugins=copies)
    assert not plugged.switched_off, [str(s) for s in plugged.switched_off]
    sources = {p.name: p.source for p in plugged.properties}
    assert sources["late_sender"] == sources["wait_at_nxn"] == "plugin"
    assert sorted(p.name for p in plugged.properties) == sorted(p.name for p in builtin.properties)
    for p in builtin.properties:
        assert cells(plugged, p.name) == cells(builtin, p.name), p.name
        a, b = plugged.instances(p.name), builtin.instances(p.name)
        if a is not None:
            assert np.array_equal(a.where, b.where) and np.array_equal(a.severity, b.severity)
