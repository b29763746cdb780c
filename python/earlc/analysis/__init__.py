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
            strict: bool = False, packages: bool = True, threads=None, memory=None,
            scratch=None, salvage: bool = False) -> Report:
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
    threads: threads of the analysis, 0 for one per core; by default as many as
        the trace was opened with (earlc.open: one per core); for a path, also the threads
        of its reading.  The report does not depend on it.
    memory: for a path, the budget of resident memory ("8G", "512M", bytes):
        a trace whose analysis needs more is analysed in parts one after
        another, each within the budget, with the same report
        (docs/memory.md).  None: the machine's available memory decides;
        "unlimited": always in one piece.
    scratch: the folder where an analysis in parts keeps what crosses parts
        (default: the system's temporary folder); removed at the end.
    salvage: as for earlc.open, when trace is a path.
    """
    import os

    from .. import _core
    from .engine import run

    threads = _threads(threads)
    if not isinstance(trace, (str, os.PathLike)) and (memory is not None or scratch is not None):
        raise ValueError("memory and scratch apply to the analysis of a path: this trace is "
                         "in memory already")
    context = None
    if getattr(trace, "is_view", False):  # a view of a trace (earlc.view, analysis/view.py)
        from .view import view_context

        context = view_context(trace, properties)
    elif isinstance(trace, (str, os.PathLike)):
        from ..parts import collectives_for, mpi_exchange, mpi_world_size, open_part

        path = os.fspath(trace).rstrip(os.sep) or os.fspath(trace)
        if (mpi_world_size() or 1) > 1:
            trace = open_part(path, mpi_exchange(), threads=threads or 0, progress=progress,
                              salvage=salvage,
                              collectives=collectives_for(properties, plugins, packages,
                                                          strict)).trace
        else:
            from ..parts.inturn import InTurn, needs_parts
            from ..trace import open as open_trace

            need = needs_parts(path, memory, properties, plugins, packages, strict)
            if need is not None:
                with InTurn(path, need.budget, scratch=scratch, threads=threads or 0,
                            salvage=salvage, progress=progress, model=need.model,
                            collectives=need.collectives) as parts:
                    return parts.analyze(properties=properties, top=top, plugins=plugins,
                                         strict=strict, packages=packages)
            trace = open_trace(path, threads=threads or 0, progress=progress, salvage=salvage,
                               memory=memory)
    if context is None and trace.part is not None and trace.part.exchange is None:
        raise ValueError("this trace is one part of an analysis in parts one after another: "
                         "earlc.analyze(path, memory=...) analyses the whole trace")
    if threads is None:
        threads = getattr(trace, "trace", trace).threads if context is not None else trace.threads
    threads = threads or os.cpu_count() or 1
    if context is None and trace.part is not None:
        from ..parts.merge import analyze as analyze_parts

        previous = _core.use_store_memory()
        try:
            return analyze_parts(trace.part, properties=properties, top=top, progress=progress,
                                 plugins=plugins, strict=strict, packages=packages,
                                 threads=threads)
        finally:
            _core.restore_numpy_memory(previous)
    # numpy temporaries from earlc's kept memory (docs/model.md, "Memory")
    previous = _core.use_store_memory()
    try:
        report = run(getattr(trace, "trace", trace) if context is not None else trace,
                     properties=properties, top=top, progress=progress, plugins=plugins,
                     strict=strict, packages=packages, context=context, threads=threads)
    finally:
        _core.restore_numpy_memory(previous)
    if context is not None:
        report.view = trace
    return report


def _threads(threads):
    """threads as given to analyze: None, or an int >= 0 (0: one per core)."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError("threads must be a whole number >= 0 (0: one per core), not %r"
                         % (threads,))
    return threads


__all__ = ["analyze", "Property", "Instances", "Report", "CompoundEvent", "Fraction", "Root",
           "PropertyError", "PluginError", "MissingColumn", "UndeclaredRead", "load_file"]
