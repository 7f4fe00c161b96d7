"""The vectorised tenet audit: same verdicts as the per-row baseline, clean failures on partial builds."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.assign.certificate import Certificate
from spl_hf.audit.load import read_folder
from spl_hf.audit.tenets import audit_tenet_build, check_rows
from spl_hf.cli import main
from spl_hf.contract import CERTIFICATE_FILE, ROW_FEATURES, SCORE_FEATURES
from tests.audit_fixtures import built_tenets, copy_build, data_file, rewrite  # noqa: F401

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_audit_tenets.py"


def _baseline():
    spec = importlib.util.spec_from_file_location("bench_audit_tenets", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.old_check_rows


def _tampered(rows: list[dict], scores: list[dict], rng: np.random.Generator) -> tuple[list[dict], list[dict]]:
    """Random edits of every kind the checks look at, some rows untouched."""
    rows = [json.loads(json.dumps(r)) for r in rows for _ in range(10)]  # each row under several edits
    scores = list(scores)
    for r in rows:
        kind = rng.integers(0, 26)  # 13 and above: untouched
        d = r["derivation"]
        if kind == 0:
            d["judge"]["p_a_first"] = float(rng.random())
        elif kind == 1:
            r["chosen"], r["rejected"] = r["rejected"], r["chosen"]
        elif kind == 2:
            d["chosen_side"] = {"a": "b", "b": "a"}[d["chosen_side"]]
        elif kind == 3:
            d["chosen_side"] = None
        elif kind == 4:
            r["score"] = float(rng.random())
        elif kind == 5:
            r["scenario_id"] += "x"
        elif kind == 6:
            d["threshold"] = 0.9
        elif kind == 7:
            d["digest"] = "0" * 16
        elif kind == 8:
            d["pair_id"] = "no-such-pair"
        elif kind == 9:
            r["chosen"][0]["content"] += "!"
        elif kind == 10:
            r["rejected"] = None
        elif kind == 11:
            d["judge"]["model_id"] = None
        elif kind == 12:
            r["prompt"][0]["content"] = "\x00\"\\\n" + r["prompt"][0]["content"]
    drop = {int(i) for i in rng.choice(len(scores), size=len(scores) // 20, replace=False)}
    return rows, [s for i, s in enumerate(scores) if i not in drop]


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_checks_equal_the_per_row_baseline(built_tenets, seed):  # noqa: F811
    built = read_folder(built_tenets)
    cert = Certificate.from_dict(json.loads((built_tenets / CERTIFICATE_FILE).read_text()))
    rows = pa.concat_tables([s.table for s in built.splits if s.config != "judge_scores"]).to_pylist()
    scores = pa.concat_tables([s.table for s in built.config("judge_scores")]).to_pylist()
    rng = np.random.default_rng(seed)
    edited_rows, edited_scores = _tampered(rows, scores, rng)
    table = pa.Table.from_pylist(edited_rows, schema=ROW_FEATURES.arrow_schema)
    score_table = pa.Table.from_pylist(edited_scores, schema=SCORE_FEATURES.arrow_schema)
    old = _baseline()(table, score_table, cert)
    new = check_rows(table, score_table, cert)
    assert list(new) == list(old)
    for name in old:
        assert np.array_equal(old[name], new[name]), name
    flagged = np.logical_or.reduce(list(new.values()))
    assert 0 < flagged.sum() < len(edited_rows)  # the instance has both clean and tampered rows


def test_a_repeated_judge_score_key_is_a_mismatch(built_tenets, tmp_path):  # noqa: F811
    folder = copy_build(built_tenets, tmp_path / "dup")
    first = pq.read_table(data_file(folder, "all")).to_pylist()[0]
    key = (first["derivation"]["pair_id"], first["tenet"])

    def repeat(rows):
        rows.append(next(r for r in rows if (r["pair_id"], r["tenet"]) == key))

    rewrite(data_file(folder, "judge_scores"), repeat)
    report = audit_tenet_build(folder, manifest=False)
    flagged = {(m["config"], m["row"]): m["fields"] for m in report.mismatches}
    assert flagged[("all", 0)] == ["judge"]
    assert not report.ok


@pytest.mark.parametrize("missing", ["judge_scores", "all", "certificate", "report_and_certificate"])
def test_a_tenet_build_with_files_missing_fails_cleanly(built_tenets, tmp_path, capsys, missing):  # noqa: F811
    folder = copy_build(built_tenets, tmp_path / missing)
    if missing in ("judge_scores", "all"):
        data_file(folder, missing).unlink()
    else:
        (folder / CERTIFICATE_FILE).unlink()
        if missing == "report_and_certificate":
            (folder / "build_report.json").unlink()  # still recognised by its card (judge_scores config)
    assert main(["audit", str(folder), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "tenets" and not out["certificate_ok"]
    text = " ".join(out["failures"] + out["certificate_failures"])
    if missing in ("judge_scores", "all"):
        assert f"{missing}/train: no file matches" in text
    else:
        assert f"{CERTIFICATE_FILE} is missing" in text
    assert any("missing or differs from MANIFEST.sha256" in f for f in out["failures"])


def test_a_partial_tenet_build_gives_no_traceback_from_the_command_line(built_tenets, tmp_path):  # noqa: F811
    folder = copy_build(built_tenets, tmp_path / "partial")
    for p in sorted(folder.glob("*/*.parquet"))[1:]:
        p.unlink()
    (folder / "MANIFEST.sha256").unlink()
    proc = subprocess.run([sys.executable, "-m", "spl_hf.cli", "audit", str(folder)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "FAILED: MANIFEST.sha256 is missing" in proc.stdout and "a declared data file is missing" in proc.stdout


def test_a_per_tenet_row_is_checked_even_when_its_all_row_is_intact(built_tenets, tmp_path):  # noqa: F811
    folder = copy_build(built_tenets, tmp_path / "tenet_edit")
    tenet = sorted(p.parent.name for p in folder.glob("*/*.parquet")
                   if p.parent.name not in ("all", "judge_scores"))[0]
    shard = sorted((folder / tenet).glob("*.parquet"))[0]

    def swap(rows):
        rows[0]["chosen"], rows[0]["rejected"] = rows[0]["rejected"], rows[0]["chosen"]

    rewrite(shard, swap)
    report = audit_tenet_build(folder, manifest=False)
    assert [(m["config"], m["row"], m["fields"]) for m in report.mismatches] == [(tenet, 0, ["digest", "texts"])]
    assert report.rows == report.reproduced + 1
