"""How much memory an analysis may take, and how much it will need.

A budget is a number of bytes of resident memory: given by the user
(`--memory 8G`, `memory="8G"`), or, without one, what the machine has
available now (MemAvailable, and the limit of the process's control group
where one is set), less a margin for the rest of the system.

What an analysis needs is a linear model measured on earlc's own analysis:
a fixed part (the interpreter, numpy, the definitions, libotf2's buffers of
each location read) and bytes per event held at once, for the opening and for
the analysis after it (docs/benchmarks.md, "Traces bigger than memory").  The
model errs on the large side: the tests and the benchmark check that the peak
stays below what it predicts.  A trace that does not fit is analysed in
parts, one after another (inturn.py), each part small enough for the budget.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .._core import Error

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
          "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
          "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


class BudgetError(Error, ValueError):
    """A budget that cannot be read, or in which no analysis fits: the message
    says what to give instead."""


def parse_size(text) -> int:
    """Bytes of a size written as 8G, 512M, 1.5GB, 8GiB or a plain number of bytes
    (K, M, G, T are powers of 1024)."""
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        if text <= 0:
            raise BudgetError("a memory budget must be positive, not %d" % text)
        return int(text)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(text))
    unit = m.group(2).upper() if m else None
    if not m or unit not in _UNITS:
        raise BudgetError("%r is no memory size: write it as 8G, 512M or 1.5G (K, M, G, T: "
                          "powers of 1024)" % (text,))
    value = float(m.group(1)) * _UNITS[unit]
    if value < 1:
        raise BudgetError("a memory budget must be positive, not %r" % (text,))
    return int(value)


def format_size(n: float) -> str:
    """8.0 GB, 512 MB: as a person reads a size (powers of 1024)."""
    for unit, size in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d bytes" % n


def _meminfo(key: str) -> Optional[int]:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _cgroup_room() -> Optional[int]:
    """What the process's control group still lets it use: its limit less its
    usage (cgroup v2, else v1), None without a limit."""
    candidates = []
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "":
                    candidates.append(("/sys/fs/cgroup" + path, "memory.max", "memory.current"))
                elif "memory" in controllers.split(","):
                    candidates.append(("/sys/fs/cgroup/memory" + path,
                                       "memory.limit_in_bytes", "memory.usage_in_bytes"))
    except OSError:
        return None
    for folder, limit_file, usage_file in candidates:
        try:
            with open(os.path.join(folder, limit_file)) as f:
                limit = f.read().strip()
            with open(os.path.join(folder, usage_file)) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit == "max" or not limit.isdigit() or int(limit) >= 1 << 60:
            continue
        return max(int(limit) - usage, 0)
    return None


#: of what the machine has available, the share an analysis chosen by earlc
#: itself may take: the rest is left to the page cache and to other programs
AVAILABLE_SHARE = 0.8


def available_memory() -> Optional[int]:
    """Bytes this process may still take without the kernel killing it: the
    machine's available memory, bounded by the control group's room; None where
    the system does not say (then earlc does not split on its own).  The
    environment variable EARLC_AVAILABLE_MEMORY (a size: 16G) says it instead,
    for a machine that misreports it (or a test)."""
    given = os.environ.get("EARLC_AVAILABLE_MEMORY")
    if given:
        try:
            return parse_size(given)
        except BudgetError:
            raise BudgetError("EARLC_AVAILABLE_MEMORY=%s is no memory size: write it as 16G or "
                              "512M" % given) from None
    room = [x for x in (_meminfo("MemAvailable"), _cgroup_room()) if x is not None]
    return min(room) if room else None


def resident_now() -> int:
    """The process's resident memory now (0 where the system does not say)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def default_budget() -> Optional[int]:
    """The budget of an analysis given none: a share of what is available, plus
    what the process already holds (the interpreter); None where unknown."""
    room = available_memory()
    if room is None:
        return None
    return int(room * AVAILABLE_SHARE) + resident_now()


@dataclass(frozen=True)
class Model:
    """Resident bytes of an analysis: `fixed` plus, per location read,
    `per_location`, plus per event held at once `open_bytes` (the opening) or
    `analysis_bytes` (the analysis after it, which peaks higher), plus per
    ghost record waiting to be added `record_bytes`."""

    fixed: int
    per_location: int
    open_bytes: float
    analysis_bytes: float
    record_bytes: float = 80.0

    def whole(self, events: int, locations: int) -> int:
        """The peak of the analysis of the whole trace in one piece."""
        return int(self.fixed + self.per_location * locations + self.analysis_bytes * events)

    def part(self, events: int, ghosts: int, locations: int) -> int:
        """The peak of a part's analysis: its own events and its ghosts."""
        return int(self.fixed + self.per_location * locations +
                   self.analysis_bytes * (events + ghosts))

    def opening(self, events: int, locations: int) -> int:
        """The peak of an open of that many events (earlc.open)."""
        return int(self.fixed + self.per_location * locations + self.open_bytes * events)

    def events_within(self, budget: int, locations: int = 1) -> int:
        """How many events (own and ghosts) a part may hold within budget."""
        room = budget - self.fixed - self.per_location * locations
        return int(room / self.analysis_bytes) if room > 0 else 0


#: the default catalog (docs/benchmarks.md, "Traces bigger than memory"): measured
#: peaks above the interpreter of 62-64 bytes per event for the analysis and 44-52
#: for an open, with room to spare; libotf2 keeps a 1 MB chunk per location read
DEFAULT = Model(fixed=160 << 20, per_location=2 << 20, open_bytes=56.0, analysis_bytes=72.0)
#: with the root causes (properties "all"): 78-86 measured
ROOT_CAUSES = Model(fixed=160 << 20, per_location=2 << 20, open_bytes=56.0,
                    analysis_bytes=92.0)


__all__ = ["BudgetError", "Model", "DEFAULT", "ROOT_CAUSES", "parse_size", "format_size",
           "available_memory", "default_budget", "resident_now", "AVAILABLE_SHARE"]
