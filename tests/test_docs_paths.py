"""Documented commands and recipe defaults point at folders that hold what they need: a local
``dataset_name`` (in a training recipe, train.py's docstring or a docs command) is the ``output_dir`` of
a release recipe, i.e. a dataset folder, never its run folder."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
LOCAL = re.compile(r"--dataset_name\s+(out/\S+)")


def _release_outputs() -> set[str]:
    out = set()
    for path in (REPO / "recipes").glob("*/*.yaml"):
        data = yaml.safe_load(path.read_text()) or {}
        if path.parent.name != "train" and isinstance(data.get("output_dir"), str):
            out.add(data["output_dir"])
    return out


def _documented_local_datasets() -> list[tuple[str, str]]:
    found = []
    for path in [
        REPO / "train.py",
        REPO / "README.md",
        *(REPO / "docs").glob("*.md"),
        *(REPO / "recipes").rglob("*.yaml"),
    ]:
        found += [(path.name, m) for m in LOCAL.findall(path.read_text())]
    for path in (REPO / "recipes" / "train").glob("*.yaml"):
        name = (yaml.safe_load(path.read_text()) or {}).get("dataset_name")
        if isinstance(name, str) and name.startswith("out/"):
            found.append((path.name, name))
    return found


def test_every_local_dataset_named_in_docs_and_recipes_is_a_release_output():
    outputs = _release_outputs()
    found = _documented_local_datasets()
    assert found, "the demo training recipe names a local dataset"
    assert [f for f in found if f[1] not in outputs] == [], f"release recipes write {sorted(outputs)}"
