"""Settings of the two dataset builds (``spl-hf build spl``, ``spl-hf build tenets``).

Kept apart from the builders, which import ``datasets`` and ``pyarrow``: the CLI reads these
dataclasses to answer ``--help`` without those libraries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spl_hf.assign import DEFAULT_STRATEGY, STRATEGIES
from spl_hf.configs import OutputArgs
from spl_hf.hub import DEFAULT_MAX_SHARD_SIZE

SAMPLE = "<embedded sample>"


@dataclass
class SPLBuildConfig(OutputArgs):
    """SPL build"""

    prompts: str = field(
        default=SAMPLE, metadata={"help": "JSON Lines of prompt records with recorded prompt attributes."}
    )
    candidates: str = field(
        default=SAMPLE,
        metadata={"help": "JSON Lines of candidate records with recorded response attributes."},
    )
    rulebase: str | None = field(
        default=None, metadata={"help": "Rule base YAML; default: the packaged one."}
    )
    margin: int = field(default=1, metadata={"help": "Minimum rank difference for a label."})
    output_dir: str = "out/spl"  # this build's default; help and meaning from OutputArgs
    repo_id: str = field(
        default="spl-hf/spl-sample", metadata={"help": "Hub repo id used in the card's loading example."}
    )
    pretty_name: str = field(default="SPL preference pairs (sample)", metadata={"help": "Card title."})
    batch_size: int = field(default=1024, metadata={"help": "Rows per Arrow batch in the derivation map."})
    decontamination: str | None = field(
        default=None,
        metadata={
            "help": "decontamination.json of a release's decontaminate stage: its counts go into the card "
            "and the build report, its removed prompt ids into the build (the audit checks none is released)."
        },
    )
    verdicts: str | None = field(
        default=None,
        metadata={
            "help": "Verdict-judge records, one per candidate (JSON Lines: prompt_id, candidate_id, status, "
            "probs per verdict, mass, model_id, model_revision, template_hash; what the SPL release's "
            "verdict stage writes): adds the judge_derivations, common_support and common_support_judge "
            "configs (the judge comparison of Tables IX and X)."
        },
    )
    panel: str | None = field(
        default=None,
        metadata={
            "help": "Human rater panel (JSON Lines or parquet: item_id, rater_id, attribute, label; as "
            "`spl-hf agreement --panel` reads) whose items are prompt_ids (prompt attributes) or "
            "candidate_ids (response attributes) of these records: the labeler's agreement with it "
            "(Tables V and XI) goes into the card and the build report."
        },
    )
    max_shard_size: str = field(
        default=DEFAULT_MAX_SHARD_SIZE, metadata={"help": "Largest parquet shard (Arrow size), e.g. 500MB."}
    )


@dataclass(kw_only=True)
class TenetBuildConfig(OutputArgs):
    """Per-tenet build"""

    pairs: str = field(metadata={"help": "Unified pair rows (.parquet/.jsonl) from `spl-hf sources read`."})
    scores: str = field(metadata={"help": "Judge scores (.parquet/.jsonl) from `spl-hf judge`."})
    capacity: int = field(default=4000, metadata={"help": "Pairs per kept tenet."})
    threshold: float = field(default=0.5, metadata={"help": "Minimum |score| for a pair to be eligible."})
    solver: str = field(default="ortools", metadata={"help": "ortools (fast) or networkx (reference)."})
    seed: int = field(default=42, metadata={"help": "Seed of the deterministic tie-break."})
    strategy: str = field(
        default=DEFAULT_STRATEGY,
        metadata={
            "help": f"How unsaturated tenets are dropped, one of {', '.join(STRATEGIES)} (see `spl-hf assign`)."
        },
    )
    assignment: str | None = field(
        default=None,
        metadata={
            "help": "An assignment file from `spl-hf assign`, with its certificate next to it "
            "(<file>.certificate.json): verified against --scores and used instead of solving."
        },
    )
    output_dir: str = "out/tenets"  # this build's default; help and meaning from OutputArgs
    repo_id: str = field(default="spl-hf/tenet-dpo", metadata={"help": "Hub repo id used in the card."})
    pretty_name: str = field(default="Per-tenet judge-scored DPO pairs", metadata={"help": "Card title."})
    threshold_note: str = field(
        default="", metadata={"help": "Why the threshold differs from the card's 0.5, stated in the card."}
    )
    tenets_file: str | None = field(
        default=None,
        metadata={"help": "YAML of tenet statements, if the judge used others than the 49 built in."},
    )
    max_shard_size: str = field(
        default=DEFAULT_MAX_SHARD_SIZE, metadata={"help": "Largest parquet shard (Arrow size), e.g. 500MB."}
    )
    decontamination: str | None = field(
        default=None,
        metadata={
            "help": "decontamination.json of a release's decontaminate stage: its counts go into the card "
            "and the build report, its removed prompt ids into the build (the audit checks none is released)."
        },
    )
    not_judged: str | None = field(
        default=None,
        metadata={
            "help": "JSON object tenet -> judgements recorded as not judged (below min_label_mass), as a "
            "release's judge stage writes it (not_judged.json): the counts go into the judge-quality table."
        },
    )
    sft: bool = field(
        default=False,
        metadata={"help": "Also write the companion 'sft' config: messages = prompt + chosen, same rows."},
    )
