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
    dest: Path, tokenizer_dir: Path, seed: int = 0, max_positions: int = 2048, head_dim: int = 8
) -> Path:
    """A 2-layer random Llama (vocab of the SmolLM2 tokenizer) saved as a normal model folder.

    ``head_dim`` 8 keeps the transformers tests fast; vLLM's CPU attention needs at least 32.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    dest.mkdir(parents=True, exist_ok=True)
    for f in tokenizer_dir.iterdir():
        shutil.copy(f, dest / f.name)
    torch.manual_seed(seed)
    config = LlamaConfig(
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
    )
    LlamaForCausalLM(config).save_pretrained(str(dest))
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
