"""Naming source files in a recipe: 'source=path', 'source=org/name@sha' (a pinned Hub id) or 'sample'."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spl_hf.errors import SplHfError
from spl_hf.release.config import parse_assignments
from spl_hf.release.stages import fingerprint
from spl_hf.sources import is_hub_id


@dataclass(frozen=True)
class SourceSpec:
    source: str
    location: str  # local path or Hub id
    revision: str | None

    @property
    def is_local(self) -> bool:
        return Path(self.location).exists()

    @property
    def pinned(self) -> bool:
        return self.is_local or self.revision is not None

    def identity(self) -> str:
        """What the stage key hashes: the file's bytes, or the Hub id at its pinned commit."""
        if self.is_local:
            return f"file:{fingerprint(self.location)}"
        return f"hub:{self.location}@{self.revision or 'unpinned'}"


def parse_sources(
    entries: list[str], registry: dict, samples: dict[str, Path], what: str
) -> list[SourceSpec]:
    """Validate recipe entries against the adapter registry; 'sample' expands to the shipped samples."""
    if list(entries) == ["sample"]:
        return [SourceSpec(s, str(p), None) for s, p in samples.items()]
    specs = []
    for source, value in parse_assignments(list(entries), what).items():
        if source not in registry:
            raise SplHfError(f"{what}: unknown source {source!r}; known: {', '.join(registry)}")
        if value == "sample":
            if source not in samples:
                raise SplHfError(f"{what}: no shipped sample for {source!r}")
            value = str(samples[source])
        location, _, revision = value.partition("@")
        spec = SourceSpec(source, location, revision or None)
        if not spec.is_local and not is_hub_id(location):
            raise FileNotFoundError(f"{what}: {source}: {location} does not exist")
        specs.append(spec)
    return specs
