"""Settings shared by the release builders: where a run lives, the model, the output and the Hub."""

from __future__ import annotations

from dataclasses import dataclass, field

from spl_hf.backends import ModelArgs
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
    pretty_name: str = field(default="", metadata={"help": "Card title (default: the builder's)."})
    heldout_files: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Files of the held-out prompt sets named by 'heldout', as 'set=path' or 'set=org/name@sha' "
            "(prompt sources such as or_bench_hard_1k, or_bench_toxic, xstest)."
        },
    )
    accept_partial: bool = field(
        default=False,
        metadata={
            "help": "Build from the readable part of a source file that breaks off (a truncated .gz); "
            "the card's source table marks it partial. Off: such a file stops the release, naming it."
        },
    )
    dry_run: bool = field(
        default=False,
        metadata={"help": "Validate the inputs and print the stage plan without running a model."},
    )


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


@dataclass
class TenetReleaseConfig(ReleaseSettings, ModelArgs):
    """Per-tenet DPO release"""

    pools: list[str] = field(
        default_factory=lambda: ["sample"],
        metadata={
            "help": "Pair pools as 'source=path' or 'source=org/name@sha', or 'sample' for the shipped samples."
        },
    )
    clip_chars: int | None = field(
        default=None,
        metadata={"help": "Character budget of flattened multi-turn histories (default: the adapters')."},
    )
    pku_preference: str = field(
        default="safer", metadata={"help": "PKU-SafeRLHF label used as source preference."}
    )
    tenets: str = field(default="all", metadata={"help": "Comma-separated tenet names, or 'all'."})
    tenets_file: str | None = field(
        default=None, metadata={"help": "YAML of tenet statements (default: the 49 built in)."}
    )
    threshold_note: str = field(
        default="", metadata={"help": "Why the threshold differs from the card's 0.5, stated in the card."}
    )
    sft: bool = field(
        default=True,
        metadata={
            "help": "Also write the companion 'sft' config (prompt + chosen).",
            "negated_help": "Write no 'sft' config.",
        },
    )


@dataclass
class SPLReleaseConfig(ReleaseSettings, ModelArgs):
    """SPL safety release"""

    prompt_sources: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Prompt sources as 'source=path' or 'source=org/name@sha' (Table VI: ultrachat, "
            "or_bench_80k, xstest, harmbench, do_not_answer, malicious_instruct)."
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
    rulebase: str | None = field(
        default=None, metadata={"help": "Rule base YAML (default: the packaged one)."}
    )
    margin: int = field(default=1, metadata={"help": "Minimum rank difference for a label."})
    labeler_mode: str = field(
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
    panel: str | None = field(
        default=None,
        metadata={
            "help": "Human rater panel (JSON Lines or parquet: item_id, rater_id, attribute, label) on "
            "prompt_ids or candidate_ids of this release: the labeler's agreement with it (Tables V and "
            "XI) goes into the card and the build report."
        },
    )
    recorded_verdicts: str | None = field(
        default=None,
        metadata={
            "help": "With recorded_prompts and recorded_candidates: verdict-judge records per candidate "
            "(JSON Lines, as the verdict stage writes) for the judge comparison configs."
        },
    )
