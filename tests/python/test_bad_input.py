"""Bad input: a clear earlc.TraceError naming the file and the problem (and a
non-zero exit with that message from the CLI), never a crash.  The damaged
archives are made here from copies of a reference trace."""
import shutil
import subprocess
import sys

import pytest

import earlc
from conftest import ROOT, reference_trace


@pytest.fixture
def archive(tmp_path):
    """A writable copy of the sst-macro reference trace."""
    src = reference_trace("sstmacro-mpi-coverage").parent
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def error_of(path):
    with pytest.raises(earlc.TraceError) as info:
        earlc.open(path)
    return info.value


def test_missing_path(tmp_path):
    e = error_of(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in str(e) and "No such file" in str(e)
    assert e.status == "not found"


def test_folder_without_archive(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    e = error_of(tmp_path)
    assert str(tmp_path) in str(e) and "not an OTF2 archive" in str(e)


def test_file_that_is_not_an_anchor(tmp_path):
    f = tmp_path / "data.csv"
    f.write_text("a,b\n")
    assert "not an OTF2 archive" in str(error_of(f))


def test_garbage_anchor_file(archive):
    (archive / "traces.otf2").write_bytes(b"garbage\n")
    e = error_of(archive)
    assert "traces.otf2" in str(e) and "not an OTF2 archive" in str(e)


def test_missing_global_definitions(archive):
    (archive / "traces.def").unlink()
    e = error_of(archive)
    assert "traces.def" in str(e) and "global definitions" in str(e)


    assert e.status == "missing file"


@pytest.mark.parametrize("content", [b"garbage\n", b"", bytes(range(256)) * 4])
def test_garbage_global_definitions(archive, content):
    """A traces.def that is there but is no definition file: corrupt, not missing."""
    (archive / "traces.def").write_bytes(content)
    e = error_of(archive)
    assert "traces.def" in str(e) and "not a readable OTF2 definition file" in str(e)
    assert e.status == "corrupt"


def test_truncated_global_definitions(archive):
    data = (archive / "traces.def").read_bytes()
    (archive / "traces.def").write_bytes(data[: len(data) // 3])
    e = error_of(archive / "traces.otf2")
    assert "traces.def" in str(e) and "corrupt or truncated" in str(e)


def test_truncated_event_file(archive):
    evt = archive / "traces" / "3.evt"
    evt.write_bytes(evt.read_bytes()[:3000])
    e = error_of(archive)
    assert "traces/3.evt" in str(e) and "truncated" in str(e)


def test_corrupt_event_file(archive):
    evt = archive / "traces" / "3.evt"
    data = bytearray(evt.read_bytes())
    data[2000:3024] = bytes(range(256)) * 4
    evt.write_bytes(bytes(data))
    e = error_of(archive)
    assert "traces/3.evt" in str(e) and "corrupt" in str(e)


def test_missing_event_file(archive):
    (archive / "traces" / "2.evt").unlink()
    e = error_of(archive)
    assert "traces/2.evt" in str(e) and "missing" in str(e)


def test_missing_event_folder(archive):
    shutil.rmtree(archive / "traces")
    assert "event folder" in str(error_of(archive))


def test_empty_event_file(archive):
    (archive / "traces" / "1.evt").write_bytes(b"")
    e = error_of(archive)
    assert "traces/1.evt" in str(e) and "empty" in str(e)


def test_local_definitions_are_optional(archive):
    for f in (archive / "traces").glob("*.def"):
        f.unlink()
    assert len(earlc.open(archive)) == 22180


def test_cli_exits_nonzero_with_the_message(archive):
    (archive / "traces" / "2.evt").unlink()
    r = subprocess.run([sys.executable, "-m", "earlc", "info", str(archive)],
                       capture_output=True, text=True, cwd=ROOT / "python")
    assert r.returncode == 2
    assert "earlc: error:" in r.stderr and "2.evt" in r.stderr and "missing" in r.stderr
    assert r.stdout == ""


def test_anchor_announcing_more_properties_than_it_holds(tmp_path):
    """libotf2 would read billions of property pairs past the end of the file;
    earlc refuses the anchor first."""
    dst = tmp_path / "a"
    shutil.copytree(ROOT / "traces" / "demo-ring", dst)
    anchor = dst / "traces.otf2"
    data = bytearray(anchor.read_bytes())
    pos = 8 + 38
    for _ in range(3):  # machine, creator, description
        pos = data.index(0, pos) + 1
    data[pos:pos + 4] = (0x60000000).to_bytes(4, "little")
    anchor.write_bytes(bytes(data))
    e = error_of(dst)
    assert "traces.otf2" in str(e) and "anchor file is corrupt" in str(e)


def test_a_trailing_slash_names_the_folder(tmp_path):
    """`earlc info run/` (what shell completion types) shows run/traces.otf2, not
    run//traces.otf2, in Python, in the text and JSON of the command line and in the
    analysis report."""
    demo = str(ROOT / "traces" / "demo-ring")
    want = demo + "/traces.otf2"
    for given in (demo + "/", demo + "//"):
        assert earlc.open(given).path == want
        out = subprocess.run([sys.executable, "-m", "earlc", "info", given, "--format", "json"],
                             capture_output=True, text=True, cwd=ROOT / "python")
        assert out.returncode == 0 and "//" not in out.stdout, out.stdout
    assert "//" not in earlc.analyze(earlc.open(demo + "/")).to_text()
