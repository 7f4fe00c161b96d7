"""An index of held-out prompts: exact normal forms and word n-gram postings.

Matching a training text costs one dictionary lookup for the exact pass, one lookup per word pair
of the text for the containment pass (short held-out prompts are indexed by their first two words,
and only a pair that starts one is followed up), and one lookup per distinct n-gram of the text for
the near-duplicate pass (only held-out prompts sharing a gram are ever counted), so a pass over N
training prompts against H held-out prompts is linear in their total size, never N × H comparisons.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa

from spl_hf.decontam.config import DecontamConfig
from spl_hf.decontam.normalize import ngrams, normalize_prompt
from spl_hf.errors import SplHfError

EXACT, CONTAINED, NEAR = "exact", "contained", "near"


@dataclass(frozen=True)
class Match:
    heldout: str  # set name
    heldout_prompt_id: str
    kind: str  # EXACT, CONTAINED or NEAR
    overlap: float  # shared n-grams / n-grams of the smaller text (1.0 for an exact or contained match)


class HeldoutIndex:
    def __init__(self, heldout: pa.Table, config: DecontamConfig, source: str = "held-out prompts") -> None:
        for col in ("prompt_id", "source", "prompt"):
            if col not in heldout.column_names:
                raise SplHfError(f"{source}: lacks column {col!r} (held-out sets are prompt rows)")
        if not pa.types.is_string(heldout.schema.field("prompt").type) and not pa.types.is_large_string(
            heldout.schema.field("prompt").type
        ):
            raise SplHfError(
                f"{source}: 'prompt' must be a string column, got {heldout.schema.field('prompt').type}"
            )
        self.config = config
        sets = heldout.column("source").to_pylist()
        ids = heldout.column("prompt_id").to_pylist()
        texts = heldout.column("prompt").to_pylist()
        order = {name: k for k, name in enumerate(config.heldout)}
        present = set(sets)
        absent = [name for name in config.heldout if name not in present]
        if absent:
            raise SplHfError(
                f"{source}: no prompts of the held-out sets {absent} (present: {sorted(map(str, present))})"
            )
        rows = [i for i, s in enumerate(sets) if s in order]
        for i in rows:
            if not isinstance(texts[i], str) or not isinstance(ids[i], str):
                raise SplHfError(f"{source}: row {i} of set {sets[i]!r} has no prompt text or prompt_id")
        # Deterministic precedence among held-out prompts: configured set order, then prompt id.
        rows.sort(key=lambda i: (order[sets[i]], ids[i]))
        self.names: list[str] = [sets[i] for i in rows]
        self.ids: list[str] = [ids[i] for i in rows]
        self.exact: dict[str, int] = {}
        self.grams: list[frozenset] = []
        self.postings: dict[tuple[str, ...], list[int]] = {}
        for k, i in enumerate(rows):
            normal = normalize_prompt(texts[i])
            self.exact.setdefault(normal, k)
            grams = ngrams(normal, config.ngram_size) if config.near_duplicates else frozenset()
            self.grams.append(grams)
            for g in grams:
                self.postings.setdefault(g, []).append(k)
        self.sizes = Counter(self.names)
        self.texts: list[str] = [texts[i] for i in rows]
        self._index_short(config)

    def _index_short(self, config: DecontamConfig) -> None:
        """Short held-out prompts by their word tuple, and the lengths that start with each word pair."""
        self.short: dict[tuple[str, ...], int] = {}
        self.heads: dict[tuple[str, str], tuple[int, ...]] = {}
        self.first_words: frozenset[str] = frozenset()
        if not config.containment_max_words:
            return
        heads: dict[tuple[str, str], set[int]] = {}
        for normal, k in self.exact.items():
            words = tuple(normal.split())
            if config.containment_min_words <= len(words) <= config.containment_max_words:
                self.short.setdefault(words, k)
                heads.setdefault((words[0], words[1]), set()).add(len(words))
        self.heads = {pair: tuple(sorted(lengths)) for pair, lengths in heads.items()}
        self.first_words = frozenset(first for first, _ in self.heads)

    def text_of(self, prompt_id: str, name: str) -> str:
        """The held-out prompt text of (set, prompt id), as read."""
        if not hasattr(self, "_by_id"):
            self._by_id = {(n, i): k for k, (n, i) in enumerate(zip(self.names, self.ids))}
        return self.texts[self._by_id[(name, prompt_id)]]

    def contained(self, normal: str) -> int | None:
        """The first (by precedence) short held-out prompt inside `normal` on word boundaries, or None."""
        if not self.heads:
            return None
        words = normal.split()
        starts = self.first_words.intersection(words)  # in C: most texts share no first word
        if not starts:
            return None
        found: int | None = None
        last = len(words) - 1
        for i in [i for i, w in enumerate(words) if w in starts and i < last]:
            lengths = self.heads.get((words[i], words[i + 1]))
            if lengths is None:
                continue
            for n in lengths:
                k = self.short.get(tuple(words[i : i + n]))
                if k is not None and (found is None or k < found):
                    found = k
        return found

    def match(self, texts: list[str]) -> Match | None:
        """Best match of any of `texts` (the user turns of one training prompt), or None.

        Best: an exact match, then a contained one, then a near one; then the larger overlap, then
        the held-out prompt that comes first (configured set order, then prompt id), so the result
        is deterministic.
        """
        best: tuple | None = None
        for text in texts:
            normal = normalize_prompt(text)
            k = self.exact.get(normal) if normal else None
            if k is not None:
                cand = (0, -1.0, k)
                best = cand if best is None or cand < best else best
                continue
            k = self.contained(normal)
            if k is not None:
                cand = (1, -1.0, k)
                best = cand if best is None or cand < best else best
            if not self.config.near_duplicates:
                continue
            grams = ngrams(normal, self.config.ngram_size)
            # Counted in one pass over the postings hit (most grams hit none).
            hits = [posting for posting in map(self.postings.get, grams) if posting]
            if not hits:
                continue
            shared = Counter(itertools.chain.from_iterable(hits))
            for k, c in shared.items():
                overlap = round(c / min(len(grams), len(self.grams[k])), 6)
                if overlap >= self.config.overlap_threshold:
                    cand = (2, -overlap, k)
                    best = cand if best is None or cand < best else best
        if best is None:
            return None
        rank, neg, k = best
        kind = (EXACT, CONTAINED, NEAR)[rank]
        return Match(self.names[k], self.ids[k], kind, -neg)
