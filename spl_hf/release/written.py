"""The dataset a release writes lives outside its stage folder; these tie the two together.

A rerun into the same ``output_dir`` resumes only when it would make the same release: the run
folder records the settings of the release it wrote last (:data:`RELEASED`), and a rerun with other
settings writes nothing and stops, naming what changed, unless ``--overwrite`` was given.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from spl_hf.files import write_json, write_text
from spl_hf.release.config import ReleaseSettings
from spl_hf.release.stages import fingerprint

WRITTEN = "written_manifest.sha256"
RELEASED = "released.json"  # in run_dir: output_dir, its manifest hash and the settings that made it
# Settings that say how to run, not what is released.
_NOT_RELEASE_SETTINGS = frozenset({"overwrite", "dry_run", "run_dir", "results_dir", "private", "create_pr"})


def manifest_hash(folder: str) -> str | None:
    manifest = Path(folder) / "MANIFEST.sha256"
    return fingerprint(manifest) if manifest.is_file() else None


def content(stage: Any, name: str, optional: bool = False) -> str | None:
    """The content hash of a file a finished stage wrote: what later stage keys depend on.

    ``optional``: a file the stage may not have written (None then, instead of an error)."""
    path = Path(stage.path) / name
    return None if optional and not path.is_file() else fingerprint(path)


def written_here(stage_dir: Path, output_dir: str) -> bool:
    """Whether ``output_dir`` still holds exactly the build this write stage made."""
    recorded = stage_dir / WRITTEN
    return recorded.is_file() and recorded.read_text(encoding="utf-8") == (manifest_hash(output_dir) or "")


def record_written(stage_dir: Path, output_dir: str) -> None:
    """Record in the write stage's folder the build it just made in ``output_dir`` (see written_here)."""
    write_text(stage_dir / WRITTEN, manifest_hash(output_dir) or "")


def publish_output(cfg: ReleaseSettings, stage_dir: Path, allow_empty: bool = False) -> dict[str, Any]:
    """The publish stage: ``output_dir`` to ``repo_id``, its result recorded as ``publish.json``."""
    from spl_hf.hub import publish

    result = publish(
        cfg.output_dir,
        cfg.repo_id,
        revision=cfg.revision,
        private=cfg.private,
        create_pr=cfg.create_pr,
        allow_empty=allow_empty,
    )
    write_json(stage_dir / "publish.json", {**result.to_json(), "load": result.load_line()}, ascii_only=True)
    return {"repo_id": result.repo_id, "commit_sha": result.commit_sha}


def release_settings(cfg: ReleaseSettings, *configs: Any) -> dict[str, Any]:
    """Every setting that shapes the release (the release's own, then each further config's), as JSON."""
    blocks = {type(c).__name__: asdict(c) for c in (cfg, *configs) if is_dataclass(c)}
    blocks[type(cfg).__name__] = {
        k: v for k, v in blocks[type(cfg).__name__].items() if k not in _NOT_RELEASE_SETTINGS
    }
    return json.loads(json.dumps(blocks, sort_keys=True, default=str))


def _earlier(cfg: ReleaseSettings) -> dict[str, Any] | None:
    """This run folder's record of the release now in ``output_dir``; None when it made another one."""
    try:
        record = json.loads((Path(cfg.run_dir) / RELEASED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    same_place = isinstance(record, dict) and record.get("output_dir") == os.path.realpath(cfg.output_dir)
    made_it = same_place and record.get("manifest") == manifest_hash(cfg.output_dir)
    return record if made_it and manifest_hash(cfg.output_dir) else None


def _changed(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    names = []
    for block in sorted(set(before) | set(now)):
        a, b = before.get(block, {}), now.get(block, {})
        names += [
            f"{k} ({a.get(k)!r} -> {b.get(k)!r})" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)
        ]
    return names


def check_output(cfg: ReleaseSettings, inputs: list[str], *configs: Any) -> None:
    """The output rules of ``spl_hf.outputs``; a release this run folder made with the same settings resumes.

    Without ``overwrite``, an ``output_dir`` holding an earlier release is replaced only by a rerun
    with the same settings (``configs``: the assignment, judge and decontamination settings); a
    rerun with other settings raises ``OutputError`` naming them, before any stage runs.
    """
    from spl_hf.outputs import OutputError, guard_dir

    ours = False
    earlier = None if cfg.overwrite else _earlier(cfg)
    if earlier is not None:
        changed = _changed(earlier.get("settings") or {}, release_settings(cfg, *configs))
        if changed:
            raise OutputError(
                f"{cfg.output_dir}: holds the release this run folder made with other settings "
                f"(changed: {'; '.join(changed[:6])}); pass --overwrite to replace it, or choose "
                "another output_dir"
            )
        ours = True
    guard_dir(cfg.output_dir, overwrite=cfg.overwrite or ours, inputs=inputs)


def record_output(cfg: ReleaseSettings, *configs: Any) -> None:
    """Note in the run folder which release now sits in ``output_dir`` and the settings that made it."""

    record = {
        "output_dir": os.path.realpath(cfg.output_dir),
        "manifest": manifest_hash(cfg.output_dir),
        "settings": release_settings(cfg, *configs),
    }
    write_json(Path(cfg.run_dir) / RELEASED, record, sort_keys=True)
