import subprocess
import sys
from pathlib import Path

import pytest


def test_vllm_module_imports_lazily_and_explains_the_extra() -> None:
    code = (
        "import importlib.util, sys\n"
        "import spl_hf.backends, spl_hf.backends.vllm as m\n"
        "assert 'vllm' not in sys.modules and 'torch' not in sys.modules, 'eager import'\n"
        "if importlib.util.find_spec('vllm') is None:\n"
        "    try:\n        m.VLLMBackend('x')\n    except ImportError as e:\n        print(e)\n"
        "else:\n    print('vllm installed')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1]
    )
    assert out.returncode == 0, out.stderr
    assert "pip install 'spl_hf[vllm]'" in out.stdout or out.stdout.strip() == "vllm installed"


def test_vllm_backend_matches_transformers_scores(tiny_model_dir: Path, tiny_backend) -> None:
    pytest.importorskip("vllm", reason="vLLM is an optional extra ([vllm]) and is not installed here")
    from spl_hf.backends.judge import PairwiseJudge, parse_pair
    from spl_hf.backends.vllm import VLLMBackend
    from spl_hf.tenets import select_tenets
    from tests.backends_rows import pair_row

    backend = VLLMBackend(str(tiny_model_dir), dtype="float32", gpu_memory_utilization=0.3)
    pair, tenets = parse_pair(pair_row(1), 0), select_tenets("no_preachy_tone,upfront_concerns")
    ours = PairwiseJudge(backend).judge_pair(pair, tenets)
    ref = PairwiseJudge(tiny_backend).judge_pair(pair, tenets)
    for a, b in zip(ours, ref, strict=True):
        assert abs(a.score - b.score) < 1e-3
