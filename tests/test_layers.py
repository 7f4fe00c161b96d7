"""Layering: pure layers import no model code, and build and audit never import each other.

Each group is imported in a fresh interpreter, so modules loaded by other tests cannot hide a
violation; a group passes only if the union of its imports is clean, so each member is too.
"""

import json
import subprocess
import sys
from contextlib import ExitStack

import pytest

from tests import procs

MODEL = ("torch", "transformers", "vllm", "accelerate", "peft", "trl")

# modules -> spl_hf packages none of them may pull in (besides the model libraries)
LAYERS = {
    "pure": (
        (
            "spl_hf.schema",
            "spl_hf.rules",
            "spl_hf.derive",
            "spl_hf.assign",
            "spl_hf.tenets",
            "spl_hf.contract",
            "spl_hf.jsonl",
            "spl_hf.decontam",
        ),
        ("spl_hf.backends", "spl_hf.build", "spl_hf.audit", "spl_hf.hub", "spl_hf.sources"),
    ),
    "sources": (("spl_hf.sources",), ("spl_hf.backends", "spl_hf.build", "spl_hf.audit")),
    "audit": (
        (
            "spl_hf.audit",
            "spl_hf.audit.tenets.rows",
            "spl_hf.audit.spl.folder",
            "spl_hf.audit.provenance",
            "spl_hf.audit.hub",
            "spl_hf.cli.audit",
        ),
        ("spl_hf.backends", "spl_hf.build"),
    ),
    # explain and view read a release and ask the audit; they never build or load a model.
    "explain": (
        (
            "spl_hf.explain",
            "spl_hf.explain.tenet",
            "spl_hf.explain.spl",
            "spl_hf.cli.explain",
            "spl_hf.view",
            "spl_hf.view.rows",
            "spl_hf.view.session",
            "spl_hf.cli.view",
        ),
        ("spl_hf.backends", "spl_hf.build"),
    ),
    "build": (
        ("spl_hf.build", "spl_hf.build.tenets", "spl_hf.build.spl"),
        ("spl_hf.backends", "spl_hf.audit"),
    ),
    # The parser, the recipe registry and every config dataclass a command parses: no CLI, and (see
    # test_config_layer_imports_no_data_library) nothing heavy, so that any --help answers at once.
    "configs": (
        (
            "spl_hf.configs",
            "spl_hf.recipes",
            "spl_hf.build.config",
            "spl_hf.release.config",
            "spl_hf.assign.config",
            "spl_hf.decontam.config",
            "spl_hf.backends.settings",
            "spl_hf.backends.commands",
            "spl_hf.backends.executor",
            "spl_hf.backends.judge",
            "spl_hf.backends.labeler",
            "spl_hf.backends.generate",
            "spl_hf.audit.config",
            "spl_hf.explain.config",
            "spl_hf.view.config",
            "spl_hf.sources.options",
            "spl_hf.evaluation.config",
            "spl_hf.evaluation.runner",
            "spl_hf.report.config",
            "spl_hf.agreement.config",
            "spl_hf.hub.config",
            "spl_hf.rules.config",
            "spl_hf.train.config",
        ),
        (
            "spl_hf.cli",
            "spl_hf.build.spl",
            "spl_hf.build.tenets",
            "spl_hf.audit.load",
            "spl_hf.dataset.folder",
        ),
    ),
}

PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture(scope="module")
def loaded() -> dict[str, list[str]]:
    """The modules each layer's imports load, probed in fresh interpreters running side by side."""
    out = {}
    with ExitStack() as stack:
        running = {
            layer: stack.enter_context(
                procs.started(
                    [sys.executable, "-c", PROBE, *modules],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            for layer, (modules, _) in LAYERS.items()
        }
        for layer, proc in running.items():
            stdout, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0, stderr
            out[layer] = json.loads(stdout)
    return out


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_imports_no_model_code_and_no_sibling_layer(loaded, layer):
    _, forbidden_packages = LAYERS[layer]
    model = sorted({m.split(".")[0] for m in loaded[layer] if m.split(".")[0] in MODEL})
    assert model == [], f"{layer} layer imports model code: {model}"
    forbidden = sorted(
        m for m in loaded[layer] if any(m == f or m.startswith(f + ".") for f in forbidden_packages)
    )
    assert forbidden == [], f"{layer} layer imports {forbidden}"


def test_backends_judge_keeps_using_the_contract():
    from spl_hf.backends import judge
    from spl_hf.contract import scores

    assert judge.score_from_probs is scores.score_from_probs
    assert judge.pair_input_hash is scores.pair_input_hash


# Imports between packages go through the packages' faces (``__init__`` and its ``__all__``).


def _faces() -> dict[str, set[str]]:
    """Each package's public names: its ``__all__`` (a lazy face derives it from its export table)."""
    import importlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "spl_hf"
    out = {}
    for init in root.glob("*/__init__.py"):
        module = importlib.import_module(f"spl_hf.{init.parent.name}")
        out[module.__name__] = set(getattr(module, "__all__", ()))
    return out


def past_faces() -> list[str]:
    """``file: module [names]`` for every cross-package import that skips the target's face."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    faces = _faces()
    found = []
    for path in sorted((root / "spl_hf").rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        own = ".".join(rel.parts[:2])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").startswith("spl_hf.")
            ):
                continue
            top = ".".join(node.module.split(".")[:2])
            if top == own or top not in faces:
                continue  # the same package, or a root module (its own face)
            names = {a.name for a in node.names}
            if node.module != top or not names <= faces[top]:
                found.append(f"{rel.as_posix()}.py: {node.module} {sorted(names - faces[top])}")
    return found


def test_imports_between_packages_go_through_their_faces():
    found = past_faces()
    assert found == [], f"import these from the package, adding them to its __all__: {found}"


def test_config_layer_imports_no_data_library(loaded):
    heavy = sorted({m.split(".")[0] for m in loaded["configs"]} & {"datasets", "pyarrow"})
    assert heavy == [], f"config dataclasses import {heavy}: `spl-hf <command> --help` would load them"


def test_recipe_registry_classes_are_in_the_config_layer():
    from spl_hf.recipes import RECIPE_KINDS

    config_layer = set(LAYERS["configs"][0])
    for kind in RECIPE_KINDS.values():
        assert {ref.split(":")[0] for ref in kind.classes} <= config_layer


def test_no_library_module_imports_the_cli():
    """Only spl_hf.cli (and scripts) may import spl_hf.cli, also lazily inside a function."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "spl_hf"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.is_relative_to(root / "cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(root)}: {n}"
                for n in names
                if n == "spl_hf.cli" or n.startswith("spl_hf.cli.")
            ]
    assert offenders == []


# The runtime import graph (tests/import_graph.py): every import that runs, function-level ones
# included, none under TYPE_CHECKING. Floors go from the bottom up; a folder imports only its own
# floor or lower ones. A new package must be given a floor here.
FLOORS = (
    (  # root modules: errors, one reader/writer per kind of file, the parser
        "spl_hf",
        "spl_hf.errors",
        "spl_hf.lazy",
        "spl_hf.files",
        "spl_hf.filehash",
        "spl_hf.held",
        "spl_hf.yamlio",
        "spl_hf.jsonl",
        "spl_hf.manifest",
        "spl_hf.outputs",
        "spl_hf.configs",
        "spl_hf.recipes",
        "spl_hf.data",
    ),
    (  # pure: no model, no released folder
        "spl_hf.schema",
        "spl_hf.rules",
        "spl_hf.derive",
        "spl_hf.assign",
        "spl_hf.tenets",
        "spl_hf.contract",
        "spl_hf.decontam",
        "spl_hf.refusal",
        "spl_hf.stats",
        "spl_hf.sources",
        "spl_hf.agreement",
        "spl_hf.metrics",
    ),
    ("spl_hf.dataset",),  # the released folder format, written and read in one place
    ("spl_hf.backends", "spl_hf.build", "spl_hf.audit", "spl_hf.train"),  # engines, producers, checker
    ("spl_hf.hub", "spl_hf.explain", "spl_hf.view", "spl_hf.evaluation", "spl_hf.report"),
    ("spl_hf.release", "spl_hf.demo"),  # pipelines over all of the above
    ("spl_hf.cli",),
    ("spl_hf_hub_server",),  # the sibling distribution, on top of the core
)


def _floor_of() -> dict[str, int]:
    return {folder: i for i, floors in enumerate(FLOORS) for folder in floors}


def test_the_runtime_import_graph_has_no_cycle():
    from tests import import_graph

    cycles = import_graph.cycles(import_graph.graph())
    assert cycles == [], f"import cycles (function-level imports included): {cycles}"
    typed = import_graph.cycles(import_graph.graph(typing=True))
    assert typed == [], f"import cycles through type-checking imports (a Protocol cuts them): {typed}"


def test_no_folder_imports_a_higher_floor():
    from tests import import_graph

    floor = _floor_of()
    folders = {import_graph.folder(m) for m in import_graph.modules()}
    top = {f.split(".")[0] if f.startswith("spl_hf_hub_server") else f for f in folders}
    assert top <= set(floor), f"give these a floor in FLOORS: {sorted(top - set(floor))}"

    def level(f: str) -> int:
        return floor[f.split(".")[0] if f.startswith("spl_hf_hub_server") else f]

    upward = [
        f"{where}: {src} (floor {level(src)}) imports {dst} (floor {level(dst)})"
        for src, targets in import_graph.folder_graph(import_graph.graph()).items()
        for dst, where in targets.items()
        if level(dst) > level(src)
    ]
    assert upward == []


def test_the_import_graph_sees_function_level_imports(tmp_path, monkeypatch):
    """The scanner itself: a cycle hidden behind a function-level import is found, a type-only one is not."""
    from tests import import_graph

    pkg = tmp_path / "spl_hf"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("def f():\n    from spl_hf.a.y import g\n")
    (pkg / "a" / "y.py").write_text("from spl_hf.a import x\n")
    (pkg / "a" / "z.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from spl_hf.a.x import f\n"
    )
    (pkg / "a" / "w.py").write_text("import spl_hf.a.z\n")
    monkeypatch.setattr(import_graph, "TREES", (tmp_path,))
    monkeypatch.setattr(import_graph, "PACKAGES", ("spl_hf",))
    assert import_graph.cycles(import_graph.graph()) == [["spl_hf.a.x", "spl_hf.a.y"]]
