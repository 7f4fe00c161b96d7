"""The one YAML reader: recipes, rule bases, tenets, schema and instructions refuse what it refuses."""

from __future__ import annotations

import pytest

from spl_hf.cli import main
from spl_hf.errors import SplHfError
from spl_hf.yamlio import YamlError, load_yaml, load_yaml_file

RULES = "rules:\n  - id: A\n    when: refusal\n    verdict: good\n"


def test_a_recipe_with_a_duplicated_key_is_refused_naming_file_and_line(tmp_path, capsys) -> None:
    recipe = tmp_path / "dup.yaml"
    recipe.write_text("pools: [sample]\nthreshold: 0.5\ncapacity: 2\nthreshold: 0.01\n")
    assert main(["release", "tenets", "--config", str(recipe), "--dry_run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{recipe}: line 4: duplicate key 'threshold' (first on line 2)" in err


@pytest.mark.parametrize(
    ("rank", "read_as"),
    [("010", "8"), ("1:20", "80"), ("0x4", "4"), ("1_0", "10"), ("0b11", "3")],
)
def test_rule_base_ranks_are_plain_integers(tmp_path, capsys, rank, read_as) -> None:
    path = tmp_path / "rb.yaml"
    path.write_text(f"id: t\nverdicts:\n  good: {rank}\n  bad: 0\n" + RULES)
    assert main(["rules", "check", "--rulebase", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{path}: line 3: '{rank}' is not a plain decimal integer" in err
    assert f"read it as {read_as})" in err


def test_a_5000_digit_rank_is_refused_naming_file_and_line(tmp_path, capsys) -> None:
    path = tmp_path / "rank_bigint.yaml"
    path.write_text("id: t\nverdicts:\n  good: " + "9" * 5000 + "\n  bad: 0\n" + RULES)
    assert main(["rules", "check", "--rulebase", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{path}: line 3: an integer of 5,000 digits" in err


def test_plain_integers_and_quoted_text_still_read() -> None:
    assert load_yaml("a: 10\nb: -3\nc: '010'\nd: 0\ne: +7\n", "x") == {
        "a": 10,
        "b": -3,
        "c": "010",
        "d": 0,
        "e": 7,
    }


@pytest.mark.parametrize(
    "text",
    [
        "a: [1,\n  2\nb: 3\n",  # unclosed flow sequence: PyYAML says it in four lines
        "a: 1\n---\nb: 2\n",  # two documents
        "a:\n\t- 1\n",  # a tab
        "a: !!python/object:os.system x\n",
    ],
)
def test_pyyaml_errors_are_folded_into_one_line(text) -> None:
    with pytest.raises(YamlError) as info:
        load_yaml(text, "f.yaml")
    message = str(info.value)
    assert message.startswith("f.yaml: ") and "\n" not in message
    assert isinstance(info.value, SplHfError)


def test_depth_and_alias_expansion_are_limited() -> None:
    with pytest.raises(YamlError, match=r"f.yaml: line 1: nested deeper than 32 levels"):
        load_yaml("[" * 40 + "]" * 40, "f.yaml")
    laughs = "a: &a [" + ",".join(["x" * 1000] * 10) + "]\n"
    for i in range(1, 8):
        laughs += f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 10) + "]\n"
    with pytest.raises(YamlError, match="aliases"):
        load_yaml(laughs, "f.yaml")


@pytest.mark.parametrize(
    ("loader", "text"),
    [
        ("spl_hf.tenets:load_tenets", "name: t\ntenets:\n  a_b: one\n  a_b: two\n"),
        ("spl_hf.schema:load_schema", "name: s\nname: t\n"),
        ("spl_hf.backends.instructions:load_instructions", "instructions:\n  x: a\n  x: b\n"),
    ],
)
def test_every_yaml_file_refuses_duplicate_keys(tmp_path, loader, text) -> None:
    import importlib

    module, _, name = loader.partition(":")
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(YamlError, match=rf"{path}: line \d: duplicate key"):
        getattr(importlib.import_module(module), name)(path)


def test_not_utf8_names_the_line(tmp_path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(YamlError, match=r"latin.yaml: not UTF-8 text \(line 2"):
        load_yaml_file(path)


def test_a_training_recipe_with_a_duplicated_key_is_refused_before_trl_reads_it(tmp_path) -> None:
    from spl_hf.train.args import parse_args

    recipe = tmp_path / "train.yaml"
    recipe.write_text("dataset_name: a/b\nbeta: 0.1\nbeta: 0.5\n")
    with pytest.raises(YamlError, match=rf"{recipe}: line 3: duplicate key 'beta' \(first on line 2\)"):
        parse_args(["--config", str(recipe)])
