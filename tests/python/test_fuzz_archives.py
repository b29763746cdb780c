"""A short run of the archive fuzzer of `make fuzz` (tests/fuzz/fuzz_archives.py):
damaged anchors, definition and event files open with warnings or fail with a
TraceError naming the file; no crash, no other exception, no hang."""
import json
import subprocess
import sys

from conftest import ROOT


def test_a_few_hundred_damaged_archives():
    # with the reference traces present, seed 1 reaches two truncated global
    # definition files (cases 132 and 213) that made libotf2 loop in a worker
    # that had opened other traces before: the regression test of that hang
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "fuzz_archives.py"),
                        "--cases", "240", "--seed", "1", "--timeout", "120",
                        "--keep", str(ROOT / "build" / "fuzz-failures")],
                       capture_output=True, text=True, timeout=600)
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, (summary["failed"], r.stderr[-2000:])
    assert summary["cases"] == 240
    assert summary["opened"] + summary["trace_errors"] == 240
