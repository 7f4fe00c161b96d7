"""Demo step: both releases built from their shipped demo recipes, as `spl-hf release` runs them."""

from __future__ import annotations

import importlib
import time
from pathlib import Path

from spl_hf.demo.steps import step
from spl_hf.errors import USER_ERRORS

RELEASES = {
    "tenets": (
        "spl_hf.release.tenets",
        "tenets/demo.yaml",
        "Tenet release: shipped sample pools -> decontaminate against held-out prompts -> judge every "
        "(pair, tenet) in both orderings with the embedded model -> min-cost-flow assignment -> dataset "
        "-> audit (recipes/tenets/demo.yaml: threshold 0.01, capacity 2 — a demo setting for the 135M "
        "judge, not the card's 0.5)",
    ),
    "spl": (
        "spl_hf.release.spl",
        "spl/demo.yaml",
        "SPL release: one shipped prompt per Table VI source -> decontaminate -> candidates under "
        "'comply'/'refuse' -> attributes labeled by the embedded model -> rules -> dataset -> audit "
        "(recipes/spl/demo.yaml)",
    ),
    # The 135M labeler labels none of the pairs above (P(true) < 0.5 on every boolean attribute), so the
    # release the demo publishes runs the same command on the shipped sample's recorded labels.
    "spl_recorded": (
        "spl_hf.release.spl",
        "spl/demo_recorded.yaml",
        "SPL release on recorded labels: the shipped sample's recorded attribute assignments -> rules -> "
        "dataset -> audit, no model (recipes/spl/demo_recorded.yaml: the embedded labeler labels none of "
        "the pairs above, so this is the SPL release the demo publishes; its card says the labels are recorded)",
    ),
}


def demo_release(out: Path, kind: str) -> Path | None:
    """Run one release into ``out/<kind>_release``; returns its dataset folder, None when it failed."""
    from spl_hf.configs import parse_config
    from spl_hf.recipes import recipe_path

    module_name, recipe, title = RELEASES[kind]
    t0 = step(title)
    module = importlib.import_module(module_name)
    run_dir = Path(out) / f"{kind}_release"
    argv = [
        "--config",
        str(recipe_path(recipe)),
        "--run_dir",
        str(run_dir),
        "--output_dir",
        str(run_dir / "dataset"),
    ]
    release = module.make_release(*parse_config(module.recipe_classes(), argv))
    try:
        release.run()
    except USER_ERRORS as exc:  # bad input or a failed gate; a bug (an audit that fails) keeps its traceback
        print(f"{kind} release FAILED: {exc}")
        return None
    print(f"({time.perf_counter() - t0:.1f} s)")
    return run_dir / "dataset"
