"""The dataset a release writes lives outside its stage folder; these tie the two together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spl_hf.release.config import ReleaseSettings
from spl_hf.release.stages import fingerprint

WRITTEN = "written_manifest.sha256"


def manifest_hash(folder: str) -> str | None:
    manifest = Path(folder) / "MANIFEST.sha256"
    return fingerprint(manifest) if manifest.is_file() else None


def content(stage: Any, name: str) -> str:
    """The content hash of a file a finished stage wrote: what later stage keys depend on."""
    return fingerprint(Path(stage.path) / name)


def written_here(stage_dir: Path, output_dir: str) -> bool:
    """Whether ``output_dir`` still holds exactly the build this write stage made."""
    recorded = stage_dir / WRITTEN
    return recorded.is_file() and recorded.read_text(encoding="utf-8") == (manifest_hash(output_dir) or "")


def check_output(cfg: ReleaseSettings, inputs: list[str]) -> None:
    """The output rules of ``spl_hf.outputs``; a build this run wrote itself may be replaced."""
    from spl_hf.outputs import guard_dir

    ours = any(written_here(d, cfg.output_dir) for d in Path(cfg.run_dir, "stages").glob("write-*"))
    guard_dir(cfg.output_dir, overwrite=cfg.overwrite or ours, inputs=inputs)
