"""The next part read on a thread while the current one is worked on (pass 1
of the analysis in turn, inturn.py), or opened (pass 2: read, its ghosts
added, its events ordered, while the current part's catalog runs).

Pass 1 reads a part (libotf2 and the reader, on the reading's threads),
then exports, packs and spills its ghosts and timestamps on the calling
thread alone.  Started as soon as the current part is read, the next part's
reading runs beside that work, on the core it leaves idle; the reading
releases the GIL for all of its work.  The caller decides whether two
readings fit in the budget at once (inturn.InTurn._ahead_fits).

Threading: one Ahead is one thread, started at once and joined by `result`
or `cancel` (always one of them: the thread must not outlive its reading's
owner).  Its progress reaches the progress bar only while the caller waits
for it (inturn.Progress is not shared between threads otherwise).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional


class Ahead:
    """`start()` run on a thread of its own (see the module)."""

    def __init__(self, start: Callable[[], Any]):
        self._value: Any = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(start,),
                                        name="earlc-read-ahead", daemon=True)
        self._thread.start()

    def _run(self, start) -> None:
        try:
            self._value = start()
        except BaseException as exc:  # raised again on the caller's thread, by result()
            self._error = exc

    def result(self) -> Any:
        """What start() returned, once it did (what it raised, raised here)."""
        self._thread.join()
        value, error = self._value, self._error
        self._value = self._error = None
        if error is not None:
            raise error
        return value

    def cancel(self) -> None:
        """Wait for start() and drop what it gave (its memory with it)."""
        self._thread.join()
        self._value = self._error = None


__all__ = ["Ahead"]
