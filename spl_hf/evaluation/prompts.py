"""Prompt sets for refusal evaluation, read through the source adapters.

A set is named by its prompt adapter (``or_bench_hard_1k``, ``or_bench_toxic``, ``xstest``, ...) and
read from a local file in the source's own layout, from the Hub (the adapter's dataset, optionally at
a pinned revision), or from the small invented sample shipped with spl_hf (``sample``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError

DEFAULT_SETS = ("or_bench_hard_1k", "or_bench_toxic")
SAMPLE = "sample"


@dataclass(frozen=True)
class EvalPrompt:
    prompt_id: str
    row_id: int
    text: str
    category: str  # the source's category (over_refusal_prone, harmful, ...)
    source_label: str | None  # the source's own classification (OR-Bench category)


@dataclass(frozen=True)
class PromptSet:
    name: str
    location: str  # file path, hub description, or "sample:<file>"
    prompts: tuple[EvalPrompt, ...]
    quarantined: tuple[dict[str, Any], ...]  # malformed or duplicate records with their reason


def sample_path(name: str) -> Path:
    from spl_hf.sources import eval_sample_paths

    samples = eval_sample_paths()
    if name not in samples:
        raise SplHfError(f"no shipped sample for prompt set {name!r}; samples exist for {', '.join(samples)}")
    return samples[name]


def parse_prompt_sets(spec: str, default_location: str | None = None) -> list[tuple[str, str | None]]:
    """``name[=path_or_repo_or_sample],...`` -> [(name, location or default_location)]."""
    from spl_hf.sources import PROMPT_SOURCES

    out: list[tuple[str, str | None]] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, _, loc = part.partition("=")
        name = name.strip()
        if name not in PROMPT_SOURCES:
            raise SplHfError(f"--prompts: unknown prompt set {name!r}; known: {', '.join(PROMPT_SOURCES)}")
        if any(n == name for n, _ in out):
            raise SplHfError(f"--prompts: {name!r} given twice")
        out.append((name, loc.strip() or default_location))
    if not out:
        raise SplHfError("--prompts: no prompt set named")
    return out


def load_prompt_set(
    name: str, location: str | None = None, revision: str | None = None, limit: int | None = None
) -> PromptSet:
    """Read prompt set ``name`` from ``location`` (file, Hub id, ``sample``; None = the adapter's Hub dataset)."""
    from spl_hf.sources import PROMPT_SOURCES, SourceOptions, read_prompt_pool

    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        # rows[:-1] would silently drop the last prompt and report the rate over the rest
        raise SplHfError(f"limit must be a number of prompts of at least 1, got {limit!r}")
    adapter = PROMPT_SOURCES.get(name)
    if adapter is None:
        raise SplHfError(f"unknown prompt set {name!r}; known: {', '.join(PROMPT_SOURCES)}")
    if location == SAMPLE:
        path: str = str(sample_path(name))
        shown = f"sample:{Path(path).name}"
    elif location is None:
        path = adapter.hub.repo
        shown = f"hf://datasets/{adapter.hub.describe()}" + (f" revision={revision}" if revision else "")
    else:
        path = location
        shown = location
    result = read_prompt_pool(name, path, SourceOptions(revision=revision))
    rows = result.prompts.to_list()
    if limit is not None:
        rows = rows[:limit]
    prompts = tuple(
        EvalPrompt(r["prompt_id"], int(r["row_id"]), r["prompt"], r["category"], r["source_label"])
        for r in rows
    )
    quarantined = tuple(q.to_dict() for q in result.quarantine)
    if not prompts:
        raise SplHfError(f"prompt set {name} ({shown}): no usable prompts ({len(quarantined)} quarantined)")
    return PromptSet(name, shown, prompts, quarantined)
