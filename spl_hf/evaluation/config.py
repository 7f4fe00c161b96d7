"""Settings of ``spl-hf eval refusal|classify|at_limit`` beyond the model (``ModelArgs``) and the
generation (``EvalConfig``); no heavy import: the CLI reads them for ``--help``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from spl_hf.errors import SplHfError
from spl_hf.refusal import MATCHERS, get_matcher

MATCHER_NAMES = tuple(MATCHERS)


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
            raise SplHfError("--adapter and --run exclude each other (a run names its own adapter)")


@dataclass
class ClassifyArgs:
    """What to classify (the results folder, ``--cache``, is every model stage's: RunArgs)"""

    responses: str = field(metadata={"help": "responses.jsonl written by `spl-hf eval refusal`."})
    progress: bool = field(
        default=True, metadata={"help": "Show a progress bar.", "negated_help": "Hide the progress bar."}
    )


@dataclass
class AtLimitArgs:
    """Runs"""

    runs: str = field(
        metadata={"help": "Folder of runs laid out as <condition>/seed<k>/.", "positional": True}
    )


@dataclass
class EvalConfig:
    """Refusal evaluation"""

    max_new_tokens: int = field(default=200, metadata={"help": "token limit per response (the paper: 200)"})
    batch_size: int = field(default=8, metadata={"help": "prompts generated together (1 = one at a time)"})
    system_prompt: str | None = field(default=None, metadata={"help": "system message before each prompt"})
    matcher: Literal[MATCHER_NAMES] = field(  # type: ignore[valid-type]  # the registry's names, as choices
        default="default",
        metadata={
            "help": "Refusal matcher: the phrase list that counts refusals (by default the package's own)."
        },
    )
    progress: bool = field(
        default=True, metadata={"help": "Show a tqdm progress bar.", "negated_help": "Hide the progress bar."}
    )

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise SplHfError("max_new_tokens must be at least 1")
        if self.batch_size < 1:
            raise SplHfError("batch_size must be at least 1")
        get_matcher(self.matcher)
