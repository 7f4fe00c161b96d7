"""The Hub layout of a build: union splits stored once, bounded shards, the card and `spl-hf card`."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pytest
import yaml
from datasets import Features, Value, concatenate_datasets, load_dataset

from spl_hf.cli import main
from spl_hf.dataset.folder import ConfigData, write_dataset_folder, yaml_metadata
from spl_hf.manifest import verify_manifest

FRESH = "force_redownload"  # datasets keys a local folder's Arrow cache by its name, not its bytes


def _card(folder) -> dict:
    return yaml.safe_load((folder / "README.md").read_text().split("---", 2)[1])


def _declared(folder, config: str) -> dict[str, object]:
    entry = next(c for c in _card(folder)["configs"] if c["config_name"] == config)
    return {d["split"]: d["path"] for d in entry["data_files"]}


def _same(a, b) -> None:
    assert a.features == b.features
    assert a.data.table.equals(b.data.table.cast(a.features.arrow_schema))


def test_preferences_train_is_the_per_source_splits_stored_once(builds):
    folder = builds["spl"]
    splits = _declared(folder, "preferences")
    sources = [s for s in splits if s != "train"]
    assert splits["train"] == [f"preferences/{s}-*" for s in sources]
    assert not list(folder.glob("preferences/train-*"))  # no row written twice
    dd = load_dataset(str(folder), "preferences", download_mode=FRESH)
    _same(dd["train"], concatenate_datasets([dd[s] for s in sources]))


def test_tenet_all_is_the_per_tenet_configs_stored_once(builds):
    folder = builds["tenets"]
    (paths,) = _declared(folder, "all").values()
    assert not (folder / "all").exists()
    parts = []
    for pattern in paths:
        config, split = pattern.removesuffix("-*").split("/")
        parts.append(load_dataset(str(folder), config, split=split, download_mode=FRESH))
    everything = load_dataset(str(folder), "all", split="train", download_mode=FRESH)
    _same(everything, concatenate_datasets(parts))
    assert len(set(everything["tenet"])) == len({p.split("/")[0] for p in paths}) > 1


def test_shards_are_bounded_and_named_like_push_to_hub(tmp_path):
    text = pa.array([f"row {i} " + "x" * (i % 97) for i in range(3000)])
    table = pa.table({"text": text, "n": pa.array(range(3000), pa.int64())})
    feats = Features({"text": Value("string"), "n": Value("int64")})
    configs = [ConfigData("default", feats, {"train": table}, default=True)]
    readme = "---\n" + yaml.safe_dump(yaml_metadata(configs), sort_keys=False) + "---\n"
    written = write_dataset_folder(tmp_path / "ds", configs, readme, max_shard_size="40KB")
    shards = sorted((written.path / "data").glob("*.parquet"))
    n = len(shards)
    assert n == -(-table.nbytes // 40_000) > 1
    assert [p.name for p in shards] == [f"train-{i:05d}-of-{n:05d}.parquet" for i in range(n)]
    assert all(p.stat().st_size <= 40_000 for p in shards)
    assert load_dataset(str(written.path), split="train", download_mode=FRESH).data.table.equals(table)
    assert verify_manifest(written.path) == []


def test_a_union_of_unknown_splits_is_refused():
    feats = Features({"n": Value("int64")})
    t = pa.table({"n": pa.array([1], pa.int64())})
    with pytest.raises(ValueError, match=r"union split 'train' names \('a', 'nope'\)"):
        yaml_metadata_checked([ConfigData("a", feats, {"x": t}, unions={"train": [("a", "nope")]})])


def yaml_metadata_checked(configs):
    from spl_hf.dataset.folder import validate_layout

    validate_layout(configs)
    return yaml_metadata(configs)


def test_cards_state_the_licence_and_how_histories_are_flattened(builds):
    spl = _card(builds["spl"])
    assert spl["license"] == "other" and spl["license_name"] == "spl-source-licenses"
    assert spl["license_link"] == "LICENSE.md" and (builds["spl"] / "LICENSE.md").is_file()
    assert "do_not_answer`: CC-BY-NC-SA-4.0" in (builds["spl"] / "LICENSE.md").read_text()
    for name in ("spl", "tenets"):
        assert "num_bytes" not in (builds[name] / "README.md").read_text()
    tenet_card = (builds["tenets"] / "README.md").read_text()
    assert "`Human: … Assistant: …`" in tenet_card and "[…earlier turns omitted…]" in tenet_card
    assert "default 6000 characters" in tenet_card


def test_card_command_regenerates_the_card_without_rebuilding(builds, tmp_path, capsys):
    for name in ("spl", "tenets"):
        copy = tmp_path / name
        shutil.copytree(builds[name], copy)
        original = (copy / "README.md").read_text()
        (copy / "README.md").write_text("stale\n")
        assert main(["card", str(copy)]) == 0
        assert (copy / "README.md").read_text() == original  # same inputs, same card
        assert main(["card", str(copy), "--repo_id", "someone/else"]) == 0
        card = (copy / "README.md").read_text()
        assert 'load_dataset("someone/else"' in card and card.replace("someone/else", "x") != original
        assert verify_manifest(copy) == []  # the manifest follows the new card
    shutil.rmtree(tmp_path / "spl" / "derivations")
    assert main(["card", str(tmp_path / "tenets" / "missing")]) == 2
    assert "no such build folder" in capsys.readouterr().err
    (tmp_path / "not_a_build").mkdir()
    assert main(["card", str(tmp_path / "not_a_build")]) == 2
    assert "card.json: not found" in capsys.readouterr().err
