"""The property catalog of one analysis: the built-ins, the properties of
installed packages (entry-point group `earlc.properties`) and those of plugin
files, checked and put in an order where every publisher and parent comes before
its subscribers and children.

Names are unique.  A plugin takes a built-in's name only by saying so
(`replaces = "late_sender"`): the built-in is then left out and whatever named it
(children, subscribers) names the replacement.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence

from .property import Property
from .validate import PropertyError, check_declaration, describe

ENTRY_POINT_GROUP = "earlc.properties"
BUILTIN = "built-in"


class PluginError(PropertyError):
    """A plugin file or package cannot be loaded, or declares a property wrongly."""


def builtin_properties() -> List[Property]:
    from ..properties import catalog

    props = catalog()
    for p in props:
        p.source = BUILTIN
    return props


# -- loading -------------------------------------------------------------------------------

def _line_in(exc: BaseException, path: str) -> Optional[int]:
    """The last line of path in exc's traceback."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == path:
            line = frame.lineno
    return line


def properties_of_module(module, source: str) -> List[Property]:
    """An instance of every public Property class the module defines itself
    (classes whose name starts with _ are bases, and imported ones belong to
    their own module)."""
    from .compound import CompoundEvent

    found = []
    for obj in list(vars(module).values()):
        if (isinstance(obj, type) and issubclass(obj, Property)
                and obj not in (Property, CompoundEvent)
                and obj.__module__ == module.__name__ and not obj.__name__.startswith("_")):
            found.append(obj)
    return [_instance(cls, source) for cls in found]


def _instance(cls, source: str) -> Property:
    try:
        p = cls()
    except Exception as exc:
        raise PluginError("%s: class %s cannot be created: %s: %s"
                          % (source, cls.__name__, type(exc).__name__, exc)) from None
    p.source = source
    if not p.name:
        raise PluginError("%s: class %s has no name; set name = \"...\", or start the class "
                          "name with _ if it is only a base of others" % (source, cls.__name__))
    try:
        check_declaration(p)
    except PluginError:
        raise
    except PropertyError as exc:
        raise PluginError(str(exc)) from None
    return p


def load_file(path) -> List[Property]:
    """Every Property class defined in the Python file at path, instantiated and
    checked.  Raises PluginError naming the file (and line) and the problem."""
    path = os.path.abspath(os.fspath(path))
    source = "plugin %s" % path
    if not os.path.exists(path):
        raise PluginError("%s: no such file" % source)
    if os.path.isdir(path) or not path.endswith(".py"):
        raise PluginError("%s: not a Python file (a plugin is a .py file)" % source)
    digest = hashlib.sha1(path.encode()).hexdigest()[:10]
    stem = os.path.splitext(os.path.basename(path))[0]
    name = "earlc_plugin_%s_%s" % ("".join(c if c.isalnum() else "_" for c in stem), digest)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up there
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)  # a plugin may import its neighbours
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise PluginError("%s, line %s: syntax error: %s" % (source, exc.lineno, exc.msg)) from None
    except Exception as exc:
        sys.modules.pop(name, None)
        line = _line_in(exc, path)
        raise PluginError("%s%s: loading it raised %s: %s" % (
            source, ", line %d" % line if line else "", type(exc).__name__, exc)) from None
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    props = properties_of_module(module, source)
    if not props:
        raise PluginError("%s defines no Property class: subclass earlc.analysis.Property "
                          "(docs/plugins.md)" % source)
    return props


def load_packages() -> (List[Property], List[str]):
    """The properties installed packages register under the entry-point group
    earlc.properties, and the problems of those that fail to load (a broken
    package must not stop every analysis)."""
    from importlib import metadata

    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except TypeError:  # Python < 3.10
        eps = metadata.entry_points().get(ENTRY_POINT_GROUP, [])
    props, problems = [], []
    for ep in sorted(eps, key=lambda e: (e.name, e.value)):
        dist = getattr(getattr(ep, "dist", None), "name", None)
        source = "package %s (entry point %s = %s)" % (dist or "?", ep.name, ep.value)
        try:
            obj = ep.load()
            if isinstance(obj, type) and issubclass(obj, Property):
                found = [_instance(obj, source)]
            elif inspect.ismodule(obj):
                found = properties_of_module(obj, source)
            elif isinstance(obj, (list, tuple)):
                found = [_instance(c, source) for c in obj]
            else:
                raise PluginError("%s: names %r; name a Property class, a module or a list of "
                                  "Property classes" % (source, obj))
            if not found:
                raise PluginError("%s defines no Property class" % source)
            props += found
        except PluginError as exc:
            problems.append(str(exc))
        except Exception as exc:
            problems.append("%s cannot be loaded: %s: %s" % (source, type(exc).__name__, exc))
    return props, problems


# -- assembling ----------------------------------------------------------------------------

def _did_you_mean(unknown: Sequence[str], known: Sequence[str]) -> str:
    """': did you mean late_sender?' for misspelt names ('' when nothing is close)."""
    import difflib

    guesses = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if close:
            guesses.append(close[0] if len(unknown) == 1 else "%s for %s" % (close[0], name))
    return ": did you mean %s?" % ", ".join(guesses) if guesses else ""


@dataclass
class Catalog:
    properties: List[Property]
    #: packages that could not contribute (messages); the analysis reports them
    problems: List[str] = field(default_factory=list)

    def by_name(self) -> Dict[str, Property]:
        return {p.name: p for p in self.properties}

    def select(self, names: Sequence[str]) -> List[Property]:
        """The named properties with what they need: ancestors in the metric
        tree, publishers, and Time (the base of every percentage).  A name may
        also be a group of optional properties ("root_cause") or "all"."""
        by_name = self.by_name()
        groups = {"all": [p.name for p in self.properties]}
        for p in self.properties:
            if p.group:
                groups.setdefault(p.group, []).append(p.name)
        asked = [n for n in names if n not in groups]
        names = [m for n in names for m in groups.get(n, [n])]
        metrics = sorted(n for n, p in by_name.items() if p.metric)
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise PropertyError("unknown propert%s %s%s (known: %s; groups: %s; `earlc "
                                "properties` lists them)"
                                % ("y" if len(unknown) == 1 else "ies", ", ".join(unknown),
                                   _did_you_mean(unknown, metrics + sorted(groups)),
                                   ", ".join(metrics), ", ".join(sorted(groups))))
        events = [n for n in asked if not by_name[n].metric]
        if events:
            users = sorted(p.name for p in self.properties if p.subscribes in events)
            raise PropertyError("%s is a compound event that properties subscribe to, not a "
                                "metric: name one of its subscribers (%s)"
                                % (", ".join(events), ", ".join(users) or "none"))
        return self.with_needs(list(names) + (["time"] if "time" in by_name else []))

    def with_needs(self, names: Sequence[str], extra: Sequence[Property] = ()) -> List[Property]:
        """The named properties (of the catalog or of extra) and what they need,
        transitively: their parent and every declared input (subscribes,
        reads), in catalog order, extra last.  An input is evaluated whatever
        was selected: what a property reads never depends on the selection."""
        by_name = self.by_name()
        by_name.update((p.name, p) for p in extra)
        keep = set()
        todo = list(names)
        while todo:
            n = todo.pop()
            if n in keep or n not in by_name:
                continue
            keep.add(n)
            p = by_name[n]
            todo += [d for d in (p.parent, p.subscribes, *p.reads) if d]
        return [p for p in list(self.properties) + list(extra) if p.name in keep]


#: the installed packages' properties while an analysis that assembles its
#: catalog many times holds them (packages_held), else None
_held = None


@contextmanager
def packages_held():
    """Within the block, the catalog loads the installed packages' properties
    once (entry points are slow to list: 0.1 s a time): for an analysis that
    assembles it once per part and run, as the parts analysed in turn do."""
    global _held
    outer = _held
    if outer is None:
        _held = load_packages()
    try:
        yield
    finally:
        _held = outer


def assemble(plugins: Iterable[Property] = (), files: Iterable = (), packages: bool = True,
             strict: bool = False) -> Catalog:
    """Built-ins + packages + plugin files + plugin instances, names checked.
    Package problems are fatal only when strict."""
    catalog = builtin_properties()
    problems: List[str] = []
    extra: List[Property] = []
    if packages:
        found, problems = _held if _held is not None else load_packages()
        if problems and strict:
            raise PluginError(problems[0])
        extra += found
    loaded = set()
    for f in files:
        # the same file named twice (--plugin a.py --plugin ./a.py) is loaded once:
        # its properties are no other properties of the same name
        key = os.path.realpath(os.fspath(f))
        if key not in loaded:
            loaded.add(key)
            extra += load_file(f)
    for p in plugins:
        if not isinstance(p, Property):
            raise PluginError("%r is no Property: give instances of earlc.analysis.Property "
                              "subclasses (or names of properties)" % (p,))
        if p.source is None:
            p.source = "plugin"
        check_declaration(p)
        extra.append(p)

    builtins = {p.name: p for p in catalog}
    taken: Dict[str, Property] = {}
    renamed: Dict[str, str] = {}
    replaced = set()
    for p in extra:
        if p.replaces is not None:
            if p.replaces not in builtins:
                raise PluginError("%s: replaces = %r names no built-in property (`earlc "
                                  "properties` lists them)" % (describe(p), p.replaces))
            if p.replaces in replaced:
                raise PluginError("%s: %s is replaced twice; keep one replacement"
                                  % (describe(p), p.replaces))
            replaced.add(p.replaces)
            renamed[p.replaces] = p.name
        if p.name in builtins and p.replaces != p.name:
            raise PluginError("%s: the name %s is taken by the built-in %s; choose another "
                              "name, or set replaces = %r to replace it"
                              % (describe(p), p.name, builtins[p.name].title or p.name, p.name))
        if p.name in taken:
            raise PluginError("%s: the name %s is taken by %s; rename one of them"
                              % (describe(p), p.name, describe(taken[p.name])))
        taken[p.name] = p
    kept = [p for p in catalog if p.name not in replaced]
    for p in kept + extra:
        # what named a replaced built-in names its replacement (instance
        # attributes: the classes stay as they are)
        if p.parent in renamed:
            p.parent = renamed[p.parent]
        if p.subscribes in renamed:
            p.subscribes = renamed[p.subscribes]
        if any(n in renamed for n in p.reads):
            p.reads = tuple(renamed.get(n, n) for n in p.reads)
    return Catalog(kept + extra, problems)


def ordered(properties: List[Property]) -> List[Property]:
    """Check parents and subscriptions; return the properties in an order where
    every publisher comes before its subscribers and parents before children."""
    by_name: Dict[str, Property] = {p.name: p for p in properties}
    for p in properties:
        if not p.metric and (p.parent is not None or p.region_class is not None):
            raise PropertyError("%s: a compound event that is no metric (metric = False) has "
                                "no parent and no region_class" % describe(p))
        if p.parent is not None and p.parent not in by_name:
            raise PropertyError("%s: parent %r is no property (`earlc properties` lists them)"
                                % (describe(p), p.parent))
        if p.parent is not None and not by_name[p.parent].metric:
            raise PropertyError("%s: parent %s is a compound event, not a metric: choose a "
                                "metric as parent" % (describe(p), p.parent))
        if p.subscribes is not None and p.subscribes not in by_name:
            raise PropertyError("%s subscribes to %r, which is no property (`earlc properties` "
                                "lists them)" % (describe(p), p.subscribes))
        for name in p.reads:
            if name not in by_name:
                raise PropertyError("%s reads %r, which is no property (`earlc properties` "
                                    "lists them)" % (describe(p), name))
    order: List[Property] = []
    state: Dict[str, int] = {}

    def visit(p: Property, path):
        s = state.get(p.name, 0)
        if s == 2:
            return
        if s == 1:
            raise PropertyError("the properties form a cycle through their parents and "
                                "subscriptions: %s" % " -> ".join(path + [p.name]))
        state[p.name] = 1
        for dep in (p.subscribes, *p.reads, p.parent):
            if dep is not None:
                visit(by_name[dep], path + [p.name])
        state[p.name] = 2
        order.append(p)

    for p in properties:
        visit(p, [])
    return order
