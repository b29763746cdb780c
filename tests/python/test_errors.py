"""earlc's exceptions: one base class, earlc.Error, for every error earlc raises on
purpose; and running out of memory is an earlc.OutOfMemoryError (a MemoryError),
never a trace that looks broken."""
import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

import earlc


def _earlc_exception_classes():
    found = {}
    for info in pkgutil.walk_packages(earlc.__path__, "earlc."):
        if info.name.startswith(("earlc.__main__", "earlc.properties")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional dependency (matplotlib, hatchet) is absent
            continue
        for _, obj in inspect.getmembers(module, inspect.isclass):
            # errors: not the warnings' categories, nor SIGTERM taken as Ctrl-C
            if (issubclass(obj, Exception) and not issubclass(obj, Warning)
                    and obj.__module__.startswith("earlc")):
                found[obj.__module__ + "." + obj.__qualname__] = obj
    return found


def test_every_error_of_earlc_is_an_earlc_error():
    classes = _earlc_exception_classes()
    for name in ("earlc.TraceError", "earlc.search.PatternError",
                 "earlc.record_files.RecordError", "earlc.analysis.validate.PropertyError",
                 "earlc.cliargs.UsageError", "earlc.races.RacesError",
                 "earlc.writer.WriterError", "earlc.OutOfMemoryError",
                 "earlc.analysis.published.UndeclaredRead", "earlc.checks.RulesError",
                 "earlc.comparison.CompareError", "earlc.markers.AnnotateError",
                 "earlc.parts.plan.PartitionError", "earlc.parts.exchange.PartsFailed"):
        assert name in classes, sorted(classes)
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, earlc.Error))
    assert not outside, "not an earlc.Error: %s" % ", ".join(outside)
    # the built-in type each used to be stays a base
    assert issubclass(earlc.PatternError, ValueError)
    assert issubclass(earlc.RacesError, ValueError)
    assert issubclass(earlc.OutOfMemoryError, MemoryError)
    assert not issubclass(earlc.OutOfMemoryError, earlc.TraceError)


def test_a_bad_choice_of_wildcards_is_an_earlc_error(tmp_path):
    r = earlc.synth("ring", tmp_path / "ring", ranks=3, iterations=2)
    trace = earlc.open(r.path)
    with pytest.raises(earlc.Error, match="no region named"):
        earlc.races(trace, wildcard="no_such_region")
    with pytest.raises(earlc.Error, match="does not say which asked for any source"):
        earlc.races(trace)


# A process whose address space is limited to what it uses plus a few MB: the C
# core (or libotf2 inside it) runs out of memory while it opens a trace.
_UNDER_A_LIMIT = textwrap.dedent("""
    import resource, sys
    import earlc
    def size():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize"):
                return int(line.split()[1]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size() + int(sys.argv[2]), resource.RLIM_INFINITY))
    try:
        earlc.open(sys.argv[1], threads=1)
        print("opened")
    except earlc.OutOfMemoryError as exc:
        print("OutOfMemoryError", isinstance(exc, MemoryError), isinstance(exc, earlc.Error),
              exc.status, "|", exc)
    except MemoryError:
        print("MemoryError")  # Python itself, before the core was reached
    except earlc.TraceError as exc:
        print("TraceError", exc.status, "|", exc)
""")


def test_out_of_memory_is_no_broken_trace(tmp_path):
    if os.environ.get("LD_PRELOAD", "").find("asan") >= 0:
        pytest.skip("AddressSanitizer reserves the address space a limit would cut")
    r = earlc.synth("ring", tmp_path / "ring", ranks=8, threads=2, events=300000)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    outcomes = []
    for extra_mb in (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 512):
        out = subprocess.run([sys.executable, "-c", _UNDER_A_LIMIT, str(r.path),
                              str(extra_mb << 20)], capture_output=True, text=True, env=env,
                             timeout=120).stdout.strip()
        outcomes.append(out)
        assert not out.startswith("TraceError"), "out of memory reported as a bad trace: " + out
        if out == "opened":
            break
    assert outcomes[-1] == "opened", outcomes
    core = [o for o in outcomes if o.startswith("OutOfMemoryError")]
    assert core, outcomes  # the core ran out at least once
    for o in core:
        assert o.startswith("OutOfMemoryError True True out of memory | "), o
        assert "out of memory" in o.split("|", 1)[1]


def test_an_invalid_chunk_size_is_a_broken_trace(tmp_path):
    """libotf2 reports a damaged anchor's chunk size ("no valid chunk size") and then,
    up its call chain, "this could not be done with the given memory": the first
    report says what went wrong, so it is a TraceError, not an OutOfMemoryError."""
    earlc.synth("ping-pong", tmp_path / "pp", ranks=2, events=1000)
    anchor = tmp_path / "pp" / "traces.otf2"
    data = bytearray(anchor.read_bytes())
    data[15], data[23] = 0o40, 0o20  # the high bytes of the two chunk sizes
    anchor.write_bytes(bytes(data))
    with pytest.raises(earlc.TraceError) as err:
        earlc.open(anchor)
    assert not isinstance(err.value, earlc.OutOfMemoryError)
