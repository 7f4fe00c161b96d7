"""Shared fixtures for the LM-backend tests: a tiny random Llama with the SmolLM2 tokenizer.

Registered for every test module by ``pytest_plugins`` in ``tests/conftest.py``.
The tokenizer is taken from the embedded model's safetensors
cache when it exists, else read from the GGUF (a few seconds, once per session); no downloads.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "special_tokens_map.json",
)


def smollm_tokenizer_to(dest: Path) -> Path:
    from spl_hf.backends.loading import embedded_cache_dir, embedded_gguf_path

    dest.mkdir(parents=True, exist_ok=True)
    cached = embedded_cache_dir()
    if (cached / "spl_hf_model.json").is_file():
        for name in TOKENIZER_FILES:
            if (cached / name).is_file():
                shutil.copy(cached / name, dest / name)
        return dest
    from transformers import AutoTokenizer

    gguf = embedded_gguf_path()
    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(dest))
    return dest


def build_tiny_llama(
    dest: Path,
    tokenizer_dir: Path,
    seed: int = 0,
    max_positions: int = 2048,
    head_dim: int = 8,
    family: str = "Llama",
    **extra: Any,
) -> Path:
    """A 2-layer random Llama (vocab of the SmolLM2 tokenizer) saved as a normal model folder.

    ``head_dim`` 8 keeps the transformers tests fast; vLLM's CPU attention needs at least 32.
    ``family`` names another Llama-like architecture of transformers (``Mistral``), ``extra`` its own
    config arguments.
    """
    import torch
    import transformers

    config_cls = getattr(transformers, f"{family}Config")
    model_cls = getattr(transformers, f"{family}ForCausalLM")

    dest.mkdir(parents=True, exist_ok=True)
    for f in tokenizer_dir.iterdir():
        shutil.copy(f, dest / f.name)
    torch.manual_seed(seed)
    config = config_cls(
        vocab_size=49152,
        hidden_size=4 * head_dim if head_dim == 8 else 2 * head_dim,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4 if head_dim == 8 else 2,
        num_key_value_heads=2 if head_dim == 8 else 1,
        max_position_embeddings=max_positions,
        initializer_range=0.2,  # large enough that label probabilities differ visibly between inputs
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
        **extra,
    )
    model_cls(config).save_pretrained(str(dest))
    return dest


@pytest.fixture(scope="session")
def smollm_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return smollm_tokenizer_to(tmp_path_factory.mktemp("smollm_tok"))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory, smollm_tokenizer_dir: Path) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("tiny_llama"), smollm_tokenizer_dir)


@pytest.fixture(scope="session")
def tiny_short_model_dir(tmp_path_factory: pytest.TempPathFactory, smollm_tokenizer_dir: Path) -> Path:
    """Same architecture with a 256-token context, for over-long input handling."""
    return build_tiny_llama(tmp_path_factory.mktemp("tiny_short"), smollm_tokenizer_dir, max_positions=256)


@pytest.fixture(scope="session")
def tiny_backend(tiny_model_dir: Path) -> Iterator[Any]:
    from spl_hf.backends.hf import HFBackend

    yield HFBackend.load(str(tiny_model_dir), threads=1, chunk_size=3)


# Qwen2's pre-tokenizer pattern: punctuation keeps the newlines after it (`.\n\n` is one piece), so its
# byte-level merges fuse the junction between a prompt's shared prefix and each question (`.ĊĊ`, `]ĊĊ`).
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def qwen2_style_tokenizer(template: str = CHATML_TEMPLATE, extra_specials: tuple[str, ...] = ()) -> Any:
    """A Qwen2-style byte-level BPE built in memory, trained so that `.ĊĊ` and `]ĊĊ` are merged tokens."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>", *extra_specials],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = [
        "Answer with one letter, A or B.\n\nPrinciple: Responses should be honest.",
        "[End of request]\n\nAttribute: does the reply refuse?",
        "<|im_start|>user\nCompare two replies.\n\n[Response A]\nyes\n[End of Response A]<|im_end|>\n",
        "<|im_start|>assistant\nA<|im_end|>\n<|im_start|>assistant\nB<|im_end|>\n",
    ]
    tok.train_from_iterator(corpus * 50, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None
    )
    fast.chat_template = template
    fast.name_or_path = "tiny-qwen2-bpe"
    return fast


def build_tiny_qwen2(dest: Path, tokenizer: Any, seed: int = 0) -> Path:
    """A 2-layer random Qwen2 over ``tokenizer`` (saved beside it) as a normal model folder."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    dest.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(dest))
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        initializer_range=0.2,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    Qwen2ForCausalLM(config).save_pretrained(str(dest))
    return dest


@pytest.fixture(scope="session")
def tiny_qwen2_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from spl_hf.backends.hf import HFBackend

    path = build_tiny_qwen2(tmp_path_factory.mktemp("tiny_qwen2"), qwen2_style_tokenizer())
    yield HFBackend.load(str(path), threads=1, chunk_size=3)
