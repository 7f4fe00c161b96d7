"""Naming source files in a recipe: 'source=path', 'source=org/name@sha' (a pinned Hub id), 'sample',
or an entry that names the adapter, the file, the source name and a column mapping.

A recipe's pool (or prompt-set) list may hold mappings::

    pools:
      - pku_train=PKU-Alignment/PKU-SafeRLHF@<sha>
      - {source: hh_test, adapter: hh_train, path: data/hh-test.jsonl.gz}
      - {source: stack_pairs, adapter: preference, path: se.parquet, license: cc-by-sa-4.0,
         columns: {prompt: question, chosen: response_j, rejected: response_k}}

``source`` is the name the rows, splits and card use; ``adapter`` (default: ``source`` when that is
a built-in adapter, else the generic ``preference`` or ``prompts``) reads the file; ``columns`` maps
what the adapter reads to the file's columns; ``category`` (benign, over-refusal-prone, harmful,
mixed) says what the prompts are, and reaches the rows (``source_category``), the card and the
decontamination tables; a renamed or generic source without one is "unknown". On the command line
the same entry is a JSON object (``--pools '{"source": "hh_test", ...}'``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError, did_you_mean
from spl_hf.release.spl_settings import parse_assignments
from spl_hf.release.stages import fingerprint
from spl_hf.sources import is_hub_id

_ENTRY_KEYS = {"source", "adapter", "path", "columns", "license", "revision", "category"}


class PoolEntryError(SplHfError):
    """A pool or prompt-set entry of a recipe that cannot be used; the message names it."""


@dataclass(frozen=True)
class SourceSpec:
    source: str  # the source name the rows carry
    location: str  # local path or Hub id
    revision: str | None
    adapter: str | None = None  # the adapter that reads it, when not the source name itself
    columns: tuple[tuple[str, str], ...] = ()  # what the adapter reads -> the file's column
    license: str | None = None
    category: str | None = None  # declared in the entry (None: the adapter's, or unknown when renamed)

    @property
    def is_local(self) -> bool:
        return Path(self.location).exists()

    @property
    def pinned(self) -> bool:
        return self.is_local or self.revision is not None

    @property
    def reader(self) -> str:
        """The adapter's name (``read_pool``'s first argument)."""
        return self.adapter or self.source

    def read_kwargs(self) -> dict[str, Any]:
        """The source name, mapping and licence ``read_pool``/``read_prompt_pool`` take."""
        return {
            "name": self.source,
            "columns": self.columns,
            "license": self.license,
            **({"category": self.category} if self.category else {}),
        }

    def identity(self) -> str:
        """What the stage key hashes: the file's bytes, or the Hub id at its pinned commit (and how it is read)."""
        where = (
            f"file:{fingerprint(self.location)}"
            if self.is_local
            else f"hub:{self.location}@{self.revision or 'unpinned'}"
        )
        if self.adapter is None and not self.columns and self.license is None and self.category is None:
            return where  # a plain 'source=path' entry keeps the key it always had
        how = {"adapter": self.reader, "columns": dict(self.columns), "license": self.license}
        if self.category is not None:
            how["category"] = self.category
        return f"{where} {json.dumps(how, sort_keys=True)}"


def _entry(value: Any, what: str) -> Mapping[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise PoolEntryError(f"{what}: {value[:80]!r} is not a JSON object ({exc.msg})") from None
    if not isinstance(value, Mapping):
        raise PoolEntryError(f"{what}: an entry must be 'source=path' or a mapping, got {value!r}")
    unknown = sorted(set(map(str, value)) - _ENTRY_KEYS)
    if unknown or "source" not in value or "path" not in value:
        raise PoolEntryError(
            f"{what}: entry {dict(value)!r} needs 'source' and 'path' (and may give adapter, columns, "
            f"license, revision, category){'; unknown: ' + ', '.join(unknown) if unknown else ''}"
        )
    return value


def _mapped_spec(value: Any, registry: dict, samples: dict[str, Path], what: str) -> SourceSpec:
    """A mapping entry: the adapter must be known, the name valid, the mapping well-formed."""
    from spl_hf.sources import GENERIC, check_category, known_adapters, parse_columns, resolve_adapter

    entry = _entry(value, what)
    kind = registry_kind(registry)
    generic = next(n for n, a in GENERIC.items() if a.kind == kind)
    source = str(entry["source"])
    adapter = str(entry.get("adapter") or (source if source in registry else generic))
    known = known_adapters(kind)
    if adapter not in known:
        raise PoolEntryError(
            f"{what}: {source}: unknown adapter {adapter!r}{did_you_mean(adapter, known)}; known: {', '.join(known)}"
        )
    category = check_category(entry.get("category"), f"{what}: {source}: category")
    resolve_adapter(adapter, source, entry.get("license"), category)  # a bad source name fails here
    location = str(entry["path"])
    if location == "sample":
        if adapter not in samples:
            raise PoolEntryError(f"{what}: no shipped sample for {adapter!r}")
        location = str(samples[adapter])
    revision = entry.get("revision")
    if revision is None and "@" in location and not Path(location).exists():
        location, _, revision = location.partition("@")
    return SourceSpec(
        source,
        location,
        str(revision) if revision else None,
        adapter if adapter != source else None,
        parse_columns(entry.get("columns"), f"{what}: {source}: columns"),
        str(entry["license"]) if entry.get("license") else None,
        category,
    )


def registry_kind(registry: dict) -> str:
    return next((getattr(a, "kind", "") for a in registry.values()), "")


def _plain_entries(entries: list[Any]) -> tuple[list[str], list[Any]]:
    plain = [e for e in entries if isinstance(e, str) and not e.lstrip().startswith("{")]
    return plain, [e for e in entries if e not in plain]


def parse_sources(
    entries: list[Any], registry: dict, samples: dict[str, Path], what: str
) -> list[SourceSpec]:
    """Validate recipe entries against the adapter registry; 'sample' expands to the shipped samples."""
    from spl_hf.sources import GENERIC

    if list(entries) == ["sample"]:
        return [SourceSpec(s, str(p), None) for s, p in samples.items()]
    plain, mapped = _plain_entries(list(entries))
    specs = []
    for source, value in parse_assignments(plain, what).items():
        if source not in registry:
            generic = next(n for n, a in GENERIC.items() if a.kind == registry_kind(registry))
            raise PoolEntryError(
                f"{what}: unknown source {source!r}{did_you_mean(source, list(registry))}; known: "
                f"{', '.join(registry)}. A file of your own is a mapping: {{source: {source}, adapter: "
                f"{generic}, path: {value}, columns: {{...}}, category: harmful}} (docs/builds.md)"
            )
        if value == "sample":
            if source not in samples:
                raise PoolEntryError(f"{what}: no shipped sample for {source!r}")
            value = str(samples[source])
        location, _, revision = value.partition("@")
        specs.append(SourceSpec(source, location, revision or None))
    specs += [_mapped_spec(value, registry, samples, what) for value in mapped]
    names = [s.source for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise PoolEntryError(f"{what}: source name(s) {', '.join(twice)} given twice")
    for spec in specs:
        if not spec.is_local and not is_hub_id(spec.location):
            where = (
                "" if Path(spec.location).is_absolute() else f" (relative to the working folder {Path.cwd()})"
            )
            raise FileNotFoundError(f"{what}: {spec.source}: {spec.location} does not exist{where}")
    return specs


def preview_sources(specs: list[SourceSpec], options: Any) -> list[dict[str, Any]]:
    """A dry run's read of each local file's first records, through its adapter and mapping.

    It fails as the real read would, naming the file (a pool file in another format, a mapping onto
    a column the file lacks). A Hub id is not read, but asked for through the configured endpoint
    (``HF_ENDPOINT``): one that does not exist, or lacks the pinned revision, fails here as the read
    would in its first seconds.
    """
    from spl_hf.sources import preview

    out: list[dict[str, Any]] = []
    for spec in specs:
        if not spec.is_local:
            out.append({"source": spec.source, "read": hub_id_exists(spec)})
            continue
        report = preview(spec.reader, spec.location, options, **spec.read_kwargs())
        out.append(
            {
                "source": spec.source,
                "read": f"first {report.records_read} record(s): {report.rows_yielded} row(s), "
                f"{report.n_quarantined} quarantined",
            }
        )
    return out


def hub_id_exists(spec: SourceSpec) -> str:
    """What a dry run says of a Hub source: it exists (at its pinned revision) on the configured endpoint.

    Asks for the dataset's metadata only (no file is downloaded); with ``HF_HUB_OFFLINE`` set, nothing
    is asked and the plan says so.
    """
    import os

    import httpx
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    where = f"{spec.location}@{spec.revision}" if spec.revision else spec.location
    if constants.HF_HUB_OFFLINE:
        return f"{where}: a Hub id, not checked (HF_HUB_OFFLINE is set)"
    endpoint = os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    try:
        info = HfApi(endpoint=endpoint).dataset_info(spec.location, revision=spec.revision)
    except RevisionNotFoundError:
        raise PoolEntryError(
            f"{spec.source}: {spec.location} has no revision {spec.revision!r} on {endpoint}"
        ) from None
    except RepositoryNotFoundError:
        raise PoolEntryError(
            f"{spec.source}: no Hub dataset {spec.location!r} on {endpoint} (or HF_TOKEN cannot read it); "
            "a local file must exist at that path"
        ) from None
    except (HfHubHTTPError, httpx.HTTPError, OSError) as exc:
        raise PoolEntryError(
            f"{spec.source}: cannot check {where} on {endpoint} ({type(exc).__name__}: {exc}); "
            "set HF_HUB_OFFLINE=1 to plan without asking the Hub"
        ) from None
    return f"{where}: a Hub dataset on {endpoint} (commit {info.sha}), not read in a dry run"
