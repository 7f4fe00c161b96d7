"""Settings of the two dataset builds (``spl-hf build spl``, ``spl-hf build tenets``).

Kept apart from the builders, which import ``datasets`` and ``pyarrow``: the CLI reads these
dataclasses to answer ``--help`` without those libraries.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from spl_hf.assign import AssignConfig
from spl_hf.configs import OutputArgs
from spl_hf.dataset import DEFAULT_MAX_SHARD_SIZE

SAMPLE = "<embedded sample>"


def fields_of(obj: object, cls: type) -> dict:
    """The values ``obj`` holds for the fields of the shared config class ``cls`` (one of its bases):
    how a release hands its settings to the build it runs, without naming them one by one."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(cls) if f.init}


@dataclass
class SPLDeriveArgs:
    """Derivation"""

    rulebase: str | None = field(
        default=None, metadata={"help": "Rule base YAML (default: the packaged one)."}
    )
    margin: int = field(default=1, metadata={"help": "Minimum rank difference for a label."})
    panel: str | None = field(
        default=None,
        metadata={
            "help": "Human rater panel (JSON Lines or parquet: item_id, rater_id, attribute, label; as "
            "`spl-hf agreement --panel` reads) whose items are prompt_ids (prompt attributes) or "
            "candidate_ids (response attributes) of these records: the labeler's agreement with it "
            "(Tables V and XI) goes into the card and the build report."
        },
    )


@dataclass
class TenetCardArgs:
    """Tenet card"""

    threshold_note: str = field(
        default="", metadata={"help": "Why the threshold differs from the card's 0.5, stated in the card."}
    )
    tenets_file: str | None = field(
        default=None,
        metadata={"help": "YAML of the tenet statements the judge used (default: the 49 built in)."},
    )
    sft: bool = field(
        default=False,
        metadata={
            "help": "Also write the companion 'sft' config: messages = prompt + chosen, same rows.",
            "negated_help": "Write no 'sft' config.",
        },
    )


@dataclass
class SPLBuildConfig(OutputArgs, SPLDeriveArgs):
    """SPL build"""

    prompts: str = field(
        default=SAMPLE, metadata={"help": "JSON Lines of prompt records with recorded prompt attributes."}
    )
    candidates: str = field(
        default=SAMPLE,
        metadata={"help": "JSON Lines of candidate records with recorded response attributes."},
    )
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
    max_shard_size: str = field(
        default=DEFAULT_MAX_SHARD_SIZE, metadata={"help": "Largest parquet shard (Arrow size), e.g. 500MB."}
    )


@dataclass(kw_only=True)
class TenetBuildConfig(OutputArgs, TenetCardArgs, AssignConfig):
    """Per-tenet build"""

    pairs: str = field(metadata={"help": "Unified pair rows (.parquet/.jsonl) from `spl-hf sources read`."})
    scores: str = field(metadata={"help": "Judge scores (.parquet/.jsonl) from `spl-hf judge`."})
    capacity: int = 4000  # this build's default (required in `spl-hf assign`); help from AssignConfig
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
