"""train.py refuses bad settings, bad texts and a build that fails its manifest before any model loads."""

from __future__ import annotations

import shutil

import pytest

from spl_hf.errors import SplHfError
from tests.test_train_data import _msg, _row, publish, train


@pytest.fixture
def no_model(monkeypatch):
    """Every model-loading path fails loudly (as in test_train_data), so a refusal shows it came first."""
    import transformers
    import trl.trainer.dpo_trainer as dpo

    from spl_hf.train import run

    def reached(*a, **k):
        raise AssertionError("model loading reached")

    monkeypatch.setattr(run, "resolve_base_model", reached)
    monkeypatch.setattr(dpo, "create_model_from_path", reached)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", reached)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    rows = [_row(i) for i in range(4)]
    return publish(tmp_path_factory.mktemp("good") / "ds", {"pairs": {"train": rows}})


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        (["--beta", "-1"], "--beta"),
        (["--beta", "0"], "--beta"),
        (["--learning_rate", "nan"], "--learning_rate"),
        (["--learning_rate", "inf"], "--learning_rate"),
        (["--num_train_epochs", "0", "--max_steps", "-1"], "nothing would be trained"),
        (["--num_train_epochs", "-2"], "--num_train_epochs"),
        (["--max_steps", "-5"], "--max_steps"),
        (["--lora_r", "0"], "--lora_r"),
        (["--lora_dropout", "1.5"], "--lora_dropout"),
        (["--per_device_train_batch_size", "0"], "--per_device_train_batch_size"),
        (["--gradient_accumulation_steps", "0"], "--gradient_accumulation_steps"),
        (["--max_length", "0"], "--max_length"),
        (["--loss_type", "bogus"], "--loss_type bogus"),
    ],
)
def test_a_bad_setting_is_refused_naming_it_before_data_or_model(tmp_path, good, no_model, flags, names):
    with pytest.raises(SplHfError, match=f"^{names}" if names.startswith("--") else names):
        train(tmp_path, "--dataset_name", str(good), *flags)
    assert not (tmp_path / "run").exists()  # refused before the output folder was touched


def test_zero_epochs_with_max_steps_reaches_model_loading(tmp_path, good, no_model):
    with pytest.raises(AssertionError, match="model loading reached"):
        train(tmp_path, "--dataset_name", str(good), "--num_train_epochs", "0", "--max_steps", "2")


@pytest.mark.parametrize(
    ("column", "value", "what"),
    [
        ("chosen", _msg("assistant", ""), "an empty text in `chosen`"),
        ("rejected", _msg("assistant", "   \n"), "an empty text in `rejected`"),
        ("chosen", _msg("assistant", "good\x00bad"), "a NUL character in `chosen`"),
        ("prompt", _msg("user", "q\x00"), "a NUL character in `prompt`"),
    ],
)
def test_empty_or_nul_texts_are_refused_naming_the_row(tmp_path, no_model, column, value, what):
    rows = [_row(i) for i in range(3)] + [_row(3, **{column: value})]
    ds = publish(tmp_path / "ds", {"pairs": {"train": rows}})
    with pytest.raises(SplHfError, match=f"1 rows have {what}: 3 \\(pair_id p3\\)"):
        train(tmp_path, "--dataset_name", str(ds))


def test_string_columns_are_checked_too(tmp_path, no_model):
    rows = [{"prompt": f"q{i}", "chosen": "" if i == 1 else "a", "rejected": "b"} for i in range(3)]
    ds = publish(tmp_path / "ds", {"pairs": {"train": rows}})
    with pytest.raises(SplHfError, match=r"1 rows have an empty text in `chosen`: 1$"):
        train(tmp_path, "--dataset_name", str(ds))


def test_a_build_failing_its_manifest_is_refused_unless_told_otherwise(tmp_path, good, no_model):
    copy = tmp_path / "copy"
    shutil.copytree(good, copy)
    (copy / "notes.txt").write_text("an unlisted file")
    with pytest.raises(SplHfError, match=r"does not match its MANIFEST.sha256 \(notes.txt: not listed"):
        train(tmp_path, "--dataset_name", str(copy))
    with pytest.raises(AssertionError, match="model loading reached"):
        train(tmp_path, "--dataset_name", str(copy), "--check_manifest", "false")
    (copy / "notes.txt").unlink()
    parquet = next(copy.rglob("*.parquet"))
    data = bytearray(parquet.read_bytes())
    data[len(data) // 2] ^= 1
    parquet.write_bytes(bytes(data))
    with pytest.raises(SplHfError, match=r"missing or differs from MANIFEST.sha256"):
        train(tmp_path, "--dataset_name", str(copy))


def test_the_cli_prints_one_line_and_exits_2(tmp_path, good, capsys, no_model):
    from spl_hf.train.entry import cli
    from tests.test_train_data import DEMO

    argv = ["--config", DEMO, "--output_dir", str(tmp_path / "run"), "--dataset_name", str(good)]
    assert cli([*argv, "--dataset_config", "pairs", "--dataset_train_split", "train", "--beta", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--beta must be a number above 0" in err
