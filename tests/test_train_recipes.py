"""Training recipes and accelerate launch configs: they parse, and they say what Table XIII says."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO

TRAIN = REPO / "recipes" / "train"
ACCEL = sorted((REPO / "recipes" / "accelerate").glob("*.yaml"))
PROJ = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@pytest.fixture(scope="module")
def gemma():
    from spl_hf.train.args import parse_recipe

    return parse_recipe(TRAIN / "spl_dpo_gemma.yaml")


def test_gemma_recipe_is_table_xiii(gemma):
    from trl import get_peft_config

    script, train, model = gemma
    assert model.model_name_or_path == "google/gemma-4-12b-it" and model.dtype == "bfloat16"
    assert train.loss_type == ["sigmoid"] and train.beta == 0.1
    assert train.learning_rate == 5e-7 and str(train.lr_scheduler_type.value) == "constant"
    assert train.warmup_steps == 0 and str(train.optim.value) == "adamw_torch" and train.bf16
    assert train.disable_dropout is False  # otherwise TRL would zero the LoRA dropout too
    lora = get_peft_config(model)
    assert (lora.r, lora.lora_alpha, lora.lora_dropout, lora.bias) == (16, 320, 0.05, "none")
    assert lora.use_rslora is False and lora.lora_alpha / lora.r == 20
    assert lora.init_lora_weights is True  # B = 0: the adapter contributes nothing at the start
    assert isinstance(lora.target_modules, str)  # a regex, matched by PEFT against full module names
    assert script.dataset_config == "preferences" and script.dataset_train_split == "train"


def _tiny_gemma4_module_names() -> list[str]:
    """Module names of a Gemma-4 with text decoder, vision tower and audio tower (built on meta)."""
    import torch
    from transformers import Gemma4Config, Gemma4ForConditionalGeneration

    text = dict(
        vocab_size=256,
        vocab_size_per_layer_input=256,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        hidden_size_per_layer_input=4,
        sliding_window=8,
        max_position_embeddings=64,
        layer_types=["sliding_attention", "full_attention"] * 2,
        attention_k_eq_v=True,
    )
    vision = dict(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=8,
        position_embedding_size=16,
    )
    audio = dict(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        output_proj_dims=16,
        subsampling_conv_channels=[4, 4],
    )
    with torch.device("meta"):
        model = Gemma4ForConditionalGeneration(
            Gemma4Config(text_config=text, vision_config=vision, audio_config=audio)
        )
    return [n for n, _ in model.named_modules()]


def test_gemma_regex_adapts_the_text_decoder_only(gemma):
    from peft.tuners.tuners_utils import check_target_module_exists
    from trl import get_peft_config

    lora = get_peft_config(gemma[2])
    names = _tiny_gemma4_module_names()
    adapted = [n for n in names if check_target_module_exists(lora, n)]
    towers = [n for n in names if re.search(r"(vision|audio)_tower\..*(" + "|".join(PROJ) + ")$", n)]
    assert towers  # the towers do have q/k/v/o/gate/up/down modules a suffix list would catch
    text = [n for n in names if n.startswith("model.language_model.layers.") and n.endswith(PROJ)]
    assert adapted == text
    # Full-attention layers with attention_k_eq_v have no value projection (Table XIII: 328 = 48*7 - 8).
    assert len(adapted) == 4 * 7 - 2
    assert not any(("vision" in n or "audio" in n or "embed_" in n) for n in adapted)


def test_demo_recipe_runs_the_embedded_model_on_cpu():
    from spl_hf.train.args import parse_recipe

    _, train, model = parse_recipe(TRAIN / "demo_cpu.yaml")
    assert model.model_name_or_path == "embedded" and model.dtype == "float32" and model.use_peft
    assert train.use_cpu and not train.bf16 and train.max_steps <= 10 and train.max_length <= 512
    assert train.loss_type == ["sigmoid"]


def test_flags_override_recipe_values():
    from spl_hf.train.args import parse_args

    _, train, model = parse_args(
        ["--config", str(TRAIN / "demo_cpu.yaml"), "--max_steps", "2", "--seed", "7", "--lora_r", "4"]
    )
    assert train.max_steps == 2 and train.seed == 7 and model.lora_r == 4


@pytest.mark.parametrize("path", ACCEL, ids=[p.stem for p in ACCEL])
def test_accelerate_config_parses(path):
    from accelerate.commands.config.config_args import ClusterConfig

    from spl_hf.train.launch import parse_accelerate_config

    cfg = parse_accelerate_config(path)
    assert isinstance(cfg, ClusterConfig)
    expected = {
        "cpu": "NO",
        "single_gpu": "NO",
        "multi_gpu": "MULTI_GPU",
        "deepspeed_zero2": "DEEPSPEED",
        "deepspeed_zero3": "DEEPSPEED",
        "fsdp": "FSDP",
    }[path.stem]
    assert cfg.distributed_type.value == expected
    if path.stem.startswith("deepspeed"):
        assert cfg.deepspeed_config["zero_stage"] == int(path.stem[-1])


def test_accelerate_configs_cover_the_launch_modes():
    assert {p.stem for p in ACCEL} == {
        "cpu",
        "single_gpu",
        "multi_gpu",
        "deepspeed_zero2",
        "deepspeed_zero3",
        "fsdp",
    }


def test_accelerate_config_unknown_nested_key_fails(tmp_path):
    from spl_hf.train.launch import parse_accelerate_config

    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (REPO / "recipes/accelerate/deepspeed_zero2.yaml")
        .read_text()
        .replace("zero_stage: 2", "zero_stage: 2\n  zero_stgae: 3")
    )
    with pytest.raises(ValueError, match="zero_stgae"):
        parse_accelerate_config(bad)
    bad.write_text((REPO / "recipes/accelerate/cpu.yaml").read_text() + "num_gpus: 2\n")
    with pytest.raises(ValueError, match="num_gpus"):
        parse_accelerate_config(bad)
