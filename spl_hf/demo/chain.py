"""Demo step: the built releases published to a local Hub server, loaded back and audited by repo id,
a policy trained from the published tenet release, and the refusal of the base model and the trained
adapter measured, with the refusal figure."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spl_hf.demo.steps import step
from spl_hf.files import write_json

TRAIN_CONFIG, TRAIN_SPLIT = (
    "all",
    "train",
)  # every kept tenet's pairs: the demo's per-tenet configs hold 2 each

_TRAIN = (
    "import sys\n"
    "from pathlib import Path\n"
    "from spl_hf.demo.train import demo_train\n"
    "run = demo_train(Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], revision=sys.argv[5])\n"
    "sys.exit(0 if run else 1)\n"
)


def train_from_hub(out: Path, url: str, token: str, repo_id: str, sha: str, build: Path) -> Path | None:
    """Train in a client process that reads the release from the server; skipped when this build trained already."""
    from spl_hf.demo.hub import client_env
    from spl_hf.release import manifest_hash

    run_dir, stamp_file = out / "train_run", out / "train_stamp.json"
    stamp = {
        "build": manifest_hash(str(build)),
        "dataset": repo_id,
        "config": TRAIN_CONFIG,
        "split": TRAIN_SPLIT,
    }
    if (
        (run_dir / "run.json").is_file()
        and stamp_file.is_file()
        and json.loads(stamp_file.read_text()) == stamp
    ):
        record = json.loads((run_dir / "run.json").read_text())
        print(
            f"trained earlier on this build: final loss {record['final_loss']:.4f}; LoRA adapter in {run_dir}"
        )
        return run_dir
    with tempfile.TemporaryDirectory(prefix="spl-hf-home-") as home:
        proc = subprocess.run(
            [sys.executable, "-c", _TRAIN, str(out), repo_id, TRAIN_CONFIG, TRAIN_SPLIT, sha],
            env=client_env(url, token, home),
            capture_output=True,
            text=True,
            check=False,
        )
    print(proc.stdout.rstrip())
    if proc.returncode != 0:
        print(f"training from {repo_id}@{sha[:12]} FAILED (exit {proc.returncode}): {proc.stderr[-1500:]}")
        return None
    write_json(stamp_file, stamp, indent=None, ascii_only=True)
    return run_dir


def demo_chain(out: Path, builds: dict[str, Path]) -> bool:
    from spl_hf.demo.evaluation import demo_eval
    from spl_hf.demo.hub import DEMO_ORG, audit_published, publish_and_load
    from spl_hf.hub import server_package

    token = secrets.token_hex(16)  # used by the client processes, never printed
    t0 = step(
        "Hub: publish the builds to a local Hub server, load them back in fresh processes, audit by repo id"
    )
    with server_package().RunningServer(str(out / "hub"), token=token) as server:
        print(f"local Hub server on {server.url} (store: {out / 'hub'})")
        ok, shas = publish_and_load(server.url, token, builds)
        ok = audit_published(server.url, token, shas) and ok
        print(f"({time.perf_counter() - t0:.1f} s)")
        run_dir = None
        if "tenets" in shas:
            t0 = step(
                f"Training: DPO + LoRA on the embedded model for a few steps, reading {DEMO_ORG}/tenets "
                f"({TRAIN_CONFIG}/{TRAIN_SPLIT}) from the local Hub server"
            )
            run_dir = train_from_hub(
                out, server.url, token, f"{DEMO_ORG}/tenets", shas["tenets"], builds["tenets"]
            )
            ok = run_dir is not None and ok
            print(f"({time.perf_counter() - t0:.1f} s)")
    ok = demo_eval(out, run_dir) and ok
    return write_refusal_figure(out, run_dir) and ok


def write_refusal_figure(out: Path, run_dir: Path | None) -> bool:
    """The refusal of the base model and the trained adapter (paired by the run's seed) as a PNG."""
    from spl_hf.dataset import save_png
    from spl_hf.report import RunMetrics, figure_conditions, seed_report

    seed = json.loads((run_dir / "run.json").read_text())["seed"] if run_dir else 0
    runs = []
    for metrics in sorted((out / "eval").glob("*/*/metrics.json")):
        m = json.loads(metrics.read_text())
        runs.append(
            RunMetrics(
                metrics.parent.parent.name,
                seed,
                m["prompt_set"],
                m["n"],
                m["n_refusals"],
                m["refusal_rate"],
                m["at_limit"],
                m["at_limit_rate"],
                m["matcher"],
                str(metrics),
            )
        )
    if not runs:
        print("no refusal metrics to draw")
        return False
    path = save_png(figure_conditions(seed_report(runs, contrasts=[])), out / "refusal.png")
    print(f"figure: {path}")
    return True
