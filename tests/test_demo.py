"""The demo end to end on the embedded model: every step checks itself, and a rerun resumes from the caches."""

import re

import pytest

from spl_hf.demo import run_demo


@pytest.mark.slow
@pytest.mark.model
def test_demo_runs_and_resumes_from_its_caches(tmp_path, capsys):
    out = tmp_path / "demo"
    assert run_demo(str(out)) == 0
    first = capsys.readouterr().out
    assert "216 rows audited, 216 reproduced, 0 mismatches" in first
    assert re.search(r"72 scores \(72 computed, 0 from the cache, 0 failed\)", first)
    assert "assignment certificate verified" in first
    for rel in ("spl/README.md", "spl_audit.json", "tenets/dataset/assignment_certificate.json", "tenets/scores.parquet"):
        assert (out / rel).is_file(), rel
    scores = (out / "tenets" / "scores.parquet").read_bytes()
    assert run_demo(str(out)) == 0
    second = capsys.readouterr().out
    assert "72 scores (0 computed, 72 from the cache, 0 failed)" in second
    assert (out / "tenets" / "scores.parquet").read_bytes() == scores
