"""The one way a test starts a process: in a process group of its own, killed whole when it is done.

A timeout or failure that kills only the direct child leaves its children behind (a torchrun rank,
a server's worker), which outlive the test and the suite. Every subprocess a test starts goes through
`run` (wait for it) or `started` (a background server); both end the whole group on the way out.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Send `sig` to every process of `proc`'s group (the group is the child's own: start_new_session)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _stop(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM the group, then SIGKILL it after `grace_s`; reap the leader."""
    if proc.poll() is None:
        kill_group(proc, signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    # Children of the leader may still run after it exited: the group is killed whatever happened.
    kill_group(proc, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):  # a process that ignores SIGKILL is a kernel matter
        proc.wait(timeout=30)


def run(
    cmd: Sequence[str],
    *,
    timeout: float,
    input: str | bytes | None = None,
    capture_output: bool = True,
    text: bool = True,
    check: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess:
    """`subprocess.run` in a group of its own; on timeout (or any exception) the whole group is killed.

    A timeout raises `subprocess.TimeoutExpired` with the output read so far, as `subprocess.run` does.
    """
    if capture_output:
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
    if input is not None:
        kwargs.setdefault("stdin", subprocess.PIPE)
    proc = subprocess.Popen(list(cmd), start_new_session=True, text=text, **kwargs)
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        raise subprocess.TimeoutExpired(proc.args, timeout, output=out, stderr=err) from None
    finally:
        _stop(proc, grace_s=0)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        result.check_returncode()
    return result


def start(cmd: Sequence[str], **kwargs: Any) -> subprocess.Popen:
    """A process in a group of its own, for an object that owns it across calls (a restartable server).

    The owner must end it with `stop`; a `with` block is `started`.
    """
    return subprocess.Popen(list(cmd), start_new_session=True, **kwargs)


def stop(proc: subprocess.Popen | None, grace_s: float = 10.0) -> None:
    """End what `start` started: SIGTERM the group, SIGKILL it after `grace_s`, reap the leader."""
    if proc is not None:
        _stop(proc, grace_s=grace_s)


@contextmanager
def started(cmd: Sequence[str], *, grace_s: float = 10.0, **kwargs: Any) -> Iterator[subprocess.Popen]:
    """A background process (a server) for the `with` block; its whole group is ended on exit."""
    proc = start(cmd, **kwargs)
    try:
        yield proc
    finally:
        _stop(proc, grace_s=grace_s)
