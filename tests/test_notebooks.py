"""The notebooks run top to bottom (their code cells, in order, in one namespace) and are stored clean."""

import json
import os

import pytest

from tests.conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
# What each notebook's output must show: the point it exists to make.
EXPECTED = {
    "spl_audit_walkthrough.ipynb": ["->"],  # the counterfactual cell found changed labels
    "tenet_assignment.ipynb": [
        "certificate verified: True",
        "tampered assignment verified: False",
        "each prompt used once: True",
    ],
    "refusal_across_seeds.ipynb": [
        "ILLUSTRATIVE",
        "prompt_shared − judge",
        "Table XIV",
        "one seed: no standard",
    ],
    "panel_agreement.ipynb": ["Table V", "Table XI", "Table XII", "-> reference: None"],
}


def test_every_notebook_has_expectations():
    assert sorted(p.name for p in NOTEBOOKS) == sorted(EXPECTED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path):
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_code_cells_run(path, tmp_path, capsys):
    cells = json.loads(path.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert code
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        namespace: dict = {}
        for src in code:
            exec(compile(src, f"{path.name}", "exec"), namespace)  # the repo's own notebook, not user text
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    for expected in EXPECTED[path.name]:
        assert expected in out, expected
