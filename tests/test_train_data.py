"""train.py: every bad input gives one clear error before any model is loaded."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from tests.conftest import REPO

DEMO = str(REPO / "recipes" / "train" / "demo_cpu.yaml")


def _msg(role: str, text: str) -> list[dict]:
    return [{"role": role, "content": text}]


def _row(i: int, **over) -> dict:
    row = {
        "pair_id": f"p{i}",
        "source": "xstest" if i % 2 else "harmbench",
        "prompt": _msg("user", f"q{i}"),
        "chosen": _msg("assistant", f"good {i}"),
        "rejected": _msg("assistant", f"bad {i}"),
        "score": 0.5,
    }
    row.update(over)
    return row


def publish(root: Path, configs: dict[str, dict[str, list[dict]]], schema: pa.Schema | None = None) -> Path:
    """A Hub-layout dataset folder (the layout the builders write) with the given configs and splits."""
    from datasets import Features

    from spl_hf.dataset.folder import ConfigData, write_dataset_folder, yaml_metadata

    cds = []
    for i, (name, splits) in enumerate(configs.items()):
        sample = next(rows for rows in splits.values() if rows)
        tables = {
            s: pa.Table.from_pylist(rows, schema=schema or pa.Table.from_pylist(sample).schema)
            for s, rows in splits.items()
        }
        feats = Features.from_arrow_schema(next(iter(tables.values())).schema)
        cds.append(ConfigData(name, feats, tables, default=i == 0))
    readme = "---\n" + yaml.safe_dump(yaml_metadata(cds), sort_keys=False) + "---\n"
    return write_dataset_folder(root, cds, readme).path


@pytest.fixture
def no_model(monkeypatch):
    """Make every model-loading path fail loudly, so a test shows the error came before it."""
    import transformers
    import trl.trainer.dpo_trainer as dpo

    from spl_hf.train import run

    def reached(*a, **k):
        raise AssertionError("model loading reached")

    monkeypatch.setattr(run, "resolve_base_model", reached)
    monkeypatch.setattr(dpo, "create_model_from_path", reached)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", reached)


def train(tmp_path: Path, *flags: str) -> None:
    from spl_hf.train.args import parse_args
    from spl_hf.train.run import main

    # demo_cpu.yaml names the SPL `preferences` config and `train` split; these folders use `pairs`.
    argv = [
        "--config",
        DEMO,
        "--output_dir",
        str(tmp_path / "run"),
        "--dataset_config",
        "pairs",
        "--dataset_train_split",
        "train",
        *flags,
    ]
    main(*parse_args(argv), argv=argv)


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    rows = [_row(i) for i in range(4)]
    return publish(
        tmp_path_factory.mktemp("good") / "ds",
        {"pairs": {"train": rows, "test": rows[:2]}, "other": {"train": rows}},
    )


def test_valid_data_reaches_model_loading(tmp_path, good, no_model):
    # The control for every test below: with good data the run gets as far as loading the model.
    with pytest.raises(AssertionError, match="model loading reached"):
        train(tmp_path, "--dataset_name", str(good))


def test_missing_config_lists_available(tmp_path, good, no_model):
    with pytest.raises(ValueError, match=r"no config 'nope'; available configs: pairs, other"):
        train(tmp_path, "--dataset_name", str(good), "--dataset_config", "nope")


def test_missing_split_lists_available(tmp_path, good, no_model):
    with pytest.raises(ValueError, match=r"no split 'validation'; available splits: train, test"):
        train(tmp_path, "--dataset_name", str(good), "--dataset_train_split", "validation")


def test_datasetdict_where_a_split_is_needed(tmp_path, good, no_model):
    with pytest.raises(ValueError, match=r"DatasetDict.*one split.*train, test"):
        train(tmp_path, "--dataset_name", str(good), "--dataset_train_split", "")


def test_require_dataset_refuses_a_datasetdict():
    from datasets import Dataset, DatasetDict

    from spl_hf.train.data import require_dataset

    d = Dataset.from_list([_row(0)])
    assert require_dataset(d, "x") is d
    with pytest.raises(ValueError, match="DatasetDict with splits a, b"):
        require_dataset(DatasetDict({"a": d, "b": d}), "x")


def test_rows_without_dpo_columns(tmp_path, no_model):
    rows = [{k: v for k, v in _row(i).items() if k != "rejected"} for i in range(3)]
    ds = publish(tmp_path / "ds", {"pairs": {"train": rows}})
    with pytest.raises(
        ValueError, match=r"rows lack rejected.*columns present: pair_id, source, prompt, chosen"
    ):
        train(tmp_path, "--dataset_name", str(ds))


def test_null_chosen_in_spl_derivations(tmp_path, built_spl, no_model):
    with pytest.raises(
        ValueError, match=r"rows have a null `chosen`.*train on the `preferences` config.*pair_id"
    ):
        train(
            tmp_path,
            "--dataset_name",
            str(built_spl),
            "--dataset_config",
            "derivations",
            "--dataset_train_split",
            "xstest",
        )


def test_spl_preferences_reaches_model_loading(tmp_path, built_spl, no_model):
    with pytest.raises(AssertionError, match="model loading reached"):
        train(
            tmp_path,
            "--dataset_name",
            str(built_spl),
            "--dataset_config",
            "preferences",
            "--dataset_train_split",
            "xstest",
        )


@pytest.mark.parametrize(
    ("column", "messages", "expected"),
    [
        (
            "chosen",
            _msg("user", "hi"),
            r"`chosen` messages with role\(s\) user \(allowed: assistant\): 1 \(pair_id p1\)",
        ),
        ("prompt", _msg("narrator", "hi"), r"`prompt` messages with role\(s\) narrator"),
        (
            "prompt",
            _msg("user", "q") + _msg("assistant", "a"),
            r"prompt that does not end on a user turn.*p1",
        ),
        ("rejected", [], r"empty `rejected` message list"),
    ],
)
def test_wrong_message_roles(tmp_path, no_model, column, messages, expected):
    rows = [_row(i) for i in range(3)]
    rows[1][column] = messages
    ds = publish(tmp_path / "ds", {"pairs": {"train": rows}})
    with pytest.raises(ValueError, match=expected):
        train(tmp_path, "--dataset_name", str(ds))


def test_empty_split(tmp_path, no_model):
    schema = pa.Table.from_pylist([_row(0)]).schema
    ds = publish(tmp_path / "ds", {"pairs": {"train": [_row(0)], "empty": []}}, schema=schema)
    with pytest.raises(ValueError, match=r"split 'empty'\): the split is empty"):
        train(tmp_path, "--dataset_name", str(ds), "--dataset_train_split", "empty")


def test_source_filter(tmp_path, good, no_model):
    from spl_hf.train.data import load_split

    ds, rec = load_split(str(good), "pairs", "train", sources=["xstest"])
    assert set(ds["source"]) == {"xstest"} and rec.rows == 2 and rec.sources == ["xstest"]
    with pytest.raises(
        ValueError, match=r"no rows from source\(s\) ultrachat; sources present: harmbench, xstest"
    ):
        train(tmp_path, "--dataset_name", str(good), "--sources", "ultrachat")


def test_weight_column_checked_when_weighting(tmp_path, no_model):
    rows = [_row(i) for i in range(3)]
    rows[2]["score"] = -1.0
    ds = publish(tmp_path / "ds", {"pairs": {"train": rows}})
    with pytest.raises(ValueError, match=r"negative or non-finite weight `score`: 2 \(pair_id p2\)"):
        train(tmp_path, "--dataset_name", str(ds), "--score_weighting", "true")
    with pytest.raises(ValueError, match=r"needs the column `margin`"):
        train(tmp_path, "--dataset_name", str(ds), "--score_weighting", "true", "--weight_column", "margin")


def test_local_folder_fingerprint_follows_the_bytes(tmp_path):
    from spl_hf.train.data import load_split

    rows = [_row(i) for i in range(3)]
    a = publish(tmp_path / "a", {"pairs": {"train": rows}})
    b = publish(tmp_path / "b", {"pairs": {"train": rows}})
    c = publish(tmp_path / "c", {"pairs": {"train": [*rows, _row(9)]}})
    fa, fb, fc = (load_split(str(p), None, "train")[1] for p in (a, b, c))
    assert fa.dataset_fingerprint == fb.dataset_fingerprint != fc.dataset_fingerprint
    assert fa.dataset_revision is None and fa.data_files == ["pairs/train-00000-of-00001.parquet"]
    with pytest.raises(ValueError, match="local folder"):
        load_split(str(a), None, "train", revision="abc123")


def test_foreign_output_folder_refused_before_data_or_model(tmp_path, good, no_model):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="spl_hf did not write"):
        train(tmp_path, "--dataset_name", str(good))
    assert (tmp_path / "run" / "notes.txt").read_text() == "mine"


def test_cli_reports_one_line_and_exit_2(tmp_path, good, capsys, no_model):
    from spl_hf.train.entry import cli

    rc = cli(
        [
            "--config",
            DEMO,
            "--output_dir",
            str(tmp_path / "run"),
            "--dataset_name",
            str(good),
            "--dataset_config",
            "nope",
            "--dataset_train_split",
            "train",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.count("\n") == 0 and "available configs: pairs, other" in err


def test_unknown_recipe_key_fails(tmp_path):
    from spl_hf.train.args import parse_args

    bad = tmp_path / "bad.yaml"
    bad.write_text(Path(DEMO).read_text() + "max_prompt_length: 128\n")
    with pytest.raises(ValueError, match="max_prompt_length"):
        parse_args(["--config", str(bad)])


def test_same_named_folders_with_equal_cards_do_not_share_a_cache(tmp_path):
    from spl_hf.train.data import load_split

    # Same folder name, same card, same byte size, different rows: `datasets` alone would reuse
    # the first folder's cached Arrow data for the second.
    a = publish(tmp_path / "a" / "ds", {"pairs": {"train": [_row(i) for i in range(3)]}})
    b = publish(tmp_path / "b" / "ds", {"pairs": {"train": [_row(i + 3) for i in range(3)]}})
    for folder, ids in ((a, ["p0", "p1", "p2"]), (b, ["p3", "p4", "p5"])):
        ds, _ = load_split(str(folder), "pairs", "train")
        assert ds["pair_id"] == ids


def test_an_unreachable_hub_id_is_one_clear_error_before_any_model(monkeypatch):
    # reliability review F15: train.py ended in a ConnectionError traceback on an offline box
    import datasets
    import huggingface_hub.constants as hub_constants

    from spl_hf.train.data import load_split

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(
        ValueError, match=r"^nobody/nothing: not a local dataset folder, and the Hub could not"
    ):
        load_split("nobody/nothing", None, "train")


def test_tenet_release_large_string_columns_pass_the_row_checks_and_source_filter(built_tenets):
    from datasets import load_dataset

    from spl_hf.train.data import check_rows, filter_sources

    ds = load_dataset(str(built_tenets), "all", split="train")
    assert ds.features["source"].dtype == "large_string"
    check_rows(ds, "all/train")  # raises on rows train.py would refuse
    first = ds[0]["source"]
    kept = filter_sources(ds, [first], "all/train")
    assert kept.num_rows == sum(s == first for s in ds["source"]) and set(kept["source"]) == {first}
