"""The audit reads exactly the files on disk, as the card declares them, and fails on anything missing."""

import json

import pyarrow.parquet as pq
import pytest
import yaml

from spl_hf.audit.load import read_folder
from spl_hf.cli import main
from spl_hf.dataset.layout import read_card
from tests.audit_fixtures import copy_build, rewrite, tenet_files

SPL_FILE = "derivations/ultrachat-00000-of-00001.parquet"


def _audit(capsys, *argv) -> tuple[int, dict]:
    code = main(["audit", *argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_an_edit_is_found_even_after_auditing_the_same_folder(built_spl, tmp_path, capsys):
    folder = copy_build(built_spl, tmp_path / "out")
    code, first = _audit(capsys, str(folder))
    assert code == 0 and first["reproduced"] == first["rows"] == 216

    # The reproduction: edit one response in place, delete the manifest, audit the same path again.
    def edit(rows):
        rows[2]["response_a"] += " (edited)"

    rewrite(folder / SPL_FILE, edit)
    (folder / "MANIFEST.sha256").unlink()
    code, second = _audit(capsys, str(folder), "--no_manifest")
    assert code == 1
    assert [(m["config"], m["split"], m["row"]) for m in second["mismatches"]] == [
        ("derivations", "ultrachat", 2)
    ]
    assert "digest" in second["mismatches"][0]["fields"]


def test_an_edit_in_a_tenet_build_is_found_after_a_prior_audit(built_tenets, tmp_path, capsys):
    folder = copy_build(built_tenets, tmp_path / "out")
    assert _audit(capsys, str(folder))[0] == 0

    def swap(rows):
        rows[0]["chosen"], rows[0]["rejected"] = rows[0]["rejected"], rows[0]["chosen"]

    shard = tenet_files(folder)[0]  # 'all' lists the per-tenet files: the row is stored here only
    rewrite(shard, swap)
    code, out = _audit(capsys, str(folder))
    # One stored row, served by two configs: reported under each, with the same fields.
    assert code == 1 and out["mismatch_count"] == 2
    assert sorted(m["config"] for m in out["mismatches"]) == sorted(["all", shard.parent.name])
    assert all("texts" in m["fields"] for m in out["mismatches"])
    assert out["manifest_mismatches"] == [shard.relative_to(folder).as_posix()]


def test_a_missing_manifest_fails_unless_waived_and_the_waiver_says_what_is_unchecked(
    built_spl, tmp_path, capsys
):
    folder = copy_build(built_spl, tmp_path / "nomanifest")
    (folder / "MANIFEST.sha256").unlink()
    code, out = _audit(capsys, str(folder))
    assert code == 1 and out["mismatch_count"] == 0
    assert any("MANIFEST.sha256 is missing" in f for f in out["failures"])
    code, out = _audit(capsys, str(folder), "--no_manifest")
    assert code == 0 and out["failures"] == []
    assert any("MANIFEST.sha256 was not checked" in n for n in out["notes"])


def test_a_partial_folder_fails(built_spl, tmp_path, capsys):
    folder = copy_build(built_spl, tmp_path / "partial")
    for p in sorted((folder / "derivations").glob("*.parquet"))[1:]:
        p.unlink()
    (folder / "MANIFEST.sha256").unlink()  # the state a kill leaves: no manifest yet
    code, out = _audit(capsys, str(folder), "--no_manifest")
    assert code == 1
    missing = [f for f in out["failures"] if "a declared data file is missing" in f]
    assert len(missing) == 5 and all(f.startswith("derivations/") for f in missing)


def test_row_counts_must_match_the_recorded_counts(built_spl, tmp_path, capsys):
    folder = copy_build(built_spl, tmp_path / "short")
    rewrite(folder / SPL_FILE, lambda rows: rows.pop())
    code, out = _audit(capsys, str(folder), "--no_manifest")
    assert code == 1 and out["mismatch_count"] == 0  # every remaining row reproduces...
    assert (
        "derivations/ultrachat: 47 rows on disk, build_report.json declares 48" in out["failures"]
    )  # ...one is gone
    # A card that states split sizes (dataset_info num_examples) is held to them, before the build report.
    meta = read_card(folder).meta
    (info,) = [i for i in meta["dataset_info"] if i["config_name"] == "derivations"]
    info["splits"] = [{"name": "ultrachat", "num_examples": 46}]
    body = (folder / "README.md").read_text().split("---\n", 2)[2]
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n{body}")
    code, out = _audit(capsys, str(folder), "--no_manifest")
    assert code == 1 and "derivations/ultrachat: 47 rows on disk, the card declares 46" in out["failures"]


def test_a_file_declared_twice_in_one_split_fails(built_spl, tmp_path, capsys):
    """`datasets` reads a file once per pattern that matches it: a repeated file would serve its rows twice."""
    folder = copy_build(built_spl, tmp_path / "twice")
    meta = read_card(folder).meta
    (train,) = [d for d in meta["configs"][0]["data_files"] if d["split"] == "train"]
    train["path"].append(train["path"][0])
    body = (folder / "README.md").read_text().split("---\n", 2)[2]
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n{body}")
    code, out = _audit(capsys, str(folder), "--no_manifest")
    assert code == 1
    assert (
        "preferences/train: preferences/ultrachat-00000-of-00001.parquet is declared more than once "
        "(datasets would read its rows twice)"
    ) in out["failures"]


def test_undeclared_and_unlisted_files_fail(built_spl, tmp_path, capsys):
    folder = copy_build(built_spl, tmp_path / "extra")
    (folder / "derivations" / "ultrachat-00001-of-00001.parquet").write_bytes(
        (folder / SPL_FILE).read_bytes()
    )
    (folder / "notes.txt").write_text("added later\n")
    code, out = _audit(capsys, str(folder))
    assert code == 1
    # The extra shard matches the split's pattern, so its rows are read and the count check fails too.
    assert "derivations/ultrachat: 96 rows on disk, build_report.json declares 48" in out["failures"]
    assert sorted(out["unlisted_files"]) == ["derivations/ultrachat-00001-of-00001.parquet", "notes.txt"]
    stray = copy_build(built_spl, tmp_path / "stray")
    (stray / "leftover").mkdir()
    (stray / "leftover" / "x.parquet").write_bytes(b"PAR1")
    code, out = _audit(capsys, str(stray), "--no_manifest")
    assert code == 1 and "leftover/x.parquet: a data file no config of the card declares" in out["failures"]


def test_card_data_files_in_every_hub_form(built_spl, tmp_path):
    """A split may list several patterns (e.g. per-source files), a config may name files of other configs."""
    folder = copy_build(built_spl, tmp_path / "forms")
    readme = folder / "README.md"
    text = readme.read_text()
    _head, meta, body = text.split("---\n", 2)
    meta = yaml.safe_load(meta)
    sources = [
        e["split"] for e in meta["configs"][0]["data_files"] if isinstance(e["path"], str)
    ]  # not 'train'
    assert sources and len(sources) == len(meta["configs"][0]["data_files"]) - 1
    meta["configs"][0]["data_files"] = [{"split": "train", "path": [f"preferences/{s}-*" for s in sources]}]
    meta["configs"][1]["data_files"] = {s: f"derivations/{s}-*.parquet" for s in sources}
    meta["configs"].append({"config_name": "everything", "data_files": "derivations/*.parquet"})
    meta["dataset_info"] = [i for i in meta["dataset_info"] if i["config_name"] == "derivations"]
    readme.write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n{body}")
    card = read_card(folder)
    assert card.problems == () and card.default == "preferences"
    assert card.configs["preferences"] == {"train": [f"preferences/{s}-*" for s in sources]}
    built = read_folder(folder, manifest=False)
    assert built.failures == []
    rows = {(s.config, s.split): s.table.num_rows for s in built.splits}
    assert rows[("preferences", "train")] == 72 and rows[("everything", "train")] == 144
    assert sum(n for (c, _), n in rows.items() if c == "derivations") == 144


def test_a_card_that_declares_a_split_without_data_fails(built_spl, tmp_path, capsys):
    folder = copy_build(built_spl, tmp_path / "ghost")
    meta = read_card(folder).meta
    meta["configs"][1]["data_files"].append({"split": "ghost", "path": "derivations/ghost-*"})
    body = (folder / "README.md").read_text().split("---\n", 2)[2]
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n{body}")
    code, out = _audit(capsys, str(folder), "--no_manifest")
    assert (
        code == 1
        and "derivations/ghost: no file matches 'derivations/ghost-*' (a declared data file is missing)"
        in out["failures"]
    )


def test_an_unreadable_parquet_file_is_a_failure_not_a_traceback(built_spl, tmp_path, capsys):
    folder = copy_build(built_spl, tmp_path / "broken")
    (folder / SPL_FILE).write_bytes((folder / SPL_FILE).read_bytes()[:100])
    code, out = _audit(capsys, str(folder))
    assert code == 1
    assert any(
        f.startswith(f"derivations/ultrachat: {SPL_FILE} is not a readable parquet file")
        for f in out["failures"]
    )


def test_paths_that_are_not_builds_are_clear_errors(tmp_path, capsys, monkeypatch):
    import spl_hf.audit.hub as hub

    def no_network(*args, **kwargs):
        raise AssertionError("a local path must never be sent to the Hub")

    monkeypatch.setattr(hub, "download_snapshot", no_network)
    assert main(["audit", str(tmp_path / "nosuch" / "dir")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["audit", "nosuch/dir"]) == 2
    assert "give --revision" in capsys.readouterr().err
    afile = tmp_path / "afile.txt"
    afile.write_text("x")
    assert main(["audit", str(afile)]) == 2
    assert "not a folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["audit", str(tmp_path / "empty")]) == 2
    assert "no README.md" in capsys.readouterr().err


def test_load_built_refuses_an_incomplete_folder(built_spl, tmp_path):
    from spl_hf.audit.load import load_built

    assert sum(s.table.num_rows for s in load_built(str(built_spl), "derivations")) == 144
    folder = copy_build(built_spl, tmp_path / "incomplete")
    (folder / SPL_FILE).unlink()
    with pytest.raises(ValueError, match="derivations/ultrachat: no file matches"):
        load_built(str(folder))
    assert pq.read_metadata(built_spl / SPL_FILE).num_rows == 48


def test_two_folders_with_the_same_name_are_each_read_from_their_own_files(built_spl, tmp_path, capsys):
    """The cached reader mixed up folders by name: a partial 'out' spoiled the audit of a complete one."""
    partial = copy_build(built_spl, tmp_path / "a" / "out")
    for p in sorted((partial / "preferences").glob("*.parquet"))[1:]:
        p.unlink()
    complete = copy_build(built_spl, tmp_path / "b" / "out")
    assert _audit(capsys, str(partial))[0] == 1
    code, out = _audit(capsys, str(complete))
    assert code == 0 and out["rows"] == 216 and out["failures"] == []


def test_a_config_with_one_source_is_read_once_not_skipped_as_its_own_union(tmp_path):
    """With one source, a config's split and its `train` union list the same files: the split is read."""
    from spl_hf.audit.spl.folder import audit_spl_path
    from spl_hf.build import SPLBuildConfig, build_spl
    from spl_hf.build.spl import _sample
    from spl_hf.derive.pairs import read_jsonl

    prompts = [p for p in read_jsonl(_sample("spl_prompts.jsonl")) if p["source"] == "ultrachat"]
    ids = {p["prompt_id"] for p in prompts}
    for name, rows in (
        ("p.jsonl", prompts),
        ("c.jsonl", [c for c in read_jsonl(_sample("spl_candidates.jsonl")) if c["prompt_id"] in ids]),
    ):
        (tmp_path / name).write_text(
            "".join(json.dumps({k: v for k, v in r.items() if k != "_line"}) + "\n" for r in rows)
        )
    result = build_spl(
        SPLBuildConfig(
            prompts=str(tmp_path / "p.jsonl"),
            candidates=str(tmp_path / "c.jsonl"),
            output_dir=str(tmp_path / "ds"),
        )
    )
    built = read_folder(tmp_path / "ds")
    assert built.failures == []
    read = {(s.config, s.split): s.table.num_rows for s in built.splits}
    assert read == {("preferences", "ultrachat"): result.labeled, ("derivations", "ultrachat"): result.total}
    assert audit_spl_path(tmp_path / "ds").rules.rows == result.labeled + result.total
