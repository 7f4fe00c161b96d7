"""Settings of a decontamination pass."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from spl_hf.errors import SplHfError

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

    containment_max_words: int = field(
        default=8,
        metadata={
            "help": "Held-out prompts of at most this many words (normalised) also match when they occur "
            "inside a longer training prompt on word boundaries ('Please answer: <held-out prompt>'); such "
            "a text is one n-gram, so the near-duplicate pass cannot see it. 0 turns this off."
        },
    )
    containment_min_words: int = field(
        default=3,
        metadata={
            "help": "Shortest held-out prompt (words) matched by containment: a one- or two-word prompt "
            "occurs inside too many unrelated texts."
        },
    )
    heldout_harmbench_categories: list[str] = field(
        default_factory=lambda: ["standard", "contextual", "copyright"],
        metadata={
            "help": "HarmBench FunctionalCategory values a held-out HarmBench file contributes. Held-out "
            "sets are read whole by default (a source's training-time filter would leave evaluation "
            "prompts uncompared); narrow this only when the evaluation itself uses fewer."
        },
    )

    def __post_init__(self) -> None:
        if isinstance(self.heldout, str) or not all(isinstance(h, str) and h for h in self.heldout):
            raise SplHfError(f"heldout must be a list of set names, got {self.heldout!r}")
        if not self.heldout:
            raise SplHfError("heldout must name at least one held-out prompt set")
        if len(set(self.heldout)) != len(self.heldout):
            raise SplHfError(f"heldout names a set twice: {self.heldout!r}")
        if isinstance(self.ngram_size, bool) or not isinstance(self.ngram_size, int) or self.ngram_size < 1:
            raise SplHfError(f"ngram_size must be a positive integer, got {self.ngram_size!r}")
        for name in ("containment_max_words", "containment_min_words"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SplHfError(f"{name} must be a whole number >= 0, got {value!r}")
        if self.containment_min_words < 2:
            raise SplHfError(f"containment_min_words must be at least 2, got {self.containment_min_words!r}")
        if not 0.0 < float(self.overlap_threshold) <= 1.0:
            raise SplHfError(f"overlap_threshold must be in (0, 1], got {self.overlap_threshold!r}")

    def to_dict(self) -> dict:
        return asdict(self)
