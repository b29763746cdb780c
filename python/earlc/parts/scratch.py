"""The scratch folder of an analysis in parts one after another (inturn.py):
what crosses parts waits there between the passes.

An analysis makes its own folder inside the one it is given (`--scratch DIR`,
default the system's temporary folder) and removes it when it ends, however
it ends: done, failed, interrupted by Ctrl-C or terminated (the command line
turns SIGTERM into the same clean-up; a script can use `terminate_as_interrupt`
from earlc.cliargs).  Every failure to write there (the folder is missing, not
writable, or runs out of space) is a ScratchError: one line that names the
folder and what to change.
"""
from __future__ import annotations

import atexit
import errno
import os
import shutil
import tempfile
from typing import Optional

import numpy as np

from .._core import Error
from .budget import format_size


class ScratchError(Error, OSError):
    """The scratch folder cannot hold what the analysis writes there."""

    def __str__(self) -> str:
        return self.args[0] if self.args else "scratch folder error"


def check_folder(folder) -> str:
    """The folder's path if the analysis can write there, else ScratchError."""
    folder = os.fspath(folder)
    if not os.path.exists(folder):
        raise ScratchError("the scratch folder %s does not exist: create it, or give --scratch "
                           "another folder" % folder)
    if not os.path.isdir(folder):
        raise ScratchError("the scratch folder %s is a file, not a folder: give --scratch a "
                           "folder" % folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ScratchError("the scratch folder %s cannot be written (permission denied): give "
                           "--scratch a folder you can write to" % folder)
    return folder


def free_bytes(folder) -> Optional[int]:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


class Scratch:
    """A private folder inside `folder` for one analysis (a context manager:
    removed at its end).  Files are written through `write` and `append`, which
    turn the system's errors into ScratchError."""

    def __init__(self, folder=None, need: int = 0):
        base = check_folder(folder if folder is not None else tempfile.gettempdir())
        self.base = base
        self.check_room(need)
        try:
            self.path = tempfile.mkdtemp(prefix="earlc-parts-", dir=base)
        except OSError as exc:
            raise self._error(exc) from None
        self.written = 0  #: bytes written, for the disk traffic a benchmark reports
        self.read = 0
        atexit.register(self.remove)

    def check_room(self, need: int) -> None:
        """ScratchError when the folder has less than `need` bytes free: the
        analysis would write about that much more there."""
        free = free_bytes(self.base)
        if need > 0 and free is not None and need > free:
            raise ScratchError("the scratch folder %s has %s free, and the analysis in parts "
                               "writes about %s there: give --scratch a folder with more room"
                               % (self.base, format_size(free), format_size(need)))

    def __enter__(self) -> "Scratch":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        """Remove the folder and everything in it (again: nothing)."""
        path, self.path = getattr(self, "path", None), None
        if path:
            shutil.rmtree(path, ignore_errors=True)
            atexit.unregister(self.remove)

    def file(self, name: str) -> str:
        if self.path is None:
            raise ScratchError("the scratch folder of this analysis was removed")
        return os.path.join(self.path, name)

    def _error(self, exc: OSError) -> ScratchError:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            why = "ran out of space after %s written by this analysis: give --scratch a " \
                  "folder with more room" % format_size(self.written)
        elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            why = "cannot be written (%s): give --scratch a folder you can write to" % (
                os.strerror(exc.errno))
        elif exc.errno == errno.ENOENT:
            why = "vanished while the analysis used it: give --scratch a folder that stays"
        else:
            why = "failed: %s" % (exc.strerror or exc)
        return ScratchError("the scratch folder %s %s" % (self.base, why))

    def write(self, name: str, data, mode: str = "wb") -> int:
        """Write (or append) a buffer or numpy array to file `name`; its size in
        bytes before the write."""
        path = self.file(name)
        try:
            with open(path, mode) as f:
                at = f.tell()
                if isinstance(data, np.ndarray):
                    data = np.ascontiguousarray(data)
                    f.write(memoryview(data).cast("B"))
                    n = data.nbytes
                else:
                    f.write(data)
                    n = memoryview(data).nbytes
        except OSError as exc:
            raise self._error(exc) from None
        self.written += n
        return at

    def append(self, name: str, data) -> int:
        """Append to file `name`; the offset where the data starts."""
        return self.write(name, data, "ab")

    def load(self, name: str, dtype, offset: int = 0, count: int = -1) -> np.ndarray:
        """count items of dtype from file `name` at byte offset (-1: to the end)."""
        try:
            out = np.fromfile(self.file(name), dtype=dtype, count=count, offset=offset)
        except OSError as exc:
            raise self._error(exc) from None
        self.read += out.nbytes
        return out

    def map(self, name: str, dtype) -> np.ndarray:
        """File `name` as a read-only array mapped into memory: only the pages
        read become resident, and reading many small pieces of it costs no
        open per piece (count what is read with `self.read += ...`)."""
        try:
            if os.path.getsize(self.file(name)) == 0:
                return np.empty(0, dtype=dtype)
            return np.memmap(self.file(name), dtype=dtype, mode="r")
        except (OSError, ValueError) as exc:
            if isinstance(exc, OSError):
                raise self._error(exc) from None
            raise

    def delete(self, name: str) -> None:
        try:
            os.unlink(self.file(name))
        except OSError:
            pass


__all__ = ["Scratch", "ScratchError", "check_folder", "free_bytes"]
