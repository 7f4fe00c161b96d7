"""The card's fast rendering is huggingface_hub's ``DatasetCard.from_template`` byte for byte.

``spl_hf.dataset.card`` dumps the metadata once with libyaml and renders the template once; each built
card (SPL, SPL with the verdict judge, tenets) is rendered again through the library's own path and
compared with the README the build wrote.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import DatasetCard

import spl_hf.dataset.card as card
from spl_hf.build.tenets import TenetBuildConfig, build_tenets
from tests.audit_fixtures import tenet_inputs


def _library_path(data, template, **context):
    return str(DatasetCard.from_template(data, template_str=template, **context))


@pytest.fixture(scope="module")
def built_tenets(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("tenets_card")
    pairs, scores = tenet_inputs(tmp, 0)
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp / "ds")
    )
    return Path(build_tenets(cfg).path)


@pytest.mark.parametrize("build", ["built_spl", "built_spl_judge", "built_tenets"])
def test_a_built_card_is_the_librarys_rendering_byte_for_byte(build, request, monkeypatch):
    folder = Path(request.getfixturevalue(build))
    written = (folder / "README.md").read_text(encoding="utf-8")
    assert card.card_text(folder) == written  # the fast path renders the build's card again
    monkeypatch.setattr(card, "_card_markdown", _library_path)
    assert card.card_text(folder) == written


def test_a_template_of_another_shape_takes_the_librarys_path(tmp_path):
    from huggingface_hub import DatasetCardData

    data = DatasetCardData(language="en", license="mit", pretty_name="x", tags=["a: b", "ü"])
    template = "# {{ pretty_name }}\n\n---\n{{ card_data }}\n---\n"
    assert card._card_markdown(data, template, pretty_name="x") == _library_path(
        data, template, pretty_name="x"
    )
    shaped = "---\n{{ card_data }}\n---\n\n# {{ pretty_name }} {{ license }}\n"
    assert card._card_markdown(data, shaped, pretty_name="x") == _library_path(data, shaped, pretty_name="x")
