"""What a dataset card declares: its configs, each split's data-file patterns, and expected row counts.

Parsed from the README's YAML front matter the way the Hub reads it: ``configs[].data_files`` is a
pattern, a list of patterns (one ``train`` split), a mapping split -> pattern(s), or a list of
``{split, path}`` entries whose ``path`` is one pattern or a list of them. ``dataset_info`` gives
``num_examples`` per (config, split) where the build recorded it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from spl_hf.dataset.frontmatter import FrontMatterError, read_front_matter


@dataclass(frozen=True)
class CardLayout:
    """Configs (in card order) -> split (in card order) -> data-file patterns, plus recorded row counts."""

    configs: dict[str, dict[str, list[str]]]
    num_examples: dict[tuple[str, str], int] = field(default_factory=dict)
    default: str | None = None
    problems: tuple[str, ...] = ()  # declarations that could not be read (each a failure)
    meta: dict = field(default_factory=dict)


def front_matter(readme: Path) -> dict:
    """The README's YAML front matter; raises FrontMatterError naming the file when it is not readable."""
    meta = read_front_matter(readme)  # the one reader, with its size/depth/alias limits
    if meta is None:
        raise FrontMatterError(f"{readme}: no YAML front matter (a dataset card starts with a '---' block)")
    return meta


def _patterns(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _data_files(name: str, spec: object, problems: list[str]) -> dict[str, list[str]]:
    """One config's ``data_files`` in any of the Hub's forms, as split -> patterns."""
    where = f"config {name!r}: data_files"
    plain = _patterns(spec)
    if plain is not None:
        return {"train": plain}
    out: dict[str, list[str]] = {}
    if isinstance(spec, dict):
        items = list(spec.items())
    elif isinstance(spec, list):
        items = []
        for entry in spec:
            if not isinstance(entry, dict) or "split" not in entry or "path" not in entry:
                problems.append(f"{where}: entry {entry!r} is not a {{split, path}} mapping")
                continue
            items.append((entry["split"], entry["path"]))
    else:
        problems.append(f"{where}: expected a pattern, a list or a mapping, got {type(spec).__name__}")
        return out
    for split, path in items:
        pats = _patterns(path)
        if not isinstance(split, str) or pats is None:
            problems.append(
                f"{where}: split {split!r} needs a pattern or a non-empty list of patterns, got {path!r}"
            )
            continue
        if split in out:
            problems.append(f"{where}: split {split!r} is declared twice")
            continue
        out[split] = pats
    return out


def _infos(meta: dict, problems: list[str]) -> dict[tuple[str, str], int]:
    info = meta.get("dataset_info")
    if info is None:
        return {}
    entries = [info] if isinstance(info, dict) else info if isinstance(info, list) else None
    if entries is None:
        problems.append("dataset_info: expected a mapping or a list of mappings")
        return {}
    counts: dict[tuple[str, str], int] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            problems.append(f"dataset_info: entry {entry!r} is not a mapping")
            continue
        config = entry.get("config_name", "default")
        for split in entry.get("splits") or []:
            if not isinstance(split, dict) or not isinstance(split.get("name"), str):
                problems.append(f"dataset_info {config!r}: split entry {split!r} has no name")
                continue
            n = split.get("num_examples")
            if n is None:
                continue
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                problems.append(f"dataset_info {config!r}/{split['name']}: num_examples {n!r} is not a count")
                continue
            counts[(str(config), split["name"])] = n
    return counts


def read_card(folder: Path) -> CardLayout:
    """The layout declared by ``folder/README.md``; raises FileNotFoundError/ValueError when there is no card."""
    readme = folder / "README.md"
    if not readme.is_file():
        raise FileNotFoundError(f"{folder}: no README.md: a dataset folder declares its configs in its card")
    meta = front_matter(readme)
    problems: list[str] = []
    configs: dict[str, dict[str, list[str]]] = {}
    default = None
    entries = meta.get("configs")
    if not isinstance(entries, list) or not entries:
        problems.append("the card declares no configs (README 'configs:' list)")
        entries = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("config_name"), str):
            problems.append(f"configs: entry {entry!r} has no config_name")
            continue
        name = entry["config_name"]
        if name in configs:
            problems.append(f"configs: {name!r} is declared twice")
            continue
        if "data_files" not in entry:
            problems.append(f"config {name!r}: no data_files")
        configs[name] = _data_files(name, entry.get("data_files"), problems)
        if entry.get("default"):
            default = name
    counts = _infos(meta, problems)
    for config, split in counts:
        if config not in configs:
            problems.append(f"dataset_info names config {config!r}, which 'configs' does not declare")
        elif split not in configs[config]:
            problems.append(f"dataset_info names split {config}/{split}, which its data_files do not declare")
    return CardLayout(configs, counts, default, tuple(problems), meta)


def card_configs(folder: Path) -> tuple[list[str], str | None, str | None]:
    """Config names in the card, the default config and the split a DPO user loads from it."""
    readme = folder / "README.md"
    meta = read_front_matter(readme) if readme.is_file() else None
    entries = (meta or {}).get("configs") or []
    names = [e["config_name"] for e in entries]
    default = next((e for e in entries if e.get("default")), entries[0] if entries else None)
    if default is None:
        return names, None, None
    splits = [d["split"] for d in default.get("data_files") or [] if isinstance(d, dict)]
    split = "train" if "train" in splits else (splits[0] if splits else None)
    return names, default["config_name"], split
