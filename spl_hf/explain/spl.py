"""Why an SPL row says what it says: its prompt and response attributes (with who produced them), the
rules of the build's own rule base that fired, the verdicts and ranks, and the label or the reason
there is none."""

from __future__ import annotations

from spl_hf.explain.locate import RowRef
from spl_hf.explain.release import Release
from spl_hf.explain.text import clipped, messages_text
from spl_hf.yamlio import load_yaml_file


def explain_spl(release: Release, ref: RowRef, clip: int) -> dict:
    """The derivation of one row of an SPL release, as JSON-ready values."""
    row = ref.row
    der = row["derivation"]
    rules = _rules(release)
    producers = row.get("producers") or {}
    identities = _producer_identities(release)
    sides = {}
    for side in ("a", "b"):
        sides[side] = {
            "response": clipped(row[f"response_{side}"], clip),
            "instruction": row.get(f"instruction_{side}"),
            "attributes": row.get(f"response_{side}_attributes"),
            "status": (row.get("attribute_status") or {}).get(f"response_{side}"),
            "labeler": _producer(producers.get(f"response_{side}_labeler"), identities),
            "generator": _producer(producers.get(f"response_{side}_generator"), identities),
            "rules": [{"id": r, **rules.get(r, {})} for r in der[f"rules_{side}"] or []],
            "verdict": der[f"verdict_{side}"],
            "rank": der[f"rank_{side}"],
        }
    return {
        "kind": "spl",
        "release": release.describe(),
        "config": ref.config,
        "split": ref.split,
        "index": ref.index,
        "pair_id": row["pair_id"],
        "prompt_id": row["prompt_id"],
        "source": row["source"],
        "source_category": row.get("source_category"),
        "prompt": messages_text(row["prompt"], clip),
        "prompt_attributes": row.get("prompt_attributes"),
        "prompt_status": (row.get("attribute_status") or {}).get("prompt"),
        "prompt_labeler": _producer(producers.get("prompt_labeler"), identities),
        "a": sides["a"],
        "b": sides["b"],
        "rank_diff": der["rank_diff"],
        "margin": der.get("margin"),
        "label": der["label"],
        "no_label_reason": der["no_label_reason"],
        "rulebase": {"id": der["rulebase_id"], "hash": der["rulebase_hash"]},
        "verdict_ranks": _verdict_ranks(release),
        "judge": row.get("judge") or _judge_of(release, row["pair_id"]),
    }


def _rulebase(release: Release) -> dict:
    path = release.folder / "rulebase.yaml"
    if not path.is_file():
        return {}
    data = load_yaml_file(path, "rule base")  # the one hardened YAML loader
    return data if isinstance(data, dict) else {}


def _rules(release: Release) -> dict[str, dict]:
    """Rule id -> its condition (as written in the build's rule base) and verdict."""
    out = {}
    for rule in _rulebase(release).get("rules", []):
        out[str(rule["id"])] = {
            "when": str(rule.get("when")),
            "verdict": rule.get("verdict"),
            "reconstructed": bool(rule.get("reconstructed", False)),
        }
    return out


def _verdict_ranks(release: Release) -> dict:
    return dict(_rulebase(release).get("verdicts", {}))


def _producer_identities(release: Release) -> dict[str, dict]:
    """Producer key -> its identity, from the build report's ``producers`` listing."""
    out: dict[str, dict] = {}
    for role in (release.report.get("producers") or {}).values():
        for ident in role.get("identities", []) if isinstance(role, dict) else []:
            if isinstance(ident, dict) and "key" in ident:
                out[ident["key"]] = ident
    return out


def _producer(key: str | None, identities: dict[str, dict]) -> dict:
    if key is None:
        return {"key": None, "identity": "recorded, producer not recorded"}
    return {"key": key, "identity": identities.get(key, "not listed in build_report.json")}


def _judge_of(release: Release, pair_id: str) -> dict | None:
    """The verdict judge's struct for this pair, from ``judge_derivations`` (None without a judge)."""
    from spl_hf.explain.locate import index_of

    for split in release.splits.get("judge_derivations", {}):
        index = index_of(release, "judge_derivations", split, "pair_id", pair_id)
        if index is not None:
            return release.row("judge_derivations", split, index).get("judge")
    return None
