"""transformers backend: label probabilities with a shared-prefix KV cache, and seeded generation."""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from spl_hf.backends.base import Generation, InputError, LabelScores, TokenizerProbe, TokenizerText
from spl_hf.backends.loading import LoadedModel, ModelInfo, load_model
from spl_hf.backends.packed import NotPackable, Packing, packed_pass
from spl_hf.backends.prefix_cache import PrefixSlots
from spl_hf.errors import SplHfError

try:  # transformers renamed `past_key_values` to `cache` (5.2x); keep older 5.x working
    from transformers.modeling_outputs import CausalLMOutputWithPast

    _CACHE_KW = "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"
except ImportError:  # pragma: no cover
    _CACHE_KW = "past_key_values"


# The padded path (models whose attention is not packed, see packed.py): suffixes are padded to their
# own length rounded up to this multiple. The padded width changes the attention kernels' shapes and
# with them the last bits of a result, while the rows sharing a chunk do not (measured); so a width
# fixed by the suffix itself makes its scores independent of its batch.
PAD_MULTIPLE = 16
MIN_PROJECTED_ROWS = 16  # rows of the vocabulary projection per chunk pass, at least (see _project_last)
# Scored once at load, packed and in one plain pass, to decide whether this model's suffixes are packed.
PROBE_TEXT = "Compare two replies to the question below, then answer with one letter: A or B."


def even_chunks(items: Sequence[Any], most: int) -> list[Sequence[Any]]:
    """``items`` in order, in the fewest chunks of at most ``most``, their sizes differing by one at most."""
    k = -(-len(items) // most)
    return [items[i * len(items) // k : (i + 1) * len(items) // k] for i in range(k)]


def width_groups(suffix_ids: Sequence[Sequence[int]]) -> list[tuple[int, list[int]]]:
    """(padded width, indices in input order) per width bucket, buckets in ascending width."""
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(suffix_ids):
        groups.setdefault(-(-len(s) // PAD_MULTIPLE) * PAD_MULTIPLE, []).append(i)
    return sorted(groups.items())


class BoundaryError(SplHfError):
    """Prefix and suffix do not tokenize independently, so the shared cache would change the scores."""


class HFBackend(TokenizerText):
    """A causal LM from transformers behind the :class:`~spl_hf.backends.base.Backend` interface.

    Up to ``chunk_size`` suffixes are scored per forward pass against one pass over their shared
    prefix: packed into one row where the model's attention allows it (:mod:`~spl_hf.backends.packed`),
    else one padded row each (:mod:`~spl_hf.backends.prefix_cache`). Which one is decided at load and
    recorded in ``engine`` (the two round differently in the last bits, so cache keys tell them apart).
    """

    def __init__(
        self,
        loaded: LoadedModel,
        chunk_size: int = 8,
        max_length: int | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        min_label_mass: float = 0.0,
        close_thinking: bool = False,
    ) -> None:
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.info: ModelInfo = loaded.info
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.min_label_mass = float(min_label_mass)
        self.close_thinking = bool(close_thinking)
        import transformers

        self.engine = {
            "backend": "hf",
            "engine": f"transformers {transformers.__version__}",
            "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."),
        }
        self.chunk_size = max(1, int(chunk_size))
        ctx = getattr(self.model.config, "max_position_embeddings", None) or 2048
        self.max_length = int(min(max_length or ctx, ctx))
        self.device = next(self.model.parameters()).device
        self.boundary_fallbacks = 0
        self._slots = PrefixSlots()  # the prefix's cache once per chunk row, for one prefix at a time
        self.forward_calls = 0  # counted so tests can prove resumed runs recompute nothing
        # Only the last position's logits are ever read; skipping the vocabulary projection for the
        # rest saves about a fifth of a small model's compute.
        params = inspect.signature(self.model.forward).parameters
        self._last_only: dict[str, Any] = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        self._pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.packed = self._packs()
        self.engine["suffixes"] = "packed" if self.packed else "padded"
        self.forward_calls = 0  # the probe's passes are loading, not scoring

    @classmethod
    def load(
        cls,
        model: str | None = None,
        threads: int = 1,
        dtype: str = "auto",
        gguf_file: str | None = None,
        **kw: Any,
    ) -> HFBackend:
        from spl_hf.backends.loading import default_device
        from spl_hf.backends.settings import resolve_dtype
        from spl_hf.backends.thinking import check_chat_template

        labels = tuple(kw.pop("labels", ()))

        def check(tokenizer: Any, info: ModelInfo) -> None:  # before the weights load
            kwargs = kw.get("chat_template_kwargs") or {}
            check_chat_template(tokenizer, info.model_id, kwargs, bool(kw.get("close_thinking")))
            TokenizerProbe(tokenizer, info, kwargs, bool(kw.get("close_thinking"))).check_labels(labels)

        loaded = load_model(
            model,
            threads=threads,
            dtype=resolve_dtype(dtype, default_device()),
            check=check,
            gguf_file=gguf_file,
        )
        return cls(loaded, **kw)

    def split_ids(self, prefix: str, suffix: str) -> tuple[list[int], list[int]]:
        """Token ids of prefix and suffix, checked to concatenate to the ids of the joined text."""
        p, s = self.encode(prefix), self.encode(suffix)
        if self.encode(prefix + suffix) != p + s:
            raise BoundaryError(
                "prefix and suffix tokenize differently when joined; end the shared prefix on a non-space "
                f"character and start the suffix with its separator (prefix ends {prefix[-20:]!r}, "
                f"suffix starts {suffix[:20]!r})"
            )
        return p, s

    def _check_length(self, n: int) -> None:
        if n > self.max_length:
            raise InputError(f"input is {n} tokens, longer than the model context ({self.max_length})")

    @contextlib.contextmanager
    def _gqa(self) -> Iterator[None]:
        """Let SDPA attend grouped KV heads directly instead of copying them per query head.

        transformers only does this without a mask on CUDA-like devices unless told to; the scoring
        passes here never pass a mask, and on CPU the copy costs about a sixth of a suffix pass.
        """
        key = "TRANSFORMERS_SDPA_FORCE_GQA"
        old = os.environ.get(key)
        os.environ[key] = "1"
        try:
            yield
        finally:
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old

    # -- scoring ------------------------------------------------------------------------------------
    def shared_split(self, prefix_ids: Sequence[int], full_ids: Sequence[int]) -> int:
        """How many leading tokens of ``full_ids`` (the joined prompt) come from the prefix's cache.

        Chosen in token space: the tokens the joined text shares with the prefix's own tokenization,
        less one when a byte-level BPE fused the junction (Qwen2's ``.ĊĊ``), and never the whole prompt.
        It depends on this (prefix, suffix) alone, so a suffix's bits do not depend on its batch.
        """
        n = 0
        for a, b in zip(prefix_ids, full_ids):
            if a != b:
                break
            n += 1
        return min(n, len(full_ids) - 1)

    @torch.inference_mode()
    def next_token_scores(
        self, prefix: str, suffixes: Sequence[str], labels: Sequence[Sequence[str]]
    ) -> list[LabelScores]:
        if len(labels) != len(suffixes):
            raise SplHfError("one label list per suffix is required")
        if not prefix:
            raise InputError("empty prefix")
        label_ids = [[self.label_id(lab) for lab in labs] for labs in labels]
        prefix_ids = self.encode(prefix)
        by_split: dict[int, list[tuple[int, list[int]]]] = {}  # cached tokens -> (suffix index, its tokens)
        results: dict[int, LabelScores] = {}
        for j, s in enumerate(suffixes):
            if not s:
                raise InputError("empty suffix")
            full = self.encode(prefix + s)
            k = self.shared_split(prefix_ids, full)
            if k <= 0:  # nothing to share (the junction swallowed the whole prefix): one full pass
                results[j] = self.next_token_scores_full(prefix + s, labels[j])
                self.boundary_fallbacks += 1
                continue
            self._check_length(len(full))
            by_split.setdefault(k, []).append((j, full[k:]))
        for k, members in sorted(by_split.items()):
            for (j, _), probs in zip(
                members, self._score_against(prefix_ids[:k], [m for _, m in members]), strict=True
            ):
                p = probs[label_ids[j]].tolist()
                results[j] = LabelScores(tuple(labels[j]), tuple(float(x) for x in p))
        return [results[j] for j in range(len(suffixes))]

    def _prefix_cache(self, prefix_ids: list[int]) -> Any:
        with self._gqa():
            out = self.model(
                input_ids=torch.tensor([prefix_ids], device=self.device), use_cache=True, **self._last_only
            )
        self.forward_calls += 1
        return getattr(out, _CACHE_KW)

    def _score_against(self, prefix_ids: list[int], suffix_ids: list[list[int]]) -> list[torch.Tensor]:
        """Next-token probabilities after each suffix, all scored against one pass over ``prefix_ids``."""
        cache = self._prefix_cache(prefix_ids)
        if not self.packed:
            return self._score_padded(cache, len(prefix_ids), suffix_ids)
        probs: list[torch.Tensor] = []
        for part in even_chunks(suffix_ids, self.chunk_size):
            probs += list(torch.softmax(self._packed_logits(cache, len(prefix_ids), part), dim=-1))
        return probs

    def _packed_logits(self, cache: Any, prefix_len: int, suffix_ids: Sequence[list[int]]) -> torch.Tensor:
        """Float logits after each suffix, the suffixes packed into one row (see packed.py)."""
        packing = Packing.of(suffix_ids, prefix_len, self._pad_id, self.device)
        with (
            packed_pass(self.model, cache, packing),
            self._project_last(packing.last.new_zeros(()), packing.last),
        ):
            logits = self.model(
                input_ids=packing.input_ids, position_ids=packing.position_ids, use_cache=False
            ).logits
        self.forward_calls += 1
        return logits[: len(suffix_ids), 0].float()

    @torch.inference_mode()
    def _packs(self) -> bool:
        """Whether this model's suffixes can be packed: its attention allows it, and a probe agrees.

        The probe scores two suffixes of :data:`PROBE_TEXT` packed and compares their logits with one
        plain pass over the text, to the dtype's precision: a model whose attention the packed function
        does not reproduce keeps the padded path instead of scoring wrongly.
        """
        ids = self.encode(PROBE_TEXT)
        k = len(ids) - 4
        try:
            packed = self._packed_logits(self._prefix_cache(ids[:k]), k, [ids[k:], ids[k : k + 2]])
        except NotPackable:
            return False
        plain = self.model(input_ids=torch.tensor([ids], device=self.device)).logits[0].float()
        self.forward_calls += 1
        plain = plain[[len(ids) - 1, k + 1]]
        tol = max(1e-4, 8 * torch.finfo(next(self.model.parameters()).dtype).eps)
        return bool((packed - plain).abs().max() <= tol * plain.abs().max())

    def _score_padded(self, cache: Any, prefix_len: int, suffix_ids: list[list[int]]) -> list[torch.Tensor]:
        """Next-token probabilities after each suffix, one padded row each (see prefix_cache.py)."""
        room = self.max_length - prefix_len  # padding never goes past the model's positions
        groups = [(min(width, room), members) for width, members in width_groups(suffix_ids)]
        slots = self._slots
        slots.load(
            cache,
            rows=min(self.chunk_size, max(len(m) for _, m in groups)),
            room=max(width for width, _ in groups),
        )
        probs: list[torch.Tensor | None] = [None] * len(suffix_ids)
        try:
            for width, members in groups:
                for start in range(0, len(members), self.chunk_size):
                    rows = members[start : start + self.chunk_size]
                    chunk = self._score_chunk(
                        slots.chunk_cache(len(rows), width), [suffix_ids[r] for r in rows], width
                    )
                    for i, r in enumerate(rows):
                        probs[r] = chunk[i]
        finally:
            slots.release()
        return probs  # type: ignore[return-value]

    def _score_chunk(self, cache: Any, chunk: list[list[int]], width: int) -> torch.Tensor:
        """Next-token probabilities after each suffix of ``chunk`` (all padded to ``width``).

        ``cache`` holds the prefix once per row of the chunk and is spent by the pass.
        """
        # Right padding needs no attention mask: under the causal mask a real token never sees the
        # padding after it, and default positions (prefix length + i) are the true ones.
        ids = torch.full((len(chunk), width), self._pad_id, dtype=torch.long)
        for i, s in enumerate(chunk):
            ids[i, : len(s)] = torch.tensor(s)
        last = torch.tensor([len(s) - 1 for s in chunk], device=self.device)
        with self._gqa(), self._project_last(torch.arange(len(chunk), device=self.device), last):
            logits = self.model(input_ids=ids.to(self.device), use_cache=True, **{_CACHE_KW: cache}).logits
        self.forward_calls += 1
        return torch.softmax(logits[: len(chunk), 0].float(), dim=-1)

    @contextlib.contextmanager
    def _project_last(self, rows: torch.Tensor, cols: torch.Tensor) -> Iterator[None]:
        """Project only each suffix's last position (``rows[i], cols[i]``) onto the vocabulary.

        ``logits_to_keep`` keeps the same positions in every row, so rows of different lengths made the
        head project rows x distinct lengths positions (and a packed row all of its own). This hook hands
        the output layer one position per suffix instead (``logits[i, 0]`` is suffix i's), whatever the
        model's head does after, padded to ``MIN_PROJECTED_ROWS``: a projection of few rows takes
        small-matrix kernels whose sums round differently (a suffix scored alone came out 1e-6 off its
        batched value), so every pass projects at least that many, extras never read.
        """
        extra = max(0, MIN_PROJECTED_ROWS - len(cols))
        pick_rows = torch.cat([rows.expand(len(cols)), cols.new_zeros(extra)])
        pick_cols = torch.cat([cols, cols.new_zeros(extra)])

        def gather(_module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
            hidden = args[0]
            return (hidden[pick_rows, pick_cols].unsqueeze(1), *args[1:])

        handle = self.model.get_output_embeddings().register_forward_pre_hook(gather)
        try:
            yield
        finally:
            handle.remove()

    @torch.inference_mode()
    def next_token_scores_full(self, text: str, labels: Sequence[str]) -> LabelScores:
        ids = self.encode(text)
        if not ids:
            raise InputError("empty input")
        self._check_length(len(ids))
        label_ids = [self.label_id(lab) for lab in labels]
        with self._gqa():
            logits = self.model(input_ids=torch.tensor([ids], device=self.device), **self._last_only).logits
        self.forward_calls += 1
        probs = torch.softmax(logits[0, -1].float(), dim=-1)[label_ids].tolist()
        return LabelScores(tuple(labels), tuple(float(x) for x in probs))

    # -- generation ---------------------------------------------------------------------------------
    @torch.inference_mode()
    def generate(
        self, text: str, max_new_tokens: int, seed: int = 0, do_sample: bool = False, temperature: float = 1.0
    ) -> Generation:
        ids = self.encode(text)
        if not ids:
            raise InputError("empty input")
        if max_new_tokens < 1:
            raise SplHfError("max_new_tokens must be at least 1")
        self._check_length(len(ids) + max_new_tokens)
        torch.manual_seed(seed)  # per item, so a resumed run samples exactly what a full run would
        eos = self.tokenizer.eos_token_id
        kwargs: dict[str, Any] = {"do_sample": do_sample, "max_new_tokens": max_new_tokens}
        if do_sample:
            kwargs["temperature"] = temperature
        else:  # greedy: clear sampling defaults from generation_config so no warning claims otherwise
            kwargs.update(temperature=None, top_p=None, top_k=None)
        out = self.model.generate(
            input_ids=torch.tensor([ids], device=self.device),
            attention_mask=torch.ones((1, len(ids)), dtype=torch.long, device=self.device),
            pad_token_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos,
            eos_token_id=eos,
            **kwargs,
        )
        self.forward_calls += 1
        new = out[0, len(ids) :].tolist()
        ended = bool(new) and eos is not None and new[-1] == eos
        text_out = self.tokenizer.decode(new, skip_special_tokens=True)
        return Generation(
            text=text_out, n_tokens=len(new), hit_limit=not ended and len(new) >= max_new_tokens
        )
