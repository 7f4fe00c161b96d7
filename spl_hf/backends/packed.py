"""Suffixes packed one after another into a single row, each attending to the shared prefix and itself.

The padded path (:mod:`~spl_hf.backends.prefix_cache`) gives every suffix its own row, padded to a
multiple of 16 tokens; the judge's questions average 28 tokens, so about a sixth of what it computed
was padding. Here a chunk's suffixes share one row at their true positions, and a registered attention
function gives each suffix attention over the prefix's cached keys and its own keys (causal), so what a
suffix computes depends on it alone:

- attention runs per suffix, with shapes set by the prefix and that suffix only;
- every other layer works token by token, and a matrix product's result for a token does not depend
  on how many tokens share the call once there are at least 12 (measured on this machine's CPU kernels:
  fewer take kernels that sum in another order), so the row is padded to a multiple of
  :data:`PACK_MULTIPLE` tokens.

A model is packed only where its attention goes through transformers' attention interface with nothing
this function does not implement (sliding windows, soft-capping, attention sinks, position biases):
:func:`check_attention` refuses the rest, and the backend keeps the padded path for them.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import AttentionInterface
from transformers.cache_utils import DynamicLayer

from spl_hf.errors import SplHfError

NAME = "spl_hf_packed"
PACK_MULTIPLE = 16  # tokens per packed row: a multiple of this, so no product runs on fewer than 12
# Attention arguments that change what attention computes; a model passing any of them is not packed.
_UNSUPPORTED = ("sliding_window", "softcap", "s_aux", "sinks", "position_bias")


class NotPackable(SplHfError):
    """The model's attention cannot be computed per packed suffix here (the padded path is used)."""


@dataclass(frozen=True)
class Packing:
    """One packed row: the suffixes' tokens and true positions, and where each suffix sits in the row."""

    input_ids: torch.Tensor  # (1, T), T a multiple of PACK_MULTIPLE
    position_ids: torch.Tensor  # (1, T)
    spans: tuple[tuple[int, int], ...]  # (offset, length) of each suffix in the row
    last: torch.Tensor  # each suffix's last position in the row

    @classmethod
    def of(cls, suffix_ids: Sequence[Sequence[int]], prefix_len: int, pad_id: int, device: Any) -> Packing:
        tokens: list[int] = []
        positions: list[int] = []
        spans = []
        for s in suffix_ids:
            spans.append((len(tokens), len(s)))
            tokens += s
            positions += range(prefix_len, prefix_len + len(s))
        # The padding attends to nothing (see attention) and no real token attends to it.
        extra = -len(tokens) % PACK_MULTIPLE
        tokens += [pad_id] * extra
        positions += [prefix_len] * extra
        return cls(
            input_ids=torch.tensor([tokens], device=device),
            position_ids=torch.tensor([positions], device=device),
            spans=tuple(spans),
            last=torch.tensor([o + n - 1 for o, n in spans], device=device),
        )


@dataclass
class _Pass:
    """What the attention function needs during one packed forward pass."""

    prefix: list[tuple[torch.Tensor, torch.Tensor]]  # keys, values per layer: (1, kv heads, P, dim)
    spans: tuple[tuple[int, int], ...]
    masks: dict[int, torch.Tensor] = field(default_factory=dict)  # by suffix length
    layers_seen: list[int] = field(default_factory=list)

    def mask(self, n: int, device: Any) -> torch.Tensor:
        """Suffix of ``n`` tokens: the whole prefix, then its own tokens causally."""
        if n not in self.masks:
            p = self.prefix[0][0].shape[-2]
            m = torch.ones(n, p + n, dtype=torch.bool, device=device)
            m[:, p:] = torch.ones(n, n, dtype=torch.bool, device=device).tril()
            self.masks[n] = m
        return self.masks[n]


_ACTIVE: contextvars.ContextVar[_Pass | None] = contextvars.ContextVar("spl_hf_packed_pass", default=None)


def check_attention(module: Any, dropout: float, kwargs: dict[str, Any]) -> None:
    """Refuse what :func:`attention` does not compute (checked on every call; the load probe meets it first)."""
    used = [k for k in _UNSUPPORTED if kwargs.get(k) is not None]
    if used or dropout or getattr(module, "layer_idx", None) is None:
        raise NotPackable(f"attention with {used or 'dropout or no layer index'} is not packed")


def attention(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Each suffix's queries against [prefix keys | its own keys]; the padding's output stays zero."""
    state = _ACTIVE.get()
    if state is None:
        raise RuntimeError(f"{NAME} attention called outside a packed pass")  # a bug, not input
    check_attention(module, dropout, kwargs)
    pk, pv = state.prefix[module.layer_idx]
    state.layers_seen.append(module.layer_idx)
    gqa = query.shape[1] != key.shape[1]
    out = torch.zeros_like(query)
    for off, n in state.spans:
        out[:, :, off : off + n] = torch.nn.functional.scaled_dot_product_attention(
            query[:, :, off : off + n],
            torch.cat([pk, key[:, :, off : off + n]], dim=2),
            torch.cat([pv, value[:, :, off : off + n]], dim=2),
            attn_mask=state.mask(n, query.device),
            scale=scaling,
            enable_gqa=gqa,
        )
    return out.transpose(1, 2).contiguous(), None


AttentionInterface.register(NAME, attention)


@contextlib.contextmanager
def packed_pass(model: Any, prefix_cache: Any, packing: Packing) -> Iterator[None]:
    """Run the model's forward passes in this block with :func:`attention` against ``prefix_cache``.

    The attention implementation is the config's, read by each attention module at call time, so it is
    switched for the block and restored after; every layer must have attended exactly once.
    """
    layers = prefix_cache.layers
    if any(type(layer) is not DynamicLayer for layer in layers):  # sliding windows, quantised caches
        raise NotPackable("the prefix cache has layers other than plain dynamic ones")
    state = _Pass(prefix=[(layer.keys, layer.values) for layer in layers], spans=packing.spans)
    config = model.config
    before = config._attn_implementation
    token = _ACTIVE.set(state)
    config._attn_implementation = NAME
    try:
        yield
    finally:
        config._attn_implementation = before
        _ACTIVE.reset(token)
    if sorted(state.layers_seen) != list(range(len(layers))):
        raise NotPackable(f"attention ran for layers {state.layers_seen}, not once for each of {len(layers)}")
