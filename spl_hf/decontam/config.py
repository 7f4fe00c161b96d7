"""Settings of a decontamination pass."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

DEFAULT_HELDOUT: tuple[str, ...] = ("or_bench_hard_1k", "or_bench_toxic")


@dataclass
class DecontamConfig:
    """Decontamination against held-out prompt sets"""

    heldout: list[str] = field(
        default_factory=lambda: list(DEFAULT_HELDOUT),
        metadata={
            "help": "Held-out prompt sets (the `source` of prompt rows): training prompts matching any of "
            "their prompts are removed. Add every set the evaluation uses."
        },
    )
    near_duplicates: bool = field(
        default=True,
        metadata={
            "help": "Also remove near-duplicates (word n-gram overlap), not only exact matches after normalisation.",
            "negated_help": "Remove exact matches (after normalisation) only, no near-duplicates.",
        },
    )
    ngram_size: int = field(
        default=8,
        metadata={"help": "Words per n-gram of the near-duplicate pass (texts shorter form one gram)."},
    )
    overlap_threshold: float = field(
        default=0.5,
        metadata={
            "help": "Near-duplicate when the shared distinct n-grams are at least this fraction of the "
            "smaller text's n-grams (1.0: one text's n-grams all occur in the other)."
        },
    )

    def __post_init__(self) -> None:
        if isinstance(self.heldout, str) or not all(isinstance(h, str) and h for h in self.heldout):
            raise ValueError(f"heldout must be a list of set names, got {self.heldout!r}")
        if not self.heldout:
            raise ValueError("heldout must name at least one held-out prompt set")
        if len(set(self.heldout)) != len(self.heldout):
            raise ValueError(f"heldout names a set twice: {self.heldout!r}")
        if isinstance(self.ngram_size, bool) or not isinstance(self.ngram_size, int) or self.ngram_size < 1:
            raise ValueError(f"ngram_size must be a positive integer, got {self.ngram_size!r}")
        if not 0.0 < float(self.overlap_threshold) <= 1.0:
            raise ValueError(f"overlap_threshold must be in (0, 1], got {self.overlap_threshold!r}")

    def to_dict(self) -> dict:
        return asdict(self)
