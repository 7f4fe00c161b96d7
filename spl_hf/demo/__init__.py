"""The demo: each capability run on shipped data and the embedded model, under one folder, each step checked.

SPL from recorded attributes (built, audited, a counterfactual); the embedded model as attribute
labeler; the releases from their demo recipes (the SPL one on the model, and on recorded labels);
publishing to a local Hub server, loading back and auditing by repo id; training from the published
release; refusal of the base and trained models.
A rerun resumes from the caches and finished stages.
"""

from __future__ import annotations

import time
from pathlib import Path


def run_demo(out_dir: str) -> int:
    import datasets

    from spl_hf.demo.chain import demo_chain
    from spl_hf.demo.releases import demo_release
    from spl_hf.demo.spl import demo_model_labels, demo_spl
    from spl_hf.demo.steps import step
    from spl_hf.hub import server_package

    server_package()  # the publish step needs the [server] extra: say so now, not after the builds
    # Reading the small built folders back prints one "Generating split" bar per split; the
    # model steps keep their own progress bars.
    datasets.disable_progress_bars()
    started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ok = demo_spl(out)
    from spl_hf.backends import make_backend

    t0 = step("Model: load the embedded SmolLM2-135M-Instruct (converted once to a safetensors cache)")
    backend = make_backend("hf", None, threads=1)
    print(f"{backend.info.model_id} {backend.info.revision[:24]}... ({time.perf_counter() - t0:.1f} s)")
    ok = demo_model_labels(out, backend) and ok
    del backend
    tenets = demo_release(out, "tenets")
    spl = demo_release(out, "spl")
    recorded = demo_release(out, "spl_recorded")
    ok = tenets is not None and spl is not None and recorded is not None and ok
    # The model-labeled SPL release stays local: it holds no label, and publish refuses such a build.
    builds = {
        "spl-sample": out / "spl",
        **({"tenets": tenets} if tenets else {}),
        **({"spl-safety": recorded} if recorded else {}),
    }
    ok = demo_chain(out, builds) and ok
    print(f"\ndemo outputs under {out}/ ({time.perf_counter() - started:.0f} s){'' if ok else ' — FAILED'}")
    return 0 if ok else 1


__all__ = ["run_demo"]
