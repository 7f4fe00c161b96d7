"""What a tenet judgement's two stored probabilities mean, named for a reader.

The judge stores P(the response shown first is better) in each ordering: ``p_a_first`` with the
original A shown first, ``p_a_second`` with the original B shown first. So ``p_a_second`` is
P(B better | B first), and P(A better | B first) is ``1 - p_a_second``. Printing ``p_a_second`` as
"P(A)" reads a first-slot-biased judgement (the first shown wins both times) as "A preferred twice".

A judgement is *position-inconsistent* when its two orderings disagree in sign: one prefers A, the
other B, i.e. the same slot wins both times (first slot: both stored probabilities above 0.5; second
slot: both below). A probability of exactly 0.5 decides nothing, so such a judgement is "undecided",
not inconsistent. These are the same classes as :func:`spl_hf.contract.quality.position_counts`.

Pure functions: a scalar one for ``explain``, a column-wise one for the viewer's filter; the cards'
per-tenet counts (:func:`spl_hf.contract.quality.position_counts`) use the same classes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

Position = Literal["consistent", "first_slot", "second_slot", "undecided"]
POSITIONS: tuple[Position, ...] = ("consistent", "first_slot", "second_slot", "undecided")
# How each class reads in a sentence (explain's text, the viewer's table and filter).
POSITION_TEXT: dict[str, str] = {
    "consistent": "position-consistent: both orderings prefer the same response",
    "first_slot": "position-inconsistent: the response shown first wins in both orderings",
    "second_slot": "position-inconsistent: the response shown second wins in both orderings",
    "undecided": "undecided: one ordering gives exactly 0.5",
}
INCONSISTENT: frozenset[str] = frozenset({"first_slot", "second_slot"})


@dataclass(frozen=True)
class NamedOrderings:
    """The two orderings of one judgement, as P(A better | who was shown first)."""

    p_a_better_a_first: float  # = stored p_a_first
    p_a_better_b_first: float  # = 1 - stored p_a_second
    p_b_better_b_first: float  # = stored p_a_second (P(first shown better) with B first)
    position: Position

    @property
    def position_inconsistent(self) -> bool:
        return self.position in INCONSISTENT

    def to_dict(self) -> dict:
        return {**asdict(self), "position_inconsistent": self.position_inconsistent}


def _position(p_first: float, p_second: float) -> Position:
    if p_first == 0.5 or p_second == 0.5:
        return "undecided"
    if (p_first > 0.5) != (p_second > 0.5):
        return "consistent"
    return "first_slot" if p_first > 0.5 else "second_slot"


def name_orderings(p_a_first: float, p_a_second: float) -> NamedOrderings:
    """The stored P(first shown better) of both orderings, named by what they are.

    >>> o = name_orderings(0.72, 0.665)
    >>> round(o.p_a_better_b_first, 3), o.position, o.position_inconsistent
    (0.335, 'first_slot', True)
    >>> name_orderings(0.9, 0.2).position
    'consistent'
    """
    p1, p2 = float(p_a_first), float(p_a_second)
    return NamedOrderings(p1, 1.0 - p2, p2, _position(p1, p2))


def position_codes(p_a_first: np.ndarray, p_a_second: np.ndarray) -> np.ndarray:
    """Column-wise :func:`name_orderings` ``.position``, as int8 indices into :data:`POSITIONS`
    (numbers, not strings: a card-scale release has millions of judgements).

    >>> position_codes(np.array([0.9, 0.8, 0.2, 0.6]), np.array([0.3, 0.7, 0.1, 0.5])).tolist()
    [0, 1, 2, 3]
    """
    p1 = np.asarray(p_a_first, dtype=np.float64)
    p2 = np.asarray(p_a_second, dtype=np.float64)
    codes = np.full(p1.shape, 3, dtype=np.int8)  # undecided unless both orderings decide
    codes[((p1 > 0.5) & (p2 < 0.5)) | ((p1 < 0.5) & (p2 > 0.5))] = 0
    codes[(p1 > 0.5) & (p2 > 0.5)] = 1
    codes[(p1 < 0.5) & (p2 < 0.5)] = 2
    return codes


def positions(p_a_first: np.ndarray, p_a_second: np.ndarray) -> list[str]:
    """Column-wise :func:`name_orderings` ``.position`` (one class name per judgement).

    >>> positions(np.array([0.9, 0.8, 0.2, 0.6]), np.array([0.3, 0.7, 0.1, 0.5]))
    ['consistent', 'first_slot', 'second_slot', 'undecided']
    """
    return [POSITIONS[c] for c in position_codes(p_a_first, p_a_second)]
