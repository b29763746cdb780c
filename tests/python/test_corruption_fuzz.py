"""Randomly damaged archives (bytes flipped, files cut short) never crash earlc: each
opens with warnings or raises TraceError.  Each case runs in a child process so that a
crash would be seen as a signal, not take the test run down."""
import random
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, reference_trace

CHILD = r"""
import sys
sys.path.insert(0, sys.argv[2])
import earlc
try:
    t = earlc.open(sys.argv[1])
    print("opened", len(t))
except earlc.TraceError as e:
    print("error", e)
"""


@pytest.mark.parametrize("seed", range(24))
def test_damaged_archive_never_crashes(tmp_path, seed):
    src = reference_trace("sstmacro-mpi-coverage" if seed % 2 else "casita-cuda-simple").parent
    dst = tmp_path / "a"
    shutil.copytree(src, dst)
    files = sorted(p for p in dst.rglob("*") if p.suffix in (".def", ".evt"))
    rng = random.Random(seed)
    target = rng.choice(files)
    target.chmod(0o644)
    data = bytearray(target.read_bytes())
    if rng.random() < 0.3:
        data = data[: rng.randrange(1, len(data))]
    else:
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    target.write_bytes(bytes(data))
    r = subprocess.run([sys.executable, "-c", CHILD, str(dst), str(ROOT / "python")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (target.name, r.returncode, r.stderr[-2000:])
    assert r.stdout.startswith(("opened", "error"))
    if r.stdout.startswith("error"):
        assert str(dst) in r.stdout  # the message names the archive's file
