"""Every YAML recipe is run by a command, parsed the way that command parses --config."""

import json
import shlex

import pytest

from tests.conftest import REPO

RECIPES = sorted((REPO / "recipes").rglob("*.yaml"))


def _parse_command(path):
    """Parse the recipe's own command line with the real CLI parser, recipe applied."""
    from spl_hf.cli import build_parser
    from spl_hf.configs import apply_config, configs_from_args
    from spl_hf.recipes import recipe_command

    argv = shlex.split(recipe_command(path))[1:]  # drop "spl-hf"
    parser = build_parser()
    args = parser.parse_args(argv)
    assert apply_config(args)
    args = parser.parse_args(argv)
    return args, configs_from_args(args)


def test_there_are_recipes():
    assert RECIPES


@pytest.mark.parametrize("path", RECIPES, ids=[f"{p.parent.name}/{p.name}" for p in RECIPES])
def test_recipe_is_run_by_its_command(path):
    from spl_hf.recipes import RECIPE_KINDS, RECIPE_PARSERS, parse_recipe, recipe_classes, recipe_command

    if path.parent.name in RECIPE_PARSERS:  # train.py recipes and accelerate configs: their own parsers
        assert parse_recipe(path)
        return
    assert path.parent.name in RECIPE_KINDS, f"{path}: no command runs recipes/{path.parent.name}"
    _, cfgs = _parse_command(path)
    assert [type(c) for c in cfgs] == list(recipe_classes(path))
    # Every key of the recipe reached the config the command runs with.
    import yaml

    data = yaml.safe_load(path.read_text())
    merged = {k: v for c in cfgs for k, v in vars(c).items()}
    assert {k: merged[k] for k in data} == data
    # The library entry point parses it identically.
    overrides = shlex.split(recipe_command(path).split("{path}")[-1].split(str(path))[-1])
    assert parse_recipe(path, *overrides) == cfgs


def test_assign_recipe_runs_through_assign(tmp_path):
    from spl_hf.recipes import recipe_command

    path = REPO / "recipes" / "assign" / "constitution_v3.yaml"
    args, (files, config, output, _) = _parse_command(path)
    assert recipe_command(path).startswith("spl-hf assign --config")
    assert (config.capacity, config.threshold, config.seed) == (4000, 0.5, 42)
    assert files.action == "solve" and files.scores == "scores.parquet"
    assert output.output_dir == "assignment.parquet" and args.func.__module__ == "spl_hf.cli.assign"


def test_flags_override_the_recipe():
    from spl_hf.cli import build_parser
    from spl_hf.configs import apply_config, configs_from_args

    path = REPO / "recipes" / "tenets" / "constitution_v3.yaml"
    tenets = str(REPO / "spl_hf" / "data" / "tenets.yaml")  # read on parsing: the config checks the names
    argv = ["release", "tenets", "--config", str(path), "--capacity", "7", "--tenets_file", tenets]
    parser = build_parser()
    args = parser.parse_args(argv)
    apply_config(args)
    release, assign, *_ = configs_from_args(parser.parse_args(argv))
    assert assign.capacity == 7 and release.tenets_file == tenets and assign.seed == 42
    assert release.tenets == ["all"] and len(release.pools) == 8


def test_unknown_key_fails(tmp_path):
    from spl_hf.recipes import parse_recipe

    (tmp_path / "spl").mkdir()
    bad = tmp_path / "spl" / "bad.yaml"
    bad.write_text("margin: 1\nmarginn: 2\n")
    with pytest.raises(ValueError, match="marginn"):
        parse_recipe(bad)


@pytest.mark.parametrize("text,match", [("- a\n- b\n", "mapping"), ("a: [\n", "not valid YAML")])
def test_malformed_recipe_names_the_file(tmp_path, text, match):
    from spl_hf.recipes import parse_recipe

    (tmp_path / "spl").mkdir()
    bad = tmp_path / "spl" / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        parse_recipe(bad)
    assert str(bad) in str(info.value)


RELEASE_RECIPES = [p for p in RECIPES if p.parent.name in ("spl", "tenets")]


@pytest.mark.parametrize("path", RELEASE_RECIPES, ids=[f"{p.parent.name}/{p.name}" for p in RELEASE_RECIPES])
def test_release_recipe_dry_runs_through_the_cli(path, tmp_path, capsys):
    """Parsed by the one parser and validated by the release (--dry_run: no model, nothing written)."""
    from spl_hf.cli import main

    run_dir, output_dir = tmp_path / "run", tmp_path / "ds"
    argv = ["release", path.parent.name, "--config", str(path), "--dry_run"]
    assert main([*argv, "--run_dir", str(run_dir), "--output_dir", str(output_dir)]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["stages"] and not run_dir.exists() and not output_dir.exists()
