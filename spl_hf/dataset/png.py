"""The one PNG encoding of every figure: the audit draws a card's figures again and compares bytes.

Figures are ``matplotlib.figure.Figure`` objects built without pyplot (no global backend state);
PNGs are rendered by Agg with no version text, so the bytes depend on the data only.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# PNG text chunks carry the matplotlib version by default; drop it so outputs depend on data only.
PNG_METADATA = {"Software": None}


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes: the one encoding of every figure (the audit redraws and compares them)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, metadata=PNG_METADATA)
    return buf.getvalue()


# The last figures drawn in this process, by a digest of what they were drawn from. A build draws its
# figures and the audit draws them again from what it read back (seconds per card on 49 tenets): for
# the same inputs the pure drawing gives the same bytes, so the second draw is the first one's result.
_DRAWN: OrderedDict[str, bytes] = OrderedDict()
_DRAWN_MAX = 8


def drawn_png(name: str, inputs: tuple[Any, ...], draw: Callable[[], Any]) -> bytes:
    """``png_bytes(draw())``, drawn once per process for the same ``name`` and ``inputs``: numpy arrays
    (hashed by dtype, shape and bytes), lists, tuples and dicts of them, and values whose ``repr`` is
    their content."""
    h = hashlib.sha256(name.encode())
    _digest(h, inputs)
    key = h.hexdigest()
    if key in _DRAWN:
        _DRAWN.move_to_end(key)
        return _DRAWN[key]
    png = png_bytes(draw())
    _DRAWN[key] = png
    while len(_DRAWN) > _DRAWN_MAX:
        _DRAWN.popitem(last=False)
    return png


def _digest(h: Any, part: Any) -> None:
    if hasattr(part, "tobytes") and hasattr(part, "dtype"):  # a numpy array: its repr elides the middle
        # Its buffer, not a copy (tobytes): the judged scores are 131 MB at the card. Same bytes, C order.
        h.update(f"array{part.dtype.str}{part.shape}:".encode())
        data = np.ascontiguousarray(part)
        h.update(data.tobytes() if data.dtype.hasobject else memoryview(data).cast("B"))
    elif isinstance(part, (list, tuple)):
        h.update(f"seq{len(part)}:".encode())
        for item in part:
            _digest(h, item)
    elif isinstance(part, dict):
        h.update(f"map{len(part)}:".encode())
        for k in sorted(part, key=repr):
            _digest(h, k)
            _digest(h, part[k])
    else:
        h.update(f"{type(part).__name__}:{part!r}".encode())
    h.update(b"\x00")


def save_png(fig, path: str | Path) -> Path:
    from spl_hf.files import write_bytes

    return write_bytes(path, png_bytes(fig))
