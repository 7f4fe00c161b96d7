"""Stage keys derived from what each stage reads (spl_hf.release.reads), field by field of every config.

Every field of every config of both releases is declared by a stage (keyed, or read only to run) or
is a run setting; changing a keyed field changes its stage's key; a stage that reads an undeclared
field fails; and a recorded SPL release rerun with every field its write stage does not read changed
is skipped whole and leaves the release's bytes identical.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from spl_hf.assign import AssignConfig
from spl_hf.backends import GenerationConfig, JudgeConfig
from spl_hf.decontam import DecontamConfig
from spl_hf.release import spl as spl_safety
from spl_hf.release import tenets as tenet_dpo
from spl_hf.release.config import SPLReleaseConfig, TenetReleaseConfig
from spl_hf.release.reads import RUN_SETTINGS, Guarded, Reads, UndeclaredRead, guarded
from spl_hf.sources import SourceOptions
from tests.conftest import REPO

RELEASES = {
    "tenets": (
        tenet_dpo.READS,
        TenetReleaseConfig,
        {
            "assign": AssignConfig,
            "judge": JudgeConfig,
            "decontam": DecontamConfig,
            "source_options": SourceOptions,
        },
    ),
    "spl": (
        spl_safety.READS,
        SPLReleaseConfig,
        {"generation": GenerationConfig, "decontam": DecontamConfig, "source_options": SourceOptions},
    ),
}


def _other(value: Any) -> Any:
    """A value unlike ``value`` (of its kind), for a field changed in place (no validation runs)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2 + 0.001
    if isinstance(value, str):
        return value + "-changed"
    if isinstance(value, list):
        return [*value, "changed"]
    if isinstance(value, dict):
        return {**value, "changed": 1}
    return "changed"  # None


def _owner(cfg_cls: type, subs: dict[str, type]) -> SimpleNamespace:
    cfg = cfg_cls.__new__(cfg_cls)  # defaults, no validation: only the values are read
    for f in dataclasses.fields(cfg_cls):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        setattr(cfg, f.name, None if default is dataclasses.MISSING else default)
    owner = SimpleNamespace(cfg=cfg)
    for name, cls in subs.items():
        sub = cls.__new__(cls)
        for f in dataclasses.fields(cls):
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            object.__setattr__(sub, f.name, 1 if default is dataclasses.MISSING else default)  # may be frozen
        setattr(owner, name, sub)
    return owner


@pytest.mark.parametrize("kind", RELEASES)
def test_every_field_of_every_config_is_declared_by_a_stage_or_is_a_run_setting(kind):
    reads, cfg_cls, subs = RELEASES[kind]
    declared = set(RUN_SETTINGS)
    for r in reads.values():
        declared |= set(r.fields) | set(r.runs_only)
        declared |= {f"{name}.{f.name}" for name in r.configs for f in dataclasses.fields(subs[name])}
    fields = {f.name for f in dataclasses.fields(cfg_cls)}
    fields |= {f"{name}.{f.name}" for name, cls in subs.items() for f in dataclasses.fields(cls)}
    assert sorted(fields - declared) == []
    assert sorted(declared - fields) == []  # only real fields are declared
    assert not (set(RUN_SETTINGS) & {f for r in reads.values() for f in r.fields})


@pytest.mark.parametrize("kind", RELEASES)
def test_changing_a_keyed_field_changes_its_stage_key(kind):
    reads, cfg_cls, subs = RELEASES[kind]
    checked = 0
    for stage, r in reads.items():
        owner = _owner(cfg_cls, subs)
        base = r.values(owner)
        for name in r.fields:
            changed = copy.copy(owner)
            changed.cfg = copy.copy(owner.cfg)
            setattr(changed.cfg, name, _other(getattr(owner.cfg, name)))
            assert r.values(changed) != base, (stage, name)
            checked += 1
        for sub in r.configs:
            for f in dataclasses.fields(subs[sub]):
                if f.name in r.allowed(sub):
                    continue
                changed = copy.copy(owner)
                setattr(changed, sub, copy.copy(getattr(owner, sub)))
                value = _other(getattr(getattr(owner, sub), f.name))
                object.__setattr__(getattr(changed, sub), f.name, value)
                assert r.values(changed) != base, (stage, f"{sub}.{f.name}")
                checked += 1
    assert checked > 40


def test_a_stage_that_reads_an_undeclared_field_fails_naming_it():
    owner = _owner(TenetReleaseConfig, {"assign": AssignConfig})
    owner.SUBCONFIGS = ("assign",)

    def stage(_out: Path) -> dict:
        assert owner.cfg.pools == ["sample"]  # declared
        owner.assign.threshold  # noqa: B018  not declared: the stage takes no assign setting
        return {}

    run = guarded(Reads(("pools",)), owner, "read", stage)
    with pytest.raises(UndeclaredRead, match=r"'read' stage read AssignConfig\.threshold"):
        run(Path("."))
    assert not isinstance(owner.cfg, Guarded) and not isinstance(owner.assign, Guarded)  # restored
    with pytest.raises(UndeclaredRead, match=r"TenetReleaseConfig\.model"):
        guarded(Reads(("pools",)), owner, "read", lambda _o: owner.cfg.model)(Path("."))
    # a runs_only field may be read and is not keyed
    assert guarded(Reads(runs_only=("threads",)), owner, "x", lambda _o: owner.cfg.threads)(Path(".")) == 1
    assert "threads" not in Reads(runs_only=("threads",)).values(owner)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_recorded_spl_release_with_every_unread_field_changed_is_skipped_with_identical_bytes(
    tmp_path, capsys
):
    """The recorded release runs only write and audit: every other setting (model, generation, draw,
    decontamination, labeler) changed at once must leave every stage skipped and the bytes identical."""
    import json

    from spl_hf.cli import main

    base = [
        "release",
        "spl",
        "--config",
        str(REPO / "recipes" / "spl" / "sample.yaml"),
        "--run_dir",
        str(tmp_path / "run"),
        "--output_dir",
        str(tmp_path / "ds"),
    ]
    assert main(base) == 0
    before = _files(tmp_path / "ds")
    unread = {
        "draw_seed": "5",
        "labeler_mode": "json",
        "max_length": "99",
        "dtype": "float32",
        "threads": "2",
        "min_label_mass": "0.4",
        "k": "2",
        "do_sample": None,
        "max_new_tokens": "17",
        "seed": "3",
        "temperature": "0.5",
        "ngram_size": "9",
        "overlap_threshold": "0.3",
        "results_dir": str(tmp_path / "elsewhere"),
        "accept_partial": None,
    }
    capsys.readouterr()
    flags = [x for k, v in unread.items() for x in ((f"--{k}",) if v is None else (f"--{k}", v))]
    assert main([*base, *flags, "--overwrite"]) == 0
    out = capsys.readouterr().out
    stages = json.loads(out[out.rindex('{\n  "output_dir"') :])["stages"]
    assert stages == {"write": "skipped", "audit": "skipped"}
    assert _files(tmp_path / "ds") == before
    # a field the write stage reads reruns it
    assert main([*base, "--pretty_name", "Another title", "--overwrite"]) == 0
    out = capsys.readouterr().out
    stages = json.loads(out[out.rindex('{\n  "output_dir"') :])["stages"]
    assert list(stages) == ["write", "audit"] and "skipped" not in stages.values()
    assert b"Another title" in _files(tmp_path / "ds")["README.md"]
