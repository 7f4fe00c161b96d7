"""Dataset cards generated from a build: YAML metadata from the data, prose from a template."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from huggingface_hub import DatasetCard, DatasetCardData

from spl_hf.hub.folder import ConfigData, yaml_metadata


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def render_card(
    template: str | Path,
    configs: list[ConfigData],
    *,
    license: str,
    pretty_name: str,
    tags: list[str],
    source_datasets: list[str] | None = None,
    **context: object,
) -> str:
    """Render a card; ``template`` is a file path or the name of a template shipped in ``cards/``."""
    total = sum(t.num_rows for c in configs if c.default for t in c.splits.values())
    data = DatasetCardData(
        language="en",
        license=license,
        pretty_name=pretty_name,
        task_categories=["text-generation"],
        size_categories=size_category(total),
        source_datasets=source_datasets,
        tags=tags,
        **yaml_metadata(configs),
    )
    text = _template_text(template)
    card = DatasetCard.from_template(data, template_str=text, pretty_name=pretty_name, **context)
    return str(card)


# Where people edit the templates: found in a source checkout or an editable install. An installed
# wheel carries copies under spl_hf/hub/templates (setup.py's build_py step).
CARDS_DIR = Path(__file__).resolve().parents[2] / "cards"


def _template_text(template: str | Path) -> str:
    path = Path(template)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    packaged = resources.files("spl_hf.hub").joinpath("templates", str(template))
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    local = CARDS_DIR / str(template)
    if local.is_file():
        return local.read_text(encoding="utf-8")
    raise FileNotFoundError(
        f"card template {template!r}: not a file, not in the installed package, nor in {CARDS_DIR}"
    )
