"""Settings of ``spl-hf eval refusal|classify|at_limit`` beyond the model (``ModelArgs``) and the
generation (``EvalConfig``); no heavy import: the CLI reads them for ``--help``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RefusalEvalArgs:
    """What to evaluate"""

    prompts: str = field(
        default="or_bench_hard_1k,or_bench_toxic",
        metadata={
            "help": "Comma-separated prompt sets, each NAME or NAME=FILE|HUB_ID|sample (default: the sets' "
            "Hub datasets)."
        },
    )
    samples: bool = field(
        default=False, metadata={"help": "Read sets given without a location from the shipped samples."}
    )
    adapter: str | None = field(
        default=None, metadata={"help": "PEFT LoRA adapter folder to merge into the model (not with --run)."}
    )
    run: str | None = field(
        default=None,
        metadata={
            "help": "train.py run folder: base model from run.json, adapter at its root; output_dir defaults "
            "to <run>/eval."
        },
    )
    cache: str | None = field(
        default=None, metadata={"help": "Results folder of shard files (default: <output_dir>/results)."}
    )
    limit: int | None = field(default=None, metadata={"help": "Only the first N prompts of each set."})

    def __post_init__(self) -> None:
        if self.adapter and self.run:
            raise ValueError("--adapter and --run exclude each other (a run names its own adapter)")


@dataclass
class ClassifyArgs:
    """What to classify"""

    responses: str = field(metadata={"help": "responses.jsonl written by `spl-hf eval refusal`."})
    cache: str = field(metadata={"help": "SQLite result cache."})
    progress: bool = field(
        default=True, metadata={"help": "Show a progress bar.", "negated_help": "Hide the progress bar."}
    )


@dataclass
class AtLimitArgs:
    """Runs"""

    runs: str = field(
        metadata={"help": "Folder of runs laid out as <condition>/seed<k>/.", "positional": True}
    )
