"""Pools a user names in a recipe (adapter, file, source name, columns), and dry runs that read first."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

import spl_hf.backends
from spl_hf.cli import main
from tests.test_sources_preference import TRL_RECORDS, write_jsonl


@pytest.fixture
def no_model(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("a dry run must not load a model")

    monkeypatch.setattr(spl_hf.backends, "make_backend", refuse)


def _recipe(tmp_path: Path, pools: list, **over) -> Path:
    heldout = tmp_path / "heldout.csv"
    heldout.write_text('question,kind\n"An unrelated held-out question?",benign\n')
    data = {
        "pools": pools,
        "tenets": "no_preachy_tone,upfront_concerns",
        "capacity": 1,
        "threshold": 0.000001,
        "heldout": ["my_hard"],
        "heldout_files": [
            {
                "source": "my_hard",
                "adapter": "or_bench_hard_1k",
                "path": str(heldout),
                "columns": {"prompt": "question", "category": "kind"},
            }
        ],
        "run_dir": str(tmp_path / "run"),
        "output_dir": str(tmp_path / "ds"),
        **over,
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_dry_run_reads_each_pool_and_refuses_a_file_in_another_format(tmp_path, capsys, no_model) -> None:
    trl = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    # review (issue 25): a TRL file given to the HH adapter passed --dry_run with exit 0
    recipe = _recipe(tmp_path, [f"hh_train={trl}"])
    assert main(["release", "tenets", "--config", str(recipe), "--dry_run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"hh_train: {trl}: none of the first 4 record(s) becomes a row" in err
    # a CSV given as a JSON Lines pool: the read names the file
    wrong = tmp_path / "pool.csv"
    wrong.write_text("a,b\n1,2\n")
    recipe = _recipe(tmp_path, [f"ultrafeedback_train={wrong}"])
    assert main(["release", "tenets", "--config", str(recipe), "--dry_run"]) == 2
    assert f"{wrong}: missing column(s)" in capsys.readouterr().err


def test_the_real_read_refuses_it_too_before_any_model(tmp_path, capsys, no_model) -> None:
    from spl_hf.sources import sample_paths

    trl = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    recipe = _recipe(tmp_path, [f"pku_train={sample_paths()['pku_train']}", f"hh_train={trl}"])
    assert main(["release", "tenets", "--config", str(recipe), "--no_progress"]) == 2
    assert f"hh_train: {trl}: none of its 4 record(s) becomes a row" in capsys.readouterr().err


def test_a_bad_mapping_is_refused_before_any_model_naming_file_and_column(tmp_path, capsys, no_model) -> None:
    trl = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    entry = {
        "source": "hh_test",
        "adapter": "preference",
        "path": str(trl),
        "columns": {"prompt": "question"},
    }
    recipe = _recipe(tmp_path, [entry])
    assert main(["release", "tenets", "--config", str(recipe), "--dry_run"]) == 2
    assert f"hh_test: {trl}: no column 'question' (for prompt)" in capsys.readouterr().err


def test_a_dry_run_of_named_pools_plans_their_reads(tmp_path, capsys, no_model) -> None:
    trl = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    entry = {"source": "hh_test", "adapter": "preference", "path": str(trl), "license": "mit"}
    assert main(["release", "tenets", "--config", str(_recipe(tmp_path, [entry])), "--dry_run"]) == 0
    out = capsys.readouterr().out
    plan = json.loads(out[out.index("{") : out.rindex("}") + 1])
    assert plan["previews"] == [
        {"source": "hh_test", "read": "first 4 record(s): 4 row(s), 0 quarantined"},
        {"source": "my_hard", "read": "first 1 record(s): 1 row(s), 0 quarantined"},
    ]
    assert plan["pools"][0]["adapter"] == "preference" and plan["pools"][0]["license"] == "mit"


@pytest.mark.slow
def test_a_trl_pool_is_released_under_its_source_name(tmp_path, tiny_model_dir, capsys) -> None:
    trl = write_jsonl(tmp_path / "trl.jsonl", TRL_RECORDS)
    entry = {"source": "hh_test", "adapter": "preference", "path": str(trl), "license": "mit"}
    plain = write_jsonl(
        tmp_path / "u.jsonl", [{"q": "Why is the sea salty?", "x": "Minerals.", "y": "Fish."}]
    )
    unlabelled = {
        "source": "unlabelled",
        "adapter": "preference",
        "path": str(plain),
        "columns": {"prompt": "q", "response_a": "x", "response_b": "y"},
    }
    recipe = _recipe(tmp_path, [entry, unlabelled], model=str(tiny_model_dir))
    assert main(["release", "tenets", "--config", str(recipe), "--no_progress"]) == 0
    ds = tmp_path / "ds"
    report = json.loads((ds / "build_report.json").read_text())
    reads = {r["source"]: r for r in report["decontamination"]["sources"]}
    assert reads["hh_test"]["n_quarantined"] == 0 and reads["hh_test"]["adapter"] == "preference"
    assert reads["my_hard"]["columns"] == {"category": "kind", "prompt": "question"}
    rows = [pq.read_table(p) for p in ds.rglob("hh_test-*.parquet")]
    assert rows and all(set(t.column("source").to_pylist()) == {"hh_test"} for t in rows)
    card = (ds / "README.md").read_text()
    assert "`hh_test`" in card and "adapter `preference`" in card
    assert "- `hh_test`: mit" in (ds / "LICENSE.md").read_text()
    # a pool without its own preference is allowed; the agreement figures say it has no pool label
    assert "(no pool label): unlabelled" in card
