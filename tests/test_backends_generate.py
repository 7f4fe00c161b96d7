import json
from pathlib import Path

import pytest

from spl_hf.backends import ShardStore, run_worker
from spl_hf.backends.generate import CandidateGenerator, prompts_from_rows, with_instruction
from spl_hf.backends.settings import GenerationConfig
from tests.backends_rows import pair_row, write_jsonl

PROMPTS, _ = prompts_from_rows([pair_row(i) for i in range(3)])


def _run(backend, config: GenerationConfig, folder: Path, items=None) -> tuple[list[dict], dict]:
    gen = CandidateGenerator(backend, config)
    items = gen.items(PROMPTS) if items is None else items
    # One item per shard, so that a run cut short leaves shards that the full run reuses.
    result = run_worker(gen, items, ShardStore(str(folder)), {}, progress=False, shard_groups=1)
    return result.rows, result.stats


def test_greedy_generation_is_deterministic_and_records_the_limit(tiny_backend, tmp_path: Path) -> None:
    config = GenerationConfig(instructions=("comply", "refuse"), max_new_tokens=6, progress=False)
    a, stats = _run(tiny_backend, config, tmp_path / "a.db")
    b, _ = _run(tiny_backend, config, tmp_path / "b.db")
    assert stats["computed"] == 6 and a == b
    assert [(r["prompt_id"], r["instruction"]) for r in a[:2]] == [("q0", "comply"), ("q0", "refuse")]
    for r in a:
        assert r["max_new_tokens"] == 6 and r["n_tokens"] <= 6
        assert r["hit_limit"] == (r["n_tokens"] == 6)
    assert any(r["hit_limit"] for r in a)  # a random model rarely ends its turn within 6 tokens


def test_sampling_is_seeded_per_item_and_resume_draws_the_same(tiny_backend, tmp_path: Path) -> None:
    config = GenerationConfig(
        instructions=("none",), k=2, max_new_tokens=5, do_sample=True, seed=7, progress=False
    )
    full, _ = _run(tiny_backend, config, tmp_path / "full.db")
    gen = CandidateGenerator(tiny_backend, config)
    items = gen.items(PROMPTS)
    _, first = _run(tiny_backend, config, tmp_path / "part.db", items=items[3:])  # a run cut short...
    resumed, stats = _run(tiny_backend, config, tmp_path / "part.db")  # ...then finished
    assert (first["computed"], stats["computed"], stats["cached"]) == (3, 3, 3)
    assert resumed == full  # in input order, whichever run computed each item
    assert full[0]["response"] != full[1]["response"]  # two samples of one prompt differ
    other, _ = _run(tiny_backend, GenerationConfig(**{**config.__dict__, "seed": 8}), tmp_path / "o.db")
    assert [r["response"] for r in other] != [r["response"] for r in full]


def test_config_and_instruction_errors() -> None:
    with pytest.raises(ValueError, match="sampling"):
        GenerationConfig(k=2)
    with pytest.raises(KeyError, match="unknown instruction"):
        GenerationConfig(instructions=("obey",))
    merged = with_instruction(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], "refuse"
    )
    assert len(merged) == 2 and merged[0]["content"].endswith("\n\nBe brief.")
    assert with_instruction([{"role": "user", "content": "Hi"}], "none") == [
        {"role": "user", "content": "Hi"}
    ]
    _, failures = prompts_from_rows([{"prompt_id": "x", "prompt": [{"role": "assistant", "content": "hi"}]}])
    assert "last message" in failures[0]["reason"]


def test_over_long_prompt_is_a_recorded_failure(tiny_short_model_dir: Path, tmp_path: Path, capsys) -> None:
    from spl_hf.cli import main as cli_main

    rows = [pair_row(0, prompt=[{"role": "user", "content": "word " * 400}]), pair_row(1)]
    prompts = write_jsonl(tmp_path / "p.jsonl", rows)
    out = tmp_path / "cands.jsonl"
    assert (
        cli_main(
            [
                "generate",
                "--prompts",
                str(prompts),
                "--instructions",
                "comply",
                "--max_new_tokens",
                "4",
                "--model",
                str(tiny_short_model_dir),
                "--cache",
                str(tmp_path / "results"),
                "--output_dir",
                str(out),
                "--json",
                "--no_progress",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows"], summary["failed"]) == (1, 1)
    assert "longer than the model context" in summary["failures"][0]["reason"]
    row = json.loads(out.read_text().splitlines()[0])
    assert {"prompt_id", "response_id", "prompt", "response", "instruction", "hit_limit", "seed"} <= set(row)


def test_the_instruction_set_is_data(tmp_path):
    from spl_hf.backends.instructions import load_instructions

    shipped = load_instructions()
    assert shipped["none"] is None and set(shipped) >= {
        "comply",
        "refuse",
        "partially_comply",
        "safe_alternative",
    }
    custom = tmp_path / "instructions.yaml"
    custom.write_text("instructions:\n  cite: Answer and cite a source for every claim.\n  none: null\n")
    config = GenerationConfig(instructions=["cite"], instructions_file=str(custom), progress=False)
    assert with_instruction([{"role": "user", "content": "Hi"}], "cite", config.texts())[0] == {
        "role": "system",
        "content": "Answer and cite a source for every claim.",
    }
    with pytest.raises(KeyError, match="comply"):
        GenerationConfig(instructions=["comply"], instructions_file=str(custom))
    bad = tmp_path / "bad.yaml"
    bad.write_text("instructions:\n  Bad Name: text\n")
    with pytest.raises(ValueError, match=str(bad)):
        load_instructions(bad)
