"""Every YAML recipe in the repository parses into its config dataclass (unknown keys fail)."""

import pytest

from tests.conftest import REPO

RECIPES = sorted((REPO / "recipes").rglob("*.yaml"))


def test_there_are_recipes():
    assert RECIPES


@pytest.mark.parametrize("path", RECIPES, ids=[p.name for p in RECIPES])
def test_recipe_parses(path):
    from spl_hf.recipes import parse_recipe

    cfgs = parse_recipe(path)
    assert cfgs and all(c is not None for c in cfgs)


def test_unknown_key_fails(tmp_path):
    from spl_hf.recipes import parse_recipe

    (tmp_path / "spl").mkdir()
    bad = tmp_path / "spl" / "bad.yaml"
    bad.write_text("margin: 1\nmarginn: 2\n")
    with pytest.raises(ValueError, match="marginn"):
        parse_recipe(bad)
