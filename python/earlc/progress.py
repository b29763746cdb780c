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
        self._length = 0

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
        self.show(phase, done / total if total else 0.0)

    def show(self, label: str, frac: float, note: str = "") -> None:
        """Draw the bar at frac (0..1) with a label before it and a note after
        it (an analysis in parts: which part and pass, the time left)."""
        if not self.enabled:
            return
        filled = int(min(max(frac, 0.0), 1.0) * self.width)
        line = "%-9s [%s%s] %5.1f%%%s" % (label, "#" * filled, "." * (self.width - filled),
                                          100 * frac, "  " + note if note else "")
        pad = max(self._length - len(line), 0)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._length = len(line)
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * max(self._length, self.width + 20) + "\r")
            self.stream.flush()
            self._shown = False
            self._length = 0
