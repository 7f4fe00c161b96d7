"""No process outlives the test session: the session's children are checked at its end, and named.

A killed launcher's child (a torchrun rank, a server's worker) is re-parented to init, out of sight
of a plain children() scan. So each test process makes itself a child subreaper (Linux prctl):
orphans of its descendants are re-parented to it instead, and the end-of-session scan sees them.
Under pytest-xdist each worker checks its own descendants (its tests run there) and the controller
checks its own children other than the workers.
"""

from __future__ import annotations

import ctypes
import os
import time
from contextlib import suppress

import psutil

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (Linux); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class Clock:
    """Which test a process was first seen after, to name the test that leaked it.

    The direct children are read after each test from /proc (cheap); orphans are re-parented to this
    process, so they show up here too. A process's own descendants are named by their ancestor's test.
    """

    def __init__(self) -> None:
        self.first_seen: dict[int, str] = {}
        self._tasks = f"/proc/{os.getpid()}/task"

    def _children(self) -> set[int]:
        pids: set[int] = set()
        with suppress(OSError):
            for task in os.listdir(self._tasks):
                with suppress(OSError), open(f"{self._tasks}/{task}/children") as fh:
                    pids.update(int(x) for x in fh.read().split())
        return pids

    def after(self, nodeid: str) -> None:
        for pid in self._children():
            self.first_seen.setdefault(pid, nodeid)

    def during(self, p: psutil.Process) -> str:
        with suppress(psutil.Error):
            for q in [p, *p.parents()]:
                if q.pid in self.first_seen:
                    return self.first_seen[q.pid]
        return "a session fixture's set-up or teardown"


def _reap_zombies() -> None:
    """Orphans re-parented here stay zombies until waited for; a zombie is not alive."""
    for child in psutil.Process().children():
        with suppress(psutil.NoSuchProcess, ChildProcessError, OSError):
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)


def _stop_resource_tracker() -> None:
    """multiprocessing's resource tracker (started by a spawn-context pool) lives until told to stop."""
    with suppress(Exception):
        from multiprocessing import resource_tracker

        resource_tracker._resource_tracker._stop()


def alive_descendants(exclude: set[int] = frozenset()) -> list[psutil.Process]:
    """Descendants of this process still running (zombies reaped), minus the `exclude` subtrees."""
    me = psutil.Process()
    skipped: set[int] = set()
    for pid in exclude:
        with suppress(psutil.NoSuchProcess):
            skipped |= {pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))}
    alive = []
    for p in me.children(recursive=True):
        with suppress(psutil.NoSuchProcess):
            if p.pid not in skipped and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
    return alive


def _describe(p: psutil.Process, clock: Clock | None) -> str:
    try:
        cmd = " ".join(p.cmdline()) or p.name()
    except psutil.Error:
        return f"pid {p.pid} (gone while being described)"
    when = f", first seen after {clock.during(p)}" if clock is not None else ""
    return f"pid {p.pid} ppid {p.ppid()} `{cmd[:300]}`{when}"


def leaked(clock: Clock | None, exclude: set[int] = frozenset(), grace_s: float = 5.0) -> list[str]:
    """The processes still alive after `grace_s` (a group killed a moment ago is given time to go),
    each named; they are then SIGKILLed, so that a failing run leaves nothing behind either."""
    _stop_resource_tracker()
    deadline = time.monotonic() + grace_s
    while True:
        _reap_zombies()
        alive = alive_descendants(exclude)
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    names = [_describe(p, clock) for p in alive]
    for p in alive:
        with suppress(psutil.Error):
            p.kill()
    with suppress(psutil.Error):
        psutil.wait_procs(alive, timeout=10)
    _reap_zombies()
    return names


def report(names: list[str], where: str) -> str:
    lines = "\n  ".join(names)
    return (
        f"{len(names)} process(es) outlived the test session ({where}); every process a test starts "
        f"must end with it (tests/procs.py):\n  {lines}"
    )
