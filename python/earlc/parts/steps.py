"""The exchange of parts analysed one after another (inturn.py): the
collective steps of the analyses that compute across parts (the root causes,
properties/rootcause/parts.py), kept in the scratch folder and answered from
there in a later pass.

Under MPI every part is alive at once and a collective step returns when
every part sent its data.  In turn only one part is alive: a part that
reaches a step whose data some part has not written yet writes its own data
for that step and is *suspended* (StepsSuspended, raised through the
analysis and caught by the driver, which lets the part go).  Once every part
wrote its data of that step, the next pass runs each part again from its
start: the steps already in the scratch folder are answered from there (the
part computes its data again, which must be the same: the analysis is
deterministic, and a digest of what it sent the first time checks it), and
the part goes one step further.  The analysis ends in the pass in which no part is suspended; that
pass gives every part's findings.

So a pass advances every part by one step, and the passes over the parts are
one more than the steps the analyses take (properties/rootcause/parts.py
lists them; 21 on the generated programs): the cost of running the unchanged
steps in turn.  Memory: the part, and what the others sent it in one step.
Threading: one part runs at a time, on the driver's thread; a Steps and its
exchanges are not shared between threads.  Determinism: a step's answer is
what every part wrote, in part order, whatever order they ran in.

Step s's data of part q is one file, `s<s>.<q>`: the offsets of what goes to
each part (size + 1 int64) and the payloads back to back.
"""
from __future__ import annotations

import hashlib
import pickle
from typing import Any, List, Optional, Sequence

import numpy as np

from .exchange import Exchange
from .scratch import Scratch


class StepsSuspended(BaseException):
    """A part reached a step whose data not every part has written yet.  A
    BaseException: the analysis's handlers of a property's failure
    (Exception) let it through to the driver, and a part that tells the
    others of a failure (rootcause.parts.Parts.tell) does not tell this one."""

    _told = True

    def __init__(self, step: int):
        super().__init__("suspended at step %d" % step)
        self.step = step


class StepsMisaligned(BaseException):
    """A run of a part sent other data at a step than its first run did: the
    steps would not line up, and the driver ends the analysis (a
    BaseException, so that no property's handler takes it for the property's
    own failure)."""

    _told = True


class Steps:
    """The steps the parts of one analysis in turn have written: which steps
    every part wrote (`complete`), in the scratch folder."""

    def __init__(self, scratch: Scratch, size: int):
        self.scratch, self.size = scratch, size
        self.written = [set() for _ in range(size)]  # per part: its steps written
        #: per (step, part): the digest of what the part sent, which every later
        #: run of the part must send again (else the steps would not line up)
        self.digests = {}
        #: steps every part wrote, 0 .. complete - 1
        self.complete = 0

    def name(self, step: int, part: int) -> str:
        return "s%d.%d" % (step, part)

    @staticmethod
    def digest(outgoing: Sequence[bytes]) -> bytes:
        h = hashlib.blake2b(digest_size=16)
        for b in outgoing:
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
        return h.digest()

    def check(self, step: int, part: int, outgoing: Sequence[bytes]) -> None:
        """A run of the part again sends what it sent at this step before."""
        if self.digests.get((step, part)) != self.digest(outgoing):
            raise StepsMisaligned("part %d sent other data at step %d of the root causes in a "
                               "later run than in the first: the runs of the parts analysed "
                               "in turn do not line up" % (part, step))

    def write(self, step: int, part: int, outgoing: Sequence[bytes]) -> None:
        if step in self.written[part]:
            return
        self.digests[(step, part)] = self.digest(outgoing)
        sizes = np.array([len(b) for b in outgoing], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        name = self.name(step, part)
        self.scratch.write(name, offsets)
        self.scratch.append(name, b"".join(outgoing))
        self.written[part].add(step)

    def end_of_pass(self) -> None:
        """Every part ran once more: the steps each wrote are complete."""
        while all(self.complete in w for w in self.written):
            self.complete += 1

    def received(self, step: int, part: int) -> List[bytes]:
        """What every part sent `part` at `step` (complete)."""
        out = []
        head = (self.size + 1) * 8
        for q in range(self.size):
            name = self.name(step, q)
            offsets = self.scratch.load(name, np.int64, 0, self.size + 1)
            n = int(offsets[part + 1] - offsets[part])
            out.append(self.scratch.load(name, np.uint8, head + int(offsets[part]), n).tobytes()
                       if n else b"")
        return out

    def remove(self) -> None:
        for part, steps in enumerate(self.written):
            for s in steps:
                self.scratch.delete(self.name(s, part))
            steps.clear()
        self.digests.clear()
        self.complete = 0


class StepExchange(Exchange):
    """Part `rank` of `steps.size` parts analysed in turn: every collective is
    a step (alltoall_bytes), answered from the scratch folder when every part
    wrote it, else written and the part suspended (see the module)."""

    def __init__(self, steps: Steps, rank: int):
        self.steps = steps
        self.rank, self.size = rank, steps.size
        self.step = 0  # the next step of this run of the part

    def alltoall_bytes(self, outgoing: Sequence[bytes]) -> List[bytes]:
        if len(outgoing) != self.size:
            raise ValueError("a step sends to %d parts of %d" % (len(outgoing), self.size))
        step = self.step
        self.step += 1
        if step < self.steps.complete:
            self.steps.check(step, self.rank, outgoing)
            return self.steps.received(step, self.rank)
        self.steps.write(step, self.rank, [bytes(b) for b in outgoing])
        raise StepsSuspended(step)

    def _objects(self, outgoing: Sequence[Any]) -> List[Any]:
        got = self.alltoall_bytes([pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL)
                                   for x in outgoing])
        return [pickle.loads(b) for b in got]

    def allgather(self, obj: Any) -> List[Any]:
        return self._objects([obj] * self.size)

    def alltoallv(self, send, counts: np.ndarray):
        data = np.frombuffer(send, dtype=np.uint8)
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        got = self.alltoall_bytes([data[offsets[p]:offsets[p + 1]].tobytes()
                                   for p in range(self.size)])
        return (np.frombuffer(b"".join(got), dtype=np.uint8).copy(),
                np.array([len(b) for b in got], dtype=np.int64))

    def bcast(self, obj: Any, root: int = 0) -> Any:
        return self._objects([obj if self.rank == root else None] * self.size)[root]

    def gather(self, obj: Any, root: int = 0) -> Optional[List[Any]]:
        every = self._objects([obj if p == root else None for p in range(self.size)])
        return every if self.rank == root else None

    def allreduce_sum(self, values: np.ndarray) -> np.ndarray:
        every = self.allgather(np.asarray(values))
        total = every[0].copy()
        for x in every[1:]:
            total += x
        return total


__all__ = ["Steps", "StepExchange", "StepsSuspended", "StepsMisaligned"]
