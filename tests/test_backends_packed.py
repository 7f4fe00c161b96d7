"""Packed suffixes: each attends to the shared prefix and itself, and models that cannot be packed are not."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from transformers import AttentionInterface
from transformers.cache_utils import DynamicLayer

from spl_hf.backends import packed
from spl_hf.backends.hf import HFBackend, even_chunks
from spl_hf.backends.packed import PACK_MULTIPLE, NotPackable, Packing, packed_pass
from tests.backends_fixtures import build_tiny_llama

LABELS = [("A", "B")]


def test_packing_puts_suffixes_at_their_true_positions_and_pads_the_row() -> None:
    p = Packing.of([[5, 6, 7], [8], [9, 10]], prefix_len=40, pad_id=0, device="cpu")
    assert p.spans == ((0, 3), (3, 1), (4, 2))
    assert p.input_ids.shape == (1, PACK_MULTIPLE)
    assert p.input_ids[0, :6].tolist() == [5, 6, 7, 8, 9, 10]
    assert set(p.input_ids[0, 6:].tolist()) == {0}
    assert p.position_ids[0, :6].tolist() == [40, 41, 42, 40, 40, 41]
    assert p.last.tolist() == [2, 3, 5]
    assert Packing.of([[1] * PACK_MULTIPLE], 3, 0, "cpu").input_ids.shape == (1, PACK_MULTIPLE)


def test_even_chunks_keep_order_and_differ_by_one_at_most() -> None:
    assert [len(c) for c in even_chunks(list(range(49)), 8)] == [7] * 7
    assert [len(c) for c in even_chunks(list(range(17)), 16)] == [8, 9]
    assert [x for c in even_chunks(list(range(10)), 3) for x in c] == list(range(10))
    assert even_chunks([1, 2], 8) == [[1, 2]]


def test_the_test_models_are_packed(tiny_backend, tiny_qwen2_backend) -> None:
    assert tiny_backend.packed and tiny_qwen2_backend.packed
    assert tiny_backend.engine["suffixes"] == "packed"


def _full(backend: HFBackend, prefix: str, suffix: str) -> tuple[float, ...]:
    return backend.next_token_scores_full(prefix + suffix, LABELS[0]).probs


def test_packed_scores_match_one_pass_each(tiny_backend) -> None:
    prefix = "<|im_start|>user\nWhich reply is kinder?\n\nPrinciple:"
    suffixes = [" x", " Be kind.", " " + "Explain every step with care and in order. " * 4, " Short one."]
    got = tiny_backend.next_token_scores(prefix, suffixes, LABELS * len(suffixes))
    for s, g in zip(suffixes, got, strict=True):
        assert max(abs(a - b) for a, b in zip(g.probs, _full(tiny_backend, prefix, s), strict=True)) <= 1e-6


@pytest.fixture(scope="module")
def sliding_backend(tmp_path_factory: pytest.TempPathFactory, smollm_tokenizer_dir: Path) -> HFBackend:
    """A Mistral with a sliding window: its attention takes an argument the packed function refuses."""
    dest = build_tiny_llama(
        tmp_path_factory.mktemp("tiny_mistral"), smollm_tokenizer_dir, family="Mistral", sliding_window=4096
    )
    return HFBackend.load(str(dest), threads=1, chunk_size=3)


def test_a_sliding_window_model_keeps_the_padded_path(sliding_backend) -> None:
    assert not sliding_backend.packed
    assert sliding_backend.engine["suffixes"] == "padded"
    prefix = "<|im_start|>user\nWhich reply is kinder?\n\nPrinciple:"
    suffixes = [" Be kind.", " Say what the risk is, then help."]
    got = sliding_backend.next_token_scores(prefix, suffixes, LABELS * 2)
    for s, g in zip(suffixes, got, strict=True):
        assert (
            max(abs(a - b) for a, b in zip(g.probs, _full(sliding_backend, prefix, s), strict=True)) <= 1e-6
        )
    alone = sliding_backend.next_token_scores(prefix, suffixes[1:], LABELS)
    assert alone[0].probs == got[1].probs  # the padded path is batch-invariant too


def test_the_load_probe_refuses_an_attention_that_ignores_the_prefix(tiny_model_dir: Path) -> None:
    def own_tokens_only(module, query, key, value, mask, dropout=0.0, scaling=None, **kw):
        out = torch.nn.functional.scaled_dot_product_attention(
            query, key, value, is_causal=True, scale=scaling, enable_gqa=True
        )
        return out.transpose(1, 2).contiguous(), None

    AttentionInterface.register(packed.NAME, own_tokens_only)
    try:
        backend = HFBackend.load(str(tiny_model_dir), threads=1)
    finally:
        AttentionInterface.register(packed.NAME, packed.attention)
    assert not backend.packed and backend.engine["suffixes"] == "padded"
    assert HFBackend.load(str(tiny_model_dir), threads=1).packed


def test_a_pass_where_a_layer_did_not_attend_is_refused() -> None:
    layer = DynamicLayer()
    layer.update(torch.zeros(1, 1, 2, 4), torch.zeros(1, 1, 2, 4))
    model = SimpleNamespace(config=SimpleNamespace(_attn_implementation="sdpa"))
    cache = SimpleNamespace(layers=[layer])
    packing = Packing.of([[1]], 2, 0, "cpu")
    with pytest.raises(NotPackable, match="not once for each"), packed_pass(model, cache, packing):
        pass  # a model whose attention bypasses the interface never calls it
    assert model.config._attn_implementation == "sdpa"


def test_attention_outside_a_pass_is_a_bug() -> None:
    q = torch.zeros(1, 1, 1, 4)
    with pytest.raises(RuntimeError, match="outside a packed pass"):
        packed.attention(SimpleNamespace(layer_idx=0), q, q, q, None)
