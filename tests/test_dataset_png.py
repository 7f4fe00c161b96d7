"""A figure drawn again from the same inputs in one process is the first drawing; any changed input draws anew."""

from __future__ import annotations

import numpy as np

from spl_hf.dataset.png import drawn_png


def _figure(values):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 2))
    fig.subplots().plot(values)
    return fig


def test_the_same_inputs_are_drawn_once_and_a_changed_middle_value_is_drawn_again():
    values = np.linspace(0, 1, 5000)  # long enough that numpy's repr elides the middle
    draws = []

    def draw(v):
        draws.append(1)
        return _figure(v)

    first = drawn_png("t", (values, {"n": 1}), lambda: draw(values))
    again = drawn_png("t", (values.copy(), {"n": 1}), lambda: draw(values))
    assert again == first and len(draws) == 1
    changed = values.copy()
    changed[2500] = -1.0
    other = drawn_png("t", (changed, {"n": 1}), lambda: draw(changed))
    assert len(draws) == 2 and other != first
    drawn_png("t", (values, {"n": 2}), lambda: draw(values))
    drawn_png("u", (values, {"n": 1}), lambda: draw(values))
    assert len(draws) == 4
