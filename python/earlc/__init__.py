"""earlc: post-mortem performance analysis of parallel programs from OTF2 traces.

    import earlc
    trace = earlc.open("traces/demo-ring")     # folder or its traces.otf2
    trace.events.time, trace.events.kind        # numpy columns, no copy
    trace.event(42)                             # one event, readable
    trace.locations.to_dataframe()

See docs/ for the model, the command line and the Python API.
"""
import os as _os
import sys as _sys

if "numpy" not in _sys.modules:
    # OpenBLAS starts its worker threads when numpy is imported, and they spin
    # for about 0.1 s (2**28 cycles) before they sleep: processor time taken from
    # the threads reading a trace right after the import.  2**20 cycles (under a
    # millisecond) still keeps them awake between close BLAS calls; BLAS keeps
    # all its threads.  A value set in the environment is left as it is.
    _os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")

def _find_checkout_properties() -> None:
    """The built-in properties are the subpackage earlc.properties: installed
    inside the package, and in a source checkout (an editable install, or the
    python/ folder on sys.path) the repository's properties/ folder beside
    python/, found on import by this finder."""
    import importlib.abc
    import importlib.util

    here = _os.path.dirname(_os.path.abspath(__file__))
    if _os.path.isdir(_os.path.join(here, "properties")):
        return  # installed: the subpackage is there
    folder = _os.path.normpath(_os.path.join(here, "..", "..", "properties"))
    init = _os.path.join(folder, "__init__.py")
    if not _os.path.isfile(init):
        return

    class CheckoutProperties(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != __name__ + ".properties":
                return None
            return importlib.util.spec_from_file_location(
                name, init, submodule_search_locations=[folder])

    _sys.meta_path.append(CheckoutProperties())


_find_checkout_properties()

from ._core import Error, OutOfMemoryError, TraceError, memory_stats, release_memory  # noqa: E402
from .events import KIND_NAMES, KINDS, Event, Events
from .trace import Trace, TraceTooLarge, Warnings, open  # noqa: A004
from . import display  # noqa: F401  (earlc.display: how times and values are shown)
from .clocks import VectorClocks
from .search import Matches, PatternError, PatternWarning
from .writer import TraceWriter, WriterError
from .synth import SynthResult, synth
from .analysis import Instances, Property, Report, analyze
from .races import Races, RacesError, races
from .record import RecordError, record
from .verify import Verification, verify
from .checks import check
from .markers import annotate
from .comparison import compare

__all__ = ["open", "Trace", "Error", "TraceError", "TraceTooLarge", "OutOfMemoryError",
           "TraceWriter", "WriterError", "RacesError", "Events", "Event", "Warnings",
           "KIND_NAMES", "KINDS", "synth", "SynthResult", "analyze", "Report", "Property",
           "Instances", "races", "Races", "record", "RecordError", "verify", "Verification",
           "release_memory", "memory_stats", "VectorClocks", "Matches", "PatternError",
           "PatternWarning", "check", "annotate", "compare"]
from .version import __version__  # noqa: E402
