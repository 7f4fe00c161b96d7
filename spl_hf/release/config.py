"""Settings shared by the release builders: where a run lives, the model, the output and the Hub."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from spl_hf.backends import ModelArgs
from spl_hf.build import SPLDeriveArgs, TenetCardArgs
from spl_hf.configs import OutputArgs, PublishArgs
from spl_hf.errors import SplHfError


@dataclass
class ReleaseSettings(PublishArgs, OutputArgs):
    """Release run (publishes when repo_id is given)"""

    run_dir: str = field(
        default="out/release",
        metadata={"help": "Folder of the run: stage outputs, model caches and the run report."},
    )
    output_dir: str = "out/release/dataset"  # the dataset folder; help and meaning from OutputArgs
    results_dir: str | None = field(
        default=None,
        metadata={
            "help": "Results folder of the model stages (shard files; a local path, NFS or an fsspec URL such "
            "as s3://bucket/run): shared storage when Ray replicas run on other machines. Default: <run_dir>/results."
        },
    )
    pretty_name: str = field(default="", metadata={"help": "Card title (default: the builder's)."})
    heldout_files: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Files of the held-out prompt sets named by 'heldout', as 'set=path' or 'set=org/name@sha' "
            "(prompt sources such as or_bench_hard_1k, or_bench_toxic, xstest)."
        },
    )
    dry_run: bool = field(
        default=False,
        metadata={"help": "Validate the inputs and print the stage plan without running a model."},
    )


@dataclass
class RowGate:
    """Quality gates (a failing gate stops the release before its write stage, exit 2)"""

    min_rows: int = field(
        default=1,
        metadata={
            "help": "Fewest preference rows the release may hold; with fewer it stops before writing "
            "(an empty release is an error, never a success)."
        },
    )

    gates_note: str = field(
        default="", metadata={"help": "Why the gates are set as they are, stated in the card."}
    )

    def __post_init__(self) -> None:
        if isinstance(self.min_rows, bool) or not isinstance(self.min_rows, int) or self.min_rows < 0:
            raise SplHfError(f"min_rows must be a whole number >= 0, got {self.min_rows!r}")


@dataclass
class JudgeGates(RowGate):
    """Quality gates (a failing gate stops the release before its write stage, exit 2)"""

    min_position_consistency: float | None = field(
        default=None,
        metadata={
            "help": "Least share of judgements whose two orderings prefer the same response (over all "
            "tenets); None: not gated. A judge that always prefers the first-shown answer has 0."
        },
    )
    min_pool_agreement: float | None = field(
        default=None,
        metadata={
            "help": "Least lower end of the 95% Wilson interval of the share of eligible pairs on which the "
            "judge picks each pool's own side (pools that state none are not gated); in (0, 1), None: not "
            "gated. 0.5: better than a coin with 95% confidence (a judge that picks by position is not). "
            "Not Cohen's kappa: pools read from chosen/rejected columns state side 'a' throughout, where "
            "kappa is 0 for any imperfect judge."
        },
    )
    min_median_label_mass: float | None = field(
        default=None,
        metadata={
            "help": "Least median probability the judge put on its answer labels, over every judgement "
            "and both orderings (1 - the card's off-label mass q50); None: not gated. Unlike "
            "min_label_mass, which drops single judgements, this stops the release."
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        # A gate that can never fail (a share >= 0) or never pass (a Wilson lower bound >= 1) is refused:
        # it would be a claim of quality that measures nothing.
        for name, top, why in (
            ("min_position_consistency", 1.0, ""),
            ("min_pool_agreement", 1.0 - 1e-12, "; a Wilson lower bound is below 1 for any number of pairs"),
            ("min_median_label_mass", 1.0, ""),
        ):
            value = getattr(self, name)
            ok = value is None or (
                not isinstance(value, bool)
                and isinstance(value, (int, float))
                and math.isfinite(value)
                and 0.0 < value <= top
            )
            if not ok:
                raise SplHfError(
                    f"{name} must be a number in (0, 1{']' if top == 1.0 else ')'} or None, got {value!r}: "
                    f"at 0 or below the gate can never fail{why}"
                )


@dataclass
class TenetReleaseConfig(ReleaseSettings, ModelArgs, JudgeGates, TenetCardArgs):
    """Per-tenet DPO release"""

    pools: list[str] = field(
        default_factory=lambda: ["sample"],
        metadata={
            "help": "Pair pools as 'source=path' or 'source=org/name@sha', 'sample' for the shipped samples, or "
            "a mapping {source, path, adapter, columns, license, category} (a JSON object on the command line)."
        },
    )
    tenets: list[str] = field(
        default_factory=lambda: ["all"],
        metadata={"help": "Tenet names (an entry 'a,b' names two), or 'all'."},
    )
    sft: bool = True  # a release writes the sft config unless told not to; help from TenetCardArgs

    def __post_init__(self) -> None:
        ModelArgs.__post_init__(self)
        JudgeGates.__post_init__(self)
        if isinstance(self.tenets, str):  # a recipe may hold one string
            self.tenets = [self.tenets]
        self.tenets = [n.strip() for entry in self.tenets for n in str(entry).split(",") if n.strip()]
        self.selected_tenets()  # unknown or repeated names are refused here, before any pool is read

    def selected_tenets(self) -> tuple:
        """The tenets this release judges, from tenets_file or the 49 built in."""
        from spl_hf.tenets import default_tenets, load_tenets, select_tenets

        tenet_set = load_tenets(self.tenets_file) if self.tenets_file else default_tenets()
        try:
            return select_tenets(self.tenets, tenet_set)
        except KeyError as exc:
            raise SplHfError(f"tenets: {exc.args[0] if exc.args else exc}") from None


@dataclass
class SPLReleaseConfig(ReleaseSettings, ModelArgs, RowGate, SPLDeriveArgs):
    """SPL safety release"""

    prompt_sources: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Prompt sources as 'source=path' or 'source=org/name@sha' (Table VI: ultrachat, "
            "or_bench_80k, xstest, harmbench, do_not_answer, malicious_instruct), or a mapping {source, path, "
            "adapter, columns, license, category} for prompts of your own (adapter prompts; category benign, "
            "over-refusal-prone, harmful or mixed, else unknown)."
        },
    )
    pool_sizes: list[str] = field(
        default_factory=list,
        metadata={"help": "Prompts drawn per source as 'source=N' (a seeded draw; default: every prompt)."},
    )
    draw_seed: int = field(default=0, metadata={"help": "Seed of the per-source prompt draw."})
    candidate_fraction: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Share of each source's drawn prompts that get candidates, as 'source=0.7' or "
            "'source=1007/1439' (a seeded choice after decontamination and the draw, rounded half up; "
            "Table VI generates for about 0.7 of each pool). The other prompts are counted in the generate stage "
            "and get no candidates. Default: every drawn prompt."
        },
    )
    labeler_mode: Literal["constrained", "json"] = field(
        default="constrained",
        metadata={
            "help": "constrained (default: letter probabilities, no parse failure) or json (the paper's "
            "mode: one JSON object per item; unparsable output is recorded as invalid_json or schema_error)."
        },
    )
    recorded_prompts: str | None = field(
        default=None,
        metadata={
            "help": "Prompt records with recorded attributes (JSON Lines, as `spl-hf build spl` reads), or "
            "'sample' for the shipped sample; with recorded_candidates the release derives from these "
            "instead of generating and labeling."
        },
    )
    recorded_candidates: str | None = field(
        default=None, metadata={"help": "Candidate records with recorded attributes, or 'sample'."}
    )
    verdict_judge: bool = field(
        default=False,
        metadata={
            "help": "Also judge every candidate with the verdict judge (the model above, one rule-base "
            "verdict per response) and write the judge comparison: the judge_derivations, common_support "
            "and common_support_judge configs (the paper's Tables IX and X)."
        },
    )
    verdict_model: str | None = field(
        default=None,
        metadata={
            "help": "Model of the verdict judge (a local folder or Hub id, same backend and settings); "
            "default: the model that generates and labels."
        },
    )
    recorded_verdicts: str | None = field(
        default=None,
        metadata={
            "help": "With recorded_prompts and recorded_candidates: verdict-judge records per candidate "
            "(JSON Lines, as the verdict stage writes) for the judge comparison configs."
        },
    )

    def __post_init__(self) -> None:
        from spl_hf.release.spl_settings import check_spl_release

        ModelArgs.__post_init__(self)
        RowGate.__post_init__(self)
        check_spl_release(self)  # here, so that --dry_run and recipe parsing reach every check
