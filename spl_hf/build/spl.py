"""Build an SPL preference dataset from recorded attribute assignments.

Reads prompt and candidate records (JSON Lines), forms every candidate pair per prompt,
derives labels with ``Dataset.map`` over Arrow batches, and writes a Hub-layout dataset
folder with two configs (``preferences``: labeled pairs; ``derivations``: every pair)
split by prompt source, a generated card, the rule base and the schema.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import yaml
from datasets import Dataset
from datasets.table import InMemoryTable

from spl_hf.build.config import SAMPLE, SPLBuildConfig
from spl_hf.build.spl_evidence import evidence, evidence_report
from spl_hf.contract import (
    DECONTAMINATION_FILE,
    LICENSE_FILE,
    SPL_INTRO,
    SPL_SOURCE_LICENSES,
    CompositionTables,
    JudgeComparisonTables,
    composition_tables,
    gate_record,
    judge_comparison_tables,
    license_text,
    read_decontamination,
    row_gate,
    spl_license_fields,
    spl_source_licenses,
)
from spl_hf.dataset import (
    CARD_INPUTS,
    ConfigData,
    card_categories,
    card_inputs,
    evidence_card,
    markdown_table,
    origins_markdown,
    render_card,
    shares,
    stage_table,
    write_dataset_folder,
)
from spl_hf.derive import (
    JUDGE_COLUMN,
    JudgeTables,
    candidate_pairs,
    common_features,
    derive_table,
    derived_features,
    judge_column,
    judge_features,
    judge_identity,
    judge_tables,
    parse_verdict_records,
    read_jsonl,
)
from spl_hf.errors import SplHfError
from spl_hf.files import json_text
from spl_hf.outputs import guard_dir
from spl_hf.rules import RuleBase, default_rulebase, load_rulebase

ALL_SOURCES = "train"  # the split of `preferences` that covers every source
SOURCE_LICENSES = SPL_SOURCE_LICENSES  # the name tests use


@dataclass(frozen=True)
class SPLBuildResult:
    path: Path
    total: int
    labeled: int
    prompts_without_pairs: list[str]
    splits: dict[str, int]
    rulebase_id: str
    rulebase_hash: str
    tables: CompositionTables
    judge: JudgeComparisonTables | None = None

    def summary(self) -> dict:
        d = asdict(self)
        d["path"] = str(self.path)
        del d["tables"], d["judge"]
        d["no_label"] = self.tables.no_label
        if self.judge is not None:
            d["judge"] = {
                k: getattr(self.judge, k)
                for k in ("labeled_judge", "common_support", "same_choice", "judge_no_label")
            }
        return d


def sample_path(name: str) -> Path:
    """The packaged sample file ``name`` (under ``spl_hf/data/samples``)."""
    return Path(str(resources.files("spl_hf.data").joinpath("samples", name)))


_sample = sample_path  # the name tests use


def derive_dataset(pairs: pa.Table, rb: RuleBase, margin: int, batch_size: int = 1024) -> Dataset:
    """Apply the derivation to a pair table with ``Dataset.map`` over Arrow batches."""
    ds = Dataset(InMemoryTable(pairs))
    return (
        ds.with_format("arrow")
        .map(
            partial(derive_table, rb=rb, margin=margin),
            batched=True,
            batch_size=batch_size,
            features=derived_features(rb.schema),
            desc="deriving labels",
        )
        .with_format(None)
    )


def split_by_source(table: pa.Table) -> dict[str, pa.Table]:
    order = list(dict.fromkeys(table.column("source").to_pylist()))
    return {s: table.filter(pc.equal(table.column("source"), s)) for s in order}


def _inputs(cfg: SPLBuildConfig) -> list[str]:
    return [
        p
        for p in (cfg.prompts, cfg.candidates, cfg.rulebase, cfg.decontamination, cfg.verdicts, cfg.panel)
        if p and p != SAMPLE
    ]


def _judge_configs(
    cfg: SPLBuildConfig, records: dict, derived: pa.Table, pairs, rb: RuleBase
) -> tuple[list[ConfigData], JudgeTables, dict]:
    """The judge comparison's configs: every pair under the judge, and the common support under each label."""
    known = set(pairs.candidate_a) | set(pairs.candidate_b)
    unknown = sorted(set(records) - known)
    if unknown:
        raise SplHfError(
            f"{cfg.verdicts}: {len(unknown)} verdict record(s) name a candidate that is in no pair: "
            f"{', '.join(unknown[:10])}"
        )
    judge = judge_column(pairs.table, pairs.candidate_a, pairs.candidate_b, records, rb)
    tables = judge_tables(derived, judge, rb)
    configs = [
        ConfigData("judge_derivations", judge_features(rb.schema), split_by_source(tables.derivations))
    ]
    for name, table in (("common_support", tables.common), ("common_support_judge", tables.common_judge)):
        by_source = split_by_source(table)
        if by_source:  # an empty common support has no config: `datasets` cannot load an empty split
            configs.append(
                ConfigData(
                    name,
                    common_features(rb.schema),
                    by_source,
                    unions={ALL_SOURCES: [(name, s) for s in by_source]},
                )
            )
    model_id, revision, template = judge_identity(records)
    info = {
        "verdicts_file": Path(cfg.verdicts).name,
        "model_id": model_id,
        "model_revision": revision,
        "template_hash": template,
        "records": len(records),
        "not_judged": sum(r.probs is None for r in records.values()),
        "candidates_without_record": len(known - set(records)),
    }
    return configs, tables, info


class _Inputs(NamedTuple):
    prompts_path: Path
    cands_path: Path
    verdict_rows: list[dict] | None
    records: dict | None  # verdict records by candidate id


def _read_inputs(cfg: SPLBuildConfig, rb: RuleBase) -> _Inputs:
    prompts_path = sample_path("spl_prompts.jsonl") if cfg.prompts == SAMPLE else Path(cfg.prompts)
    cands_path = sample_path("spl_candidates.jsonl") if cfg.candidates == SAMPLE else Path(cfg.candidates)
    # The verdict file is checked before any work, like every other input.
    verdict_rows = read_jsonl(cfg.verdicts) if cfg.verdicts else None
    records = (
        parse_verdict_records(verdict_rows, dict(rb.verdicts), str(cfg.verdicts))
        if verdict_rows is not None
        else None
    )
    return _Inputs(prompts_path, cands_path, verdict_rows, records)


def build_spl(cfg: SPLBuildConfig, min_rows: int | None = None, gates_note: str = "") -> SPLBuildResult:
    """``min_rows``: the release's row gate, whose record (:mod:`spl_hf.contract.gates`, with
    ``gates_note``) the build report and the card keep; None for a build outside a release."""
    guard_dir(cfg.output_dir, overwrite=cfg.overwrite, inputs=_inputs(cfg))  # before any work
    rb = load_rulebase(cfg.rulebase) if cfg.rulebase else default_rulebase()
    rb_text = Path(cfg.rulebase).read_text() if cfg.rulebase else rb.to_yaml()
    prompts_path, cands_path, verdict_rows, records = _read_inputs(cfg, rb)
    prompt_records = read_jsonl(prompts_path)
    cand_records = read_jsonl(cands_path)
    cpairs = candidate_pairs(prompt_records, cand_records, rb.schema, str(prompts_path), str(cands_path))
    pairs = cpairs.table
    # A prompt with fewer than two candidates forms no pair: report it rather than lose it quietly.
    paired = set(pairs.column("prompt_id").to_pylist())
    unpaired = [p["prompt_id"] for p in prompt_records if p["prompt_id"] not in paired]
    derived = derive_dataset(pairs, rb, cfg.margin, cfg.batch_size).data.table
    labeled = derived.filter(pc.is_valid(pc.struct_field(derived.column("derivation"), "label")))
    configs = _rule_configs(derived, labeled, derived_features(rb.schema))
    splits = {s: t.num_rows for s, t in configs[-1].splits.items()}  # the `derivations` config's
    tables = composition_tables(derived)
    judge, judge_info, judged = None, None, None
    if records is not None:
        judge_cfgs, jt, judge_info = _judge_configs(cfg, records, derived, cpairs, rb)
        configs += judge_cfgs
        judged = jt.derivations
        judge = judge_comparison_tables(
            derived.append_column(JUDGE_COLUMN, jt.derivations.column(JUDGE_COLUMN)), dict(rb.verdicts)
        )
        judge_info["tables"] = judge.to_dict()
    files = (prompts_path.name, cands_path.name)
    ev = evidence(prompt_records, cand_records, files, rb.schema, derived, verdict_rows, cfg, judged)
    decontamination = read_decontamination(cfg.decontamination) if cfg.decontamination else None
    source_licenses = spl_source_licenses(list(splits))
    card_kwargs = _card_kwargs(cfg, rb, derived, labeled, splits, tables, source_licenses, configs)
    card_kwargs.update(
        inputs=f"`{prompts_path.name}`, `{cands_path.name}`",
        license_note=spl_license_fields(source_licenses)["license_note"],
        decontamination=decontamination.summary if decontamination else None,
        judge=judge_info,
        judge_tables=judge.to_markdown() if judge else None,
        common_configs=[c.name for c in configs if c.name.startswith("common_support")],
        producers=ev["producers"],
        **evidence_card(ev),
    )
    card_kwargs.update(_construction_kwargs(derived, labeled, splits, decontamination))
    gates = None if min_rows is None else gate_record([row_gate(labeled.num_rows, min_rows)], gates_note)
    if gates is not None:  # only a release's build has the entry (a plain build's card is unchanged)
        card_kwargs["quality_gates"] = gates
    readme = render_card("spl_dataset.md.j2", configs, **card_kwargs)
    report = {
        "rulebase_id": rb.id,
        "rulebase_hash": rb.hash,
        "margin": cfg.margin,
        "splits": splits,
        "labeled": labeled.num_rows,
        "prompts_without_pairs": unpaired,
        "tables": tables.to_dict(),
        "decontamination": decontamination.summary if decontamination else None,
        **({"judge": judge_info} if judge_info else {}),
        **evidence_report(ev),
        **({"quality_gates": gates} if gates is not None else {}),
    }
    written = write_dataset_folder(
        cfg.output_dir,
        configs,
        readme,
        overwrite=cfg.overwrite,
        inputs=_inputs(cfg),
        extra_files={
            "rulebase.yaml": rb_text,
            "schema.yaml": yaml.safe_dump(rb.schema.to_dict(), sort_keys=False, width=100),
            "build_report.json": json_text(report, sort_keys=True, ascii_only=True),
            CARD_INPUTS: card_inputs("spl_dataset.md.j2", configs, **card_kwargs),
            LICENSE_FILE: license_text(SPL_INTRO, source_licenses),
            **({DECONTAMINATION_FILE: decontamination.text} if decontamination else {}),
        },
        max_shard_size=cfg.max_shard_size,
    )
    return SPLBuildResult(
        written.path, derived.num_rows, labeled.num_rows, unpaired, splits, rb.id, rb.hash, tables, judge
    )


def _rule_configs(derived: pa.Table, labeled: pa.Table, feats) -> list[ConfigData]:
    """``preferences`` (labeled pairs, per source) and ``derivations`` (every pair), the latter last."""
    by_source = split_by_source(labeled)
    # `train` lists the per-source files: every labeled pair once, for a plain DPO `split="train"`.
    preferences = ConfigData(
        "preferences",
        feats,
        by_source,
        default=True,
        unions={ALL_SOURCES: [("preferences", s) for s in by_source]},
    )
    derivations = ConfigData("derivations", feats, split_by_source(derived), default=not by_source)
    # With no labeled pair there is no `preferences` config: `datasets` cannot load an empty split,
    # and `derivations` (every pair with its no-label reason) becomes the default.
    return [preferences, derivations] if by_source else [derivations]


def _card_kwargs(cfg: SPLBuildConfig, rb, derived, labeled, splits, tables, source_licenses, configs) -> dict:
    """The card's licence, counts and rule base (the caller adds inputs, judge and decontamination)."""
    fields = spl_license_fields(source_licenses)
    return dict(
        license=fields["license"],
        license_name=fields["license_name"],
        license_link=fields["license_link"],
        pretty_name=cfg.pretty_name,
        tags=["dpo", "preference", "safety", "spl", "recorded-derivation"],
        repo_id=cfg.repo_id,
        version=_version(),
        labeled=labeled.num_rows,
        total=derived.num_rows,
        unlabeled=derived.num_rows - labeled.num_rows,
        splits=", ".join(f"`{s}`" for s in splits),
        all_sources=ALL_SOURCES,
        first_split=ALL_SOURCES,
        margin=cfg.margin,
        rulebase_id=rb.id,
        rulebase_hash=rb.hash,
        rulebase_yaml=rb.to_yaml().strip(),
        schema_hash=rb.schema.hash,
        tables=tables.to_markdown(),
    )


def _construction_kwargs(derived: pa.Table, labeled: pa.Table, splits: dict, decontamination) -> dict:
    """Each prompt source's origin and its counts at every stage (Table VI's shape), and the pools
    that carry harmful prompts, for the card."""
    summary = decontamination.summary if decontamination else None
    reads = [r["source"] for r in (summary or {}).get("sources") or [] if r.get("role") != "heldout"]
    sources = list(dict.fromkeys([*reads, *splits]))
    cols = ["source", "prompt_id"]
    rows = stage_table(
        sources,
        summary,
        [
            ("generated", derived.select(cols)),
            ("labeled", labeled.select(cols)),
        ],
    )
    return dict(
        origins_table=origins_markdown(
            (summary or {}).get("sources") or [],
            sources,
            empty="The build has no prompt rows, so no source is named.",
        ),
        stages_table=markdown_table(
            rows,
            right=[k for k in (rows[0] if rows else {}) if k != "source"],
            empty="The build has no prompt rows, so there is nothing to count per source.",
        ),
        **card_categories(sources, (summary or {}).get("sources") or []),
        shares_table=markdown_table(
            shares(_per_source(labeled)),
            right=["rows", "share"],
            empty="No pair got a label, so the release has no labeled pairs to count per source.",
        ),
    )


def _per_source(table: pa.Table) -> dict[str, int]:
    """Rows per source, in first-appearance order."""
    sources = table.column("source").to_pylist()
    return {s: sources.count(s) for s in dict.fromkeys(sources)}


def _version() -> str:
    from spl_hf import __version__

    return __version__
