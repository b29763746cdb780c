"""Properties evaluated at the same time on several threads, and what they
share computed once.

The catalog is a graph: a property needs only what it declares (`subscribes`,
`reads`; published.py), so as soon as those are done it can run beside any
other property.  The matched messages and what subscribes to them, the
collective instances and theirs, the call tree and the plain metrics are
independent chains.  Nearly all of a property's time is spent in numpy and in
the C kernels, which release the GIL, so N threads evaluating N properties
keep N cores busy.

What they share is computed once: the call tree and the other lazy members of
the analysis context, and `ctx.memo`.  The first thread that asks computes it
(`Once`); a thread that asks while another computes it waits, and gives its
place to another property meanwhile (`Pool.waiting`), so that the cores stay
busy.

The pool is the engine's (engine.Evaluation): it decides which property runs
next; the pool runs what it is given, at most `threads` at once (not counting
the ones waiting for a shared value), on worker threads that end with the
evaluation: nothing is left running or spinning afterwards.  Each task runs in
a copy of the caller's context variables (numpy's allocator of the analysis
is one: analysis/__init__.py).

`beside` runs one task on a thread of its own while the caller goes on: the
engine builds the EARL layer in C while it assembles the catalog in Python.
"""
from __future__ import annotations

import contextvars
import threading
from collections import deque
from contextlib import contextmanager
from typing import Any, Callable, Deque, List, Optional, Tuple


class Once:
    """A value computed by the first thread that asks for it; the others wait.
    An exception is raised to the thread that computed, and the next asker
    tries again, as a plain cache would."""

    __slots__ = ("_lock", "_done", "_value")

    def __init__(self):
        self._lock = threading.RLock()  # a computation asking for itself recurses, as serially
        self._done = False
        self._value = None

    def get(self, compute: Callable[[], Any], waiting=None) -> Any:
        if self._done:
            return self._value
        if not self._lock.acquire(blocking=False):
            if waiting is None:
                self._lock.acquire()
            else:
                with waiting():
                    self._lock.acquire()
        try:
            if not self._done:
                self._value = compute()
                self._done = True
        finally:
            self._lock.release()
        return self._value


class once_property:
    """A cached attribute computed once even when several threads ask at the
    same time (functools.cached_property does not lock since Python 3.12).
    The waiting thread gives its place in the instance's pool, if it has one
    (`_pool`)."""

    def __init__(self, compute):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        cache = obj.__dict__
        if self.name in cache:  # computed: a plain attribute from now on
            return cache[self.name]
        once = _once_of(obj, self.name)
        pool = getattr(obj, "_pool", None)
        value = once.get(lambda: self.compute(obj), pool.waiting if pool else None)
        cache[self.name] = value
        return value


_onces_lock = threading.Lock()


def _once_of(obj, name: str) -> Once:
    """The Once of obj's attribute name (made under a lock: two threads asking
    at once get the same)."""
    table = obj.__dict__.get("_onces")
    if table is None or name not in table:
        with _onces_lock:
            table = obj.__dict__.setdefault("_onces", {})
            if name not in table:
                table[name] = Once()
    return table[name]


class Pool:
    """Worker threads running the tasks they are given, at most `limit` at once
    besides those waiting for a shared value.  The caller gives tasks while
    `room()` and collects finished ones with `finished()`; every method but
    `waiting` is the caller's, from one thread."""

    def __init__(self, limit: int, name: str = "earlc"):
        self.limit = max(1, limit)
        self._name = name
        self._cond = threading.Condition()
        self._queue: Deque[Tuple[Any, Callable[[], Any]]] = deque()
        self._done: Deque[Tuple[Any, Optional[BaseException]]] = deque()
        self._active = 0   # tasks running, not waiting for a shared value
        self._idle = 0     # workers waiting for a task
        self._workers: List[threading.Thread] = []
        self._closing = False

    def room(self) -> bool:
        """Whether a task given now would start at once."""
        with self._cond:
            return self._active + len(self._queue) < self.limit

    def busy(self) -> int:
        """Tasks running and not waiting (the cores in use)."""
        return self._active

    def give(self, key, task: Callable[[], Any]) -> None:
        """Run task() on a worker, in a copy of the caller's context variables;
        its exception (if any) comes back with its key from finished()."""
        run = contextvars.copy_context().run
        with self._cond:
            self._queue.append((key, lambda: run(task)))
            if self._idle < len(self._queue):
                t = threading.Thread(target=self._work, daemon=True,
                                     name="%s-%d" % (self._name, len(self._workers) + 1))
                self._workers.append(t)
                t.start()
            self._cond.notify_all()

    def finished(self, more: bool = False) -> List[Tuple[Any, Optional[BaseException]]]:
        """The tasks done since the last call, waiting for one if none is; with
        more (the caller has tasks to give), also returned (empty) as soon as
        there is room for one."""
        with self._cond:
            while not self._done and not (more and self._active + len(self._queue) < self.limit):
                self._cond.wait()
            out = list(self._done)
            self._done.clear()
            return out

    @contextmanager
    def waiting(self):
        """The calling task waits for a value another task computes: another
        task may run in its place meanwhile."""
        with self._cond:
            self._active -= 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._active += 1

    def close(self) -> None:
        """Let the workers end once their current task is done (tasks given but
        not started are dropped), and wait for them."""
        with self._cond:
            self._closing = True
            self._queue.clear()
            self._cond.notify_all()
        for t in self._workers:
            t.join()
        self._workers = []

    def _work(self) -> None:
        cond = self._cond
        with cond:
            while True:
                while not self._queue and not self._closing:
                    self._idle += 1
                    cond.wait()
                    self._idle -= 1
                if not self._queue:
                    return
                key, task = self._queue.popleft()
                self._active += 1
                cond.release()
                error = None
                try:
                    task()
                except BaseException as exc:  # noqa: B036 - handed to the caller
                    error = exc
                finally:
                    cond.acquire()
                self._active -= 1
                self._done.append((key, error))
                cond.notify_all()


@contextmanager
def beside(task: Callable[[], Any]):
    """task() on a thread of its own (in a copy of the caller's context
    variables) while the block runs; joined when the block ends, even when
    it raises.  What task raised is raised after the block (unless the block
    raised first): a C kernel releases the GIL, so Python work and the kernel
    overlap."""
    error: List[BaseException] = []

    def run():
        try:
            task()
        except BaseException as exc:  # noqa: B036 - handed to the caller
            error.append(exc)

    t = threading.Thread(target=contextvars.copy_context().run, args=(run,), daemon=True,
                         name="earlc-beside")
    t.start()
    try:
        yield
    finally:
        t.join()
    if error:
        raise error[0]
