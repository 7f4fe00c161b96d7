"""The one PNG encoding of every figure: the audit draws a card's figures again and compares bytes.

Figures are ``matplotlib.figure.Figure`` objects built without pyplot (no global backend state);
PNGs are rendered by Agg with no version text, so the bytes depend on the data only.
"""

from __future__ import annotations

from pathlib import Path

# PNG text chunks carry the matplotlib version by default; drop it so outputs depend on data only.
PNG_METADATA = {"Software": None}


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes: the one encoding of every figure (the audit redraws and compares them)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, metadata=PNG_METADATA)
    return buf.getvalue()


def save_png(fig, path: str | Path) -> Path:
    from spl_hf.files import write_bytes

    return write_bytes(path, png_bytes(fig))
