"""Checks of an SPL release's settings that need no file read and no model.

:class:`~spl_hf.release.config.SPLReleaseConfig` runs them on construction, so a ``--dry_run``,
a recipe parse (:func:`spl_hf.recipes.parse_recipe`) and a real run refuse the same settings, with
the same one-line message, before anything is read or loaded.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError


def parse_assignments(entries: list[str], what: str) -> dict[str, str]:
    """'name=value' entries as a dict; names must be unique."""
    out: dict[str, str] = {}
    for entry in entries:
        name, sep, value = str(entry).partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise SplHfError(f"{what}: expected 'name=value', got {entry!r}")
        if name in out:
            raise SplHfError(f"{what}: {name!r} given twice")
        out[name] = value
    return out


def _fraction(value: str, what: str) -> Fraction:
    """A share in (0, 1] written as a decimal or a ratio ('0.7', '1007/1439'), kept exact."""
    try:
        share = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise SplHfError(f"{what}: expected a share such as 0.7 or 1007/1439, got {value!r}") from None
    if not 0 < share <= 1:
        raise SplHfError(f"{what}: must be above 0 and at most 1, got {value}")
    return share


def _positive_int(value: str, what: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise SplHfError(f"{what}: expected a whole number, got {value!r}") from None
    if n < 1:
        raise SplHfError(f"{what}: must be at least 1, got {n}")
    return n


def source_names(cfg: Any) -> list[str]:
    """The prompt sources a release names ('sample' stands for every shipped prompt sample)."""
    if list(cfg.prompt_sources) == ["sample"]:
        from spl_hf.sources import prompt_sample_paths

        return list(prompt_sample_paths())
    plain = [e for e in cfg.prompt_sources if isinstance(e, str) and not e.lstrip().startswith("{")]
    mapped = [_entry_source(e) for e in cfg.prompt_sources if e not in plain]
    return list(parse_assignments(plain, "prompt_sources")) + mapped


def _entry_source(entry: Any) -> str:
    """A mapping entry's source name (the entry itself is checked where the sources are parsed)."""
    import json

    if isinstance(entry, str):
        try:
            entry = json.loads(entry)
        except json.JSONDecodeError:
            raise SplHfError(f"prompt_sources: {entry[:80]!r} is not a JSON object") from None
    if not isinstance(entry, dict) or "source" not in entry:
        raise SplHfError(
            f"prompt_sources: an entry must be 'source=path' or a mapping with a source, got {entry!r}"
        )
    return str(entry["source"])


def _per_source(cfg: Any, key: str, parse: Any) -> dict[str, Any]:
    values = {k: parse(v, f"{key} {k}") for k, v in parse_assignments(getattr(cfg, key), key).items()}
    unknown = sorted(set(values) - set(source_names(cfg)))
    if unknown:
        raise SplHfError(f"{key}: {unknown} are not among prompt_sources")
    return values


def pool_sizes(cfg: Any) -> dict[str, int]:
    """``pool_sizes`` as source -> number of prompts drawn."""
    return _per_source(cfg, "pool_sizes", _positive_int)


def candidate_fractions(cfg: Any) -> dict[str, Fraction]:
    """``candidate_fraction`` as source -> exact share of drawn prompts that get candidates."""
    return _per_source(cfg, "candidate_fraction", _fraction)


def _check_recorded(cfg: Any) -> None:
    recorded = (cfg.recorded_prompts, cfg.recorded_candidates)
    if any(recorded) and not all(recorded):
        raise SplHfError("recorded_prompts and recorded_candidates go together")
    is_recorded = all(recorded)
    if cfg.recorded_verdicts and not is_recorded:
        raise SplHfError(
            "recorded_verdicts goes with recorded_prompts and recorded_candidates (set "
            "verdict_judge to judge generated candidates)"
        )
    if cfg.verdict_model and not cfg.verdict_judge:
        raise SplHfError("verdict_model is the model of the verdict stage: set verdict_judge too")
    if cfg.verdict_judge and is_recorded:
        raise SplHfError(
            "verdict_judge judges generated candidates; with recorded attributes give recorded_verdicts"
        )
    if is_recorded == bool(cfg.prompt_sources):
        raise SplHfError(
            "give either prompt_sources (generate and label) or recorded_prompts and "
            "recorded_candidates (derive from recorded attributes)"
        )


def check_spl_release(cfg: Any) -> None:
    """Every check of an SPL release's settings alone; a one-line :class:`SplHfError` naming the setting."""
    _check_recorded(cfg)
    if cfg.labeler_mode not in ("constrained", "json"):  # the parser enforces the Literal; a caller may not
        raise SplHfError(f"labeler_mode must be 'constrained' or 'json', got {cfg.labeler_mode!r}")
    pool_sizes(cfg)
    candidate_fractions(cfg)
    if cfg.panel and not Path(cfg.panel).is_file():
        raise FileNotFoundError(f"panel: {cfg.panel} does not exist")
