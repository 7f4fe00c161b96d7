"""The named generation instructions: a YAML file (``spl_hf/data/instructions.yaml`` by default)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from spl_hf.errors import SplHfError

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def load_instructions(path: str | Path | None = None) -> dict[str, str | None]:
    """Instruction name -> system text (None: no instruction); a clear error naming the file otherwise."""
    from spl_hf.yamlio import load_yaml_file

    source = Path(path) if path else Path(str(resources.files("spl_hf.data").joinpath("instructions.yaml")))
    data = load_yaml_file(source, "instructions file")
    table = data.get("instructions") if isinstance(data, dict) else None
    if not isinstance(table, dict) or not table:
        raise SplHfError(f"{source}: expected a mapping 'instructions: {{name: text or null}}'")
    out: dict[str, str | None] = {}
    for name, text in table.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise SplHfError(f"{source}: instruction name {name!r} must match {_NAME.pattern}")
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise SplHfError(f"{source}: instruction {name!r} must be non-empty text or null")
        out[name] = text
    return out
