"""earlc's analysis: detect performance properties (compound events) and
quantify the time they cost per call path and location.

    report = earlc.analyze(trace)                 # the whole built-in catalog
    report = earlc.analyze(trace, properties=["late_sender", MyProperty()])
    report.to_dataframe(); report.to_json(); print(report.to_text())

Plugins subclass `Property` (see docs/plugins.md).
"""
from .catalog import PluginError, load_file
from .compound import CompoundEvent, Fraction, Root
from .property import Instances, MissingColumn, Property
from .published import UndeclaredRead
from .report import Report
from .validate import PropertyError


def analyze(trace, properties=None, top: int = 10, progress=None, plugins=(),
            strict: bool = False, packages: bool = True) -> Report:
    """Evaluate the catalog on trace: the built-ins, the properties of installed
    packages (entry-point group earlc.properties, unless packages=False) and the
    Property instances in plugins.

    trace: an earlc.Trace, or the path of an archive.  A script started by
        mpiexec with several processes analyses a path in parts, each process
        holding its share of the trace, and every process gets the whole
        trace's report (docs/parallel.md); so does a trace opened with
        earlc.open(path, parts="mpi").

    properties: a name, a group ("all", "root_cause") or a Property, or a list of
        them; then only those are evaluated,
        with what they need (parents, publishers, Time).
    top: how many of the most severe occurrences each property keeps.
    strict: a property that raises stops the analysis (PropertyError) instead of
        being switched off and listed in report.switched_off.
    progress: called as progress(phase, done, total).
    """
    import os

    from .. import _core
    from .engine import run

    context = None
    if getattr(trace, "is_view", False):  # a view of a trace (earlc.view, analysis/view.py)
        from .view import view_context

        context = view_context(trace, properties)
    elif isinstance(trace, (str, os.PathLike)):
        from ..parts import mpi_exchange, mpi_world_size, open_part

        if (mpi_world_size() or 1) > 1:
            trace = open_part(trace, mpi_exchange(), progress=progress).trace
        else:
            from ..trace import open as open_trace

            trace = open_trace(trace, progress=progress)
    if context is None and trace.part is not None:
        from ..parts.merge import analyze as analyze_parts

        previous = _core.use_store_memory()
        try:
            return analyze_parts(trace.part, properties=properties, top=top, progress=progress,
                                 plugins=plugins, strict=strict, packages=packages)
        finally:
            _core.restore_numpy_memory(previous)
    # numpy temporaries from earlc's kept memory (docs/model.md, "Memory")
    previous = _core.use_store_memory()
    try:
        report = run(getattr(trace, "trace", trace) if context is not None else trace,
                     properties=properties, top=top, progress=progress, plugins=plugins,
                     strict=strict, packages=packages, context=context)
    finally:
        _core.restore_numpy_memory(previous)
    if context is not None:
        report.view = trace
    return report


__all__ = ["analyze", "Property", "Instances", "Report", "CompoundEvent", "Fraction", "Root",
           "PropertyError", "PluginError", "MissingColumn", "UndeclaredRead", "load_file"]
