"""The Hub's ``cardData``: README.md's front matter, parsed once when a commit is made.

Read through :func:`spl_hf.dataset.parse_front_matter`, the project's one card reader, with its
size, depth and alias limits; a README whose front matter breaks them, or is not valid YAML, is
refused with the commit (400), as the Hub refuses a commit with invalid README metadata.
"""

from __future__ import annotations

import json
from typing import BinaryIO

from spl_hf.dataset.frontmatter import MAX_FRONT_MATTER_BYTES, FrontMatterError, parse_front_matter
from spl_hf_hub_server.errors import StoreError

# Enough of the README to hold the largest accepted block and its closing line; the prose after it
# is never read.
HEAD_BYTES = MAX_FRONT_MATTER_BYTES + 64


def card_data(readme: bytes | BinaryIO) -> dict | None:
    """cardData of a README (its bytes or an open blob); None when it has no front matter."""
    head = readme[:HEAD_BYTES] if isinstance(readme, bytes) else readme.read(HEAD_BYTES)
    text = head.decode("utf-8", "replace")
    try:
        meta = parse_front_matter(text, "README.md")
    except FrontMatterError as exc:
        raise StoreError(400, f"Invalid metadata in {exc}") from None
    if meta is None:
        return None
    try:  # dates and the like as the strings JSON has; keys JSON cannot hold are refused
        return json.loads(json.dumps(meta, default=str))
    except (TypeError, ValueError) as exc:
        raise StoreError(400, f"Invalid metadata in README.md: {exc}") from None
