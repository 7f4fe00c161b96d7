"""Configuration of a tenet assignment run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from spl_hf.errors import SplHfError

SOLVERS: tuple[str, ...] = ("ortools", "networkx")

# How tenets that cannot be filled are removed; see `spl_hf.assign.solve` for the semantics.
STRATEGIES: tuple[str, ...] = ("prefilter+bounded", "prefilter+one-at-a-time", "prefilter+iterate", "iterate")
DEFAULT_STRATEGY = "prefilter+bounded"


@dataclass
class AssignConfig:
    """Assignment of judged pairs to tenets (min-cost flow)"""

    capacity: int = field(
        metadata={"help": "Pairs per kept tenet; every kept tenet receives exactly this many pairs."}
    )
    threshold: float = field(
        default=0.5, metadata={"help": "A (pair, tenet) score is eligible when |score| >= threshold."}
    )
    solver: Literal["ortools", "networkx"] = field(
        default="ortools",
        metadata={"help": "Min-cost-flow solver: 'ortools' (fast) or 'networkx' (reference, small inputs)."},
    )
    seed: int = field(
        default=42, metadata={"help": "Seed of the deterministic tie-break among equal scaled scores."}
    )
    scale: int = field(
        default=1_000_000,
        metadata={"help": "|score| is rounded to an integer multiple of 1/scale before solving (precision)."},
    )
    strategy: Literal[STRATEGIES] = field(  # type: ignore[valid-type]  # the tuple above, as choices
        default=DEFAULT_STRATEGY,
        metadata={
            "help": "Saturation strategy. All but 'iterate' first drop tenets whose distinct-prompt pool is "
            "below capacity, then solve and re-solve until every kept tenet is saturated. "
            "'prefilter+bounded' (default): drop the least-filled unsaturated tenet per re-solve, or all "
            "unsaturated ones at once when the saturated ones already reach floor(max flow / capacity), the "
            "most any subset can keep; keeps at least as many tenets as 'prefilter+one-at-a-time' (drop "
            "only the least-filled tenet per re-solve) in fewer solves. 'prefilter+iterate': drop every "
            "unsaturated tenet at once (can lose many tenets when prompts are scarce); 'iterate': the "
            "same without the prefilter."
        },
    )
    tie_range: int | None = field(
        default=None,
        metadata={
            "help": "Number of tie-break values R (power of two recommended); None picks the largest "
            "power of two <= 2**20 that keeps integer costs within the solver's range."
        },
    )

    def __post_init__(self) -> None:
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity <= 0:
            raise SplHfError(f"capacity must be a positive integer, got {self.capacity!r}")
        if not 0.0 < float(self.threshold) <= 1.0:
            # A zero threshold would make score-0 (tied) judgements eligible, with no side preferred.
            raise SplHfError(f"threshold must be in (0, 1], got {self.threshold!r}")
        if self.solver not in SOLVERS:
            raise SplHfError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.strategy not in STRATEGIES:
            raise SplHfError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if not isinstance(self.seed, int) or not 0 <= self.seed < 2**64:
            raise SplHfError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        if not isinstance(self.scale, int) or self.scale <= 0:
            raise SplHfError(f"scale must be a positive integer, got {self.scale!r}")
        if self.tie_range is not None and (not isinstance(self.tie_range, int) or self.tie_range < 1):
            raise SplHfError(f"tie_range must be a positive integer or None, got {self.tie_range!r}")

    def to_dict(self) -> dict:
        return asdict(self)


ASSIGNMENT_SUFFIXES = (".parquet", ".jsonl", ".ndjson")


@dataclass
class AssignFiles:
    """Files of `spl-hf assign` (the assignment goes to output_dir)"""

    scores: str = field(metadata={"help": "Score table (.parquet/.jsonl): pair_id, prompt_id, tenet, score."})
    assignment: str | None = field(default=None, metadata={"help": "verify: assignment file to check."})
    certificate: str | None = field(
        default=None,
        metadata={"help": "Certificate file (default: <assignment or output_dir>.certificate.json)."},
    )

    action: Literal["solve", "verify"] = field(
        default="solve",
        metadata={
            "help": "solve: write an assignment and its certificate; verify: re-check an assignment.",
            "positional": True,
        },
    )

    def __post_init__(self) -> None:
        if self.assignment is not None and Path(self.assignment).suffix.lower() not in ASSIGNMENT_SUFFIXES:
            raise SplHfError(f"--assignment {self.assignment}: unsupported extension; use .parquet or .jsonl")
