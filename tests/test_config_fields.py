"""Config dataclasses compose, never copy: a setting is declared (with its help) in one class, and a fixed
choice is a ``Literal`` the parser enforces, not a string whose help lists the choices."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import typing

import pytest

from spl_hf.configs import _unwrap

# Same name, different setting: the release's repo to publish to versus the repo a build's card names in
# its loading example (the release passes its own, or a placeholder, through dataclasses.replace).
DISTINCT = {"repo_id", "pretty_name"}

# A help that enumerates fixed choices: "one of ...", "'a' or 'b'", "a (...) or b (...)".
CHOICES = re.compile(r"\bone of\b|'[\w+-]+'(?: \([^)]*\))?,? or '[\w+-]+'|^[\w+-]+ \([^)]*\),? or [\w+-]+\b")


def _leaf_classes() -> list[tuple[str, tuple[type, ...]]]:
    """(command, config classes) of every spl-hf leaf command."""
    from spl_hf.cli import build_parser

    out = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        classes = parser.get_default("_config_classes")
        if classes:
            out.append((path, tuple(classes)))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}".strip())

    walk(build_parser(), "")
    return out


def _composed() -> list[tuple[str, tuple[type, ...]]]:
    """Groups of config classes used together: each command's, and each release with the build it runs."""
    from spl_hf.assign import AssignConfig
    from spl_hf.build import SPLBuildConfig, TenetBuildConfig
    from spl_hf.recipes import RECIPE_KINDS, kind_classes

    groups = _leaf_classes() + [(f"recipe {k}", kind_classes(k)) for k in RECIPE_KINDS]
    tenets, spl = kind_classes("tenets"), kind_classes("spl")
    groups.append(("release tenets -> tenets build", (*tenets, TenetBuildConfig, AssignConfig)))
    groups.append(("release spl -> derive", (*spl, SPLBuildConfig)))
    return groups


def _declared(cls: type) -> dict[str, dataclasses.Field]:
    """Fields ``cls`` itself declares with a help text (a redeclaration only for a default has none)."""
    own = inspect.get_annotations(cls)
    fields = getattr(cls, "__dataclass_fields__", {})
    return {n: fields[n] for n in own if n in fields and fields[n].metadata.get("help")}


def copied_fields(classes: tuple[type, ...]) -> dict[str, list[str]]:
    """Field name -> the classes that each declare it with help, where more than one does."""
    owners: dict[str, set[type]] = {}
    for cls in classes:
        for klass in cls.__mro__:
            for name in _declared(klass):
                owners.setdefault(name, set()).add(klass)
    return {
        n: sorted(k.__name__ for k in ks) for n, ks in owners.items() if len(ks) > 1 and n not in DISTINCT
    }


def test_no_config_field_copies_another_configs_field():
    found = {g: c for g, classes in _composed() if (c := copied_fields(classes))}
    assert found == {}


def test_the_copy_check_catches_a_copied_field():
    from spl_hf.assign import AssignConfig

    @dataclasses.dataclass
    class Copy:
        """A build that re-declares an assignment setting"""

        capacity: int = dataclasses.field(default=4000, metadata={"help": "Pairs per kept tenet."})

    assert copied_fields((Copy, AssignConfig)) == {"capacity": ["AssignConfig", "Copy"]}


def _string_fields() -> list[tuple[str, str, str]]:
    seen, out = set(), []
    for _, classes in _composed():
        for cls in classes:
            for klass in cls.__mro__:
                for name, f in _declared(klass).items():
                    key = (klass.__name__, name)
                    if key in seen:
                        continue
                    seen.add(key)
                    tp, _ = _unwrap(typing.get_type_hints(klass)[name])
                    if tp is str:
                        out.append((klass.__name__, name, f.metadata["help"]))
    return out


def test_no_string_field_lists_fixed_choices_in_its_help():
    listed = [(cls, name, text) for cls, name, text in _string_fields() if CHOICES.search(text)]
    assert listed == []


@pytest.mark.parametrize(
    "text",
    [
        "ortools (fast) or networkx (reference).",
        "Min-cost-flow solver: 'ortools' (fast) or 'networkx' (reference).",
        "How tenets are dropped, one of a, b, c.",
    ],
)
def test_the_choice_check_catches_listed_choices(text):
    assert CHOICES.search(text)
