"""Load tenet statements from YAML and select tenets by name."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from spl_hf.errors import SplHfError, UnknownNameError
from spl_hf.yamlio import load_yaml, load_yaml_file

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Tenet:
    name: str
    statement: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(f"{self.name}\0{self.statement}".encode()).hexdigest()


@dataclass(frozen=True)
class TenetSet:
    name: str
    tenets: tuple[Tenet, ...]
    source: str = "<memory>"

    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tenets)

    def __len__(self) -> int:
        return len(self.tenets)

    def __getitem__(self, name: str) -> Tenet:
        for t in self.tenets:
            if t.name == name:
                return t
        close = difflib.get_close_matches(name, self.names(), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownNameError(f"{self.source}: unknown tenet {name!r}{hint}")


def parse_tenets(data: object, source: str = "<memory>") -> TenetSet:
    if not isinstance(data, dict) or not isinstance(data.get("tenets"), dict) or not data["tenets"]:
        raise SplHfError(
            f"{source}: expected a mapping with a non-empty 'tenets' mapping of name -> statement"
        )
    tenets = []
    for name, statement in data["tenets"].items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise SplHfError(f"{source}: tenet name {name!r} must be lower_snake_case")
        if not isinstance(statement, str) or not statement.strip():
            raise SplHfError(f"{source}: tenet {name!r} needs a non-empty statement")
        tenets.append(Tenet(name, " ".join(statement.split())))
    return TenetSet(str(data.get("name", "tenets")), tuple(tenets), source)


def load_tenets(path: str | Path) -> TenetSet:
    path = Path(path)
    return parse_tenets(load_yaml_file(path, "tenets file"), str(path))


@cache
def default_tenets() -> TenetSet:
    text = resources.files("spl_hf.data").joinpath("tenets.yaml").read_text()
    return parse_tenets(load_yaml(text, "spl_hf/data/tenets.yaml"), "spl_hf/data/tenets.yaml")


def select_tenets(spec: str | Sequence[str], tenet_set: TenetSet | None = None) -> tuple[Tenet, ...]:
    """``"all"``, a comma-separated string or a list of names; unknown names raise ``KeyError``."""
    ts = tenet_set or default_tenets()
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    names = [n for n in names if n]
    if names == ["all"]:
        return ts.tenets
    if not names:
        raise SplHfError("no tenets selected")
    if len(set(names)) != len(names):
        raise SplHfError(f"tenets listed twice: {sorted({n for n in names if names.count(n) > 1})}")
    return tuple(ts[n] for n in names)
