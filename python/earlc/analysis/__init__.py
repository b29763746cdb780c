"""earlc's analysis: detect performance properties (compound events) and
quantify the time they cost per call path and location.

    report = earlc.analyze(trace)                 # the whole built-in catalog
    report = earlc.analyze(trace, properties=["late_sender", MyProperty()])
    report.to_dataframe(); report.to_json(); print(report.to_text())

Plugins subclass `Property` (see docs/plugins.md).
"""
from .property import Instances, Property
from .report import Report


def analyze(trace, properties=None, top: int = 10, progress=None) -> Report:
    """Evaluate the built-in catalog (or the named properties, with what they
    need, plus any Property instances given) on trace.

    top: how many of the most severe occurrences each property keeps.
    progress: called as progress(phase, done, total).
    """
    from .. import _core
    from .engine import run

    # numpy temporaries from earlc's kept memory (docs/model.md, "Memory")
    previous = _core.use_store_memory()
    try:
        return run(trace, properties=properties, top=top, progress=progress)
    finally:
        _core.restore_numpy_memory(previous)


__all__ = ["analyze", "Property", "Instances", "Report"]
