"""A terminal progress bar for long reads and analyses.

Shown only when the stream is a terminal, redrawn at most ten times a second,
and erased when done, so scripts and pipes see clean output.
"""
from __future__ import annotations

import sys
import time


class ProgressBar:
    def __init__(self, stream=None, enabled=None, width: int = 30):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width
        self._last = 0.0
        self._shown = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if phase != "done" and now - self._last < 0.1:
            return
        self._last = now
        if phase == "done":
            self.close()
            return
        frac = done / total if total else 0.0
        filled = int(frac * self.width)
        self.stream.write("\r%-9s [%s%s] %5.1f%%" % (phase, "#" * filled, "." * (self.width - filled),
                                                     100 * frac))
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * (self.width + 20) + "\r")
            self.stream.flush()
            self._shown = False
