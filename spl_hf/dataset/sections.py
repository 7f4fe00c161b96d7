"""Card sections shared by both builds: where each source came from and what every stage kept of it.

Everything is computed from what the stages already record: the read reports in the decontamination
record (``summary.sources``: Hub id and revision or local file name and sha256, records read,
quarantined, filtered), its per-source removals and draw, and the build's own tables. A table with no
row is not rendered: the caller gets a sentence saying why instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

# Pools whose prompts include harmful or offensive requests, with what they hold (the v3 card names
# PKU-SafeRLHF, HH-RLHF and WildFeedback; the SPL prompt sources below are harm benchmarks or seemingly
# toxic by design). A built-in source not named here holds benign prompts; a source the user named
# states its own category in its read record.
BUILTIN_CATEGORIES = {
    "pku_train": "mixed",
    "hh_train": "harmful",
    "wildfeedback_st": "mixed",
    "wf_mt": "mixed",
    "or_bench_80k": "over_refusal_prone",
    "or_bench_hard_1k": "over_refusal_prone",
    "or_bench_toxic": "harmful",
    "xstest": "mixed",
    "harmbench": "harmful",
    "do_not_answer": "harmful",
    "malicious_instruct": "harmful",
}
HARMFUL_PROMPT_POOLS = frozenset(BUILTIN_CATEGORIES)
# Pools whose prompt is a flattened earlier conversation (the v3 card's "multi-turn rows").
MULTI_TURN_POOLS = frozenset({"ca_en_mt_p1", "wf_mt"})


def _hub_fields(origin: str) -> dict[str, str]:
    """``hf://datasets/org/name config=x data_dir=y split=z revision=r`` as its named parts."""
    repo, *parts = origin.removeprefix("hf://datasets/").split()
    return {"repo": repo, **dict(p.split("=", 1) for p in parts if "=" in p)}


def source_origins(reports: Sequence[Mapping[str, Any]], sources: Iterable[str]) -> list[dict[str, str]]:
    """One row per training source: a link with the pinned revision (Hub) or file name + sha256 (local).

    ``reports`` are the read reports of the decontamination record; a source without one is named by
    its adapter's Hub location and marked as not recorded, never given a revision it was not read at.
    """
    from spl_hf.sources import ADAPTERS, PROMPT_SOURCES

    by_source = {r["source"]: r for r in reports if r.get("role") != "heldout"}
    rows = []
    for name in sources:
        report = by_source.get(name)
        adapter = ADAPTERS.get(name) or PROMPT_SOURCES.get(name)
        if report is None:
            origin = f"hf://datasets/{adapter.hub.describe()}" if adapter else ""
            row = _origin_row(name, origin, None, recorded=False)
        else:
            row = _origin_row(name, str(report.get("origin", "")), report.get("sha256"), recorded=True)
        # what the adapter takes from the pool (the v3 card's "harmless-base", "English first turns")
        rows.append({**row, "what is taken": what_is_taken(report, adapter).replace("|", "/")})
    return _with_categories(rows, list(sources), reports)


def _with_categories(
    rows: list[dict[str, str]], sources: list[str], reports: Sequence[Mapping[str, Any]]
) -> list[dict[str, str]]:
    """A ``category`` column after ``source`` when some source's read recorded one (a declared or an
    unknown category); a built-in source under its own name shows its adapter's kind of prompts."""
    declared = _categories(reports)
    if not declared:
        return rows
    out = []
    for row in rows:
        name = row["source"].strip("`")
        # the total row has no category
        shown = declared.get(name) or BUILTIN_CATEGORIES.get(name, "benign") if name in sources else ""
        first, *rest = row.items()
        out.append(dict([first, ("category", shown.replace("_", "-")), *rest]))
    return out


def what_is_taken(report: Mapping[str, Any] | None, adapter: Any) -> str:
    """The adapter's line for a built-in pool; for a source the user named, what its read recorded:
    the adapter that read it, its description and the column mapping."""
    report = report or {}
    text = str(report.get("description") or (adapter.description if adapter else "–"))
    if report.get("adapter"):
        text = f"adapter `{report['adapter']}`: {text}"
    columns = report.get("columns") or {}
    if columns:
        text += " Columns: " + ", ".join(f"{k} from `{v}`" for k, v in sorted(columns.items())) + "."
    return text


def _origin_row(name: str, origin: str, sha256: str | None, *, recorded: bool) -> dict[str, str]:
    if origin.startswith("hf://datasets/"):
        f = _hub_fields(origin)
        rev = f.get("revision")
        url = f"https://huggingface.co/datasets/{f['repo']}" + (f"/tree/{rev}" if rev else "")
        subset = ", ".join(f"{k} `{f[k]}`" for k in ("config", "data_dir") if f.get(k))
        if rev:
            pinned = f"`{rev}`" if recorded else f"`{rev}` (the adapter's pin; no read record)"
        else:
            pinned = "not pinned" if recorded else "not recorded"
        return {
            "source": f"`{name}`",
            "where": f"[{f['repo']}]({url})",
            "subset": subset or "–",
            "split": f.get("split", "–"),
            "revision": pinned,
        }
    return {
        "source": f"`{name}`",
        "where": f"local file `{origin}`" if origin else "not recorded",
        "subset": "–",
        "split": "–",
        "revision": f"sha256 `{sha256}`" if sha256 else "not recorded",
    }


NOT_RECORDED_NOTE = (
    "\n\nWhere a revision is *not recorded*, the build was given no read record (the `decontamination.json` "
    "a release writes), so the location shown is the source adapter's default, not a recorded read."
)


def origins_markdown(reports: Sequence[Mapping[str, Any]], sources: Sequence[str], empty: str) -> str:
    """The origins table, with a note when some source's read was not recorded."""
    rows = source_origins(reports, sources)
    text = markdown_table(rows, empty=empty)
    return text + (
        NOT_RECORDED_NOTE
        if any("no read record" in r["revision"] or r["revision"] == "not recorded" for r in rows)
        else ""
    )


def _read_counts(reports: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {r["source"]: r for r in reports if r.get("role") != "heldout"}


def _pairs_prompts(table: pa.Table | None, source: str) -> tuple[int, int] | None:
    """Rows of one source in ``table`` and their distinct ``prompt_id``s."""
    if table is None:
        return None
    sub = table.filter(pc.equal(table.column("source"), source))
    return sub.num_rows, len(pc.unique(sub.column("prompt_id")))


def _cell(value: tuple[int, int] | int | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, tuple):
        return f"{value[0]:,} ({value[1]:,})"
    return f"{value:,}"


def stage_table(
    sources: Sequence[str],
    decontamination: Mapping[str, Any] | None,
    stages: Sequence[tuple[str, pa.Table | None]],
) -> list[dict[str, str]]:
    """Counts per source at every stage: read, quarantined, filtered, removed by decontamination, the
    draw (SPL) and then each given (name, table) stage as rows (distinct prompts); a total row last.

    A count the build was not given (no read record, no draw) is "–", not 0.
    """
    summary = decontamination or {}
    reads = _read_counts(summary.get("sources") or [])
    removed = summary.get("removed_by_source") or {}
    drawn = summary.get("drawn")
    rows, totals = [], {}
    for s in sources:
        r = reads.get(s)
        cells: dict[str, Any] = {
            "read": (r["rows_yielded"], r["distinct_prompts"]) if r else None,
            "quarantined": r["n_quarantined"] if r else None,
            "filtered": r["n_filtered"] if r else None,
            "decontaminated": removed.get(s, 0) if decontamination else None,
        }
        if drawn is not None:
            cells["drawn"] = drawn.get(s, 0)
        for name, table in stages:
            cells[name] = _pairs_prompts(table, s)
        for k, v in cells.items():
            totals[k] = _add(totals.get(k, 0), v)
        rows.append({"source": f"`{s}`", **{k: _cell(v) for k, v in cells.items()}})
    if rows:
        rows.append({"source": "**total**", **{k: _cell(v) for k, v in totals.items()}})
    return _with_categories(rows, list(sources), summary.get("sources") or [])


def _add(a: Any, b: Any) -> Any:
    """A running total; unknown (None) anywhere makes the total unknown; prompts add per source."""
    if a is None or b is None:
        return None
    if isinstance(b, tuple):
        a = a if isinstance(a, tuple) else (0, 0)
        return (a[0] + b[0], a[1] + b[1])
    return a + b


def markdown_table(rows: Sequence[Mapping[str, str]], *, right: Iterable[str] = (), empty: str) -> str:
    """A markdown table of ``rows`` (the keys of the first are the header), or ``empty`` if none."""
    if not rows:
        return empty
    keys = list(rows[0])
    right = set(right)
    out = [
        "| " + " | ".join(keys) + " |",
        "|" + "|".join("---:" if k in right else "---" for k in keys) + "|",
    ]
    out += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(out)


def shares(per_source: Mapping[str, int]) -> list[dict[str, str]]:
    """Rows per source with their share of the release, largest first (the v3 card's order)."""
    total = sum(per_source.values())
    ordered = sorted(per_source.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"source": f"`{s}`", "rows": f"{n:,}", "share": f"{100 * n / total:.1f}%"} for s, n in ordered]


def multi_turn_share(per_source: Mapping[str, int]) -> dict[str, Any]:
    """The released rows from multi-turn pools: which pools, how many, what share."""
    total = sum(per_source.values())
    pools = [s for s in per_source if s in MULTI_TURN_POOLS]
    rows = sum(per_source[s] for s in pools)
    return {"pools": pools, "rows": rows, "share": f"{100 * rows / total:.1f}%" if total else "0.0%"}


# Declared categories whose prompts the content warning names (over-refusal-prone prompts are written
# to look harmful, as the built-in OR-Bench and XSTest sources in HARMFUL_PROMPT_POOLS).
HARMFUL_CATEGORIES = frozenset({"harmful", "mixed", "over_refusal_prone"})


def _categories(reports: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Source -> the category its read recorded (declared, or "unknown" for a renamed or generic source)."""
    return {r["source"]: r["category"] for r in reports if r.get("role") != "heldout" and r.get("category")}


def harmful_pools(sources: Iterable[str], reports: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """The sources the content warning names: a declared category that carries harmful prompts, or a
    built-in pool under its own name that is known to."""
    declared = _categories(reports)
    return [
        s
        for s in sources
        if declared.get(s) in HARMFUL_CATEGORIES or (s not in declared and s in HARMFUL_PROMPT_POOLS)
    ]


def card_categories(sources: Iterable[str], reports: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The content warning's kwargs: ``harmful_pools``, and ``undeclared_pools`` (only when some source's
    category is unknown, so a card of built-in sources renders as it always did)."""
    reports = list(reports)
    sources = list(sources)
    unknown = [s for s in sources if _categories(reports).get(s) == "unknown"]
    return {
        "harmful_pools": harmful_pools(sources, reports),
        **({"undeclared_pools": unknown} if unknown else {}),
    }
