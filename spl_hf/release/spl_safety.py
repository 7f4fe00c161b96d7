"""The SPL safety release, from prompt sources to a published dataset, in resumable stages.

prompts (Table VI sources, pool sizes as a setting) -> decontaminate -> generate candidates under
named instructions -> label prompt attributes once per prompt and response attributes per candidate
-> derive with the rule base and write the dataset -> audit -> publish (when a repo id is set).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from spl_hf.backends import engine_kwargs, load_backend
from spl_hf.contract import DECONTAMINATION_FILE
from spl_hf.errors import SplHfError
from spl_hf.release.config import SPLReleaseConfig, parse_assignments
from spl_hf.release.decontam_stage import check_heldout
from spl_hf.release.pools import SourceSpec, parse_sources
from spl_hf.release.stages import StageRunner, fingerprint
from spl_hf.release.written import WRITTEN, check_output, content, manifest_hash, written_here

VERDICTS_FILE = "verdicts.jsonl"


def recipe_classes() -> tuple[type, ...]:
    """The config dataclasses whose fields a recipe of this release holds (:data:`spl_hf.recipes.RECIPE_KINDS`)."""
    from spl_hf.recipes import kind_classes

    return kind_classes("spl")


def draw(ids: list[str], n: int, seed: int | str) -> set[str]:
    """A seeded draw of ``n`` ids that does not depend on their order (smallest keyed hashes)."""
    keyed = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}\0{i}".encode()).hexdigest())
    return set(keyed[:n])


@dataclass
class SPLRelease:
    cfg: SPLReleaseConfig
    generation: Any  # GenerationConfig
    decontam: Any  # DecontamConfig
    log: Any = print
    sources: list[SourceSpec] = field(init=False)
    heldout: list[SourceSpec] = field(init=False)

    def __post_init__(self) -> None:
        from spl_hf.sources import PROMPT_SOURCES, eval_sample_paths, prompt_sample_paths

        recorded = (self.cfg.recorded_prompts, self.cfg.recorded_candidates)
        if any(recorded) and not all(recorded):
            raise SplHfError("recorded_prompts and recorded_candidates go together")
        self.recorded = all(recorded)
        if self.cfg.recorded_verdicts and not self.recorded:
            raise SplHfError(
                "recorded_verdicts goes with recorded_prompts and recorded_candidates (set "
                "verdict_judge to judge generated candidates)"
            )
        if self.cfg.verdict_model and not self.cfg.verdict_judge:
            raise SplHfError("verdict_model is the model of the verdict stage: set verdict_judge too")
        if self.cfg.verdict_judge and self.recorded:
            raise SplHfError(
                "verdict_judge judges generated candidates; with recorded attributes give recorded_verdicts"
            )
        if self.recorded == bool(self.cfg.prompt_sources):
            raise SplHfError(
                "give either prompt_sources (generate and label) or recorded_prompts and "
                "recorded_candidates (derive from recorded attributes)"
            )
        self.sources = parse_sources(
            self.cfg.prompt_sources, PROMPT_SOURCES, prompt_sample_paths(), "prompt_sources"
        )
        self.heldout = (
            parse_sources(self.cfg.heldout_files, PROMPT_SOURCES, eval_sample_paths(), "heldout_files")
            if self.cfg.heldout_files
            else []
        )
        self.sizes = {
            k: _positive_int(v, f"pool_sizes {k}")
            for k, v in parse_assignments(self.cfg.pool_sizes, "pool_sizes").items()
        }
        unknown = sorted(set(self.sizes) - {s.source for s in self.sources})
        if unknown:
            raise SplHfError(f"pool_sizes: {unknown} are not among prompt_sources")
        self.fractions = {
            k: _fraction(v, f"candidate_fraction {k}")
            for k, v in parse_assignments(self.cfg.candidate_fraction, "candidate_fraction").items()
        }
        unknown = sorted(set(self.fractions) - {s.source for s in self.sources})
        if unknown:
            raise SplHfError(f"candidate_fraction: {unknown} are not among prompt_sources")
        if self.cfg.labeler_mode not in ("constrained", "json"):
            raise SplHfError(f"labeler_mode must be 'constrained' or 'json', got {self.cfg.labeler_mode!r}")
        from spl_hf.rules import default_rulebase, load_rulebase

        self.rulebase = load_rulebase(self.cfg.rulebase) if self.cfg.rulebase else default_rulebase()
        if not self.recorded:
            check_heldout(self.decontam, self.heldout)
        if self.cfg.panel and not Path(self.cfg.panel).is_file():
            raise FileNotFoundError(f"panel: {self.cfg.panel} does not exist")
        panel = [self.cfg.panel] if self.cfg.panel else []
        check_output(
            self.cfg, [p.location for p in self.sources + self.heldout if p.is_local] + self.records() + panel
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
                "rulebase": self.rulebase.hash,
                "margin": c.margin,
                **({"panel": fingerprint(c.panel)} if c.panel else {}),
                "verdicts": content(judged, VERDICTS_FILE) if judged else None,
                "output_dir": c.output_dir,
                "repo_id": c.repo_id,
                "pretty_name": c.pretty_name,
            },
            lambda d: self._write(
                labeled.path, clean.path, d, judged.path / VERDICTS_FILE if judged else None
            ),
            still_valid=lambda d: written_here(d, c.output_dir),
        )
        return self._finish(runner, written)

    def _plan(self, runner: StageRunner) -> dict[str, Any]:
        """--dry_run: the stages this recipe would run and whether its first one is done, no model."""
        c = self.cfg
        key, path, done = runner.plan("prompts", self._prompt_settings())
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
        }
        self.log(json.dumps(plan, indent=2))
        return plan

    def _drawn_prompts(self, runner: StageRunner) -> Any:
        """The prompts and decontaminate stages: every source read, then drawn after decontamination."""
        prompts = runner.run(
            "prompts", self._prompt_settings(), self._prompts, reuse=all(s.pinned for s in self.sources)
        )
        clean = runner.run(
            "decontaminate",
            {
                "prompts": content(prompts, "prompts.parquet"),
                "heldout": {p.source: p.identity() for p in self.heldout},
                "decontam": asdict(self.decontam),
                "sizes": self.sizes,
                "seed": self.cfg.draw_seed,
            },
            lambda d: self._decontaminate(prompts.path, d),
        )
        return clean

    def _model_stages(self, runner: StageRunner, clean: Any) -> tuple[Any, Any]:
        """generate -> label (-> verdict): the stages that run a model, keyed by its settings."""
        c = self.cfg
        model = {"model": c.model, "backend": c.backend, "max_length": c.max_length, **engine_kwargs(c)}
        # Only when set, so that the stage keys of runs without it stay what they were.
        share = {"candidate_fraction": self._fraction_key()} if self.fractions else {}
        generated = runner.run(
            "generate",
            {
                "prompts": content(clean, "prompts.parquet"),
                **share,
                **model,
                "generation": {k: v for k, v in asdict(self.generation).items() if k != "progress"},
            },
            lambda d: self._generate(clean.path, d),
        )
        labeled = runner.run(
            "label",
            {
                "candidates": content(generated, "candidates.parquet"),
                **share,
                **model,
                "mode": c.labeler_mode,
                "schema": self.rulebase.schema.hash,
            },
            lambda d: self._label(clean.path, generated.path, d),
        )
        judged = None
        if c.verdict_judge:
            judged = runner.run(
                "verdict",
                {
                    "candidates": content(labeled, "candidates.jsonl"),
                    "prompts": content(labeled, "prompts.jsonl"),
                    **model,
                    "verdict_model": c.verdict_model,
                    "ranking": sorted(self.rulebase.verdicts.items()),
                },
                lambda d: self._verdict(labeled.path, d),
            )
        return labeled, judged

    def _finish(self, runner: StageRunner, written: Any) -> dict[str, Any]:
        c = self.cfg
        audited = runner.run(
            "audit", {"write": written.key, "manifest": manifest_hash(c.output_dir)}, self._audit
        )
        if not audited.counts.get("ok"):
            raise RuntimeError(f"the audit of {c.output_dir} failed: {audited.counts}")
        if c.repo_id:
            runner.run(
                "publish",
                {
                    "write": written.key,
                    "repo_id": c.repo_id,
                    "revision": c.revision,
                    "private": c.private,
                },
                self._publish,
            )
        report = {"kind": "spl_safety", "output_dir": c.output_dir, **runner.report()}
        path = Path(c.run_dir) / "run_report.json"
        path.write_text(json.dumps(report, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
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
                "rulebase": self.rulebase.hash,
                "margin": c.margin,
                **({"panel": fingerprint(c.panel)} if c.panel else {}),
                "output_dir": c.output_dir,
                "repo_id": c.repo_id,
                "pretty_name": c.pretty_name,
            },
            lambda d: self._write_records(prompts, candidates, d, verdicts=verdict_file),
            still_valid=lambda d: written_here(d, c.output_dir),
        )
        return self._finish(runner, written)

    def _prompt_settings(self) -> dict[str, Any]:
        return {
            "sources": {s.source: s.identity() for s in self.sources},
            "reads": "whole",
            **({"accept_partial": True} if self.cfg.accept_partial else {}),
        }

    def _prompts(self, out: Path) -> dict[str, Any]:
        """Every prompt of every source; the per-source sample is drawn after decontamination."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from spl_hf.release.decontam_stage import write_source_reports
        from spl_hf.sources import SourceOptions, quarantine_dataset, read_prompt_pool

        tables, quarantine, reports = [], [], []
        counts: dict[str, Any] = {"per_source": {}, "quarantined": {}}
        for spec in self.sources:
            options = SourceOptions(revision=spec.revision, accept_partial=self.cfg.accept_partial)
            result = read_prompt_pool(spec.source, spec.location, options)
            table = result.prompts.data.table
            counts["per_source"][spec.source] = table.num_rows
            counts["quarantined"][spec.source] = len(result.quarantine)
            quarantine.extend(result.quarantine)
            reports.append({**result.report.to_dict(), "role": "source"})
            tables.append(table)
        rows = pa.concat_tables(tables)
        if rows.num_rows == 0:
            raise SplHfError("prompt_sources: no prompts were read")
        pq.write_table(rows, out / "prompts.parquet")
        pq.write_table(quarantine_dataset(quarantine).data.table, out / "quarantine.parquet")
        write_source_reports(out, reports)
        counts["prompts"] = rows.num_rows
        return counts

    def _draw(self, kept: Any) -> tuple[Any, dict[str, Any]]:
        """The seeded per-source sample of the decontaminated prompts, and which sources ended empty."""
        import pyarrow as pa
        import pyarrow.compute as pc

        sources = kept.column("source").to_pylist()
        ids = kept.column("prompt_id").to_pylist()
        keep = [True] * kept.num_rows
        for name, n in self.sizes.items():
            chosen = draw([i for i, s in zip(ids, sources) if s == name], n, self.cfg.draw_seed)
            keep = [k and (s != name or i in chosen) for k, i, s in zip(keep, ids, sources)]
        drawn = kept.filter(pa.array(keep, pa.bool_()))
        left = pc.value_counts(drawn.column("source")).to_pylist() if drawn.num_rows else []
        per = {str(v["values"]): int(v["counts"]) for v in left}
        names = [s.source for s in self.sources]
        counts = {name: per.get(name, 0) for name in names}
        empty = [name for name in names if not counts[name]]
        if empty:
            self.log(f"  warning: no prompt of {', '.join(empty)} is left after decontamination")
        return drawn, {"drawn": counts, "pool_sizes": dict(self.sizes), "empty_sources": empty}

    def _fraction_key(self) -> dict[str, str]:
        return {k: str(v) for k, v in sorted(self.fractions.items())}

    def _with_candidates(self, prompts: list[dict]) -> tuple[list[dict], dict[str, int]]:
        """The drawn prompts that get candidates (a seeded choice of each source's candidate_fraction,
        independent of row order), and per source how many get none."""
        chosen: set[str] = set()
        without: dict[str, int] = {}
        for name in dict.fromkeys(p["source"] for p in prompts):
            ids = [p["prompt_id"] for p in prompts if p["source"] == name]
            share = self.fractions.get(name, Fraction(1))
            n = math.floor(share * len(ids) + Fraction(1, 2))  # rounded half up, exactly
            # A seed of its own, so the choice is not the first n of the pool draw's order.
            picked = draw(ids, n, f"candidates:{self.cfg.draw_seed}") if n < len(ids) else set(ids)
            chosen |= picked
            without[name] = len(ids) - len(picked)
        return [p for p in prompts if p["prompt_id"] in chosen], without

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
        pq.write_table(kept, out / "prompts.parquet")
        return counts

    def _generate(self, clean_dir: Path, out: Path) -> dict[str, Any]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from spl_hf.backends import CandidateGenerator, ResultCache, prompts_from_rows

        chosen, without = self._with_candidates(pq.read_table(clean_dir / "prompts.parquet").to_pylist())
        rows = [
            {"prompt_id": r["prompt_id"], "prompt": [{"role": "user", "content": r["prompt"]}]}
            for r in chosen
        ]
        prompts, failures = prompts_from_rows(rows)
        self._model = load_backend(self.cfg)
        gen = CandidateGenerator(self._model, self.generation)
        items = gen.items(prompts)
        with ResultCache(Path(self.cfg.run_dir) / "cache" / "generate.sqlite") as cache:
            stats = gen.run(items, cache)
            cands = gen.collect(items, cache)
        pq.write_table(pa.Table.from_pylist(cands), out / "candidates.parquet")
        return {
            "prompts": len(prompts),
            "candidates": len(cands),
            "failed": len(failures) + len(items) - len(cands),
            "at_limit": sum(bool(r["hit_limit"]) for r in cands),
            "without_candidates": without,
            "computed": stats.get("computed"),
            "cached": stats.get("cached"),
        }

    def _label(self, clean_dir: Path, gen_dir: Path, out: Path) -> dict[str, Any]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from spl_hf.backends import AttributeLabeler, LabelerConfig, ResultCache, items_from_rows

        cands = pq.read_table(gen_dir / "candidates.parquet").to_pylist()
        prompts, _ = self._with_candidates(pq.read_table(clean_dir / "prompts.parquet").to_pylist())
        rows = [
            {"prompt_id": r["prompt_id"], "prompt": [{"role": "user", "content": r["prompt"]}]}
            for r in prompts
        ]
        rows += [
            {
                "prompt_id": r["prompt_id"],
                "prompt": r["prompt"],
                "response": r["response"],
                "response_id": r["response_id"],
            }
            for r in cands
        ]
        items, failures = items_from_rows(rows)
        model = getattr(self, "_model", None) or load_backend(self.cfg)
        labeler = AttributeLabeler(model, self.rulebase.schema, LabelerConfig(mode=self.cfg.labeler_mode))
        with ResultCache(Path(self.cfg.run_dir) / "cache" / "label.sqlite") as cache:
            stats = labeler.run(items, cache)
            labels = labeler.collect(items, cache)
        pq.write_table(pa.Table.from_pylist(labels), out / "labels.parquet")
        # The records the SPL build reads: prompt attributes once per prompt, response attributes per candidate.
        by_id = {
            (r["scope"], r["prompt_id"] if r["scope"] == "prompt" else r["response_id"]): r for r in labels
        }
        engine = _engine(model)
        labeler_id = {**engine, "mode": labeler.config.mode, **_model_identity(labeler)}
        with open(out / "prompts.jsonl", "w", encoding="utf-8") as fh:
            for p in prompts:
                rec = {**_record(p, by_id.get(("prompt", p["prompt_id"]))), "labeler": labeler_id}
                fh.write(json.dumps(rec, sort_keys=True) + "\n")
        with open(out / "candidates.jsonl", "w", encoding="utf-8") as fh:
            for r in cands:
                lab = by_id.get(("response", r["response_id"]))
                rec = {
                    "prompt_id": r["prompt_id"],
                    "candidate_id": r["response_id"].replace("/", "_"),
                    "instruction": r["instruction"],
                    "response": r["response"],
                    **_attrs(lab),
                    "labeler": labeler_id,
                    # The generate stage runs the same model settings; its rows carry the weights' identity.
                    "generator": {
                        **engine,
                        "mode": "generate",
                        "model_id": r["model_id"],
                        "model_revision": r["model_revision"],
                        "template_hash": r["template_hash"],
                    },
                }
                fh.write(json.dumps(rec, sort_keys=True) + "\n")
        statuses: dict[str, int] = {}
        for r in labels:
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
        return {
            "items": len(items),
            "labels": len(labels),
            "malformed": len(failures),
            "status": statuses,
            "computed": stats.get("computed"),
            "cached": stats.get("cached"),
        }

    def _verdict(self, label_dir: Path, out: Path) -> dict[str, Any]:
        from spl_hf.backends import ResultCache, VerdictJudge, items_from_rows
        from spl_hf.derive import VerdictRecord, read_jsonl, verdict_record_json

        text = {p["prompt_id"]: p["prompt"] for p in read_jsonl(label_dir / "prompts.jsonl")}
        cands = read_jsonl(label_dir / "candidates.jsonl")
        items, failures = items_from_rows(
            {
                "prompt_id": r["prompt_id"],
                "prompt": [{"role": "user", "content": text[r["prompt_id"]]}],
                "response": r["response"],
                "response_id": r["candidate_id"],
            }
            for r in cands
        )
        if self.cfg.verdict_model:
            model = load_backend(replace(self.cfg, model=self.cfg.verdict_model))
        else:
            model = getattr(self, "_model", None) or load_backend(self.cfg)
        judge = VerdictJudge(model, dict(self.rulebase.verdicts), progress=self.generation.progress)
        with ResultCache(Path(self.cfg.run_dir) / "cache" / "verdict.sqlite") as cache:
            stats = judge.run(items, cache)
            got = {r["response_id"]: r for r in judge.collect(items, cache)}
        verdicts: dict[str, int] = {}
        with open(out / VERDICTS_FILE, "w", encoding="utf-8") as fh:
            for r in cands:
                row = got.get(r["candidate_id"])
                if row is None:  # recorded as not judged, never given a default verdict
                    rec = VerdictRecord(r["candidate_id"], "not_judged", None, None, None, None, None)
                else:
                    probs = json.loads(row["probs_json"])
                    rec = VerdictRecord(
                        r["candidate_id"],
                        "ok",
                        tuple(probs[v] for v in judge.verdicts),
                        row["mass"],
                        row["model_id"],
                        row["model_revision"],
                        row["template_hash"],
                    )
                    verdicts[row["verdict"]] = verdicts.get(row["verdict"], 0) + 1
                line = json.loads(verdict_record_json(rec, r["prompt_id"], judge.verdicts))
                fh.write(json.dumps({**line, "engine": _engine(model)}, sort_keys=True) + "\n")
        return {
            "candidates": len(cands),
            "judged": len(got),
            "not_judged": len(cands) - len(got),
            "malformed": len(failures),
            "verdicts": verdicts,
            "computed": stats.get("computed"),
            "cached": stats.get("cached"),
        }

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
        from spl_hf.build import SPLBuildConfig, build_spl

        c = self.cfg
        result = build_spl(
            SPLBuildConfig(
                prompts=prompts,
                candidates=candidates,
                rulebase=c.rulebase,
                margin=c.margin,
                output_dir=c.output_dir,
                overwrite=True,
                repo_id=c.repo_id or "ORG/NAME",
                pretty_name=c.pretty_name or "SPL safety preference pairs",
                decontamination=decontamination,
                verdicts=verdicts,
                panel=c.panel,
            )
        )
        (out / WRITTEN).write_text(manifest_hash(c.output_dir) or "", encoding="utf-8")
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

        result = audit(self.cfg.output_dir, rulebase=self.rulebase).result
        judge = result.judge
        record = {
            "ok": result.ok,
            "rules": result.rules.to_dict(),
            "judge": judge.to_dict() if judge else None,
            "failures": result.failures,
        }
        (out / "audit.json").write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
        return {
            "ok": result.ok,
            "rows": result.rules.rows,
            "reproduced": result.rules.reproduced,
            **({"judge_rows": judge.rows, "judge_reproduced": judge.reproduced} if judge else {}),
            "failures": len(result.failures),
        }

    def _publish(self, out: Path) -> dict[str, Any]:
        from spl_hf.hub import publish

        c = self.cfg
        result = publish(
            c.output_dir, c.repo_id, revision=c.revision, private=c.private, create_pr=c.create_pr
        )
        (out / "publish.json").write_text(
            json.dumps({**result.to_json(), "load": result.load_line()}, indent=2) + "\n", encoding="utf-8"
        )
        return {"repo_id": result.repo_id, "commit_sha": result.commit_sha}


def _attrs(label: dict | None) -> dict[str, Any]:
    if label is None:  # the labeler could not take this item: recorded, never defaulted
        return {"attributes": None, "parse_status": "not_labeled", "raw_output": None, "label_mass": None}
    attrs = json.loads(label["attributes_json"]) if label.get("attributes_json") else None
    return {
        "attributes": attrs,
        "parse_status": label["status"],
        "raw_output": label.get("raw_text"),
        # Constrained mode: the probability the answer letters held per attribute (the rest is off-label).
        "label_mass": json.loads(label["mass_json"]) if label.get("mass_json") else None,
    }


def _engine(model: Any) -> dict[str, Any]:
    """Backend and resolved dtype of a loaded model, as every record of its outputs names them."""
    engine = getattr(model, "engine", None) or {}
    return {"backend": engine.get("backend"), "dtype": engine.get("dtype")}


def _model_identity(labeler: Any) -> dict[str, Any]:
    info = labeler.backend.info
    return {
        "model_id": info.model_id,
        "model_revision": info.revision,
        "template_hash": labeler.template_hash,
    }


def _record(prompt: dict, label: dict | None) -> dict[str, Any]:
    return {
        "prompt_id": prompt["prompt_id"],
        "source": prompt["source"],
        "source_category": prompt["category"],
        "prompt": prompt["prompt"],
        **_attrs(label),
    }


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


def make_release(cfg: SPLReleaseConfig, generation: Any, decontam: Any) -> SPLRelease:
    return SPLRelease(cfg, generation, decontam)
