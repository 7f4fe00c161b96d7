"""The SPL safety release, from prompt sources to a published dataset, in resumable stages.

prompts (Table VI sources, pool sizes as a setting) -> decontaminate -> generate candidates under
named instructions -> label prompt attributes once per prompt and response attributes per candidate
-> derive with the rule base and write the dataset -> audit -> publish (when a repo id is set).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from spl_hf.contract import DECONTAMINATION_FILE
from spl_hf.errors import SplHfError
from spl_hf.files import write_json, write_parquet
from spl_hf.release.config import SPLReleaseConfig
from spl_hf.release.decontam_stage import check_heldout
from spl_hf.release.pools import SourceSpec, parse_sources
from spl_hf.release.reads import MODEL_FIELDS, PER_READ_OPTIONS, PUBLISH, Reads
from spl_hf.release.results import open_results
from spl_hf.release.spl_draw import draw_prompts, with_candidates
from spl_hf.release.spl_label import VERDICTS_FILE
from spl_hf.release.stages import StageRunner, fingerprint
from spl_hf.release.written import (
    check_output,
    content,
    manifest_hash,
    publish_output,
    record_output,
    record_written,
    written_here,
)

_DERIVE = ("rulebase", "margin", "panel", "output_dir", "repo_id", "pretty_name", "min_rows", "gates_note")
_MODEL_RUN = ("threads", "generation.progress")
# What each stage reads of the configs (see spl_hf.release.reads): its key hashes these values besides
# the content of the files it reads, and it can read nothing else.
READS: dict[str, Reads] = {
    # The source options are taken whole; the per-read fields are set by the stage itself, per source.
    "prompts": Reads(("prompt_sources",), configs=("source_options",), runs_only=PER_READ_OPTIONS),
    "decontaminate": Reads(
        ("prompt_sources", "heldout_files", "pool_sizes", "draw_seed"), configs=("decontam",)
    ),
    # which drawn prompts get candidates: candidate_fraction, seeded by draw_seed
    "generate": Reads(
        ("candidate_fraction", "draw_seed", *MODEL_FIELDS), configs=("generation",), runs_only=("threads",)
    ),
    "label": Reads(("labeler_mode", "candidate_fraction", "draw_seed", *MODEL_FIELDS), runs_only=_MODEL_RUN),
    "verdict": Reads(("verdict_model", *MODEL_FIELDS), runs_only=_MODEL_RUN),
    "write": Reads((*_DERIVE, "verdict_judge")),  # verdict_judge: whether the judge comparison is written
    "recorded_write": Reads(("recorded_prompts", "recorded_candidates", "recorded_verdicts", *_DERIVE)),
    "audit": Reads(("output_dir",)),
    "publish": Reads((*PUBLISH, "min_rows")),
}


def recipe_classes() -> tuple[type, ...]:
    """The config dataclasses whose fields a recipe of this release holds (:data:`spl_hf.recipes.RECIPE_KINDS`)."""
    from spl_hf.recipes import kind_classes

    return kind_classes("spl")


@dataclass
class SPLRelease:
    cfg: SPLReleaseConfig
    generation: Any  # GenerationConfig
    decontam: Any  # DecontamConfig
    executor: Any = None  # ExecutorArgs (default: local)
    source_options: Any = None  # SourceOptions (default: the adapters' defaults)
    log: Any = print
    sources: list[SourceSpec] = field(init=False)
    heldout: list[SourceSpec] = field(init=False)
    # The sub-configs a stage reads only as its READS declare (the executor says how to run: unguarded).
    SUBCONFIGS = ("generation", "decontam")

    def __post_init__(self) -> None:
        from spl_hf.release.spl_settings import candidate_fractions, pool_sizes
        from spl_hf.sources import PROMPT_SOURCES, SourceOptions, eval_sample_paths, prompt_sample_paths

        self.source_options = self.source_options or SourceOptions()
        # The settings themselves were checked by SPLReleaseConfig (spl_settings.check_spl_release).
        self.recorded = bool(self.cfg.recorded_prompts and self.cfg.recorded_candidates)
        self.sources = parse_sources(
            self.cfg.prompt_sources, PROMPT_SOURCES, prompt_sample_paths(), "prompt_sources"
        )
        self.heldout = (
            parse_sources(self.cfg.heldout_files, PROMPT_SOURCES, eval_sample_paths(), "heldout_files")
            if self.cfg.heldout_files
            else []
        )
        self.sizes = pool_sizes(self.cfg)
        self.fractions = candidate_fractions(self.cfg)
        from spl_hf.rules import default_rulebase, load_rulebase

        self.rulebase = load_rulebase(self.cfg.rulebase) if self.cfg.rulebase else default_rulebase()
        self.store, self.executor = open_results(self.cfg, self.executor)
        if not self.recorded:
            check_heldout(self.decontam, self.heldout)
        panel = [self.cfg.panel] if self.cfg.panel else []
        check_output(
            self.cfg,
            [p.location for p in self.sources + self.heldout if p.is_local] + self.records() + panel,
            self.generation,
            self.decontam,
            self.source_options,
        )

    def records(self) -> list[str]:
        """The recorded prompt and candidate files (empty when the release generates and labels)."""
        if not self.recorded:
            return []
        from spl_hf.build import sample_path

        names = {"recorded_prompts": "spl_prompts.jsonl", "recorded_candidates": "spl_candidates.jsonl"}
        out = []
        for key, sample in names.items():
            value = getattr(self.cfg, key)
            path = sample_path(sample) if value == "sample" else Path(value)
            if not path.is_file():
                raise FileNotFoundError(f"{key}: {value} does not exist")
            out.append(str(path))
        if self.cfg.recorded_verdicts:
            if not Path(self.cfg.recorded_verdicts).is_file():
                raise FileNotFoundError(f"recorded_verdicts: {self.cfg.recorded_verdicts} does not exist")
            out.append(self.cfg.recorded_verdicts)
        return out

    def run(self) -> dict[str, Any]:
        c = self.cfg
        runner = StageRunner(Path(c.run_dir), log=self.log)
        if self.recorded:
            return self._run_recorded(runner)
        if c.dry_run:
            return self._plan(runner)
        clean = self._drawn_prompts(runner)
        labeled, judged = self._model_stages(runner, clean)
        written = runner.run(
            "write",
            {
                "prompts": content(labeled, "prompts.jsonl"),
                "decontamination": content(clean, DECONTAMINATION_FILE),
                "candidates": content(labeled, "candidates.jsonl"),
                "verdicts": content(judged, VERDICTS_FILE) if judged else None,
                **self._derive_inputs(),
            },
            lambda d: self._write(
                labeled.path, clean.path, d, judged.path / VERDICTS_FILE if judged else None
            ),
            still_valid=lambda d: written_here(d, c.output_dir),
            reads=(READS["write"], self),
        )
        return self._finish(runner, written)

    def _plan(self, runner: StageRunner) -> dict[str, Any]:
        """--dry_run: the stages this recipe would run and whether its first one is done, no model."""
        from spl_hf.backends import check_engine_package
        from spl_hf.release.pools import preview_sources
        from spl_hf.sources import SourceOptions

        c = self.cfg
        if not self.recorded:  # recorded attributes load no model
            check_engine_package(c.backend)
        key, path, done = runner.plan(
            "prompts", {**self._prompt_settings(), "reads": READS["prompts"].values(self)}
        )
        heldout_opts = SourceOptions(harmbench_categories=tuple(self.decontam.heldout_harmbench_categories))
        # what the prompts stage would refuse is refused now, naming the file
        previews = preview_sources(self.sources, self.source_options)
        previews += preview_sources(self.heldout, heldout_opts)
        plan = {
            "sources": [asdict(s) for s in self.sources],
            "pool_sizes": self.sizes,
            "candidate_fraction": {k: str(v) for k, v in self.fractions.items()},
            "labeler_mode": c.labeler_mode,
            "stages": ["prompts", "decontaminate", "generate", "label"]
            + (["verdict"] if c.verdict_judge else [])
            + ["write", "audit"]
            + (["publish"] if c.repo_id else []),
            "prompts": {"key": key, "path": str(path), "finished": done},
            "instructions": list(self.generation.instructions),
            "rulebase": self.rulebase.id,
            "previews": previews,
        }
        self.log(json.dumps(plan, indent=2))
        return plan

    def _drawn_prompts(self, runner: StageRunner) -> Any:
        """The prompts and decontaminate stages: every source read, then drawn after decontamination."""
        prompts = runner.run(
            "prompts",
            self._prompt_settings(),
            self._prompts,
            reuse=all(s.pinned for s in self.sources),
            reads=(READS["prompts"], self),
        )
        clean = runner.run(
            "decontaminate",
            {
                "prompts": content(prompts, "prompts.parquet"),
                "heldout": {p.source: p.identity() for p in self.heldout},
            },
            lambda d: self._decontaminate(prompts.path, d),
            reads=(READS["decontaminate"], self),
        )
        return clean

    def _model_stages(self, runner: StageRunner, clean: Any) -> tuple[Any, Any]:
        """generate -> label (-> verdict): the stages that run a model, keyed by its settings."""
        generated = runner.run(
            "generate",
            {"prompts": content(clean, "prompts.parquet")},
            lambda d: self._generate(clean.path, d),
            reads=(READS["generate"], self),
        )
        labeled = runner.run(
            "label",
            {
                "candidates": content(generated, "candidates.parquet"),
                "prompts": content(clean, "prompts.parquet"),
                "schema": self.rulebase.schema.hash,
            },
            lambda d: self._label(clean.path, generated.path, d),
            reads=(READS["label"], self),
        )
        judged = None
        if self.cfg.verdict_judge:
            judged = runner.run(
                "verdict",
                {
                    "candidates": content(labeled, "candidates.jsonl"),
                    "prompts": content(labeled, "prompts.jsonl"),
                    "ranking": sorted(self.rulebase.verdicts.items()),
                },
                lambda d: self._verdict(labeled.path, d),
                reads=(READS["verdict"], self),
            )
        return labeled, judged

    def _derive_inputs(self) -> dict[str, Any]:
        """The files the write stage reads besides the records: the rule base and the panel, by content."""
        return {
            "rulebase": self.rulebase.hash,
            **({"panel": fingerprint(self.cfg.panel)} if self.cfg.panel else {}),
        }

    def _finish(self, runner: StageRunner, written: Any) -> dict[str, Any]:
        from spl_hf.release.gates import check_gates, row_gate

        c = self.cfg
        # The rows are known only once derived, so an SPL release checks min_rows before its audit and
        # publish stages: a dataset without labeled pairs is never reported as a success. The build
        # already keeps the same record (written with passed false when the gate fails, which publish
        # refuses), computed with the same function.
        gates = check_gates(
            [row_gate(written.counts["labeled"], c)],
            c.gates_note,
            f"not audited or published ({c.output_dir})",
        )
        record_output(c, self.generation, self.decontam, self.source_options)
        audited = runner.run(
            "audit",
            {"write": written.key, "manifest": manifest_hash(c.output_dir)},
            self._audit,
            reads=(READS["audit"], self),
        )
        if not audited.counts.get("ok"):
            raise RuntimeError(f"the audit of {c.output_dir} failed: {audited.counts}")
        if c.repo_id:
            runner.run("publish", {"write": written.key}, self._publish, reads=(READS["publish"], self))
        report = {"kind": "spl_safety", "output_dir": c.output_dir, **runner.report(), "quality_gates": gates}
        path = Path(c.run_dir) / "run_report.json"
        write_json(path, report, sort_keys=True, ascii_only=True, default=str)
        self.log(f"run report: {path}")
        return report

    def _run_recorded(self, runner: StageRunner) -> dict[str, Any]:
        c = self.cfg
        prompts, candidates, *verdicts = self.records()
        verdict_file = verdicts[0] if verdicts else None
        if c.dry_run:
            plan = {
                "recorded_prompts": prompts,
                "recorded_candidates": candidates,
                "recorded_verdicts": verdict_file,
                "rulebase": self.rulebase.id,
                "stages": ["write", "audit"] + (["publish"] if c.repo_id else []),
            }
            self.log(json.dumps(plan, indent=2))
            return plan
        written = runner.run(
            "write",
            {
                "prompts": fingerprint(prompts),
                "candidates": fingerprint(candidates),
                "verdicts": fingerprint(verdict_file) if verdict_file else None,
                **self._derive_inputs(),
            },
            lambda d: self._write_records(prompts, candidates, d, verdicts=verdict_file),
            still_valid=lambda d: written_here(d, c.output_dir),
            reads=(READS["recorded_write"], self),
        )
        return self._finish(runner, written)

    def _prompt_settings(self) -> dict[str, Any]:
        """The prompts stage's inputs: each source's identity (a file's content hash, a Hub id at its commit)."""
        return {"sources": {s.source: s.identity() for s in self.sources}, "whole": True}

    def _prompts(self, out: Path) -> dict[str, Any]:
        """Every prompt of every source; the per-source sample is drawn after decontamination."""
        import pyarrow as pa

        from spl_hf.release.decontam_stage import write_source_reports
        from spl_hf.sources import quarantine_dataset, read_prompt_pool, require_rows

        tables, quarantine, reports = [], [], []
        counts: dict[str, Any] = {"per_source": {}, "quarantined": {}}
        for spec in self.sources:
            options = replace(self.source_options, revision=spec.revision)
            result = read_prompt_pool(spec.reader, spec.location, options, **spec.read_kwargs())
            require_rows(
                result.report, result.quarantine
            )  # a file its adapter cannot read is an error, not an empty source
            table = result.prompts.data.table
            counts["per_source"][spec.source] = table.num_rows
            counts["quarantined"][spec.source] = len(result.quarantine)
            quarantine.extend(result.quarantine)
            reports.append({**result.report.to_dict(), "role": "source"})
            tables.append(table)
        rows = pa.concat_tables(tables)
        if rows.num_rows == 0:
            raise SplHfError("prompt_sources: no prompts were read")
        write_parquet(out / "prompts.parquet", rows)
        write_parquet(out / "quarantine.parquet", quarantine_dataset(quarantine).data.table)
        write_source_reports(out, reports)
        counts["prompts"] = rows.num_rows
        return counts

    def _draw(self, kept: Any) -> tuple[Any, dict[str, Any]]:
        """The seeded per-source sample of the decontaminated prompts, and which sources ended empty."""
        drawn, record = draw_prompts(kept, self.sizes, self.cfg.draw_seed, [s.source for s in self.sources])
        if record["empty_sources"]:
            self.log(
                f"  warning: no prompt of {', '.join(record['empty_sources'])} is left after decontamination"
            )
        return drawn, record

    def _with_candidates(self, prompts: list[dict]) -> tuple[list[dict], dict[str, int]]:
        """The prompts that get candidates and per source how many get none (:func:`with_candidates`)."""
        return with_candidates(prompts, self.fractions, self.cfg.draw_seed)

    def _decontaminate(self, prompts_dir: Path, out: Path) -> dict[str, Any]:
        import pyarrow.parquet as pq

        from spl_hf.release.decontam_stage import decontaminate_rows, read_source_reports

        kept, counts = decontaminate_rows(
            pq.read_table(prompts_dir / "prompts.parquet"),
            self.heldout,
            self.decontam,
            out,
            self.log,
            sources=read_source_reports(prompts_dir),
            draw=self._draw,
        )
        write_parquet(out / "prompts.parquet", kept)
        return counts

    def _generate(self, clean_dir: Path, out: Path) -> dict[str, Any]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from spl_hf.backends import generate_items, generate_stage, prompts_from_rows, run_stage

        chosen, without = self._with_candidates(pq.read_table(clean_dir / "prompts.parquet").to_pylist())
        rows = [
            {"prompt_id": r["prompt_id"], "prompt": [{"role": "user", "content": r["prompt"]}]}
            for r in chosen
        ]
        prompts, failures = prompts_from_rows(rows)
        items = generate_items(prompts, self.generation)
        result = run_stage(generate_stage(self.cfg, self.generation), items, self.store, self.executor)
        cands = result.rows
        write_parquet(out / "candidates.parquet", pa.Table.from_pylist(cands))
        return {
            "prompts": len(prompts),
            "candidates": len(cands),
            "failed": len(failures) + len(items) - len(cands),
            "at_limit": sum(bool(r["hit_limit"]) for r in cands),
            "without_candidates": without,
            "computed": result.computed,
            "cached": result.cached,
        }

    def _label(self, clean_dir: Path, gen_dir: Path, out: Path) -> dict[str, Any]:
        from spl_hf.release.spl_label import label_stage

        return label_stage(self, clean_dir, gen_dir, out)

    def _verdict(self, label_dir: Path, out: Path) -> dict[str, Any]:
        from spl_hf.release.spl_label import verdict_stage

        return verdict_stage(self, label_dir, out)

    def _write(self, label_dir: Path, clean_dir: Path, out: Path, verdicts: Path | None) -> dict[str, Any]:
        return self._write_records(
            str(label_dir / "prompts.jsonl"),
            str(label_dir / "candidates.jsonl"),
            out,
            decontamination=str(clean_dir / DECONTAMINATION_FILE),
            verdicts=str(verdicts) if verdicts else None,
        )

    def _write_records(
        self,
        prompts: str,
        candidates: str,
        out: Path,
        decontamination: str | None = None,
        verdicts: str | None = None,
    ) -> dict[str, Any]:
        from spl_hf.build import SPLBuildConfig, SPLDeriveArgs, build_spl, fields_of

        c = self.cfg
        build = SPLBuildConfig(
            prompts=prompts,
            candidates=candidates,
            decontamination=decontamination,
            verdicts=verdicts,
            **fields_of(c, SPLDeriveArgs),  # the release's derivation settings, passed on whole
            output_dir=c.output_dir,
            overwrite=True,
        )
        # The card names the repo it is published to, or a placeholder, and this release's title.
        result = build_spl(
            replace(
                build,
                repo_id=c.repo_id or "ORG/NAME",
                pretty_name=c.pretty_name or "SPL safety preference pairs",
            ),
            min_rows=c.min_rows,
            gates_note=c.gates_note,
        )
        record_written(out, c.output_dir)
        counts = {
            "pairs": result.total,
            "labeled": result.labeled,
            "splits": result.splits,
            "prompts_without_pairs": len(result.prompts_without_pairs),
        }
        if result.judge is not None:
            counts.update(
                judge_labeled=result.judge.labeled_judge,
                common_support=result.judge.common_support,
                same_choice=result.judge.same_choice,
            )
        return counts

    def _audit(self, out: Path) -> dict[str, Any]:
        from spl_hf.audit import audit

        # The build's own rule base (its rulebase.yaml, written from self.rulebase), so that audit.json
        # is exactly what `spl-hf audit OUTPUT_DIR --json` prints.
        report = audit(self.cfg.output_dir)
        report.write_json(out / "audit.json")  # the shape `spl-hf audit --json` prints
        return {
            "ok": report.ok,
            "rows": report.rows,
            "reproduced": report.reproduced,
            **report.judge_counts,
            "failures": len(report.failures),
        }

    def _publish(self, out: Path) -> dict[str, Any]:
        # min_rows 0: the release accepted an empty result explicitly.
        return publish_output(self.cfg, out, allow_empty=self.cfg.min_rows == 0)


def make_release(
    cfg: SPLReleaseConfig, generation: Any, decontam: Any, executor: Any = None, source_options: Any = None
) -> SPLRelease:
    return SPLRelease(cfg, generation, decontam, executor, source_options)
