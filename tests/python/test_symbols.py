"""The C core's public API: every function of the public headers (csrc/include) is
marked EARL_API and documented (its parameters, what it returns, the version that
introduced it); and what earlc's shared objects export: the extension module its
init function and that API, the MPI recorder MPI's own functions; none of their
internal functions, whose names (ev_enter, read_locations, order_events, ...)
could clash with those of any other library loaded into the same process."""
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

INCLUDE = ROOT / "csrc" / "include"
RECORDER = ROOT / "python" / "earlc" / "libearlc_record.so"


def _declarations(text):
    """(marked, name) of every function declared at file scope in a header."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'#ifdef __cplusplus\s*(extern "C" \{|\})\s*#endif', "", text)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    out = []
    depth = 0
    statement = ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            statement = ""
            continue
        if depth:
            continue
        statement += ch
        if ch == ";":
            s = " ".join(statement.split())
            statement = ""
            if s.startswith(("typedef", "static", "enum", "struct")):
                continue
            m = re.match(r"(?:EARL_API\s+)?[\w\s\*]*?\b(\w+)\s*\(", s)
            if m and not s.startswith('extern "C"'):
                out.append((s.startswith("EARL_API "), m.group(1)))
    return out


def public_functions():
    names = set()
    for header in sorted(INCLUDE.glob("earl*.h")):
        if header.name == "earlc_record.h":  # the recorder's file layout, no library API
            continue
        for marked, name in _declarations(header.read_text()):
            assert marked, "%s: %s is declared without EARL_API" % (header.name, name)
            assert name.startswith("earl_"), "%s: %s has no earl_ prefix" % (header.name, name)
            names.add(name)
    return names


def _documented(text):
    """(name, parameters, returns something, its doc comment) of every EARL_API
    declaration of a header."""
    out = []
    for m in re.finditer(r"(/\*\*(?:(?!\*/).)*?\*/\s*)?EARL_API\s+([^;{]*?)\b(\w+)\s*\(([^)]*)\)\s*;",
                         text, flags=re.S):
        doc, ret, name, params = m.group(1) or "", m.group(2), m.group(3), m.group(4)
        names = [] if params.strip() in ("", "void") else [
            re.match(r".*?(\w+)\s*(\[[^\]]*\])?$", p.strip()).group(1) for p in params.split(",")]
        out.append((name, names, ret.strip() != "void", doc))
    return out


def exported(path):
    if not shutil.which("nm"):
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_every_public_function_is_marked():
    names = public_functions()
    # the API's entry points of every subsystem are among them
    for name in ("earl_trace_open", "earl_states_build", "earl_hb_build", "earl_search_parse",
                 "earl_races_build", "earl_writer_open", "earl_synth_run", "earl_mem_release",
                 "earl_rc_replay_run", "earl_calltree_build", "earl_profile_time"):
        assert name in names


def test_every_public_function_is_documented():
    """Each EARL_API function has a /** */ comment naming every parameter
    (@param), what it returns (@return, unless void) and its version (@since)."""
    problems = []
    for header in sorted(INCLUDE.glob("earl*.h")):
        for name, params, returns, doc in _documented(header.read_text()):
            missing = [p for p in params if not re.search(r"@param\s+%s\b" % p, doc)]
            if not doc:
                problems.append("%s: %s has no /** */ comment" % (header.name, name))
                continue
            if missing:
                problems.append("%s: %s does not document %s" % (header.name, name,
                                                                 ", ".join(missing)))
            if returns and "@return" not in doc:
                problems.append("%s: %s does not say what it returns" % (header.name, name))
            if not re.search(r"@since \d+\.\d+\.\d+", doc):
                problems.append("%s: %s has no @since" % (header.name, name))
    assert not problems, "\n".join(problems[:40]) + "\n(%d problems)" % len(problems)


def test_extension_exports_its_init_and_the_public_api_only():
    from earlc import _core

    symbols = exported(_core.__file__)
    api = public_functions()
    leaked = sorted(symbols - api - {"PyInit__core"})
    assert not leaked, "internal symbols exported: %s" % ", ".join(leaked[:20])
    assert "PyInit__core" in symbols
    assert api <= symbols, "public functions not exported: %s" % sorted(api - symbols)


def test_recorder_exports_only_mpi_functions():
    if not RECORDER.exists():
        if not shutil.which("mpicc"):
            pytest.skip("mpicc is not installed")
        subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "recorder"],
                       check=True, capture_output=True)
    symbols = exported(RECORDER)
    assert {"MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Recv", "MPI_Waitany"} <= symbols
    others = sorted(s for s in symbols if not s.startswith("MPI_"))
    assert not others, "the recorder exports more than MPI's functions: %s" % others
