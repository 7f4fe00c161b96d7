"""Dataset-card front matter: the one reader of a README's leading ``---`` YAML block.

The audit, publishing and the local Hub server all read cards through :func:`parse_front_matter`,
so they agree on what a card declares. The limits are checked before PyYAML builds anything: the
block's size first (no parse at all), then, on the C parser's event stream, its nesting depth and
any alias. PyYAML's constructor recurses once per level and its pure-Python scanner is quadratic in
flow depth, so a few KB of ``[[[[...`` would otherwise cost minutes or a ``RecursionError``; an alias
can stand for gigabytes once expanded. Cards written by spl_hf (and the Hub's own) stay far below
every limit.
"""

from __future__ import annotations

import re
from pathlib import Path

from spl_hf.errors import SplHfError
from spl_hf.yamlio import YamlError, load_yaml

MAX_FRONT_MATTER_BYTES = 1024 * 1024  # the YAML block itself; the card's prose after it is not limited
MAX_DEPTH = 64  # nested mappings/sequences; a dataset card's features go about 8 deep
_BLOCK = re.compile(r"\A---[ \t]*\r?\n(?:(.*?)\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)

__all__ = [
    "MAX_DEPTH",
    "MAX_FRONT_MATTER_BYTES",
    "FrontMatterError",
    "card_body",
    "parse_front_matter",
    "read_front_matter",
]


class FrontMatterError(SplHfError):
    """A card whose front matter cannot be read within the limits; the message names the card."""


def has_front_matter(text: str) -> bool:
    """Whether ``text`` opens a front-matter block (a first line of ``---``)."""
    return text.startswith("---") and text[3:].lstrip(" \t")[:1] in ("\n", "\r", "")


def parse_front_matter(text: str, source: str) -> dict | None:
    """The card's front matter as a dict; None when ``text`` has no front matter at all.

    Raises :class:`FrontMatterError` naming ``source`` when the block is not closed, is larger than
    :data:`MAX_FRONT_MATTER_BYTES`, nests deeper than :data:`MAX_DEPTH`, uses an alias, is not valid
    YAML or is not a mapping (an empty block is an empty mapping).
    """
    if not has_front_matter(text):
        return None
    m = _BLOCK.match(text[: MAX_FRONT_MATTER_BYTES + 64])  # never scan past what could be accepted
    if not m:
        if len(text) > MAX_FRONT_MATTER_BYTES:
            raise FrontMatterError(
                f"{source}: front matter is larger than {MAX_FRONT_MATTER_BYTES} bytes "
                "(or not closed by a '---' line)"
            )
        raise FrontMatterError(f"{source}: front matter is not closed by a '---' line")
    block = m.group(1) or ""
    if len(block.encode("utf-8", "surrogatepass")) > MAX_FRONT_MATTER_BYTES:
        raise FrontMatterError(f"{source}: front matter is larger than {MAX_FRONT_MATTER_BYTES} bytes")
    try:  # the one hardened loader: duplicate keys, depth and size refused before anything is built
        meta = load_yaml(
            block,
            f"{source}: front matter",
            max_chars=MAX_FRONT_MATTER_BYTES,
            max_depth=MAX_DEPTH,
            aliases=False,
        )
    except YamlError as exc:
        raise FrontMatterError(str(exc)) from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise FrontMatterError(f"{source}: front matter must be a YAML mapping")
    return meta


def card_body(text: str) -> str:
    """The card's prose: ``text`` after its front-matter block (all of it when there is none)."""
    m = _BLOCK.match(text[: MAX_FRONT_MATTER_BYTES + 64]) if has_front_matter(text) else None
    return text[m.end() :] if m else text


def read_front_matter(path: str | Path) -> dict | None:
    """:func:`parse_front_matter` of a UTF-8 file, naming the file in every error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise FrontMatterError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_front_matter(text, str(path))
