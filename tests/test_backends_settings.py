"""Engine settings are ModelArgs fields: parsed from flags and recipes, checked, and part of every result's identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from spl_hf.backends.settings import ModelArgs, engine_kwargs, resolve_dtype
from spl_hf.configs import parse_config
from spl_hf.errors import SplHfError


def test_chat_template_kwargs_come_as_json_on_the_command_line_and_a_mapping_in_a_recipe(
    tmp_path: Path,
) -> None:
    (args,) = parse_config(ModelArgs, ["--chat_template_kwargs", '{"enable_thinking": false}'])
    assert args.chat_template_kwargs == {"enable_thinking": False}
    recipe = tmp_path / "r.yaml"
    recipe.write_text("chat_template_kwargs: {enable_thinking: false}\ndtype: float32\nmin_label_mass: 0.5\n")
    (args,) = parse_config(ModelArgs, ["--config", str(recipe)])
    assert args.chat_template_kwargs == {"enable_thinking": False}
    assert engine_kwargs(args)["dtype"] == "float32" and engine_kwargs(args)["min_label_mass"] == 0.5


@pytest.mark.parametrize(
    ("over", "flag"),
    [
        ({"chat_template_kwargs": "{enable_thinking"}, "--chat_template_kwargs: not a JSON object"),
        ({"chat_template_kwargs": "[1, 2]"}, "--chat_template_kwargs: expected a mapping"),
        ({"min_label_mass": 1.5}, "--min_label_mass must be a number in [0, 1]"),
        ({"dtype": "fp8"}, "--dtype must be one of"),
        ({"gpu_memory_utilization": 0.0}, "--gpu_memory_utilization must be in (0, 1]"),
        ({"tensor_parallel_size": 0}, "--tensor_parallel_size must be a positive integer"),
    ],
)
def test_bad_engine_settings_are_refused_naming_the_flag(over: dict, flag: str) -> None:
    with pytest.raises(ValueError) as exc:
        ModelArgs(**over)
    assert str(exc.value).startswith(flag)


def test_a_bad_setting_exits_2_with_one_line_before_any_model_load(tmp_path: Path, capsys) -> None:
    from spl_hf.cli import main

    argv = ["judge", "--pairs", str(tmp_path / "p.jsonl"), "--cache", str(tmp_path / "c.db")]
    argv += ["--output_dir", str(tmp_path / "o.jsonl"), "--min_label_mass", "2"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "--min_label_mass" in err and len(err.splitlines()) == 1


def test_dtype_default_is_stated_per_device() -> None:
    assert resolve_dtype("auto", "cpu") == "float32"
    assert resolve_dtype("auto", "cuda:0") == "bfloat16"
    assert resolve_dtype("float16", "cpu") == "float16"


def test_backend_dtype_engine_and_template_kwargs_are_in_every_cache_key(tiny_backend, monkeypatch) -> None:
    from spl_hf.backends.judge import PairwiseJudge, parse_pair
    from spl_hf.tenets import select_tenets
    from tests.backends_rows import pair_row

    assert tiny_backend.identity["backend"] == "hf" and tiny_backend.identity["dtype"] == "float32"
    assert tiny_backend.identity["engine"].startswith("transformers ")
    pair, tenet = parse_pair(pair_row(0), 0), select_tenets("no_preachy_tone")[0]
    base = PairwiseJudge(tiny_backend)
    seen = {base.key(pair, tenet)}
    for name, value in [
        ("engine", {**tiny_backend.engine, "backend": "vllm"}),
        ("engine", {**tiny_backend.engine, "dtype": "bfloat16"}),
        ("engine", {**tiny_backend.engine, "engine": "transformers 0.0"}),
        ("chat_template_kwargs", {"enable_thinking": False}),
    ]:
        with monkeypatch.context() as m:
            m.setattr(tiny_backend, name, value)
            judge = PairwiseJudge(tiny_backend)
            seen.add(judge.key(pair, tenet))
            assert judge.template_hash != base.template_hash
    assert len(seen) == 5


class EchoBackend:
    """A stand-in engine: records what the factory passes it."""

    def __init__(self, model, **kwargs):
        self.model, self.kwargs = model, kwargs


def test_an_engine_is_one_entry_in_the_engine_table(monkeypatch):
    from spl_hf.backends import ENGINES, Engine, make_backend

    monkeypatch.setitem(ENGINES, "echo", Engine("tests.test_backends_settings:EchoBackend", ("threads",)))
    got = make_backend(
        "echo", "m", threads=2, dtype="float32", base_url="x", gpu_memory_utilization=0.5, max_length=7
    )
    # the options of other engines are dropped; its own and the shared ones (max_length) are passed
    assert isinstance(got, EchoBackend) and got.model == "m" and got.kwargs == {"threads": 2, "max_length": 7}
    assert ModelArgs(backend="echo").backend == "echo"  # the table is the check
    with pytest.raises(SplHfError, match="--backend must be hf, vllm, openai or echo, got 'nope'"):
        ModelArgs(backend="nope")
