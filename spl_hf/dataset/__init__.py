"""The released dataset folder, written and read in one place: its parquet shards and swap-in, the
card (rendering, sections, figures, front matter, layout) and the card templates (package data).

Build and audit import it; ``spl_hf.hub`` publishes on top of it and of the audit. Attributes load
on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

DEFAULT_MAX_SHARD_SIZE = (
    "500MB"  # largest parquet shard of a build (Arrow size); here so configs need no pyarrow
)

if TYPE_CHECKING:
    from spl_hf.dataset.card import (
        CARD_INPUTS,
        PROVENANCE,
        card_inputs,
        card_text,
        provenance_section,
        regenerate_card,
        render_card,
    )
    from spl_hf.dataset.evidence_section import PRODUCER_NOT_RECORDED, card_rows, evidence_card
    from spl_hf.dataset.figure_judge_quality import (
        judge_quality_figure,
        judge_quality_png,
        save_judge_quality_figure,
    )
    from spl_hf.dataset.figure_pool_preference import (
        pool_preference_data,
        pool_preference_figure,
        pool_preference_png,
        save_pool_preference_figure,
    )
    from spl_hf.dataset.folder import (
        ConfigData,
        WrittenFolder,
        shard_pattern,
        write_dataset_folder,
        yaml_metadata,
    )
    from spl_hf.dataset.frontmatter import (
        MAX_FRONT_MATTER_BYTES,
        FrontMatterError,
        card_body,
        parse_front_matter,
        read_front_matter,
    )
    from spl_hf.dataset.layout import CardLayout, card_configs, front_matter, read_card
    from spl_hf.dataset.png import PNG_METADATA, png_bytes, save_png
    from spl_hf.dataset.quality_card import POOL_FIGURE, QUALITY_FIGURE, bias_sentence, judge_quality_card
    from spl_hf.dataset.sections import (
        card_categories,
        harmful_pools,
        markdown_table,
        multi_turn_share,
        origins_markdown,
        shares,
        stage_table,
    )

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.dataset.card": (
        "CARD_INPUTS",
        "PROVENANCE",
        "card_inputs",
        "card_text",
        "provenance_section",
        "regenerate_card",
        "render_card",
    ),
    "spl_hf.dataset.evidence_section": ("PRODUCER_NOT_RECORDED", "card_rows", "evidence_card"),
    "spl_hf.dataset.figure_judge_quality": (
        "judge_quality_figure",
        "judge_quality_png",
        "save_judge_quality_figure",
    ),
    "spl_hf.dataset.figure_pool_preference": (
        "pool_preference_data",
        "pool_preference_figure",
        "pool_preference_png",
        "save_pool_preference_figure",
    ),
    "spl_hf.dataset.folder": (
        "ConfigData",
        "WrittenFolder",
        "shard_pattern",
        "write_dataset_folder",
        "yaml_metadata",
    ),
    "spl_hf.dataset.frontmatter": (
        "MAX_FRONT_MATTER_BYTES",
        "FrontMatterError",
        "card_body",
        "parse_front_matter",
        "read_front_matter",
    ),
    "spl_hf.dataset.layout": ("CardLayout", "card_configs", "front_matter", "read_card"),
    "spl_hf.dataset.png": ("PNG_METADATA", "png_bytes", "save_png"),
    "spl_hf.dataset.quality_card": ("POOL_FIGURE", "QUALITY_FIGURE", "bias_sentence", "judge_quality_card"),
    "spl_hf.dataset.sections": (
        "card_categories",
        "harmful_pools",
        "markdown_table",
        "multi_turn_share",
        "origins_markdown",
        "shares",
        "stage_table",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS, eager=("DEFAULT_MAX_SHARD_SIZE",))
