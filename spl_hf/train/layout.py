"""The sweep layout ``<root>/<condition>/seed<k>/``: written by :mod:`spl_hf.train.sweep`, read here only.

Every reader of a sweep (``report seeds``, ``eval at-limit``, an evaluated run's condition and seed)
recognises a seed folder with :func:`seed_of`, so a folder counts the same everywhere: exactly
``seed`` followed by the seed's decimal digits, as the writer names it.
"""

from __future__ import annotations

import re
from pathlib import Path

from spl_hf.errors import SplHfError

SEED_DIR = re.compile(r"^seed(\d+)$")

__all__ = ["SEED_DIR", "seed_dir", "seed_dirs", "seed_of"]


def seed_dir(root: str | Path, condition: str, seed: int) -> Path:
    """Where the run of ``condition`` with ``seed`` lives.

    >>> seed_dir("runs", "judge", 3).as_posix()
    'runs/judge/seed3'
    """
    return Path(root) / condition / f"seed{seed}"


def seed_of(name: str) -> int | None:
    """The seed a folder name stands for, or None when it is not a seed folder.

    >>> [seed_of(n) for n in ("seed3", "seed03", "seed_3", "seed", "eval")]
    [3, 3, None, None, None]
    """
    m = SEED_DIR.match(name)
    return int(m.group(1)) if m else None


def seed_dirs(condition_dir: Path) -> dict[int, Path]:
    """The seed folders of one condition by seed; two folders naming one seed is an error."""
    out: dict[int, Path] = {}
    for p in sorted(condition_dir.iterdir()):
        seed = seed_of(p.name)
        if seed is not None and p.is_dir():
            if seed in out:
                raise SplHfError(f"{condition_dir}: seed {seed} appears twice ({out[seed].name}, {p.name})")
            out[seed] = p
    return out
