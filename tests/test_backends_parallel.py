"""Two data-parallel processes (torchrun + gloo, as `accelerate launch` would start them) give the
same judge output as one process. `accelerate launch --cpu` itself starts a single process unless MPI
is installed, so the launcher here is torchrun; the ranks still split work with accelerate's PartialState."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spl_hf.cli import main as cli_main
from tests.backends_rows import pair_row, write_jsonl
from tests.conftest import free_port


@pytest.mark.slow
def test_two_ranks_equal_one_process(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    pairs = write_jsonl(
        tmp_path / "pairs.jsonl", [pair_row(i) for i in range(12)] + [pair_row(99, prompt=[])]
    )
    common = [
        "judge",
        "--pairs",
        str(pairs),
        "--tenets",
        "no_preachy_tone,upfront_concerns,calibrated_caveats",
        "--model",
        str(tiny_model_dir),
        "--no_progress",
        "--json",
    ]
    assert (
        cli_main([*common, "--cache", str(tmp_path / "one.db"), "--output_dir", str(tmp_path / "one.jsonl")])
        == 0
    )
    one = json.loads(capsys.readouterr().out)

    script = tmp_path / "run_cli.py"
    script.write_text("import sys\nfrom spl_hf.cli import main\nsys.exit(main())\n")
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1"}
    torchrun = Path(sys.executable).parent / "torchrun"
    proc = subprocess.run(
        [
            str(torchrun),
            "--nproc_per_node",
            "2",
            "--master_port",
            str(free_port()),
            str(script),
            *common,
            "--cache",
            str(tmp_path / "two.db"),
            "--output_dir",
            str(tmp_path / "two.jsonl"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    two = json.loads(proc.stdout[proc.stdout.index("{") :])  # rank 0's summary
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert two["rows"] == one["rows"] == 36 and two["failed"] == one["failed"] == 1
    assert 0 < two["computed"] < 36  # rank 0 computed only its shard; rank 1 the rest
