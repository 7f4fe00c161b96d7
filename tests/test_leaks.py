"""The session-level process check (tests/leaks.py) sees an orphaned grandchild, names it and ends it.

Run in a fresh interpreter: a check inside this session would also see this session's own servers.
"""

from __future__ import annotations

import json
import os
import sys

import psutil

from tests import procs
from tests.conftest import REPO

PROBE = """
import json, subprocess
from tests import leaks
assert leaks.become_subreaper()
clock = leaks.Clock()
# A launcher that exits at once and leaves its child running: the child is re-parented here.
subprocess.run(["sh", "-c", "sleep 120 >/dev/null 2>&1 &"], check=True)
clock.after("tests/test_x.py::test_leaky")
named = leaks.leaked(clock, grace_s=0.5)
print(json.dumps({"named": named, "after": [str(p.pid) for p in leaks.alive_descendants()]}))
"""


def test_an_orphan_is_named_with_its_test_and_killed():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = procs.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    [line] = result["named"]
    assert "`sleep 120`" in line and "first seen after tests/test_x.py::test_leaky" in line
    assert result["after"] == []  # killed after being named
    pid = int(line.split()[1])
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_clean_process_has_nothing_to_report():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = "from tests import leaks; leaks.become_subreaper(); print(len(leaks.leaked(leaks.Clock(), grace_s=0)))"
    proc = procs.run([sys.executable, "-c", code], cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "0", proc.stderr[-3000:]
