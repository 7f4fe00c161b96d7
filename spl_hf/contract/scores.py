"""The judge score contract: how a score follows from its two stored probabilities, and what was judged.

Score identity (why only two numbers are stored per (pair, tenet)): with p1 = P("A") when the
original A is shown first and p2 = P("A") when the original B is shown first (both normalised),
P(A better) - P(B better) averaged over the orderings is ((p1 - (1 - p1)) + ((1 - p2) - p2)) / 2
= p1 - p2. The judge, the tenet build and the audit all compute it here, so they cannot drift.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence

import numpy as np

from spl_hf.errors import SplHfError


def score_from_probs(p_a_first: float, p_a_second: float) -> float:
    """Order-averaged P(A better) - P(B better) in [-1, 1], from the two stored probabilities.

    >>> round(score_from_probs(0.9, 0.3), 12), score_from_probs(0.5, 0.5)
    (0.6, 0.0)
    >>> score_from_probs(1.2, 0.3)
    Traceback (most recent call last):
    ...
    spl_hf.errors.SplHfError: p_a_first must be a probability in [0, 1], got 1.2
    """
    for name, p in (("p_a_first", p_a_first), ("p_a_second", p_a_second)):
        if not (isinstance(p, (int, float)) and math.isfinite(p) and 0.0 <= p <= 1.0):
            raise SplHfError(f"{name} must be a probability in [0, 1], got {p!r}")
    return float(p_a_first) - float(p_a_second)


def scores_from_probs(p_a_first: np.ndarray, p_a_second: np.ndarray) -> np.ndarray:
    """Vectorised :func:`score_from_probs`: the one definition builds and audits recompute with.

    >>> scores_from_probs(np.array([0.9, 0.5]), np.array([0.3, 0.5])).round(12).tolist()
    [0.6, 0.0]
    """
    return np.asarray(p_a_first, dtype=np.float64) - np.asarray(p_a_second, dtype=np.float64)


# The model id of the rehearsal engine (spl_hf.backends.rehearsal): synthetic scores, never a judge's.
# Every score it gives carries it, and `publish` refuses a build holding one (but to a loopback test Hub).
REHEARSAL_MODEL_ID = "spl-hf-rehearsal-engine (synthetic scores, not a judge)"


def pair_input_hash(messages: Sequence[Mapping[str, str]], response_a: str, response_b: str) -> str:
    """sha256 of exactly what was judged (conversation and both responses, in their A/B order).

    Stored with every judgement so a build can prove it joined the judged texts, and an audit can
    prove ``chosen``/``rejected`` are those texts on the side the score favours.

    >>> pair_input_hash([{"role": "user", "content": "hi"}], "a", "b")[:16]
    '2e01248cd5bc229d'
    >>> pair_input_hash([{"role": "user", "content": "hi"}], "b", "a")[:16] == '2e01248cd5bc229d'  # A/B order counts
    False
    """
    msgs = [{"role": m["role"], "content": m["content"]} for m in messages]
    blob = json.dumps([msgs, response_a, response_b], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
