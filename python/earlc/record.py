"""Recording MPI programs: `earlc record` and `earlc.record(argv, out=...)`.

The command runs with earlc's recorder (libearlc_record.so, csrc/record/)
preloaded into every process, in a process group of its own so that a
timeout can end all of it.  Each MPI process writes its records to two files
of a private folder while it runs; when the command has ended, however it
ended, record_files.py assembles them into the OTF2 archive and the private
folder is removed.  This module checks the input first (the command, the
output folder, the program's MPI library).  docs/record.md tells users what
is recorded.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Dict, Optional, Sequence

from .record_files import BUILT_FOR, RecordError, RunResult, assemble

LIBRARY_NAME = "libearlc_record.so"
TERM_GRACE_SECONDS = 3.0


def recorder_library() -> str:
    """Path of the recorder library: $EARLC_RECORDER, or the one built into the
    package (make build), or build/ of a source tree."""
    env = os.environ.get("EARLC_RECORDER")
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [env] if env else [
        os.path.join(here, LIBRARY_NAME),
        os.path.join(os.path.dirname(os.path.dirname(here)), "build", LIBRARY_NAME)]
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    raise RecordError("the recorder library %s is not built (run `make build`, which needs "
                      "mpicc from libmpich-dev)" % LIBRARY_NAME)


# -- the command -----------------------------------------------------------------------

def _program_of(argv: Sequence[str]) -> Optional[str]:
    """The MPI program a command runs: itself, or for mpiexec/mpirun the first
    argument that is an executable ELF file."""
    launcher = os.path.basename(argv[0]).startswith(("mpiexec", "mpirun"))
    for arg in (argv[1:] if launcher else argv[:1]):
        if arg.startswith("-"):
            continue
        path = shutil.which(arg) if os.sep not in arg else (arg if os.access(arg, os.X_OK) else None)
        if path and os.path.isfile(path):
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return path
    return None


def _check_mpi_library(program: str) -> None:
    """Refuse a program linked against another MPI than the recorder's: its
    handles would mean other things to the recorder."""
    try:
        out = subprocess.run(["ldd", program], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return
    libs = re.findall(r"^\s*(\S+\.so[.\d]*)\s", out, re.M)
    if any(lib.startswith("libmpich") for lib in libs):
        return
    for lib in libs:
        m = re.match(r"libmpi\.so\.(\d+)", lib)
        if m and m.group(1) != "12":  # 12: the MPICH ABI (MPICH, Intel MPI, MVAPICH)
            which = "Open MPI" if m.group(1) == "40" else "another MPI library"
            raise RecordError("%s is linked against %s (%s); the recorder was built for %s"
                              % (program, which, lib, BUILT_FOR))


def _prepare_output(out: str, force: bool) -> bool:
    """Whether an existing archive at out is to be replaced."""
    if not os.path.exists(out):
        return False
    if not os.path.isdir(out):
        raise RecordError("%s exists and is not a folder" % out)
    if not os.listdir(out):
        return False
    if not force:
        raise RecordError("%s exists and is not empty (--force replaces an archive there)" % out)
    if not os.path.exists(os.path.join(out, "traces.otf2")):
        raise RecordError("%s holds files but no trace archive; not replacing it even with --force"
                          % out)
    return True


def _run(argv: Sequence[str], env: Dict[str, str], timeout: Optional[float],
         stdout=None, stderr=None) -> RunResult:
    """Run argv in a process group of its own; at the timeout (or Ctrl-C, or a
    SIGTERM to earlc) send the whole group SIGTERM, then SIGKILL after a grace
    period.  stdout and stderr: files for the command's output (None: ours)."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(list(argv), env=env, start_new_session=True, stdout=stdout,
                                stderr=stderr)
    except OSError as exc:
        raise RecordError("%s: %s" % (argv[0], exc.strerror or exc))
    timed_out = interrupted = False
    interrupt_status = 130
    try:
        status = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (cliargs.Terminated): 143
        interrupted = True
        interrupt_status = getattr(exc, "status", 130)
    # CLOCK_MONOTONIC, the clock of the records of the processes on this machine
    ended_ns = time.monotonic_ns()
    if timed_out or interrupted:
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=TERM_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        _signal_group(proc.pid, signal.SIGKILL)
        status = proc.wait()
    # ranks the launcher left behind in the group end with it
    _signal_group(proc.pid, signal.SIGKILL)
    if status < 0:
        status = 128 - status
    # what an ended launcher returns varies (MPICH's mpiexec may even say 0):
    # a run that was ended says so, as timeout(1) and a shell do
    if timed_out:
        status = 124
    elif interrupted:
        status = interrupt_status
    return RunResult(status, timed_out, interrupted, time.monotonic() - start, ended_ns,
                     socket.gethostname())


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# -- the whole -----------------------------------------------------------------------------

def _scratch_folder() -> Optional[str]:
    """The folder EARLC_RECORD_TMPDIR names for the recorder's files (None: beside
    the archive), checked before the program runs."""
    folder = os.environ.get("EARLC_RECORD_TMPDIR")
    if not folder:
        return None
    if not os.path.isdir(folder):
        raise RecordError("EARLC_RECORD_TMPDIR=%s is not a folder: create it, or unset the "
                          "variable to keep the recorder's files beside the archive" % folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RecordError("EARLC_RECORD_TMPDIR=%s cannot be written (permission denied)" % folder)
    return folder


def default_output() -> str:
    return time.strftime("earlc-%Y%m%d-%H%M%S")


def record(argv: Sequence[str], out: Optional[str] = None, timeout: Optional[float] = None,
           force: bool = False):
    """Run ``argv`` (normally ``["mpiexec", "-n", "4", "./prog", ...]``) with the
    recorder and return the opened trace of ``out``/traces.otf2.  The command's
    exit status is ``trace.record_status``.  Raises RecordError for bad input
    (command not found, not an MPI program, output folder in the way, another
    MPI library)."""
    trace, _status = run_and_assemble(argv, out, timeout, force)
    return trace


def run_and_assemble(argv: Sequence[str], out: Optional[str], timeout: Optional[float],
                     force: bool, env: Optional[Dict[str, str]] = None, stdout=None,
                     stderr=None):
    """record() returning (trace, RunResult); env: variables added to the
    command's environment, stdout/stderr: files for its output (`earlc
    verify` runs the program so, and reads run.records)."""
    from .trace import open as open_trace

    argv = list(argv)
    if not argv:
        raise RecordError("no command to record")
    if timeout is not None and timeout <= 0:
        raise RecordError("--timeout must be positive, not %s" % timeout)
    out = os.path.abspath(out or default_output())
    overwrite = _prepare_output(out, force)
    if shutil.which(argv[0]) is None:
        raise RecordError("%s: command not found" % argv[0])
    program = _program_of(argv)
    if program:
        _check_mpi_library(program)
    scratch = _scratch_folder()
    library = recorder_library()
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    # beside the archive by default: every process must see it, on every machine
    try:
        raw = tempfile.mkdtemp(prefix=".earlc-record-", dir=scratch or parent)
    except OSError as exc:
        raise RecordError("cannot create the recorder's private folder in %s: %s"
                          % (scratch or parent, exc.strerror or exc)) from None
    try:
        env = dict(os.environ, **(env or {}))
        env["EARLC_RECORD_DIR"] = raw
        # after what is preloaded already (a sanitizer's runtime must stay first); any
        # preloaded library still comes before the program's MPI library
        env["LD_PRELOAD"] = (env["LD_PRELOAD"] + ":" if env.get("LD_PRELOAD") else "") + library
        run = _run(argv, env, timeout, stdout, stderr)
        run.dropped = assemble(raw, out, run, overwrite=overwrite, command=argv)
    finally:
        if not os.environ.get("EARLC_KEEP_RECORD_FILES"):
            shutil.rmtree(raw, ignore_errors=True)
    trace = open_trace(out)
    trace.record_status = run.status
    trace.record_timed_out = run.timed_out
    return trace, run
