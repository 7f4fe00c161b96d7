"""A prefix's KV cache reused by chunks of suffixes, without copying the prefix once per chunk.

A chunk of ``rows`` suffixes needs the prefix's keys and values once per row. transformers' dynamic
layer appends new tokens with ``torch.cat``, which copies the whole prefix for every chunk and every
layer (up to a seventh of the shared-prefix time on the embedded model where each copy met
fresh memory; a few percent where the allocator reused it). :class:`PrefixSlots` copies the
prefix once per prefix into buffers with room after it, and each chunk writes only its own suffix
tokens there. Attention reads the same values in the same order as after a concatenation, so the
scores are the same bits (``tests/test_backends_prefix_cache.py`` compares them).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from transformers.cache_utils import DynamicLayer


class SuffixSlot(DynamicLayer):
    """One layer of a chunk's cache: the prefix already in the buffers, the suffix written after it."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, prefix_len: int) -> None:
        super().__init__()
        self.buffers = (keys, values)
        self.prefix_len = prefix_len
        self.keys, self.values = keys[:, :, :prefix_len], values[:, :, :prefix_len]
        self.device, self.is_initialized = keys.device, True

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = self.buffers
        end = self.prefix_len + key_states.shape[-2]
        if self.keys.shape[-2] != self.prefix_len or end > keys.shape[-2]:
            # A bug, not input: a slot takes exactly one suffix pass of at most the width it was made for.
            raise RuntimeError(
                f"suffix slot misused: {self.keys.shape[-2]} cached, {end} needed of {keys.shape[-2]}"
            )
        keys[:, :, self.prefix_len : end].copy_(key_states)
        values[:, :, self.prefix_len : end].copy_(value_states)
        self.keys, self.values = keys[:, :, :end], values[:, :, :end]
        return self.keys, self.values


def expanded_cache(cache: Any, rows: int) -> Any:
    """``cache`` seen ``rows`` times along the batch: broadcast views where the layers allow, else a copy.

    The dynamic layers only ever replace their tensors (``torch.cat`` with the new tokens), so a shallow
    copy whose tensors are broadcast views leaves the prefix's cache intact.
    """
    layers = getattr(cache, "layers", None)
    if layers is None or not all(isinstance(layer, DynamicLayer) for layer in layers):
        out = copy.deepcopy(cache)
        if rows > 1:
            out.batch_repeat_interleave(rows)
        return out
    out = copy.copy(cache)
    out.layers = []
    for layer in layers:
        view = copy.copy(layer)
        if getattr(view, "keys", None) is not None:
            view.keys = view.keys.expand(rows, *view.keys.shape[1:])
            view.values = view.values.expand(rows, *view.values.shape[1:])
        out.layers.append(view)
    return out


class PrefixSlots:
    """Per-layer buffers of ``rows`` x (prefix + room) tokens for one prefix's chunks.

    :meth:`load` copies a prefix's cache into every row once; :meth:`chunk_cache` hands a chunk views
    of those rows; :meth:`release` drops them when the prefix is done. Held across prefixes, the
    buffers slowed the other passes (a full pass per score ran 2.4% slower beside them, measured);
    released, the allocator hands the same memory back at the next prefix without page faults
    (15-25 ms per load on the embedded model, chunk 8).
    Only plain dynamic layers (full attention, growing) are buffered; any other cache (sliding
    windows, quantised layers) takes the copying path of :func:`expanded_cache`.
    """

    def __init__(self) -> None:
        self.cache: Any = None
        self.buffered = False
        self.prefix_len = 0
        self.buffers: list[tuple[torch.Tensor, torch.Tensor]] = []

    def load(self, cache: Any, rows: int, room: int) -> None:
        """Hold ``cache`` (a prefix's, batch 1) for chunks of up to ``rows`` suffixes of ``room`` tokens."""
        self.cache = cache
        layers = getattr(cache, "layers", None)
        self.buffered = layers is not None and all(type(layer) is DynamicLayer for layer in layers)
        self.buffers = []  # a previous prefix's, freed before the new ones are made
        if not self.buffered:
            return
        self.prefix_len = n = layers[0].keys.shape[-2]
        for layer in layers:
            k, v = (t.new_empty((rows, t.shape[1], n + room, t.shape[3])) for t in (layer.keys, layer.values))
            k[:, :, :n].copy_(layer.keys.expand(rows, *layer.keys.shape[1:]))
            v[:, :, :n].copy_(layer.values.expand(rows, *layer.values.shape[1:]))
            self.buffers.append((k, v))

    def release(self) -> None:
        """Drop the prefix and the buffers (between prefixes, so other passes get the memory back)."""
        self.cache, self.buffers, self.buffered = None, [], False

    def chunk_cache(self, rows: int, width: int) -> Any:
        """A cache for one forward pass of ``rows`` suffixes padded to ``width`` tokens."""
        if not self.buffered:
            return expanded_cache(self.cache, rows)
        end = self.prefix_len + width
        out = copy.copy(self.cache)
        out.layers = [
            SuffixSlot(k[:rows, :, :end], v[:rows, :, :end], self.prefix_len) for k, v in self.buffers
        ]
        return out
