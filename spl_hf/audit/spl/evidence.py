"""Audit of what an SPL build says about its model outputs: producers stated, and quality recounted.

``build_report.json`` and ``card.json`` must name the labeler and the generator (an identity, or
"not recorded" with the record count), and the verdict judge when the build has judge configs; the
verdict judge's model, revision and template must be exactly those in the ``judge`` column. The
released parse-status counts and the verdict judge's status and off-label mass are recomputed from
``derivations`` and ``judge_derivations`` (the same pure functions the build used) and compared.

Every row's ``producers`` keys must each be the key of a labeler or generator identity the report
lists (recomputed from its fields), none may be null where the report says every record names its
producer, and the report may list no identity that no pair of ``derivations`` names (checked when
every prompt formed a pair: an unpaired prompt's records are counted but in no row).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.audit.load import LoadedSplit
from spl_hf.audit.tenets.judge_quality import _same
from spl_hf.contract import flat_figures, released_judge_quality, released_label_status, stated_key
from spl_hf.derive import JUDGE_COLUMN, PRODUCER_FIELDS

ROLES = ("labeler", "generator")
IDENTITY = ("model_id", "model_revision", "template_hash")


def _read(folder: Path, name: str) -> Mapping | None:
    try:
        value = json.loads((folder / name).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, Mapping) else None


def _differ(where: str, what: str, stored: Any, expected: Any) -> list[str]:
    have, want = flat_figures(stored), flat_figures(expected)
    bad = [k for k in sorted(set(have) | set(want)) if not _same(have.get(k), want.get(k))]
    return [
        f"{where}: {what} {k} is {have.get(k, 'missing')!r}, recomputed {want.get(k, 'missing')!r}"
        for k in bad[:5]
    ]


def _producer_failures(where: str, producers: Any, judged: bool) -> list[str]:
    if not isinstance(producers, Mapping):
        return [f"{where}: no producers entry; an SPL build states who produced its model outputs"]
    out = []
    for role in ROLES + (("verdict_judge",) if judged else ()):
        p = producers.get(role)
        if not isinstance(p, Mapping) or not isinstance(p.get("identities"), list):
            out.append(f"{where}: producers.{role} is missing")
        elif not p["identities"] and not p.get("records_without_identity"):
            out.append(f"{where}: producers.{role} names no identity and no record without one")
    return out


def _judge_identities(table: pa.Table) -> set[tuple]:
    """(model, revision, template) of every judged side of the judge column."""
    seen = set()
    for j in table.column(JUDGE_COLUMN).to_pylist():
        for side in ("a", "b"):
            if j[f"status_{side}"] == "ok":
                seen.add(tuple(j[k] for k in IDENTITY))
    return seen


def check_spl_evidence(
    folder: Path, derivations: pa.Table, judged: pa.Table | None, splits: list[LoadedSplit]
) -> list[str]:
    """Failures of the producers and labeler/judge quality the build and card state."""
    report = _read(folder, "build_report.json") or {}
    card = (_read(folder, "card.json") or {}).get("kwargs") or {}
    failures = _producer_failures("build_report.json", report.get("producers"), judged is not None)
    failures += check_row_producers(splits, report)
    if card.get("producers") != report.get("producers"):
        failures.append("card.json: producers differ from build_report.json")
    status = released_label_status(derivations)
    quality = report.get("label_quality") if isinstance(report.get("label_quality"), Mapping) else {}
    failures += _differ(
        "build_report.json", "label_quality.released_status", quality.get("released_status"), status
    )
    failures += _differ("card.json", "released_status", card.get("released_status"), status)
    if judged is None:
        return failures
    judge = released_judge_quality(judged)
    failures += _differ(
        "build_report.json", "label_quality.verdict_judge", quality.get("verdict_judge"), judge
    )
    card_judge = {k: v for k, v in (card.get("verdict_quality") or {}).items() if k != "off_label"}
    failures += _differ("card.json", "verdict_quality", card_judge, judge)
    stated = (report.get("producers") or {}).get("verdict_judge") or {}
    named = {
        tuple(i.get(k) for k in IDENTITY) for i in stated.get("identities") or [] if isinstance(i, Mapping)
    }
    in_rows = _judge_identities(judged)
    if named != in_rows:
        failures.append(
            f"build_report.json: producers.verdict_judge names {sorted(named, key=str)}, the judge column "
            f"holds {sorted(in_rows, key=str)}"
        )
    return failures


def _stated_keys(producers: Mapping) -> tuple[dict[str, set[str]], dict[str, bool], list[str]]:
    """Per role: the keys of its listed identities (recomputed), whether every record names one, and
    the identities whose stated key is not their own."""
    keys: dict[str, set[str]] = {r: set() for r in ROLES}
    complete = dict.fromkeys(ROLES, False)
    failures = []
    for role in ROLES:
        p = producers.get(role)
        if not isinstance(p, Mapping) or not isinstance(p.get("identities"), list):
            continue  # reported by _producer_failures
        idents = [i for i in p["identities"] if isinstance(i, Mapping)]
        for ident in idents:
            want = stated_key(ident)
            if ident.get("key") != want:
                failures.append(
                    f"build_report.json: producers.{role} identity {ident.get('model_id')!r} has key "
                    f"{ident.get('key')!r}, its identity fields give {want!r}"
                )
            keys[role].add(want)  # type: ignore[arg-type]
        complete[role] = bool(idents) and p.get("records_without_identity") == 0
    return keys, complete, failures


def _first(s: LoadedSplit, mask: pa.Array) -> tuple[int, int, str]:
    """How many rows the mask flags, the first one's index and its pair id."""
    flags = np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
    (hits,) = np.nonzero(flags)
    i = int(hits[0])
    return len(hits), i, str(s.table.column("pair_id")[i].as_py())


def _split_keys(
    s: LoadedSplit, keys: dict[str, set[str]], complete: dict[str, bool], used: dict[str, set[str]]
) -> list[str]:
    """One split's rows against the report's keys; adds the keys ``derivations`` names to ``used``."""
    where = f"{s.config}/{s.split}"
    if "producers" not in s.table.column_names or "pair_id" not in s.table.column_names:
        return [f"{where}: no producers (or pair_id) column; SPL rows name who produced their model outputs"]
    column = s.table.column("producers").combine_chunks()
    out = []
    for name, role in PRODUCER_FIELDS.items():
        try:
            values = pc.struct_field(column, name).cast(pa.string())
        except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            out.append(f"{where}: producers.{name} is missing or not a string key")
            continue
        listed = pa.array(sorted(keys[role]), pa.string())
        unknown = pc.and_(pc.is_valid(values), pc.invert(pc.is_in(values, value_set=listed)))
        if pc.any(unknown).as_py():
            n, i, pid = _first(s, unknown)
            out.append(
                f"{where} row {i} (pair {pid!r}): producers.{name} {values[i].as_py()!r} is no {role} "
                f"identity build_report.json lists ({n} row(s))"
            )
        if complete[role] and values.null_count:
            n, i, pid = _first(s, pc.is_null(values))
            out.append(
                f"{where} row {i} (pair {pid!r}): producers.{name} is null, but build_report.json says "
                f"every record names its {role} ({n} row(s))"
            )
        if s.config == "derivations":
            used[role].update(pc.unique(values.drop_null()).to_pylist())
    return out


def check_row_producers(splits: list[LoadedSplit], report: Mapping) -> list[str]:
    """Failures of the rows' producer keys against the identities ``build_report.json`` lists."""
    producers = report.get("producers")
    if not isinstance(producers, Mapping):
        return []  # reported by _producer_failures
    keys, complete, failures = _stated_keys(producers)
    used: dict[str, set[str]] = {r: set() for r in ROLES}
    for s in splits:
        failures += _split_keys(s, keys, complete, used)
    if not report.get("prompts_without_pairs"):
        for role in ROLES:
            unused = sorted(keys[role] - used[role])
            if unused:
                failures.append(
                    f"build_report.json: producers.{role} lists key(s) {unused} that no row of derivations names"
                )
    return failures
