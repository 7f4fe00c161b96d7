"""Config dataclasses compose, never copy: a setting is declared (with its help) in one class, and a fixed
choice is a ``Literal`` the parser enforces, not a string whose help lists the choices."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import inspect
import re
import typing
from pathlib import Path

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


# --- copies the groups above cannot see: a config converted into another, and a copy under another name --

PACKAGE = Path(__file__).resolve().parents[1] / "spl_hf"


def _help_fields(node: ast.ClassDef) -> dict[str, str]:
    """Fields a class body declares with ``metadata={"help": ...}`` (the help as its source text)."""
    out = {}
    for st in node.body:
        if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
            continue
        if not isinstance(st.value, ast.Call):
            continue
        for kw in st.value.keywords:
            if kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values):
                    if isinstance(k, ast.Constant) and k.value == "help":
                        out[st.target.id] = ast.unparse(v)
    return out


def config_classes(root: Path) -> dict[str, dict[str, str]]:
    """Every class of the package with documented fields: name -> {field: help}."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and (fields := _help_fields(node)):
                out.setdefault(node.name, {}).update(fields)
    return out


def _called(node: ast.AST) -> set[str]:
    return {
        n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))
    }


def _passed(node: ast.AST, into: str) -> list[tuple[str, str]]:
    """(key, attribute): a value read as ``<obj>.attribute`` handed to ``into(...)`` as ``key``, as a
    keyword of the call or as a key of a dict the call unpacks (``opts["clip_chars"] = cfg.clip_chars``)."""

    def attrs(value: ast.AST) -> list[str]:
        return [
            a.attr
            for a in ast.walk(value)
            if isinstance(a, ast.Attribute) and not (isinstance(a.value, ast.Name) and a.value.id == "self")
        ]

    calls = [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == into
    ]
    unpacked = {
        kw.value.id for c in calls for kw in c.keywords if kw.arg is None and isinstance(kw.value, ast.Name)
    }
    out = [(kw.arg, a) for c in calls for kw in c.keywords if kw.arg for a in attrs(kw.value)]
    for n in ast.walk(node):
        target = n.targets[0] if isinstance(n, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id in unpacked and isinstance(n.value, ast.Dict):
            keys = [(k.value, v) for k, v in zip(n.value.keys, n.value.values) if isinstance(k, ast.Constant)]
            out += [(k, a) for k, v in keys if isinstance(k, str) for a in attrs(v)]
        if (
            isinstance(target, ast.Subscript)
            and getattr(target.value, "id", None) in unpacked
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)
        ):
            out += [(target.slice.value, a) for a in attrs(n.value)]
    return out


def _same_setting(a: str, b: str) -> bool:
    """Two helps that describe one setting (a copy rewords its help a little, another setting says else)."""
    x, y = a.lower(), b.lower()
    words = len(set(x.split()) & set(y.split())) / len(set(x.split()) | set(y.split()))
    return difflib.SequenceMatcher(None, x, y).ratio() >= 0.45 or words >= 0.3


def conversions(root: Path, classes: dict[str, dict[str, str]]) -> list[tuple[str, str, str]]:
    """(where, from, into): code that builds config ``into`` out of another config's values.

    A config class whose methods construct another config class (``SourcesReadArgs.options()`` built
    a ``SourceOptions``), and any function that constructs a config class from an attribute named
    like one of its documented fields (``SourceOptions(**{"clip_chars": self.cfg.clip_chars})``): a
    class declaring that attribute with a help for the same setting holds a copy of the field.
    """
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in classes:
                for into in sorted(_called(node) & set(classes) - {node.name}):
                    out.append((f"{path.name}:{node.name}", node.name, into))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for into in sorted(_called(node) & set(classes)):
                    for key, attr in _passed(node, into):
                        if (
                            key not in classes[into]
                            or key in PER_COMMAND
                            or not (key == attr or _near(key, attr))
                        ):
                            continue
                        owners = [
                            c
                            for c, f in classes.items()
                            if c != into and attr in f and _same_setting(f[attr], classes[into][key])
                        ]
                        out += [(f"{path.name}:{node.name}", owner, into) for owner in owners]
    return sorted(set(out))


# A switch each command has for itself (a progress bar), handed from one stage's config to the next.
PER_COMMAND = {"progress"}


def _near(a: str, b: str) -> bool:
    return a != b and (a.rstrip("s") == b.rstrip("s") or difflib.SequenceMatcher(None, a, b).ratio() >= 0.85)


def renamed_copies(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, str]]:
    """Fields of ``a`` declared again in ``b`` under the same or a near name (``harmbench_category``)."""
    return sorted((x, y) for x in a for y in b if (x == y or _near(x, y)) and x not in DISTINCT | PER_COMMAND)


def _source_tree_copies(root: Path) -> dict[str, list[tuple[str, str]]]:
    classes = config_classes(root)
    found = {}
    for where, a, b in conversions(root, classes):
        if copies := renamed_copies(classes[a], classes[b]):
            found[f"{where}: {a} -> {b}"] = copies
    return found


def test_no_config_converted_into_another_copies_its_fields():
    assert _source_tree_copies(PACKAGE) == {}


def test_no_composed_config_copies_a_field_under_another_name():
    found = {}
    for group, classes in _composed():
        declared = {
            k.__name__: {n: f.metadata["help"] for n, f in _declared(k).items()}
            for cls in classes
            for k in cls.__mro__
        }
        names = sorted(declared)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                near = [
                    (x, y)
                    for x, y in renamed_copies(declared[a], declared[b])
                    if x != y and _same_setting(declared[a][x], declared[b][y])
                ]
                if near:
                    found[f"{group}: {a}/{b}"] = near
    assert found == {}


def test_the_conversion_check_catches_copies_by_name_and_under_another_name(tmp_path):
    (tmp_path / "m.py").write_text(
        "from dataclasses import dataclass, field\n"
        "@dataclass\nclass Options:\n"
        "    clip_chars: int = field(default=1, metadata={'help': 'budget'})\n"
        "    harmbench_categories: tuple = field(default=(), metadata={'help': 'kept'})\n"
        "@dataclass\nclass ReadArgs:\n"
        "    harmbench_category: list = field(default=None, metadata={'help': 'kept, again'})\n"
        "    def options(self):\n"
        "        return Options(harmbench_categories=tuple(self.harmbench_category))\n"
        "@dataclass\nclass ReleaseConfig:\n"
        "    clip_chars: int = field(default=None, metadata={'help': 'budget, again'})\n"
        "def read(cfg):\n"
        "    return Options(clip_chars=cfg.clip_chars)\n",
        encoding="utf-8",
    )
    assert _source_tree_copies(tmp_path) == {
        "m.py:ReadArgs: ReadArgs -> Options": [("harmbench_category", "harmbench_categories")],
        "m.py:read: ReleaseConfig -> Options": [("clip_chars", "clip_chars")],
    }


def test_source_options_mean_the_same_in_sources_read_and_both_releases():
    """One declaration, one meaning: --clip_chars 0 is "no clipping" wherever it is given (issue 35)."""
    from spl_hf.recipes import kind_classes
    from spl_hf.sources import SourceOptions

    assert SourceOptions in kind_classes("tenets") and SourceOptions in kind_classes("spl")
    assert (
        SourceOptions(clip_chars=0).clip_chars is None
        and SourceOptions(max_text_chars=0).max_text_chars is None
    )
    with pytest.raises(ValueError, match="clip_chars must be a whole number >= 0"):
        SourceOptions(clip_chars=-1)
