"""The commands that write files (analyze --format cube, export, plot, report) answer
an output they cannot write with one line and exit status 2, leaving nothing behind."""
from pathlib import Path

import pytest

from earlc.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "traces" / "demo-ring")


@pytest.mark.parametrize("args", [
    ["analyze", DEMO, "--format", "cube", "-o", "{dir}/x.cubex"],
    ["export", DEMO, "--no-wait-states", "-o", "{dir}/x.json"],
    ["plot", "comm", DEMO, "-o", "{dir}/x.png"],
    ["report", DEMO, "--no-pictures", "-o", "{dir}/x.html"],
])
def test_unwritable_output(tmp_path, capsys, args):
    if args[0] == "plot":
        pytest.importorskip("matplotlib")
    missing = tmp_path / "no-such-folder"
    code = main([a.format(dir=missing) for a in args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("earlc: error: %s/x." % missing)
    assert not list(tmp_path.iterdir())
