"""Every claim a release makes outside its rows is recomputed: a consistent forger (edit, then the
manifest regenerated with the package's own writer) is caught, and the failure names file and claim."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from spl_hf.audit import audit
from spl_hf.filehash import sha256_file
from spl_hf.manifest import MANIFEST, folder_files, write_manifest


def reman(folder: Path) -> None:
    """Regenerate MANIFEST.sha256 over every file with the package's own manifest writer."""
    write_manifest(folder, {f: sha256_file(folder / f) for f in folder_files(folder) if f != MANIFEST})


def edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=1) + "\n")


def bump(*keys: str, by: int = 7, where: tuple[str, ...] = ()):
    def edit(data: dict) -> None:
        for k in where:
            data = data[k]
        for k in keys:
            data[k] += by

    return edit


@pytest.fixture(scope="module")
def built_spl_decontam(tmp_path_factory) -> Path:
    """The sample built with a decontamination record (one removed prompt that is in no row)."""
    from spl_hf.build import SPLBuildConfig, build_spl
    from spl_hf.decontam import DecontamConfig

    root = tmp_path_factory.mktemp("spl_decontam")
    removed = [
        {
            "prompt_id": "p_removed",
            "heldout": "xstest",
            "heldout_prompt_id": "h1",
            "match": "near",
            "overlap": 0.93,
            "heldout_prompt": "a held-out prompt",
        }
    ]
    summary = {
        "rows_in": 101,
        "rows_kept": 100,
        "rows_removed": 1,
        "prompts_removed": 1,
        "removed_by_source": {"ultrachat": 1},
        "removed_by_heldout": {"xstest": 1},
        "removed_by_match": {"near": 1},
        "near_by_score": {},
        "heldout_prompts": {"xstest": 3},
        "config": DecontamConfig(heldout=["xstest"]).to_dict(),
    }
    import pyarrow as pa

    from spl_hf.decontam import near_by_score

    summary["near_by_score"] = near_by_score(
        pa.Table.from_pylist(removed), summary["config"]["overlap_threshold"]
    )
    record = root / "decontamination.json"
    record.write_text(json.dumps({"summary": summary, "removed": removed}))
    build_spl(SPLBuildConfig(output_dir=str(root / "ds"), decontamination=str(record)))
    return root / "ds"


def _caught(folder: Path, file: str, claim: str) -> None:
    reman(folder)
    report = audit(folder)
    assert report.manifest.ok  # the forger's manifest agrees: only the recomputation can tell
    named = [f for f in report.failures if f.startswith(file) and claim in f]
    assert not report.ok and named, report.failures


def _copy(src: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(src, tmp_path / "b"))


SPL_CASES = {
    # the reviewer's card forgery: counts and margin in card.json, then the README rendered from it
    "card_counts": ("card.json", "labeled", bump("labeled", "total", "margin", where=("kwargs",))),
    "card_quality_table": (
        "card.json",
        "label_quality_rows[0].n_items",
        lambda d: d["kwargs"]["label_quality_rows"][0].update(
            n_items=d["kwargs"]["label_quality_rows"][0]["n_items"] + 5
        ),
    ),
    "report_counts": ("build_report.json", "labeled", bump("labeled", "margin", by=3)),
    "report_splits": ("build_report.json", "splits", bump("xstest", by=3, where=("splits",))),
    "report_tables": ("build_report.json", "tables", bump("total_pairs", by=3, where=("tables",))),
}


@pytest.mark.parametrize("case", sorted(SPL_CASES))
def test_an_edited_spl_claim_fails_naming_file_and_claim(built_spl, tmp_path, case):
    file, claim, edit = SPL_CASES[case]
    folder = _copy(built_spl, tmp_path)
    assert audit(folder).ok
    edit_json(folder / file, edit)
    if file == "card.json":
        from spl_hf.dataset import regenerate_card

        regenerate_card(folder)  # `spl-hf card`: the README now shows the false counts too
    _caught(folder, file, claim)


def test_licence_readme_and_an_extra_file_are_each_caught(built_spl, tmp_path):
    folder = _copy(built_spl, tmp_path)
    (folder / "LICENSE.md").write_text("All rights reserved.\n")
    _caught(folder, "LICENSE.md", "licences of the released sources")
    shutil.copy(built_spl / "LICENSE.md", folder / "LICENSE.md")
    readme = folder / "README.md"
    readme.write_text(readme.read_text().replace("labeled", "lab3led", 1))
    _caught(folder, "README.md", "rendered from card.json")
    shutil.copy(built_spl / "README.md", readme)
    (folder / "notes.txt").write_text("trust me\n")
    _caught(folder, "notes.txt", "a file the audit does not check")


def test_judge_counts_of_an_spl_build_are_recomputed(built_spl_judge, tmp_path):
    folder = _copy(built_spl_judge, tmp_path)
    edit_json(folder / "build_report.json", bump("records", "not_judged", by=3, where=("judge",)))
    _caught(folder, "build_report.json", "judge.records")


def test_decontamination_counts_are_recomputed_from_its_records(built_spl_decontam, tmp_path):
    folder = _copy(built_spl_decontam, tmp_path)
    assert audit(folder).ok
    edit_json(folder / "decontamination.json", bump("prompts_removed", by=5, where=("summary",)))
    _caught(folder, "decontamination.json", "prompts_removed")
    shutil.copy(built_spl_decontam / "decontamination.json", folder / "decontamination.json")
    edit_json(folder / "build_report.json", bump("rows_in", "rows_kept", by=5, where=("decontamination",)))
    _caught(folder, "build_report.json", "decontamination.rows_in")


TENET_CASES = {
    "report_objective": ("build_report.json", "objective", lambda d: d.update(objective=99.0)),
    "report_rows": (
        "build_report.json",
        "rows_per_source",
        bump("hh_train", by=3, where=("rows_per_source",)),
    ),
    "card_objective": ("card.json", "objective", lambda d: d["kwargs"].update(objective=99.0)),
    "card_eligible": ("card.json", "eligible", bump("eligible", "judged", by=3, where=("kwargs",))),
    "card_quality_table": (
        "card.json",
        "judge_quality_card.sentence",
        lambda d: d["kwargs"]["judge_quality_card"].update(sentence="The judge is fair."),
    ),
}


@pytest.mark.parametrize("case", sorted(TENET_CASES))
def test_an_edited_tenet_claim_fails_naming_file_and_claim(built_tenets, tmp_path, case):
    file, claim, edit = TENET_CASES[case]
    folder = _copy(built_tenets, tmp_path)
    edit_json(folder / file, edit)
    if file == "card.json":
        from spl_hf.dataset import regenerate_card

        regenerate_card(folder)  # the README shows the forged entry too
    _caught(folder, file, claim)


def test_a_replaced_figure_is_caught(built_tenets, tmp_path):
    folder = _copy(built_tenets, tmp_path)
    png = folder / "judge_quality.png"
    data = bytearray(png.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one pixel byte of the compressed image
    png.write_bytes(bytes(data))
    _caught(folder, "judge_quality.png", "drawn again")


def test_a_release_stating_an_unchecked_entry_fails(built_tenets, tmp_path):
    folder = _copy(built_tenets, tmp_path)
    edit_json(folder / "build_report.json", lambda d: d.update(reviewed_by="an expert"))
    _caught(folder, "build_report.json", "reviewed_by is not an entry the audit checks")


def test_a_card_rendered_again_for_a_repo_id_still_audits(built_spl, tmp_path):
    from spl_hf.cli import main

    folder = _copy(built_spl, tmp_path)
    assert main(["card", str(folder), "--repo_id", "org/name"]) == 0
    assert "org/name" in (folder / "README.md").read_text()
    assert audit(folder).ok  # card.json records the repo id the README was rendered with
