"""The notebooks run top to bottom (their code cells, in order, in one namespace)."""

import json
import os

import pytest

from tests.conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


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
    assert "->" in capsys.readouterr().out  # the counterfactual cell found changed labels
