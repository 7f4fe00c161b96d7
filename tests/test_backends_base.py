"""Answer labels resolve to the token a model emits right after the generation prompt, for three tokenizer
families built in memory (no downloads), or are refused before any scoring with the label and tokenizer named."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest

from spl_hf.backends.base import LabelError, TokenizerText
from spl_hf.backends.loading import ModelInfo
from spl_hf.backends.thinking import TemplateError

LLAMA = (
    "{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] }} [/INST]"
    "{% else %} {{ m['content'] }}</s>{% endif %}{% endfor %}"
)
# Same SentencePiece tokenizer, but the template writes the answer right after [/INST] (no space).
TIGHT = (
    "{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] }} [/INST]"
    "{% else %}{{ m['content'] }}</s>{% endif %}{% endfor %}"
)
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
THINKING = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)


def sentencepiece_tokenizer(template: str) -> Any:
    """A Llama-style Unigram tokenizer with the '▁' word marker: ' A' is '▁A', a bare 'A' is 'A'."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = string.ascii_letters + string.digits + string.punctuation
    vocab = [("<unk>", 0.0), ("<s>", 0.0), ("</s>", 0.0), ("▁", -3.0)]
    vocab += [(p, -1.0) for p in ("▁[INST]", "▁[/INST]", "▁A", "▁B", "▁Question?")]
    vocab += [(c, -5.0) for c in chars]
    tok = Tokenizer(models.Unigram(vocab, unk_id=0))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    fast.chat_template = template
    fast.name_or_path = "tiny-sentencepiece"
    return fast


def byte_level_tokenizer(template: str, thinking_tokens: bool = False) -> Any:
    """A GPT-2/Qwen-style byte-level BPE: 'A' and 'ĠA' (' A') are different tokens; with
    ``thinking_tokens``, `<think>` and `</think>` are special tokens as in reasoning models."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<|im_start|>", "<|im_end|>", *(["<think>", "</think>"] if thinking_tokens else [])],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(
        ["<|im_start|>assistant\nA<|im_end|>", "say A or B", "the A and the B"] * 20, trainer
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>")
    fast.chat_template = template
    fast.name_or_path = "tiny-byte-bpe"
    return fast


class TokenizerOnly(TokenizerText):
    """The text half of a backend: what label resolution uses, with no model behind it."""

    def __init__(
        self, tokenizer: Any, chat_template_kwargs: dict[str, Any] | None = None, close_thinking: bool = False
    ) -> None:
        self.tokenizer = tokenizer
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.close_thinking = close_thinking
        self.engine = {"backend": "none", "engine": "test", "dtype": "float32"}
        self.info = ModelInfo("tiny", "test", "")


def _piece(backend: TokenizerOnly, label: str) -> str:
    return backend.tokenizer.convert_ids_to_tokens(backend.label_id(label))


def test_sentencepiece_label_takes_the_word_marker_when_the_template_writes_a_space() -> None:
    backend = TokenizerOnly(sentencepiece_tokenizer(LLAMA))
    assert backend.render_chat([{"role": "user", "content": "Question?"}]).endswith("[/INST]")
    assert (_piece(backend, "A"), _piece(backend, "B")) == ("▁A", "▁B")


def test_sentencepiece_label_is_bare_when_the_template_writes_the_answer_right_after_the_prompt() -> None:
    backend = TokenizerOnly(sentencepiece_tokenizer(TIGHT))
    assert backend.encode("A") == [backend.tokenizer.convert_tokens_to_ids("▁A")]  # what encode alone gives
    assert _piece(backend, "A") == "A"  # but after "[/INST]" the model writes a bare A


def test_byte_level_bpe_label_has_no_space_after_a_chatml_generation_prompt() -> None:
    backend = TokenizerOnly(byte_level_tokenizer(CHATML))
    assert _piece(backend, "A") == "A" and _piece(backend, "B") == "B"
    assert backend.tokenizer.convert_ids_to_tokens(backend.encode(" A")) == ["ĠA"]


def test_thinking_template_is_refused_unless_thinking_is_switched_off() -> None:
    with pytest.raises(TemplateError, match=r"'A'.*model tiny.*tiny-byte-bpe.*enable_thinking"):
        TokenizerOnly(byte_level_tokenizer(THINKING, True)).label_id("A")
    off = TokenizerOnly(byte_level_tokenizer(THINKING, True), {"enable_thinking": False})
    assert off.render_chat([{"role": "user", "content": "Q"}]).endswith("<think>\n\n</think>\n\n")
    assert _piece(off, "A") == "A"
    assert (
        off.template_fingerprint != TokenizerOnly(byte_level_tokenizer(THINKING, True)).template_fingerprint
    )


def test_multi_token_label_is_refused_naming_label_and_tokenizer() -> None:
    backend = TokenizerOnly(byte_level_tokenizer(CHATML))
    with pytest.raises(LabelError, match=r"'Maybe'.*\(tiny-byte-bpe\).*\['M', 'ay'"):
        backend.label_id("Maybe")


def test_judge_refuses_a_thinking_judge_before_any_scoring() -> None:
    from spl_hf.backends.judge import PairwiseJudge

    class Counting(TokenizerOnly):
        calls = 0

        def next_token_scores(self, *a: Any, **k: Any) -> Any:
            Counting.calls += 1
            raise AssertionError("scored before the labels were checked")

    with pytest.raises(TemplateError, match="enable_thinking"):
        PairwiseJudge(Counting(byte_level_tokenizer(THINKING, True)))
    assert Counting.calls == 0
    PairwiseJudge(Counting(byte_level_tokenizer(THINKING, True), {"enable_thinking": False}))  # accepted


# DeepSeek-R1-distill style: no switch; thinking is implied (the template strips past reasoning at `</think>`).
R1 = (
    "{% for m in messages %}{% if m['role'] == 'user' %}<|im_start|>user\n{{ m['content'] }}<|im_end|>\n"
    "{% else %}<|im_start|>assistant\n{{ m['content'].split('</think>')[-1] }}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# The same with the generation prompt opening the block, as Hugging Face's R1 templates do.
R1_OPEN = R1.replace("<|im_start|>assistant\n{% endif %}", "<|im_start|>assistant\n<think>\n{% endif %}")


@pytest.mark.parametrize(
    ("template", "how", "closer"),
    [
        (R1, "leaves the thinking block unclosed", "<think>\n\n</think>\n\n"),
        (R1_OPEN, "opens a thinking block", "</think>\n\n"),
        (THINKING, "leaves the thinking block unclosed", "<think>\n\n</think>\n\n"),
    ],
)
def test_reasoning_templates_are_found_by_what_they_render(template: str, how: str, closer: str) -> None:
    from spl_hf.backends.judge import PairwiseJudge

    tok = byte_level_tokenizer(template, thinking_tokens=True)
    with pytest.raises(TemplateError, match=rf"model tiny: .*sha256:\w{{12}}.*{how}.*close_thinking") as err:
        PairwiseJudge(TokenizerOnly(tok))
    # Only the Qwen3-style switch can be turned off by template arguments; R1 has none, and the argument
    # is refused as a fix there: it leaves the prompt byte-identical.
    assert ("enable_thinking" in str(err.value)) == (template is THINKING)
    if template is not THINKING:
        with pytest.raises(TemplateError):
            PairwiseJudge(TokenizerOnly(tok, {"enable_thinking": False}))
    closed = TokenizerOnly(tok, close_thinking=True)
    judge = PairwiseJudge(closed)
    prompt = closed.render_chat([{"role": "user", "content": "Q"}])
    assert prompt.endswith("<|im_start|>assistant\n" + ("<think>\n" if template is R1_OPEN else "") + closer)
    assert _piece(closed, "A") == "A"
    assert judge.template_hash  # the closing text is in the template hash:
    assert closed.template_fingerprint != TokenizerOnly(tok).template_fingerprint
    assert '"close_thinking"' not in json.dumps(TokenizerOnly(tok).identity)


def test_a_template_without_thinking_tokens_is_not_a_reasoning_template_and_keeps_its_hash() -> None:
    tok = byte_level_tokenizer(CHATML)
    assert _piece(TokenizerOnly(tok), "A") == "A"
    with_tokens = byte_level_tokenizer(CHATML, thinking_tokens=True)  # thinking tokens, nothing closes
    with pytest.raises(TemplateError, match="unclosed"):
        TokenizerOnly(with_tokens).label_id("A")


def test_a_tokenizer_without_a_chat_template_is_refused_naming_model_and_setting() -> None:
    tok = byte_level_tokenizer(CHATML)
    tok.chat_template = None
    with pytest.raises(TemplateError, match=r"model tiny: .*tiny-byte-bpe.*no chat template.*set model"):
        TokenizerOnly(tok).label_id("A")
