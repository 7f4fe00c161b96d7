"""Judge comparison (the paper's Table X): an SPL build's prompt-shared labels against verdict-judge labels.

The verdict judge picks one verdict per response; two responses are ranked by the rule base's verdict
ranking. Common support is the set of pairs labeled under both. Their verdict composition under each
labeling is counted, and the common-support pairs are written as DPO rows under each labeling so that
models trained on each can be compared across seeds (``spl-hf report seeds --contrast``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spl_hf.backends import verdict_preference
from spl_hf.contract import judge_comparison_tables
from spl_hf.derive import JUDGE_COLUMN
from spl_hf.errors import SplHfError
from spl_hf.files import write_json, write_parquet
from spl_hf.jsonl import read_rows
from spl_hf.rules import default_rulebase, load_rulebase

SIDES = ("a", "b")


@dataclass(frozen=True)
class JudgePairLabel:
    pair_id: str
    verdict_a: str
    verdict_b: str
    chosen: str | None  # "a", "b", or None (equal ranks)


@dataclass(frozen=True)
class CompositionRow:
    preferred_verdict: str
    rejected_verdict: str
    prompt_shared: int
    judge: int


@dataclass(frozen=True)
class SourceRow:
    source: str
    labeled_pairs: int
    labeled_prompts: int
    common_pairs: int
    common_prompts: int


@dataclass(frozen=True)
class JudgeComparison:
    build: str
    verdicts: str
    rulebase_id: str
    total_pairs: int
    labeled_prompt_shared: int
    labeled_judge: int
    common_support: int
    same_choice: int  # common-support pairs where both labelings prefer the same response
    prompt_shared_only: int
    judge_only: int
    neither: int
    without_judge_verdict: int  # build pairs the verdict file does not cover
    composition: list[CompositionRow]
    sources: list[SourceRow]
    common: pa.Table = field(repr=False)  # common-support rows of the build
    judge_choices: list[tuple[str, str, str]] = field(
        repr=False
    )  # per common row: side, its verdict, other's

    def to_dict(self) -> dict:
        return {
            "build": self.build,
            "verdicts": self.verdicts,
            "rulebase_id": self.rulebase_id,
            "total_pairs": self.total_pairs,
            "labeled_prompt_shared": self.labeled_prompt_shared,
            "labeled_judge": self.labeled_judge,
            "common_support": self.common_support,
            "same_choice": self.same_choice,
            "prompt_shared_only": self.prompt_shared_only,
            "judge_only": self.judge_only,
            "neither": self.neither,
            "without_judge_verdict": self.without_judge_verdict,
            "composition": [r.__dict__ for r in self.composition],
            "sources": [r.__dict__ for r in self.sources],
        }

    def to_markdown(self) -> str:
        out = [
            f"## Judge comparison on {self.common_support} common-support pairs (Table X)",
            "",
            f"{self.total_pairs} pairs in the build: {self.labeled_prompt_shared} labeled under prompt-shared "
            f"labels, {self.labeled_judge} under judge labels; {self.common_support} under both "
            f"({self.same_choice} with the same preferred response), {self.prompt_shared_only} under "
            f"prompt-shared labels only, {self.judge_only} under judge labels only, {self.neither} under "
            f"neither; {self.without_judge_verdict} without a judge verdict.",
            "",
            "| preferred verdict | rejected verdict | prompt-shared labels | judge labels |",
            "|---|---|---:|---:|",
        ]
        out += [
            f"| {r.preferred_verdict} | {r.rejected_verdict} | {r.prompt_shared} | {r.judge} |"
            for r in self.composition
        ]
        out += [
            "",
            "| source | labeled pairs (prompts) | common-support pairs (prompts) |",
            "|---|---:|---:|",
        ]
        out += [
            f"| {r.source} | {r.labeled_pairs} ({r.labeled_prompts}) | {r.common_pairs} ({r.common_prompts}) |"
            for r in self.sources
        ]
        return "\n".join(out) + "\n"


def read_derivations(build: str | Path) -> pa.Table:
    """Every pair of an SPL build (its ``derivations`` config), read from the parquet files directly."""
    folder = Path(build) / "derivations"
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{folder}: no parquet files (is {build} an SPL build folder?)")
    tables = [pq.read_table(f) for f in files]
    for f, t in zip(files, tables):
        missing = [
            c
            for c in ("pair_id", "prompt_id", "source", "prompt", "response_a", "response_b", "derivation")
            if c not in t.column_names
        ]
        if missing:
            raise SplHfError(f"{f}: missing column(s) {', '.join(missing)}")
    return pa.concat_tables(tables, promote_options="default")


def build_ranking(build: str | Path) -> tuple[str, dict[str, int]]:
    stored = Path(build) / "rulebase.yaml"
    rb = load_rulebase(stored) if stored.is_file() else default_rulebase()
    return rb.id, dict(rb.verdicts)


def read_judge_labels(path: str | Path, ranking: dict[str, int]) -> dict[str, JudgePairLabel]:
    """Pair labels (``pair_id, verdict_a, verdict_b[, chosen]``) or per-response verdicts (``{pair_id}/a|b``)."""
    rows = read_rows(path, line_key="__line__")
    if not rows:
        raise SplHfError(f"{path}: no rows")
    reader = _pair_label_rows if "verdict_a" in rows[0] else _response_verdict_rows
    return reader(path, rows, ranking)


def _where(path: str | Path, row: dict) -> str:
    return f"{path}:{row['__line__']}" if "__line__" in row else f"{path}: row"


def _verdict(path: str | Path, verdict: object, row: dict, key: str, ranking: dict[str, int]) -> str:
    if verdict not in ranking:
        raise SplHfError(
            f"{_where(path, row)}: {key} {verdict!r} is not a verdict of the build's rule base "
            f"({sorted(ranking)})"
        )
    return str(verdict)


def _pair_label_rows(
    path: str | Path, rows: list[dict], ranking: dict[str, int]
) -> dict[str, JudgePairLabel]:
    out: dict[str, JudgePairLabel] = {}
    for row in rows:
        where = _where(path, row)
        pid = row.get("pair_id")
        if not isinstance(pid, str) or not pid:
            raise SplHfError(f"{where}: missing pair_id")
        if pid in out:
            raise SplHfError(f"{where}: pair {pid!r} appears twice")
        if row.get("verdict_a") is None or row.get("verdict_b") is None:
            raise SplHfError(f"{where}: pair {pid!r} lacks a response verdict")
        va = _verdict(path, row["verdict_a"], row, "verdict_a", ranking)
        vb = _verdict(path, row["verdict_b"], row, "verdict_b", ranking)
        chosen = verdict_preference(va, vb, ranking).chosen
        if "chosen" in row and row["chosen"] != chosen:
            raise SplHfError(
                f"{where}: pair {pid!r} has chosen={row['chosen']!r} but its verdicts "
                f"({va}, {vb}) give {chosen!r} under the build's ranking"
            )
        out[pid] = JudgePairLabel(pid, va, vb, chosen)
    return out


def _response_verdict_rows(
    path: str | Path, rows: list[dict], ranking: dict[str, int]
) -> dict[str, JudgePairLabel]:
    verdicts: dict[str, dict[str, str]] = {}
    for row in rows:
        rid = row.get("response_id")
        if not isinstance(rid, str) or "/" not in rid or rid.rsplit("/", 1)[1] not in SIDES:
            raise SplHfError(
                f"{_where(path, row)}: expected pair-label rows (pair_id, verdict_a, verdict_b) or verdict "
                f"rows whose response_id is '<pair_id>/a' or '<pair_id>/b', got {rid!r}"
            )
        pid, side = rid.rsplit("/", 1)
        if side in verdicts.setdefault(pid, {}):
            raise SplHfError(f"{_where(path, row)}: response {rid!r} appears twice")
        verdicts[pid][side] = _verdict(path, row.get("verdict"), row, "verdict", ranking)
    half = sorted(pid for pid, v in verdicts.items() if len(v) < 2)
    if half:
        raise SplHfError(f"{path}: pair(s) with a verdict for one response only: {', '.join(half[:10])}")
    return {
        pid: JudgePairLabel(pid, v["a"], v["b"], verdict_preference(v["a"], v["b"], ranking).chosen)
        for pid, v in verdicts.items()
    }


def build_judge_labels(build: str | Path) -> dict[str, JudgePairLabel]:
    """The judge labels an SPL build recorded itself (its ``judge_derivations`` config)."""
    folder = Path(build) / "judge_derivations"
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise FileNotFoundError(
            f"{folder}: no parquet files: the build has no verdict-judge labels of its own "
            "(build it with verdicts, or give --verdicts)"
        )
    out: dict[str, JudgePairLabel] = {}
    for f in files:
        t = pq.read_table(f, columns=["pair_id", "judge"])
        for pid, j in zip(t.column("pair_id").to_pylist(), t.column("judge").to_pylist(), strict=True):
            if j["verdict_a"] is not None and j["verdict_b"] is not None:  # a response without a verdict
                out[pid] = JudgePairLabel(pid, j["verdict_a"], j["verdict_b"], j["label"])
    return out


def compare_build(build: str | Path, verdicts: str | Path | None = None) -> JudgeComparison:
    """Compare with a verdict file, or (``verdicts=None``) with the judge labels stored in the build."""
    table = read_derivations(build)
    rb_id, ranking = build_ranking(build)
    judge = read_judge_labels(verdicts, ranking) if verdicts else build_judge_labels(build)
    pair_ids = table.column("pair_id").to_pylist()
    unknown = sorted(set(judge) - set(pair_ids))
    if unknown:
        raise SplHfError(
            f"{verdicts}: {len(unknown)} pair(s) not in the build {build}: {', '.join(unknown[:10])}"
        )
    # The judge's labels as the build stores them, so the counting is the one the build's card uses.
    judged = [judge.get(pid) for pid in pair_ids]
    table = table.append_column(
        JUDGE_COLUMN,
        pa.array(
            [
                {"verdict_a": None, "verdict_b": None, "label": None, "no_label_reason": "missing_verdict"}
                if j is None
                else {
                    "verdict_a": j.verdict_a,
                    "verdict_b": j.verdict_b,
                    "label": j.chosen,
                    "no_label_reason": None if j.chosen else "equal_ranks",
                }
                for j in judged
            ]
        ),
    )
    tables = judge_comparison_tables(table, ranking)
    der = table.column("derivation").to_pylist()
    counts: Counter = Counter()
    common_idx, judge_choices = [], []
    for i, (d, j) in enumerate(zip(der, judged, strict=True)):
        judge_label = j.chosen if j else None
        counts["without"] += j is None
        if d["label"] is not None and judge_label is not None:
            common_idx.append(i)
            verdicts_of = {"a": j.verdict_a, "b": j.verdict_b}
            judge_choices.append(
                (judge_label, verdicts_of[judge_label], verdicts_of["b" if judge_label == "a" else "a"])
            )
        else:
            counts[
                "spl_only"
                if d["label"] is not None
                else "judge_only"
                if judge_label is not None
                else "neither"
            ] += 1
    return JudgeComparison(
        build=str(build),
        verdicts=str(verdicts) if verdicts else "judge_derivations",
        rulebase_id=rb_id,
        total_pairs=len(pair_ids),
        labeled_prompt_shared=tables.labeled_prompt_shared,
        labeled_judge=tables.labeled_judge,
        common_support=tables.common_support,
        same_choice=tables.same_choice,
        prompt_shared_only=counts["spl_only"],
        judge_only=counts["judge_only"],
        neither=counts["neither"],
        without_judge_verdict=counts["without"],
        composition=[
            CompositionRow(r.preferred_verdict, r.rejected_verdict, r.prompt_shared, r.judge)
            for r in tables.verdicts
        ],
        sources=[
            SourceRow(r.name, r.labeled_pairs, r.labeled_prompts, r.common_pairs, r.common_prompts)
            for r in tables.sources
        ],
        common=table.take(common_idx),
        judge_choices=judge_choices,
    )


def _dpo_rows(result: JudgeComparison, sides: list[str], verdicts: list[tuple[str, str]]) -> pa.Table:
    t = result.common
    resp = {s: t.column(f"response_{s}").to_pylist() for s in SIDES}
    chosen = [[{"role": "assistant", "content": resp[s][i]}] for i, s in enumerate(sides)]
    rejected = [
        [{"role": "assistant", "content": resp["b" if s == "a" else "a"][i]}] for i, s in enumerate(sides)
    ]
    return pa.table(
        {
            "pair_id": t.column("pair_id"),
            "prompt_id": t.column("prompt_id"),
            "source": t.column("source"),
            "prompt": t.column("prompt"),
            "chosen": chosen,
            "rejected": rejected,
            "chosen_verdict": [v[0] for v in verdicts],
            "rejected_verdict": [v[1] for v in verdicts],
        }
    )


def write_comparison(result: JudgeComparison, out_dir: str | Path) -> list[Path]:
    """comparison.json plus the common-support pairs as DPO rows under each labeling (parquet)."""
    from spl_hf.outputs import mark_output, seal_output

    out = Path(out_dir)
    mark_output(out, "judge-comparison", replace=True)  # its guard passed before any work
    der = result.common.column("derivation").to_pylist()
    spl_sides = [d["label"] for d in der]
    spl_verdicts = [
        (d[f"verdict_{s}"], d[f"verdict_{'b' if s == 'a' else 'a'}"]) for d, s in zip(der, spl_sides)
    ]
    judge_sides = [c[0] for c in result.judge_choices]
    judge_verdicts = [(c[1], c[2]) for c in result.judge_choices]
    paths = [
        out / "comparison.json",
        out / "common_support_prompt_shared.parquet",
        out / "common_support_judge.parquet",
    ]
    write_json(paths[0], result.to_dict(), sort_keys=True, ascii_only=True)
    for path, sides, verdicts in (
        (paths[1], spl_sides, spl_verdicts),
        (paths[2], judge_sides, judge_verdicts),
    ):
        write_parquet(path, _dpo_rows(result, sides, verdicts))
    seal_output(out)
    return paths
