"""The one config parser: dataclass fields as --snake_case flags, --config recipes, flags over recipes."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Literal

import pytest

from spl_hf.configs import JsonArgs, OutputArgs, make_parser, parse_config
from tests import procs


@dataclass
class Settings:
    """Example settings"""

    name: str = field(metadata={"help": "A required name."})
    size: int = field(default=3, metadata={"help": "How many."})
    ratio: float | None = field(default=None, metadata={"help": "An optional ratio."})
    mode: Literal["fast", "exact"] = field(default="fast", metadata={"help": "How to run."})
    tags: list[str] = field(default_factory=lambda: ["a"], metadata={"help": "Some tags."})
    pair: tuple[int, ...] = field(default=(1, 2), metadata={"help": "A tuple of ints."})
    progress: bool = field(
        default=True, metadata={"help": "Show progress.", "negated_help": "Hide the progress bar."}
    )
    dry_run: bool = field(default=False, metadata={"help": "Plan only."})


@dataclass
class Target:
    """Target"""

    path: str = field(metadata={"help": "Where.", "positional": True})


def test_flags_types_and_defaults():
    (s,) = parse_config(Settings, ["--name", "x", "--size", "5", "--ratio", "0.5", "--mode", "exact"])
    assert (s.name, s.size, s.ratio, s.mode, s.tags, s.pair, s.progress, s.dry_run) == (
        "x",
        5,
        0.5,
        "exact",
        ["a"],
        (1, 2),
        True,
        False,
    )
    (s,) = parse_config(Settings, ["--name", "x", "--no_progress", "--dry_run", "--pair", "4", "5", "6"])
    assert s.progress is False and s.dry_run is True and s.pair == (4, 5, 6)


def test_a_list_flag_replaces_the_default_and_a_repeat_extends_it():
    (s,) = parse_config(Settings, ["--name", "x", "--tags", "b", "c", "--tags", "d"])
    assert s.tags == ["b", "c", "d"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--name", "x", "--mode", "slow"], "invalid choice"),
        (["--name", "x", "--size", "many"], "invalid int value"),
        (["--name", "x", "--no-progress"], "unrecognized arguments"),
        (["--name", "x", "--progress"], "unrecognized arguments"),  # only --no_progress turns it off
        (["--name", "x", "--siz", "4"], "unrecognized arguments"),  # no abbreviations
    ],
)
def test_bad_flags_are_rejected(argv, message, capsys):
    with pytest.raises(SystemExit):
        parse_config(Settings, argv)
    assert message in capsys.readouterr().err


def test_required_field_may_come_from_the_recipe_and_flags_override_it(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("name: from-recipe\nsize: 9\ntags: [x, y]\n")
    (s,) = parse_config(Settings, ["--config", str(recipe)])
    assert (s.name, s.size, s.tags) == ("from-recipe", 9, ["x", "y"])
    (s,) = parse_config(Settings, ["--config", str(recipe), "--size", "2", "--tags", "z"])
    assert (s.name, s.size, s.tags) == ("from-recipe", 2, ["z"])
    with pytest.raises(ValueError, match="--name is required"):
        parse_config(Settings, [])


def test_unknown_recipe_key_names_the_key_and_the_file(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("name: n\nsizee: 2\n")
    with pytest.raises(ValueError) as info:
        parse_config(Settings, ["--config", str(recipe)])
    assert "sizee" in str(info.value) and str(recipe) in str(info.value)


def test_positional_fields_and_shared_dataclasses():
    target, output, js = parse_config([Target, OutputArgs, JsonArgs], ["here", "--output_dir", "o", "--json"])
    assert (target.path, output.output_dir, output.overwrite, js.json) == ("here", "o", False, True)


def test_help_groups_by_dataclass_and_writes_each_default_once():
    text = make_parser([Settings, OutputArgs], prog="x").format_help()
    assert "Example settings:" in text and "Output:" in text
    assert "How many. (default: 3)" in text and "(default: 3) (default" not in text
    assert "--no_progress" in text and "Hide the progress bar." in text
    assert "A required name. (required)" in text


def test_a_field_without_help_or_a_true_bool_without_negated_help_is_a_bug():
    @dataclass
    class NoHelp:
        x: int = 1

    @dataclass
    class NoNegated:
        on: bool = field(default=True, metadata={"help": "On."})

    for cls in (NoHelp, NoNegated):
        with pytest.raises(TypeError):
            make_parser([cls])


def test_two_dataclasses_may_not_declare_the_same_option():
    @dataclass
    class Other:
        json: bool = field(default=False, metadata={"help": "Again."})

    with pytest.raises(TypeError, match="json"):
        make_parser([JsonArgs, Other])


def test_the_parser_imports_no_heavy_library():
    code = (
        "import json, sys; from spl_hf.configs import parse_config, OutputArgs; parse_config(OutputArgs, []); "
        "print(json.dumps([m for m in ('torch', 'transformers', 'datasets', 'pyarrow') if m in sys.modules]))"
    )
    out = procs.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(out.stdout) == []


def test_make_parser_accepts_an_existing_parser():
    parser = argparse.ArgumentParser(prog="p")
    make_parser([JsonArgs], parser)
    assert parser.parse_args(["--json"]).json is True


def test_a_field_redeclared_for_its_default_keeps_the_shared_help_and_group():
    from spl_hf.build.config import SPLBuildConfig, TenetBuildConfig
    from spl_hf.configs import OutputArgs, make_parser
    from spl_hf.release.config import ReleaseSettings

    shared = OutputArgs.__dataclass_fields__["output_dir"].metadata["help"]
    for cls, default in (
        (SPLBuildConfig, "out/spl"),
        (TenetBuildConfig, "out/tenets"),
        (ReleaseSettings, None),
    ):
        assert issubclass(cls, OutputArgs)  # output_dir and overwrite declared once, in OutputArgs
        text = make_parser([cls]).format_help()
        assert " ".join(shared.split()) in " ".join(text.split())
        assert text.count("\nOutput:\n") == 1  # output_dir and overwrite in one group
        if default:
            assert f"(default: {default})" in " ".join(text.split())
