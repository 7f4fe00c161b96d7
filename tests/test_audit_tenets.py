"""The vectorised tenet audit: same verdicts as the per-row baseline, clean failures on partial builds."""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.assign.certificate import Certificate
from spl_hf.audit.load import read_folder
from spl_hf.audit.tenets.rows import audit_tenet_build, check_rows
from spl_hf.cli import main
from spl_hf.contract import CERTIFICATE_FILE, ROW_FEATURES, SCORE_FEATURES
from tests import procs
from tests.audit_fixtures import (
    all_paths,
    card_meta,
    copy_build,
    data_file,
    reseal,
    rewrite,
    store_all_itself,
    tenet_files,
    write_card,
)

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_audit_tenets.py"


def _baseline():
    spec = importlib.util.spec_from_file_location("bench_audit_tenets", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.old_check_rows


def _tampered(
    rows: list[dict], scores: list[dict], rng: np.random.Generator
) -> tuple[list[dict], list[dict]]:
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
            r["prompt"][0]["content"] = '\x00"\\\n' + r["prompt"][0]["content"]
    drop = {int(i) for i in rng.choice(len(scores), size=len(scores) // 20, replace=False)}
    return rows, [s for i, s in enumerate(scores) if i not in drop]


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_checks_equal_the_per_row_baseline(built_tenets, seed):
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


def test_a_repeated_judge_score_key_is_a_mismatch(built_tenets, tmp_path):
    folder = copy_build(built_tenets, tmp_path / "dup")
    shard = tenet_files(folder)[0]
    first = pq.read_table(shard).to_pylist()[0]
    key = (first["derivation"]["pair_id"], first["tenet"])

    def repeat(rows):
        rows.append(next(r for r in rows if (r["pair_id"], r["tenet"]) == key))

    rewrite(data_file(folder, "judge_scores"), repeat)
    report = audit_tenet_build(folder, manifest=False)
    # The row is flagged in each config that serves it ('all' lists its file), and no other row is.
    assert sorted((m["config"], m["id"], m["fields"]) for m in report.mismatches) == sorted(
        [("all", first["scenario_id"], ["judge"]), (shard.parent.name, first["scenario_id"], ["judge"])]
    )
    assert [m["row"] for m in report.mismatches if m["config"] == shard.parent.name] == [0]
    assert not report.ok


@pytest.mark.parametrize("missing", ["judge_scores", "tenet", "certificate", "report_and_certificate"])
def test_a_tenet_build_with_files_missing_fails_cleanly(built_tenets, tmp_path, capsys, missing):
    folder = copy_build(built_tenets, tmp_path / missing)
    if missing == "judge_scores":
        data_file(folder, missing).unlink()
    elif missing == "tenet":  # a per-tenet file, which 'all' lists too: both configs lose its rows
        shard = tenet_files(folder)[0]
        shard.unlink()
        tenet, split = shard.parent.name, shard.name.split("-")[0]
    else:
        (folder / CERTIFICATE_FILE).unlink()
        if missing == "report_and_certificate":
            (folder / "build_report.json").unlink()  # still recognised by its card (judge_scores config)
    assert main(["audit", str(folder), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "tenets" and not out["certificate_ok"]
    text = " ".join(out["failures"] + out["certificate_failures"])
    if missing == "judge_scores":
        assert f"{missing}/train: no file matches" in text
    elif missing == "tenet":
        assert f"{tenet}/{split}: no file matches '{tenet}/{split}-*'" in text
        assert f"all/train: no file matches '{tenet}/{split}-*'" in text
    else:
        assert f"{CERTIFICATE_FILE} is missing" in text
    assert any("missing or differs from MANIFEST.sha256" in f for f in out["failures"])


def test_a_partial_tenet_build_gives_no_traceback_from_the_command_line(built_tenets, tmp_path):
    folder = copy_build(built_tenets, tmp_path / "partial")
    for p in sorted(folder.glob("*/*.parquet"))[1:]:
        p.unlink()
    (folder / "MANIFEST.sha256").unlink()
    proc = procs.run(
        [sys.executable, "-m", "spl_hf.cli", "audit", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert (
        "FAILED: MANIFEST.sha256 is missing" in proc.stdout
        and "a declared data file is missing" in proc.stdout
    )


def test_a_per_tenet_row_is_checked_even_when_its_all_row_is_intact(built_tenets, tmp_path):
    folder = copy_build(built_tenets, tmp_path / "tenet_edit")
    store_all_itself(folder)  # 'all' with its own copy of the rows, so the two can differ
    clean = audit_tenet_build(folder)
    assert clean.ok and clean.mismatch_count == 0 and clean.certificate_ok, clean.to_dict()
    tenet = sorted(
        p.parent.name for p in folder.glob("*/*.parquet") if p.parent.name not in ("all", "judge_scores")
    )[0]
    shard = sorted((folder / tenet).glob("*.parquet"))[0]

    def swap(rows):
        rows[0]["chosen"], rows[0]["rejected"] = rows[0]["rejected"], rows[0]["chosen"]

    rewrite(shard, swap)
    report = audit_tenet_build(folder, manifest=False)
    assert [(m["config"], m["row"], m["fields"]) for m in report.mismatches] == [
        (tenet, 0, ["digest", "texts"])
    ]
    assert report.rows == report.reproduced + 1


@pytest.mark.parametrize("edit", ["drop", "repeat", "own_copy"])
def test_all_must_list_every_per_tenet_file_exactly_once(built_tenets, tmp_path, edit):
    folder = copy_build(built_tenets, tmp_path / edit)
    meta, body = card_meta(folder)
    paths = all_paths(meta)
    if edit == "drop":  # rows served by a tenet config but not by 'all'
        paths.pop()
    elif (
        edit == "repeat"
    ):  # datasets would serve a file's rows twice in 'all'; a deduplicating reader would not see it
        paths.append(paths[0])
    else:  # 'all' mixes a file of its own with the per-tenet files
        (folder / "all").mkdir()
        shutil.copyfile(tenet_files(folder)[0], folder / "all" / "train-00000-of-00001.parquet")
        paths.append("all/train-*")
    write_card(folder, meta, body)
    reseal(folder)
    report = audit_tenet_build(folder)
    assert not report.ok and not report.certificate_ok
    assert any("'all' must list every per-tenet file exactly once" in f for f in report.certificate_failures)


def test_a_row_removed_from_a_resealed_tenet_build_fails_the_recorded_count(built_tenets, tmp_path):
    folder = copy_build(built_tenets, tmp_path / "short")
    expected = sum(json.loads((folder / "build_report.json").read_text())["rows_per_source"].values())
    rewrite(tenet_files(folder)[0], lambda rows: rows.pop(0))
    reseal(folder)
    report = audit_tenet_build(folder)
    assert f"all/train: {expected - 1} rows on disk, build_report.json declares {expected}" in report.failures
    assert not report.ok


def _sft_file(folder: Path) -> Path:
    return data_file(folder, "sft")


def test_an_sft_build_audits_clean_and_counts_its_rows(built_tenets_sft):
    report = audit_tenet_build(built_tenets_sft)
    assert report.ok and report.certificate_ok, report.to_dict()
    sft_rows = pq.read_metadata(_sft_file(built_tenets_sft)).num_rows
    assert sft_rows == sum(pq.read_metadata(f).num_rows for f in tenet_files(built_tenets_sft)) > 0
    assert report.rows == report.reproduced == audit_tenet_build(built_tenets_sft).rows
    without = sum(len(s.table) for s in read_folder(built_tenets_sft).splits if s.config != "sft")
    assert report.rows == without + sft_rows


@pytest.mark.parametrize("edit", ["message", "role", "extra_turn", "tenet", "source", "swap", "unknown_id"])
def test_every_sft_row_is_prompt_plus_chosen_of_its_all_row(built_tenets_sft, tmp_path, edit):
    folder = copy_build(built_tenets_sft, tmp_path / edit)

    def tamper(rows):
        if edit == "message":
            rows[1]["messages"][-1]["content"] += " (edited)"
        elif edit == "role":
            rows[1]["messages"][0]["role"] = "system"
        elif edit == "extra_turn":
            rows[1]["messages"].append(dict(rows[1]["messages"][-1]))
        elif edit == "tenet":
            rows[1]["tenet"] = rows[0]["tenet"] if rows[0]["tenet"] != rows[1]["tenet"] else "other"
        elif edit == "source":
            rows[1]["source"] += "x"
        elif edit == "swap":
            rows[0], rows[1] = rows[1], rows[0]
        else:
            rows[1]["scenario_id"] += "x"

    rewrite(_sft_file(folder), tamper)
    reseal(folder)
    report = audit_tenet_build(folder)
    assert not report.ok
    got = [(m["config"], m["split"], m["row"], m["fields"]) for m in report.mismatches]
    field_of = {
        "message": "messages",
        "role": "messages",
        "extra_turn": "messages",
        "tenet": "tenet",
        "source": "source",
        "unknown_id": "scenario_id",
    }
    if edit == "swap":
        assert got == [("sft", "train", 0, ["order"]), ("sft", "train", 1, ["order"])]
    else:
        assert got == [("sft", "train", 1, [field_of[edit]])]
    assert report.mismatch_count == len(got)
    if edit == "unknown_id":  # its 'all' row now has no sft row
        assert any("1 'all' rows have no sft row" in f for f in report.failures)


@pytest.mark.parametrize("edit", ["drop", "duplicate"])
def test_the_sft_rows_must_be_the_all_rows(built_tenets_sft, tmp_path, edit):
    folder = copy_build(built_tenets_sft, tmp_path / edit)
    n = pq.read_metadata(_sft_file(folder)).num_rows
    rewrite(_sft_file(folder), lambda rows: rows.pop() if edit == "drop" else rows.append(rows[-1]))
    reseal(folder)
    report = audit_tenet_build(folder)
    assert not report.ok
    held = n - 1 if edit == "drop" else n + 1
    assert any(f"'sft' holds {held} rows and 'all' {n}" in f for f in report.failures)
    if edit == "duplicate":  # the repeat sits where no 'all' row of its id does
        assert [(m["row"], m["fields"]) for m in report.mismatches] == [(n, ["order"])]


def test_the_audit_recomputes_judge_quality_and_names_an_edited_figure(built_tenets, tmp_path):
    assert audit_tenet_build(built_tenets).ok  # the control: the stored figures are the recomputed ones
    folder = copy_build(built_tenets, tmp_path / "b")
    path = folder / "build_report.json"
    report = json.loads(path.read_text())
    pos = report["judge_quality"]["overall"]["position"]
    real = pos["consistent"]
    pos["consistent"] = real + 1  # a judge that looks more consistent than it was
    path.write_text(json.dumps(report))
    reseal(folder)
    got = audit_tenet_build(folder)
    assert not got.ok
    (failure,) = [f for f in got.failures if "judge_quality" in f]
    assert failure.startswith("build_report.json: judge_quality differs")
    assert f"overall.position.consistent is {real + 1}, recomputed {real}" in failure


def test_an_edited_source_preference_changes_the_recomputed_agreement(built_tenets, tmp_path):
    folder = copy_build(built_tenets, tmp_path / "b")
    report = json.loads((folder / "build_report.json").read_text())
    threshold = report["judge_quality"]["threshold"]

    def flip(rows):  # the first eligible judgement whose pool states a side: state the other side
        r = next(r for r in rows if abs(r["score"]) >= threshold and r["source_preference"] in ("a", "b"))
        r["source_preference"] = "b" if r["source_preference"] == "a" else "a"

    rewrite(data_file(folder, "judge_scores"), flip)
    reseal(folder)
    got = audit_tenet_build(folder)
    assert not got.ok
    failures = [f for f in got.failures if "judge_quality differs" in f]
    assert [f.split(":")[0] for f in failures] == ["build_report.json", "card.json"]
    assert all(".sources[" in f and "agree is" in f for f in failures)


def test_a_build_without_its_judge_quality_figure_fails(built_tenets, tmp_path):
    folder = copy_build(built_tenets, tmp_path / "b")
    (folder / "judge_quality.png").unlink()
    reseal(folder)
    got = audit_tenet_build(folder)
    assert "judge_quality.png is missing: a tenet build ships its judge-quality figure" in got.failures


def test_a_slice_of_rows_at_a_time_gives_the_whole_audits_report(built_tenets_sft, tmp_path, monkeypatch):
    """Rows, twins and sft rows are checked a slice at a time (to hold only so much text): slices of
    two rows find the same mismatches, at the same rows, as one slice of everything."""
    import spl_hf.audit.tenets.rows as audit_rows

    folder = copy_build(built_tenets_sft, tmp_path / "edited")

    def edit_sft(rows):
        rows[1]["messages"][-1]["content"] += " (edited)"
        rows[-1]["source"] += "x"

    def swap(rows):
        rows[-1]["chosen"], rows[-1]["rejected"] = rows[-1]["rejected"], rows[-1]["chosen"]

    rewrite(_sft_file(folder), edit_sft)
    rewrite(tenet_files(folder)[1], swap)
    reseal(folder)
    whole = audit_tenet_build(folder).to_dict()
    monkeypatch.setattr(audit_rows, "CHECK_SLICE_ROWS", 2)
    sliced = audit_tenet_build(folder).to_dict()
    assert sliced == whole
    assert whole["mismatch_count"] == 4 and whole["rows"] > 3 * 2  # each edit, in 'all' and its tenet
