"""The tenet release's write stage takes the assignment its assign stage solved and verified, as recorded.

It does not encode the judge scores and verify the certificate a second time; the audit still
verifies the written certificate on its own, so a certificate changed between the stages is
written as recorded and refused by the audit. An assign stage that recorded no statistics (one an
earlier version finished) is verified by the write stage as any given assignment is, with the same
bytes written. The release runs with the benchmark's synthetic judge (no model).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

import spl_hf.build.tenets as build
from spl_hf.errors import SplHfError
from spl_hf.release.tenets import ASSIGN_STATS
from tests.conftest import REPO

PAIRS = 200


def _bench():
    spec = importlib.util.spec_from_file_location("bench_build", REPO / "benchmarks" / "bench_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _refuse(*_a, **_k):
    raise AssertionError("the write stage encoded the scores or verified the assignment again")


@pytest.mark.slow
def test_the_write_stage_takes_the_recorded_assignment_and_the_audit_still_checks_it(tmp_path, monkeypatch):
    bench = _bench()
    work = tmp_path / "work"
    bench.prepare(work, PAIRS, 40, 10, seed=0)

    def release():
        return bench.make_release(work, PAIRS, 0, lambda _m: None).run()

    with monkeypatch.context() as m:
        m.setattr(build, "given_assignment", _refuse)
        m.setattr(build, "encode_scores", _refuse)
        report = release()
    counts = {s["name"]: s["counts"] for s in report["stages"]}
    assert counts["write"]["certificate_ok"] and counts["write"]["tenets_kept"]
    assert counts["audit"]["ok"] and counts["audit"]["certificate_ok"]
    built = _files(work / "dataset")
    stages = work / "run" / "stages"
    assign_dir = next(stages.glob("assign-*"))
    recorded = json.loads((assign_dir / ASSIGN_STATS).read_text())
    assert recorded["rows"] == counts["judge"]["scores"] and recorded["final_prompts"] > 0

    # An assign stage without recorded statistics: verified as a given assignment, the same bytes written.
    (assign_dir / ASSIGN_STATS).unlink()
    shutil.rmtree(next(stages.glob("write-*")))
    verified = []
    given = build.given_assignment
    with monkeypatch.context() as m:
        m.setattr(build, "given_assignment", lambda *a, **k: verified.append(1) or given(*a, **k))
        release()
    assert verified and _files(work / "dataset") == built

    # A certificate changed after the assign stage: the write stage takes it, the audit refuses it.
    (assign_dir / ASSIGN_STATS).write_text(json.dumps(recorded))
    cert = assign_dir / "assignment.parquet.certificate.json"
    changed = json.loads(cert.read_text())
    changed["objective"] += 1.0
    cert.write_text(json.dumps(changed))
    shutil.rmtree(next(stages.glob("write-*")))
    with pytest.raises(RuntimeError, match="'certificate_ok': False"):
        release()

    # Damaged statistics: an error naming the file (and how to redo the stage), nothing written.
    (assign_dir / ASSIGN_STATS).write_text('{"rows": 3')
    shutil.rmtree(next(stages.glob("write-*")))
    with pytest.raises(SplHfError, match=rf"{ASSIGN_STATS}: damaged .*remove .*assign-"):
        release()
    assert not list(stages.glob("write-*"))
