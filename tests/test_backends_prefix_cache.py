"""The prefix's buffers give a chunk pass the same bits as a concatenated cache, reused from prefix to prefix."""

from __future__ import annotations

import pytest
import torch

from spl_hf.backends.prefix_cache import PrefixSlots, SuffixSlot, expanded_cache


def _prefix_cache(backend, ids: list[int]):
    out = backend.model(input_ids=torch.tensor([ids]), use_cache=True)
    return out.past_key_values if hasattr(out, "past_key_values") else out.cache


def _chunk_logits(backend, cache, chunk: list[list[int]], width: int) -> torch.Tensor:
    ids = torch.zeros((len(chunk), width), dtype=torch.long)
    for i, s in enumerate(chunk):
        ids[i, : len(s)] = torch.tensor(s)
    from spl_hf.backends.hf import _CACHE_KW

    return backend.model(input_ids=ids, use_cache=True, **{_CACHE_KW: cache}).logits


@torch.inference_mode()
def test_slots_give_the_bits_of_the_concatenating_cache_across_prefixes(tiny_backend) -> None:
    backend = tiny_backend
    slots = PrefixSlots()
    suffixes = [[5, 6, 7], [8, 9], [10, 11, 12, 13], [14]]
    # Long, then short (buffers kept), then longer with more rows (buffers grow): each as concatenation gives.
    for prefix, rows in (([3, 4, 5, 6, 7, 8, 9, 10], 3), ([11, 12, 13], 2), (list(range(20, 40)), 4)):
        cache = _prefix_cache(backend, prefix)
        slots.load(cache, rows=rows, room=4)
        chunk = suffixes[:rows]
        want = _chunk_logits(backend, expanded_cache(cache, rows), chunk, 4)
        got = _chunk_logits(backend, slots.chunk_cache(rows, 4), chunk, 4)
        again = _chunk_logits(backend, slots.chunk_cache(rows, 4), chunk[::-1], 4)
        assert torch.equal(want, got)
        assert torch.equal(want, again.flip(0))  # the previous chunk's suffix left no trace
        assert len(slots.buffers) == len(cache.layers)
        assert all(kb.shape[2] >= len(prefix) + 4 and kb.shape[0] >= rows for kb, _ in slots.buffers)
        assert cache.layers[0].keys.shape[0] == 1  # the prefix's own cache is untouched


def test_each_load_makes_buffers_for_its_own_prefix(tiny_backend) -> None:
    with torch.inference_mode():
        cache = _prefix_cache(tiny_backend, list(range(3, 15)))
        small = _prefix_cache(tiny_backend, [3, 4])
    slots = PrefixSlots()
    slots.load(cache, rows=4, room=8)
    assert slots.prefix_len == 12 and all(k.shape[0] == 4 and k.shape[2] == 20 for k, _ in slots.buffers)
    slots.load(small, rows=2, room=4)
    assert slots.prefix_len == 2 and all(k.shape[0] == 2 and k.shape[2] == 6 for k, _ in slots.buffers)
    assert torch.equal(slots.buffers[0][0][1, :, :2], small.layers[0].keys[0])


def test_a_slot_takes_one_pass_of_at_most_its_width() -> None:
    keys = torch.zeros((2, 1, 6, 4))
    slot = SuffixSlot(keys, keys.clone(), prefix_len=3)
    assert slot.get_seq_length() == 3
    new = torch.ones((2, 1, 3, 4))
    k, _ = slot.update(new, new)
    assert k.shape == (2, 1, 6, 4) and torch.equal(keys[:, :, 3:], new)
    with pytest.raises(RuntimeError, match="misused"):
        slot.update(new, new)  # a second pass would overwrite the first
    with pytest.raises(RuntimeError, match="misused"):
        SuffixSlot(keys, keys.clone(), prefix_len=3).update(
            torch.ones((2, 1, 4, 4)), torch.ones((2, 1, 4, 4))
        )


def test_other_layer_kinds_take_the_copying_path() -> None:
    from transformers.cache_utils import DynamicCache, DynamicSlidingWindowLayer

    cache = DynamicCache()
    cache.layers = [DynamicSlidingWindowLayer(sliding_window=4)]
    cache.layers[0].update(torch.ones((1, 1, 3, 2)), torch.ones((1, 1, 3, 2)))
    slots = PrefixSlots()
    slots.load(cache, rows=2, room=4)
    assert not slots.buffered and slots.buffers == []
    assert slots.chunk_cache(2, 4).layers[0].keys.shape == (2, 1, 3, 2)


def test_release_drops_the_prefix_and_its_buffers(tiny_backend) -> None:
    with torch.inference_mode():
        cache = _prefix_cache(tiny_backend, [3, 4, 5])
    slots = PrefixSlots()
    slots.load(cache, rows=2, room=4)
    slots.release()
    assert slots.cache is None and slots.buffers == [] and not slots.buffered
