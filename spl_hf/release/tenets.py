"""The per-tenet DPO release, from source pools to a published dataset, in resumable stages.

read pools -> decontaminate -> judge every (pair, tenet) in both orderings -> assign by min-cost
flow -> write the dataset -> audit -> publish (when a repo id is set). See ``stages.py`` for how a
rerun skips finished stages and a killed judge stage resumes from its cache.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from spl_hf.contract import DECONTAMINATION_FILE
from spl_hf.errors import SplHfError
from spl_hf.files import write_json, write_jsonl, write_parquet
from spl_hf.release.config import TenetReleaseConfig
from spl_hf.release.decontam_stage import check_heldout
from spl_hf.release.pools import SourceSpec, parse_sources
from spl_hf.release.reads import MODEL_FIELDS, PER_READ_OPTIONS, PUBLISH, Reads
from spl_hf.release.results import open_results
from spl_hf.release.stages import StageRunner, read_stage_json
from spl_hf.release.written import (
    check_output,
    content,
    manifest_hash,
    publish_output,
    record_output,
    record_written,
    written_here,
)

ASSIGN_STATS = "assignment_stats.json"  # in the assign stage's folder: the solve's statistics
GATES = ("min_rows", "gates_note", "min_position_consistency", "min_pool_agreement", "min_median_label_mass")

# What each stage reads of the configs (see spl_hf.release.reads): its key hashes these values besides
# the content of the files it reads, and it can read nothing else. Every field of every config of this
# release is in one of these or in RUN_SETTINGS (tests/test_release_reads.py checks it).
READS: dict[str, Reads] = {
    # The source options are taken whole; the per-read fields are set by the stage itself, per pool.
    "read": Reads(("pools",), configs=("source_options",), runs_only=PER_READ_OPTIONS),
    "decontaminate": Reads(("heldout_files",), configs=("decontam",)),
    "judge": Reads(
        ("tenets", "tenets_file", *MODEL_FIELDS), configs=("judge",), runs_only=("threads", "judge.progress")
    ),
    "assign": Reads(configs=("assign",)),
    # The build writes the assignment settings into every row, the certificate and the card.
    "write": Reads(
        ("output_dir", "repo_id", "pretty_name", "threshold_note", "tenets_file", "sft", "tenets", *GATES),
        configs=("assign",),
    ),
    "audit": Reads(("output_dir", "tenets"), configs=("assign",)),
    "publish": Reads(PUBLISH),
}


def recipe_classes() -> tuple[type, ...]:
    """The config dataclasses whose fields a recipe of this release holds (:data:`spl_hf.recipes.RECIPE_KINDS`)."""
    from spl_hf.recipes import kind_classes

    return kind_classes("tenets")


@dataclass
class TenetRelease:
    cfg: TenetReleaseConfig
    assign: Any  # AssignConfig
    judge: Any  # JudgeConfig
    decontam: Any  # DecontamConfig
    executor: Any = None  # ExecutorArgs (default: local)
    source_options: Any = None  # SourceOptions (default: the adapters' defaults)
    log: Any = print
    pools: list[SourceSpec] = field(init=False)
    heldout: list[SourceSpec] = field(init=False)
    # The judge stage's timing in this process (seconds computing, in the engine, writing; replicas):
    # said to the caller, never written, as it changes from run to run.
    judge_timing: dict[str, Any] = field(init=False, default_factory=dict)
    # The sub-configs a stage reads only as its READS declare (the executor says how to run: unguarded).
    SUBCONFIGS = ("assign", "judge", "decontam")

    def __post_init__(self) -> None:
        from spl_hf.sources import ADAPTERS, PROMPT_SOURCES, SourceOptions, eval_sample_paths, sample_paths

        self.source_options = self.source_options or SourceOptions()
        self.pools = parse_sources(self.cfg.pools, ADAPTERS, sample_paths(), "pools")
        self.heldout = (
            parse_sources(self.cfg.heldout_files, PROMPT_SOURCES, eval_sample_paths(), "heldout_files")
            if self.cfg.heldout_files
            else []
        )
        self.tenets = self.cfg.selected_tenets()
        check_heldout(self.decontam, self.heldout)
        # Refuse a bad output folder now, not after hours of judging.
        check_output(
            self.cfg,
            [p.location for p in self.pools + self.heldout if p.is_local],
            self.assign,
            self.judge,
            self.decontam,
            self.source_options,
        )
        self.store, self.executor = open_results(self.cfg, self.executor)

    # -- stages -------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        runner = StageRunner(Path(self.cfg.run_dir), log=self.log)
        if self.cfg.dry_run:
            return self.plan(runner)
        # Each stage is keyed by the content of what it reads, so an unchanged result of a rerun
        # stage (an unpinned Hub read) still lets everything after it be skipped.
        read = runner.run(
            "read",
            self._read_settings(),
            self._read,
            reuse=all(p.pinned for p in self.pools),
            reads=(READS["read"], self),
        )
        clean = runner.run(
            "decontaminate",
            {
                "pairs": content(read, "pairs.parquet"),
                "heldout": {p.source: p.identity() for p in self.heldout},
            },
            lambda d: self._decontaminate(read.path, d),
            reads=(READS["decontaminate"], self),
        )
        judged = runner.run(
            "judge",
            {"pairs": content(clean, "pairs.parquet"), "tenets": [t.hash for t in self.tenets]},
            lambda d: self._judge(clean.path, d),
            reads=(READS["judge"], self),
        )
        quality = self._judge_quality(clean.path, judged.path)
        assigned = runner.run(
            "assign",
            {"scores": content(judged, "scores.parquet")},
            lambda d: self._assign(judged.path, d),
            reads=(READS["assign"], self),
        )
        gates = self._gates(quality, assigned)
        written = runner.run(
            "write",
            {**self._write_inputs(clean, judged, assigned), "quality_gates": gates},
            lambda d: self._write(clean.path, judged.path, assigned.path, d, gates),
            still_valid=lambda d: written_here(d, self.cfg.output_dir),
            reads=(READS["write"], self),
        )
        record_output(self.cfg, self.assign, self.judge, self.decontam, self.source_options)
        audited = runner.run(
            "audit",
            {"write": written.key, "manifest": manifest_hash(self.cfg.output_dir)},
            lambda d: self._audit(d),
            reads=(READS["audit"], self),
        )
        if not audited.counts.get("ok"):
            raise RuntimeError(f"the audit of {self.cfg.output_dir} failed: {audited.counts}")
        if self.cfg.repo_id:
            runner.run("publish", {"write": written.key}, self._publish, reads=(READS["publish"], self))
        return self._write_report(runner, gates)

    def plan(self, runner: StageRunner) -> dict[str, Any]:
        """The stages with the keys they would have; later keys need earlier outputs, so only 'read' is known."""
        from spl_hf.backends import check_engine_package
        from spl_hf.release.pools import preview_sources
        from spl_hf.sources import SourceOptions

        check_engine_package(self.cfg.backend)  # what the judge stage would refuse in its first second
        key, path, done = runner.plan("read", {**self._read_settings(), "reads": READS["read"].values(self)})
        heldout_opts = SourceOptions(harmbench_categories=tuple(self.decontam.heldout_harmbench_categories))
        # what the read stage would refuse is refused now, naming the file (issue: a dry run promised)
        previews = preview_sources(self.pools, self.source_options) + preview_sources(
            self.heldout, heldout_opts
        )
        plan = {
            "pools": [asdict(p) for p in self.pools],
            "heldout": [asdict(p) for p in self.heldout],
            "tenets": [t.name for t in self.tenets],
            "stages": ["read", "decontaminate", "judge", "assign", "write", "audit"]
            + (["publish"] if self.cfg.repo_id else []),
            "read": {"key": key, "path": str(path), "finished": done},
            "assign": asdict(self.assign),
            "output_dir": self.cfg.output_dir,
            "previews": previews,
        }
        self.log(json.dumps(plan, indent=2))
        return plan

    def _read_settings(self) -> dict[str, Any]:
        """The read stage's inputs: each pool's identity (a local file's content hash, a Hub id at its commit)."""
        return {"pools": {p.source: p.identity() for p in self.pools}}

    def _read(self, out: Path) -> dict[str, Any]:

        from spl_hf.sources import read_pool, require_rows

        counts: dict[str, Any] = {"rows": 0, "per_source": {}, "quarantined": {}}
        tables, quarantine, reports = [], [], []
        for spec in _registry_order(self.pools):
            options = replace(self.source_options, progress=True, revision=spec.revision)
            result = read_pool(spec.reader, spec.location, options, **spec.read_kwargs())
            require_rows(
                result.report, result.quarantine
            )  # a file its adapter cannot read is an error, not an empty pool
            tables.append(result.pairs.data.table)
            quarantine.extend(result.quarantine)
            counts["per_source"][spec.source] = result.pairs.num_rows
            counts["quarantined"][spec.source] = len(result.quarantine)
            reports.append({**result.report.to_dict(), "role": "source"})
            self.log(
                f"  {spec.source:<24} {result.pairs.num_rows:7d} pairs, {len(result.quarantine)} quarantined"
            )
        import pyarrow as pa

        from spl_hf.release.decontam_stage import write_source_reports
        from spl_hf.sources import quarantine_dataset

        rows = pa.concat_tables(tables) if tables else None
        if rows is None or rows.num_rows == 0:
            raise SplHfError("pools: no pair rows were read")
        write_parquet(out / "pairs.parquet", rows)
        write_parquet(out / "quarantine.parquet", quarantine_dataset(quarantine).data.table)
        write_source_reports(out, reports)
        counts["rows"] = rows.num_rows
        return counts

    def _decontaminate(self, read_dir: Path, out: Path) -> dict[str, Any]:
        import pyarrow.parquet as pq

        from spl_hf.release.decontam_stage import decontaminate_rows, read_source_reports

        pairs = pq.read_table(read_dir / "pairs.parquet")
        kept, counts = decontaminate_rows(
            pairs, self.heldout, self.decontam, out, self.log, sources=read_source_reports(read_dir)
        )
        write_parquet(out / "pairs.parquet", kept)
        return counts

    def _judge(self, clean_dir: Path, out: Path) -> dict[str, Any]:
        import pyarrow.parquet as pq

        from spl_hf.backends import judge_items, parse_pairs, read_scores, start_stage

        # Rows become dicts a batch at a time: only the parsed pairs are held, never all rows twice.
        batches = pq.ParquetFile(clean_dir / "pairs.parquet").iter_batches(batch_size=8192)
        pairs, bad = parse_pairs(row for batch in batches for row in batch.to_pylist())
        items = judge_items(pairs, self.tenets)
        run = start_stage(self.judge_stage(), items, self.store, self.executor)
        self.judge_timing = dict(run.stats)
        # Streamed from the shards into columns (about 53 bytes per score), never a dict per score.
        scores = read_scores(run, items)
        refused, not_judged = scores.outcome()
        if not scores.scores:
            raise SplHfError("judge: no (pair, tenet) could be scored")
        scores.write(out / "scores.parquet")
        # Refused pairs and bad rows; each not-judged (pair, tenet) is listed once too, counted apart.
        failures = [asdict(b) for b in bad] + refused + [asdict(f) for f in not_judged.failures]
        write_jsonl(out / "failures.jsonl", failures)
        write_json(out / "not_judged.json", not_judged.by_tenet, indent=None, sort_keys=True, ascii_only=True)
        return {
            "pairs": len(pairs),
            "tenets": len(self.tenets),
            "scores": scores.scores,
            "computed": run.stats["computed"],
            "cached": run.stats["cached"],
            "failed": len(bad) + len(refused),  # rows, and (pair, tenet)s refused before scoring
            "not_judged": not_judged.total,  # below min_label_mass: recorded once, never a score
            "boundary_fallbacks": run.stats.get("boundary_fallbacks") or 0,  # this process's
            "mean_abs_score": round(scores.mean_abs_score(), 6),
            "model_id": scores.first("model_id"),
            "model_revision": scores.first("model_revision"),
        }

    def judge_stage(self) -> Any:
        """The judge stage's worker and settings (the rehearsal benchmark puts its engine here)."""
        from spl_hf.backends import judge_stage

        return judge_stage(self.cfg, self.judge)

    def _judge_quality(self, clean_dir: Path, judge_dir: Path, quiet: bool = False) -> dict[str, Any]:
        """The judge-quality figures of the judged pairs (what the card shows), printed as one line."""
        from spl_hf.assign import read_table
        from spl_hf.build import judged_quality
        from spl_hf.contract import JUDGED_SCORE_COLUMNS
        from spl_hf.release.gates import quality_line

        section = judged_quality(
            read_table(judge_dir / "scores.parquet", JUDGED_SCORE_COLUMNS, held=True),
            _preferences(clean_dir / "pairs.parquet"),
            self.assign.threshold,
        )
        if not quiet:
            self.log(quality_line(section))
        return section

    def _gates(self, quality: dict[str, Any], assigned: Any) -> dict[str, Any]:
        """The quality gates on the judge figures and the assigned rows; raises GateFailed on a failure."""
        from spl_hf.contract import no_rows_concerned
        from spl_hf.release.gates import check_gates, gate_results

        counts = assigned.counts
        # The tenets the assignment saw (kept or dropped: the certificate lists both), so that the audit
        # recounts them; a tenet with no judgement at all is in neither.
        tenets = counts["tenets_kept"] + counts["tenets_dropped"]
        concerned = no_rows_concerned(counts["assigned"], tenets, self.assign.capacity)
        return check_gates(
            gate_results(quality, counts["assigned"], self.cfg, concerned), self.cfg.gates_note
        )

    def _assign(self, judge_dir: Path, out: Path) -> dict[str, Any]:
        from spl_hf.assign import (
            GIVEN_STATS,
            assign_tenets,
            encode_scores,
            read_table,
            verify_certificate,
            write_certificate,
            write_table,
        )

        # Encoded once for the solve and the certificate check (encoding is deterministic).
        scores = encode_scores(read_table(judge_dir / "scores.parquet", held=True))
        result = assign_tenets(scores, self.assign)
        check = verify_certificate(scores, result)
        if not check.ok:
            raise RuntimeError(f"the assignment's certificate does not verify: {list(check.failures)[:5]}")
        write_table(result.assignment, out / "assignment.parquet")
        write_certificate(result.certificate, out / "assignment.parquet.certificate.json")
        # What the write stage takes instead of verifying the certificate again (see _recorded_assignment).
        write_json(out / ASSIGN_STATS, {k: result.stats[k] for k in GIVEN_STATS}, indent=None, sort_keys=True)
        s = result.summary()
        return {
            "assigned": result.assignment.num_rows,
            "tenets_kept": len(result.kept_tenets),
            "tenets_dropped": len(s["tenets_dropped"]),
            "objective": round(result.objective, 6),
            "strategy": s["strategy"],
        }

    def _write_inputs(self, clean: Any, judged: Any, assigned: Any) -> dict[str, Any]:
        """Every file the write stage reads, by content (the tenet statements by their hashes)."""
        return {
            "pairs": content(clean, "pairs.parquet"),
            "scores": content(judged, "scores.parquet"),
            "not_judged": content(judged, "not_judged.json"),
            "decontamination": content(clean, DECONTAMINATION_FILE),
            "assignment": content(assigned, "assignment.parquet"),
            "certificate": content(assigned, "assignment.parquet.certificate.json"),
            # optional: an assign stage recorded before its statistics were has none (verified instead)
            "stats": content(assigned, ASSIGN_STATS, optional=True),
            "tenets": [t.hash for t in self.tenets],
        }

    def _write(
        self, clean_dir: Path, judge_dir: Path, assign_dir: Path, out: Path, gates: dict[str, Any]
    ) -> dict[str, Any]:
        from spl_hf.build import TenetBuildConfig, TenetCardArgs, build_tenets, fields_of

        c = self.cfg
        cfg = TenetBuildConfig(
            pairs=str(clean_dir / "pairs.parquet"),
            scores=str(judge_dir / "scores.parquet"),
            not_judged=str(judge_dir / "not_judged.json"),
            assignment=str(assign_dir / "assignment.parquet"),
            decontamination=str(clean_dir / DECONTAMINATION_FILE),
            # The release's own AssignConfig and card settings, passed on whole: a new field reaches the build.
            **asdict(self.assign),
            **fields_of(c, TenetCardArgs),
            output_dir=c.output_dir,
            overwrite=True,
        )
        # The card names the repo it is published to, or a placeholder; the title defaults to the build's.
        cfg = replace(cfg, repo_id=c.repo_id or "ORG/NAME", pretty_name=c.pretty_name or cfg.pretty_name)
        result = build_tenets(
            cfg, gates=gates, assigned=_recorded_assignment(assign_dir), tenets=[t.name for t in self.tenets]
        )
        record_written(out, c.output_dir)
        return {
            "rows": result.rows,
            "tenets_kept": result.tenets_kept,
            "rows_per_source": result.rows_per_source,
            "certificate_ok": result.certificate_ok,
            "path": str(result.path),
        }

    def _audit(self, out: Path) -> dict[str, Any]:
        from spl_hf.audit import audit

        report = audit(self.cfg.output_dir)
        report.write_json(out / "audit.json")  # the shape `spl-hf audit --json` prints
        differ = self._settings_differences()
        if differ:
            raise SplHfError(
                f"{self.cfg.output_dir}: the release does not say what this run asked: {'; '.join(differ)}"
            )
        return {
            "ok": report.ok,
            "rows": report.rows,
            "reproduced": report.reproduced,
            "certificate_ok": report.certificate_ok,
        }

    def _settings_differences(self) -> list[str]:
        """The released build_report.json's stated settings against this run's assignment settings and
        tenets (the audit checked them against the rows and the certificate)."""
        from spl_hf.contract import ASSIGN_SETTINGS

        path = Path(self.cfg.output_dir) / "build_report.json"
        report = json.loads(path.read_text(encoding="utf-8"))
        stated = report.get("settings") if isinstance(report, dict) else None
        stated = stated if isinstance(stated, dict) else {}
        want = {
            **{k: getattr(self.assign, k) for k in ASSIGN_SETTINGS},
            "tenets": sorted(t.name for t in self.tenets),
        }
        return [
            f"{path.name}: settings.{k} is {stated.get(k, 'missing')!r}, this run's is {v!r}"
            for k, v in want.items()
            if stated.get(k, "missing") != v
        ]

    def _publish(self, out: Path) -> dict[str, Any]:
        return publish_output(self.cfg, out)

    def _write_report(self, runner: StageRunner, gates: dict[str, Any]) -> dict[str, Any]:
        report = {
            "kind": "tenet_dpo",
            "output_dir": self.cfg.output_dir,
            **runner.report(),
            "quality_gates": gates,
        }
        path = Path(self.cfg.run_dir) / "run_report.json"
        write_json(path, report, sort_keys=True, ascii_only=True, default=str)
        self.log(f"run report: {path}")
        return report


def _recorded_assignment(assign_dir: Path) -> Any:
    """The assign stage's result as it recorded it (rows, certificate, statistics), for the write stage.

    The assign stage verified the certificate against the same scores right after the solve, so the
    write stage does not encode the scores and verify it again; the audit verifies the written
    certificate on its own. None for an assign stage that recorded no statistics (one finished by an
    earlier version): the build then verifies the assignment as it verifies any given one.
    """
    from spl_hf.assign import certificate_path, read_certificate, read_table, recorded_assignment

    stats_path = assign_dir / ASSIGN_STATS
    if not stats_path.is_file():
        return None
    assignment = assign_dir / "assignment.parquet"
    return recorded_assignment(
        read_table(assignment),
        read_certificate(certificate_path(assignment)),
        read_stage_json(stats_path),
        str(stats_path),
    )


def _preferences(path: Path) -> Any:
    """The pair ids with the pool's own preference, where the pair rows state one."""
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    return pq.read_table(path, columns=[c for c in ("pair_id", "source_preference") if c in names])


def _registry_order(specs: list[SourceSpec]) -> list[SourceSpec]:
    from spl_hf.sources import ADAPTERS

    order = list(ADAPTERS)
    # built-in pools in card order, then the pools the user named, in the order given
    return sorted(specs, key=lambda s: order.index(s.source) if s.source in order else len(order))


def make_release(
    cfg: TenetReleaseConfig,
    assign: Any,
    judge: Any,
    decontam: Any,
    executor: Any = None,
    source_options: Any = None,
) -> TenetRelease:
    return TenetRelease(cfg, assign, judge, decontam, executor, source_options)
