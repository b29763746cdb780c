"""The rule every `earlc` subcommand follows: a user error is one line on standard
error and exit status 2, found before any long work starts, never a traceback.

Three pieces give a subcommand that rule without code of its own:

- `Parser`, the argument parser of `earlc` and (through `add_subparsers`) of every
  subcommand: its errors are one line, `earlc COMMAND: error: MESSAGE`, and help
  texts may contain a plain `%`;
- argument types that check a value while the command line is parsed, so nothing
  is read or computed before the user's mistake is reported: `count(low, high)`,
  `output_file`, `output_folder`, `existing_file`, `name_list`, `memory_size`,
  `scratch_folder`;
- `run_command`, which calls the subcommand and turns the exceptions that are the
  user's doing (every `earlc.Error`: `UsageError`, `earlc.TraceError`, a faulty
  plugin, a pattern, memory that ran out) into that one line; anything else is
  earlc's fault and says so on one line too (set EARLC_TRACEBACK=1 to see the
  traceback).

docs/cli.md states the rule for users.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
from typing import Callable, Optional, Tuple, Type

from ._core import Error

#: exit status of every user error (argparse's own, too)
USAGE_STATUS = 2


class UsageError(Error):
    """Something the user asked for cannot be done: the message says what to change."""


#: exception types whose message is shown as a user error; modules that define
#: their own (a plugin loader, a pattern parser) add theirs with `user_error_types`
_USER_ERRORS: Tuple[Type[BaseException], ...] = (UsageError,)


def user_error_types(*types: Type[BaseException]) -> None:
    """Declare exception types as user errors (reported on one line, status 2)."""
    global _USER_ERRORS
    _USER_ERRORS = tuple(dict.fromkeys(_USER_ERRORS + types))


@contextlib.contextmanager
def user_errors(*types: Type[BaseException], output: Optional[str] = None):
    """Exceptions of these types, raised by the work inside, are the user's
    mistake (a window outside the trace, a location it lacks): they become a
    UsageError with their message.  With output given, an OSError is the file the
    command writes that cannot be written: "OUTPUT: why".  An exception that
    carries a cli_message (advice in command-line words, where its message
    gives the Python keyword) shows that one."""
    try:
        yield
    except UsageError:
        raise
    except types as exc:
        raise UsageError(getattr(exc, "cli_message", None) or str(exc)) from None
    except OSError as exc:
        if output is None:
            raise
        raise UsageError("%s: %s" % (output, exc.strerror or exc)) from None


def one_line(text: str) -> str:
    """Collapse a message to one line (exception texts may span several)."""
    return " ".join(str(text).split())


# -- the parser -----------------------------------------------------------------------

_LONE_PERCENT = re.compile(r"(?<!%)%(?![(%])")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors; subparsers are of the same class."""

    def error(self, message: str):  # noqa: D401 - argparse's name
        sys.stderr.write("%s: error: %s (see %s --help)\n" % (self.prog, one_line(message),
                                                              self.prog))
        sys.exit(USAGE_STATUS)

    def add_argument(self, *args, **kwargs):
        # argparse formats help texts with %: a percent sign meant literally
        # ("imbalance in %") would break --help
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = _LONE_PERCENT.sub("%%", kwargs["help"])
        return super().add_argument(*args, **kwargs)


# -- argument types: checked while parsing ------------------------------------------------

def count(low: int = 0, high: int = 1 << 31, what: str = "") -> Callable[[str], int]:
    """An integer in [low, high]."""
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a whole number" % text) from None
        if value < low or value > high:
            if high >= 1 << 31:
                need = "at least %d" % low
            else:
                need = "from %d to %d" % (low, high)
            raise argparse.ArgumentTypeError("must be %s%s, not %d"
                                             % (need, " (%s)" % what if what else "", value))
        return value
    parse.__name__ = "count"  # argparse names the type in some messages
    return parse


#: --threads: 0 means one per core
threads = count(0, 4096, "0: one per core")


def parsed(parse: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a parser that raises ValueError for a bad value."""
    def convert(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def output_file(text: str) -> str:
    """A file the command can create or replace: its folder exists and is
    writable, and it is no folder itself.  Checked before the work that fills it."""
    if not text:
        raise argparse.ArgumentTypeError("the output file name is empty")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError("%s is a folder; give a file name" % text)
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError("folder %s does not exist; create it first" % folder)
    if os.path.exists(text):
        if not os.access(text, os.W_OK):
            raise argparse.ArgumentTypeError("%s cannot be written (permission denied)" % text)
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError("cannot create files in %s (permission denied)" % folder)
    return text


def output_folder(text: str) -> str:
    """An archive folder the command creates (or fills): the folder holding it
    exists and is writable, as for `output_file`, and it is no file itself.
    Whether an existing archive may be replaced is the command's own rule."""
    if not text:
        raise argparse.ArgumentTypeError("the output folder name is empty")
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError("%s is a file; give a folder for the archive" % text)
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError("folder %s does not exist; create it first" % folder)
    if not os.path.exists(text) and not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError("cannot create folders in %s (permission denied)"
                                         % folder)
    return text


def existing_file(text: str) -> str:
    """A file that exists and can be read."""
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError("%s: no such file" % text)
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError("%s is a folder, not a file" % text)
    if not os.access(text, os.R_OK):
        raise argparse.ArgumentTypeError("%s cannot be read (permission denied)" % text)
    return text


def memory_size(text: str) -> str:
    """A memory budget: 8G, 512M, 1.5G (checked here, used as given)."""
    from .parts.budget import BudgetError, parse_size

    if text.strip().lower() == "unlimited":
        return "unlimited"
    try:
        parse_size(text)
    except BudgetError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def scratch_folder(text: str) -> str:
    """A folder where an analysis in parts may write (it must exist)."""
    from .parts.scratch import ScratchError, check_folder

    try:
        return check_folder(text)
    except ScratchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def name_list(text: str) -> list:
    """Comma-separated names; at least one."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("%r names nothing; give comma-separated names" % text)
    return names


def write_output(path, text: str) -> None:
    """The command's result to path (None: standard output)."""
    if path:
        try:
            with open(path, "w") as f:
                f.write(text + "\n")
        except OSError as exc:  # the folder vanished or filled up meanwhile
            raise UsageError("%s: %s" % (path, exc.strerror or exc)) from None
    else:
        sys.stdout.write(text + "\n")


# -- running a command ------------------------------------------------------------------

class Terminated(KeyboardInterrupt):
    """SIGTERM inside terminate_as_interrupt, raised where Ctrl-C raises
    KeyboardInterrupt, so that what a command cleans up on Ctrl-C (a half-written
    archive, a recorded run's processes) it cleans up when it is ended by `kill` or
    a batch system too."""

    status = 128 + signal.SIGTERM


def _terminate(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM raises Terminated inside the block, where Ctrl-C would raise
    KeyboardInterrupt: for commands that clean up what they leave half done (synth
    removes its half-written archive, record ends the recorded run and writes what it
    recorded).  Elsewhere SIGTERM keeps its default and ends earlc at once, even
    inside a long read in C, which checks for signals only where it reports progress."""
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread (earlc.cli.main called from a thread)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def interrupt_status(exc: KeyboardInterrupt) -> int:
    """The exit status of a command ended by exc: 143 for SIGTERM, 130 for Ctrl-C."""
    return getattr(exc, "status", 130)


def run_command(func, args) -> int:
    """func(args), with every user error reported on one line (status 2); ended by
    Ctrl-C, status 130, or inside terminate_as_interrupt by SIGTERM, status 143."""
    from .parts import PartsFailed, mpi_world_rank

    prog = "earlc"
    # in an MPI job every process ends with the same verdict; one of them says it
    say = sys.stderr if mpi_world_rank() == 0 else open(os.devnull, "w")
    try:
        return func(args)
    except PartsFailed as exc:  # another part's error: the user's when it was an earlc.Error
        user = exc.user or exc.kind in {t.__name__ for t in _USER_ERRORS}
        if user or exc.kind in ("FileNotFoundError", "PermissionError", "OSError"):
            say.write("%s: error: %s\n" % (prog, one_line(exc)))
            return USAGE_STATUS
        say.write("%s: internal error in part %d: %s: %s (this is a bug in earlc; "
                  "EARLC_TRACEBACK=1 shows where)\n" % (prog, exc.part, exc.kind, one_line(exc)))
        return 1
    except _USER_ERRORS + (Error,) as exc:
        say.write("%s: error: %s\n" % (prog, one_line(exc)))
        return USAGE_STATUS
    except KeyboardInterrupt as exc:
        say.write("%s: %s\n" % (prog, "terminated" if isinstance(exc, Terminated)
                                         else "interrupted"))
        return interrupt_status(exc)
    except BrokenPipeError:
        # the reader of our output went away (earlc ... | head): not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as exc:  # earlc's own fault: still one line, and how to see more
        if os.environ.get("EARLC_TRACEBACK"):
            raise
        sys.stderr.write("%s: internal error: %s: %s (this is a bug in earlc; "
                         "EARLC_TRACEBACK=1 shows where)\n"
                         % (prog, type(exc).__name__, one_line(exc)))
        _abort_mpi_job()
        return 1


def _abort_mpi_job() -> None:
    """A failure that this process alone met, in an MPI job: the others would
    wait for it at their next exchange for good, so the whole job ends here."""
    if "mpi4py.MPI" not in sys.modules:
        return
    from mpi4py import MPI

    if MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
