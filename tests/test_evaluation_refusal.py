"""``spl-hf eval refusal`` on a tiny random model: outputs, resume, determinism, run folders, Table XIV."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from spl_hf.cli import main
from spl_hf.evaluation import EvalConfig, RefusalEvaluator, at_limit_table, load_prompt_set, read_run
from spl_hf.evaluation.batch import generate_batch

REQUIRED = (
    "prompt_set",
    "matcher",
    "matcher_hash",
    "n",
    "n_refusals",
    "refusal_rate",
    "at_limit",
    "at_limit_rate",
    "max_new_tokens",
    "model",
    "adapter",
    "seed",
)


def run_cli(args: list[str], capsys) -> tuple[int, dict]:
    code = main(args)
    out = capsys.readouterr().out
    return code, (json.loads(out) if code == 0 else {})


def eval_args(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "refusal",
        "--model",
        str(model),
        "--samples",
        "--limit",
        "3",
        "--max_new_tokens",
        "6",
        "--batch_size",
        "2",
        "--output_dir",
        str(out),
        "--no_progress",
        "--json",
        *extra,
    ]


def test_eval_writes_resumes_and_is_deterministic(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "eval"
    code, summary = run_cli(eval_args(tiny_model_dir, out), capsys)
    assert code == 0
    assert [s["prompt_set"] for s in summary["sets"]] == ["or_bench_hard_1k", "or_bench_toxic"]
    assert all(s["computed"] == 3 and s["cached"] == 0 for s in summary["sets"])
    folder = out / "or_bench_hard_1k"
    rows = [json.loads(x) for x in (folder / "responses.jsonl").read_text().splitlines()]
    assert [r["row_id"] for r in rows] == [0, 1, 2]
    assert all(isinstance(r["at_limit"], bool) and r["n_tokens"] <= 6 for r in rows)
    assert all(r["at_limit"] == (r["n_tokens"] == 6) for r in rows)  # a random model rarely ends early
    metrics = json.loads((folder / "metrics.json").read_text())
    for key in REQUIRED:
        assert key in metrics, key
    assert metrics["n"] == 3 and 0.0 <= metrics["refusal_rate"] <= 1.0
    assert metrics["at_limit"] == sum(r["at_limit"] for r in rows)
    assert metrics["n_refusals"] == sum(r["refusal"] for r in rows)
    assert metrics["max_new_tokens"] == 6 and metrics["adapter"] is None and metrics["seed"] is None
    assert set(metrics["matchers"]) >= {"xstest", "advbench", "or_bench_gpt4"}
    assert set(metrics["per_category"]) == {"harmful", "illegal", "deception"}  # OR-Bench categories
    before = {p: p.read_bytes() for p in out.rglob("*.json*")}

    # An existing result is not replaced silently ...
    assert main(eval_args(tiny_model_dir, out)) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    # ... and a rerun computes nothing and writes the same bytes.
    code, again = run_cli(eval_args(tiny_model_dir, out, "--overwrite"), capsys)
    assert code == 0 and all(s["computed"] == 0 and s["cached"] == 3 for s in again["sets"])
    assert {p: p.read_bytes() for p in out.rglob("*.json*")} == before


def test_killed_run_resumes_without_recomputation(tiny_backend, tmp_path: Path) -> None:
    from spl_hf.backends import ShardStore, run_worker

    ps = load_prompt_set("or_bench_hard_1k", "sample", limit=5)
    ev = RefusalEvaluator(tiny_backend, EvalConfig(max_new_tokens=4, batch_size=2, progress=False))
    items, failures = ev.prepare(ps.prompts)
    works = ev.works(ps.name, items)
    assert not failures and [len(b) for b in ev.batches(items)] == [2, 2, 1]
    store = ShardStore(str(tmp_path / "r"))

    def run(w):  # one generation batch per shard
        return run_worker(ev, w, store, {}, progress=False, shard_groups=1)

    assert run(works[:2]).computed == 2  # the run is "killed" after one batch
    calls = tiny_backend.forward_calls
    result = run(works)
    assert (result.computed, result.cached) == (3, 2)
    assert tiny_backend.forward_calls - calls == 2  # two batches generated, the first one reused
    assert run(works).computed == 0
    assert sorted(r["row_id"] for r in result.rows) == [0, 1, 2, 3, 4]


def test_batched_generation_matches_one_at_a_time(tiny_backend) -> None:
    ps = load_prompt_set("or_bench_toxic", "sample", limit=4)
    texts = [tiny_backend.render_chat([{"role": "user", "content": p.text}]) for p in ps.prompts]
    single = [tiny_backend.generate(t, 5) for t in texts]
    assert generate_batch(tiny_backend, texts, 5) == single


def make_run(tiny_model_dir: Path, run: Path, seed: int | None = 3) -> Path:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir))
    cfg = LoraConfig(r=2, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    get_peft_model(base, cfg).save_pretrained(str(run))
    record = {"model_name_or_path": str(tiny_model_dir), "dataset_name": "spl_demo", "dataset_split": "train"}
    if seed is not None:
        record["seed"] = seed
    (run / "run.json").write_text(json.dumps(record))
    return run


def test_eval_of_a_run_folder(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    run = make_run(tiny_model_dir, tmp_path / "runs" / "spl" / "seed3")
    args = [
        "eval",
        "refusal",
        "--run",
        str(run),
        "--samples",
        "--prompts",
        "or_bench_toxic",
        "--limit",
        "2",
        "--max_new_tokens",
        "4",
        "--no_progress",
        "--json",
    ]
    code, _ = run_cli(args, capsys)
    assert code == 0
    metrics = json.loads((run / "eval" / "or_bench_toxic" / "metrics.json").read_text())
    assert metrics["seed"] == 3 and metrics["condition"] == "spl" and metrics["adapter"] == str(run)
    assert metrics["model"] == str(tiny_model_dir)
    assert metrics["run_dataset"] == {"dataset_name": "spl_demo", "dataset_split": "train"}
    assert "+adapter-sha256:" in metrics["model_revision"]
    (run / "eval" / "or_bench_toxic" / "metrics.json").unlink()  # results remain in the run's cache
    code, again = run_cli([*args, "--overwrite"], capsys)
    assert again["sets"][0]["computed"] == 0

    # Table XIV from the sweep layout: per seed and pooled.
    table = at_limit_table(tmp_path / "runs")
    assert [(r["condition"], r["seed"], r["prompt_set"]) for r in table] == [
        ("spl", 3, "or_bench_toxic"),
        ("spl", "all", "or_bench_toxic"),
    ]
    assert table[0]["n"] == 2 and table[0]["at_limit"] == table[1]["at_limit"]


def test_run_folder_contract_errors(tiny_model_dir: Path, tmp_path: Path) -> None:
    run = make_run(tiny_model_dir, tmp_path / "r", seed=None)
    info = read_run(run)
    assert info.seed is None and info.condition is None and info.model_name_or_path == str(tiny_model_dir)
    (run / "run.json").write_text(json.dumps({"seed": 1}))
    with pytest.raises(ValueError, match=r"run\.json: lacks 'model_name_or_path'"):
        read_run(run)
    (run / "run.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"run\.json: run record missing"):
        read_run(run)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "run.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="adapter_config.json: no adapter"):
        read_run(empty)


def fake_metrics(root: Path, cond: str, seed: int, ps: str, n: int, k: int) -> None:
    folder = root / cond / f"seed{seed}" / "eval" / ps
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(
        json.dumps({"prompt_set": ps, "n": n, "at_limit": k, "max_new_tokens": 200})
    )


def test_at_limit_table_pools_seeds_and_names_gaps(tmp_path: Path, capsys) -> None:
    for seed, (h, t) in {1: (927, 117), 2: (925, 118)}.items():
        fake_metrics(tmp_path, "judge", seed, "or_bench_hard_1k", 1319, h)
        fake_metrics(tmp_path, "judge", seed, "or_bench_toxic", 655, t)
    table = at_limit_table(tmp_path)
    pooled = [r for r in table if r["seed"] == "all"]
    assert [(r["n"], r["at_limit"]) for r in pooled] == [(2638, 1852), (1310, 235)]
    assert table[0]["at_limit_pct"] == 70.28  # 927 / 1319, as in the paper's Table XIV
    assert main(["eval", "at-limit", str(tmp_path)]) == 0
    assert "all seeds" in capsys.readouterr().out
    fake_metrics(tmp_path, "spl", 1, "or_bench_hard_1k", 1319, 900)
    fake_metrics(tmp_path, "spl", 1, "or_bench_toxic", 655, 100)
    with pytest.raises(ValueError, match=r"condition 'spl' lacks seed\(s\) \[2\]"):
        at_limit_table(tmp_path)
    shutil.rmtree(tmp_path / "spl")
    (tmp_path / "judge" / "seed2" / "eval" / "or_bench_toxic" / "metrics.json").unlink()
    with pytest.raises(
        ValueError, match=r"judge/seed2: no evaluation of prompt set\(s\) \['or_bench_toxic'\]"
    ):
        at_limit_table(tmp_path)


def test_bad_cli_input(tmp_path: Path, capsys) -> None:
    assert main(["eval", "refusal", "--prompts", "nope", "--output_dir", str(tmp_path / "o")]) == 2
    assert "unknown prompt set 'nope'" in capsys.readouterr().err
    assert main(["eval", "refusal", "--samples"]) == 2
    assert "--output_dir is required unless --run" in capsys.readouterr().err
    # The matcher is a fixed choice: the parser refuses an unknown one (exit 2), listing the choices.
    with pytest.raises(SystemExit) as info:
        main(["eval", "refusal", "--samples", "--matcher", "xtest", "--output_dir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "invalid choice: 'xtest'" in err and "'xstest'" in err


def test_demo_step_prints_the_refusal_table(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    from spl_hf.demo.evaluation import DEMO_PROMPTS_PER_SET, demo_eval

    run = make_run(tiny_model_dir, tmp_path / "run")
    assert demo_eval(tmp_path / "demo", run, base_model=str(tiny_model_dir)) is True
    text = capsys.readouterr().out
    assert "matcher: default (" in text and "policy   prompt set" in text
    for policy in ("base", "adapter"):
        for ps in ("or_bench_hard_1k", "or_bench_toxic"):
            assert f"{policy:<8} {ps}" in text
            metrics = json.loads((tmp_path / "demo" / "eval" / policy / ps / "metrics.json").read_text())
            assert metrics["n"] == DEMO_PROMPTS_PER_SET
    assert (
        "+adapter-sha256:"
        in json.loads(
            (tmp_path / "demo" / "eval" / "adapter" / "or_bench_toxic" / "metrics.json").read_text()
        )["model_revision"]
    )


def test_adapter_on_other_base_weights_is_refused(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    run = make_run(tiny_model_dir, tmp_path / "runs" / "c" / "seed1")
    record = json.loads((run / "run.json").read_text())
    record["model"] = {"model_id": "x", "revision": "dir-sha256:0000"}
    (run / "run.json").write_text(json.dumps(record))
    assert (
        main(["eval", "refusal", "--run", str(run), "--samples", "--limit", "1", "--max_new_tokens", "2"])
        == 2
    )
    assert "adapter trained on base weights dir-sha256:0000" in capsys.readouterr().err


def test_prompt_sets_from_a_pinned_hub_revision_and_local_files(monkeypatch, tmp_path: Path) -> None:
    from spl_hf.sources import io as source_io

    seen = []

    def fake_read_hub(spec):
        seen.append(spec)
        rows = [{"prompt": "How do locks work?", "category": "illegal"}, {"prompt": "", "category": "x"}]
        return source_io.RawTable(rows, ("prompt", "category"), f"hf://datasets/{spec.describe()}")

    monkeypatch.setattr(source_io, "read_hub", fake_read_hub)
    ps = load_prompt_set("or_bench_hard_1k", None, revision="0123abcd")
    assert (seen[0].repo, seen[0].config, seen[0].revision) == (
        "bench-llm/or-bench",
        "or-bench-hard-1k",
        "0123abcd",
    )
    assert ps.location.endswith("revision=0123abcd") and len(ps.prompts) == 1
    assert ps.quarantined[0]["reason"] == "empty_prompt"  # reported, not dropped silently
    local = tmp_path / "toxic.csv"
    local.write_text("prompt,category\nSay something cruel.,harassment\n")
    ps = load_prompt_set("or_bench_toxic", str(local))
    assert ps.prompts[0].category == "harmful" and ps.prompts[0].source_label == "harassment"
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\nhello,x\n")
    with pytest.raises(ValueError, match="or_bench_toxic"):
        load_prompt_set("or_bench_toxic", str(bad))


def test_generation_stops_at_the_models_end_of_turn_tokens(tiny_backend, monkeypatch) -> None:
    """A chat model whose turn ends with a token other than the tokenizer's eos (as Gemma's does)."""
    import torch

    from spl_hf.evaluation.batch import stop_token_ids

    text = tiny_backend.render_chat([{"role": "user", "content": "Hello there"}])
    assert generate_batch(tiny_backend, [text], 6)[0].n_tokens == 6  # runs to the limit by default
    with torch.inference_mode():  # the greedy first token, made an end-of-turn token below
        first = int(tiny_backend.model(torch.tensor([tiny_backend.encode(text)])).logits[0, -1].argmax())
    monkeypatch.setattr(tiny_backend.model.generation_config, "eos_token_id", [first])
    assert first in stop_token_ids(tiny_backend)
    stopped = generate_batch(tiny_backend, [text, text], 6)
    assert all(g.n_tokens == 1 and not g.hit_limit for g in stopped)


def test_a_broken_adapter_folder_is_named_before_any_model_loads(tmp_path: Path, monkeypatch) -> None:
    # reliability review F16: junk adapter_config.json was found only after the base model loaded
    import spl_hf.backends.loading as loading
    from spl_hf.evaluation.model import load_policy

    monkeypatch.setattr(loading, "load_model", lambda *a, **k: pytest.fail("model loaded"))
    folder = tmp_path / "adapter"
    folder.mkdir()
    (folder / "adapter_config.json").write_text("junk")
    with pytest.raises(ValueError, match=r"adapter/adapter_config\.json: not valid JSON"):
        load_policy("hf", "m", folder)
    (folder / "adapter_config.json").write_text("[]")
    with pytest.raises(ValueError, match=r"adapter_config\.json: not a PEFT adapter config"):
        load_policy("hf", "m", folder)
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA"}))
    with pytest.raises(FileNotFoundError, match=r"adapter: no adapter weights \(adapter_model\.safetensors"):
        load_policy("hf", "m", folder)
    (folder / "adapter_model.safetensors").write_bytes(b"")
    with pytest.raises(ValueError, match=r"adapter_model\.safetensors: empty file"):
        load_policy("hf", "m", folder)


def test_a_negative_or_zero_limit_is_refused(tmp_path: Path, capsys) -> None:
    # reliability review F16: --limit -1 silently dropped the last prompt ("refusal 0/7" of 8)
    for bad in (-1, 0):
        with pytest.raises(ValueError, match=f"limit must be a number of prompts of at least 1, got {bad}"):
            load_prompt_set("or_bench_hard_1k", "sample", limit=bad)
    cmd = ["eval", "refusal", "--samples", "--prompts", "or_bench_hard_1k", "--limit", "-1"]
    assert main([*cmd, "--output_dir", str(tmp_path / "o9")]) == 2
    assert "limit must be" in capsys.readouterr().err
