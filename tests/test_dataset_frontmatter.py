"""spl_hf.dataset.frontmatter: the one card front-matter reader (audit, publish and the Hub server use it)."""

from __future__ import annotations

import time

import pytest

from spl_hf.dataset.frontmatter import (
    MAX_DEPTH,
    MAX_FRONT_MATTER_BYTES,
    FrontMatterError,
    parse_front_matter,
    read_front_matter,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("---\nlicense: mit\n---\n# Card\n", {"license": "mit"}),
        ("---\r\nlicense: mit\r\n---\r\nbody", {"license": "mit"}),
        ("---\nlicense: mit\n---", {"license": "mit"}),
        ("---  \nconfigs:\n- config_name: a\n---\n", {"configs": [{"config_name": "a"}]}),
        ("---\n---\n# empty block\n", {}),
        ("---\n# only a comment\n---\n", {}),
        ("# no front matter\n---\na: 1\n---\n", None),
        ("", None),
        ("----\na: 1\n---\n", None),  # a rule, not a front-matter opener
    ],
)
def test_reads_the_leading_block(text, expected):
    assert parse_front_matter(text, "README.md") == expected


def test_a_block_stops_at_the_first_closing_line_and_dashes_inside_values_are_text():
    text = "---\ntitle: a --- b\n---\nbody\n---\nmore: 1\n---\n"
    assert parse_front_matter(text, "R") == {"title": "a --- b"}


@pytest.mark.parametrize(
    "text, reason",
    [
        ("---\na: 1\n", "not closed"),
        ("---\na: [1, 2\n---\n", "not valid YAML"),
        ("---\n- a\n---\n", "mapping"),
        ("---\njust text\n---\n", "mapping"),
        ("---\na: &x [1]\nb: *x\n---\n", "alias"),
        ("---\na: !!python/object:os.system x\n---\n", "not valid YAML"),
        ("---\n" + "".join("  " * i + "k:\n" for i in range(MAX_DEPTH + 1)) + "---\n", "deeper than"),
        ("---\nx: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n---\n", "deeper than"),
        ("---\n" + "k: v\n" * (MAX_FRONT_MATTER_BYTES // 5 + 10) + "---\n", "larger than"),
    ],
)
def test_refuses_naming_the_source(text, reason):
    with pytest.raises(FrontMatterError, match=f"^cards/x.md: .*{reason}"):
        parse_front_matter(text, "cards/x.md")


def test_the_limits_answer_hostile_headers_at_once():
    """The review's cards: 2,000- and 50,000-deep flow nesting and a ~1 MB flat card (minutes and a
    RecursionError before)."""
    cards = [
        "---\nx: " + "[" * 2000 + "]" * 2000 + "\n---\n",
        "---\nx: " + "[" * 50_000 + "]" * 50_000 + "\n---\n",
        "---\n" + "".join(f"k{i:06d}: value number {i}\n" for i in range(36_000)) + "---\n",
    ]
    for card in cards:
        started = time.perf_counter()
        try:
            meta = parse_front_matter(card, "R")
            assert len(meta) == 36_000
        except FrontMatterError:
            pass
        assert time.perf_counter() - started < 10


def test_depth_at_the_limit_is_accepted():
    nested = "".join("  " * i + "k:\n" for i in range(MAX_DEPTH - 1)) + "  " * (MAX_DEPTH - 1) + "v\n"
    meta = parse_front_matter(f"---\n{nested}---\n", "R")
    for _ in range(MAX_DEPTH - 1):
        meta = meta["k"]
    assert meta == "v"


def test_read_front_matter_names_the_file(tmp_path):
    card = tmp_path / "README.md"
    card.write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(FrontMatterError, match=f"^{card}: not UTF-8"):
        read_front_matter(card)
    card.write_text("---\nlicense: apache-2.0\n---\n", encoding="utf-8")
    assert read_front_matter(card) == {"license": "apache-2.0"}


def test_the_audit_and_publish_read_cards_through_it(tmp_path):
    from spl_hf.dataset import card_configs
    from spl_hf.dataset.layout import front_matter

    card = tmp_path / "README.md"
    card.write_text(
        "---\nconfigs:\n- config_name: pairs\n  default: true\n  data_files:\n  - split: train\n"
        "    path: data/*.parquet\n---\n# Card\n",
        encoding="utf-8",
    )
    assert front_matter(card)["configs"][0]["config_name"] == "pairs"
    assert card_configs(tmp_path) == (["pairs"], "pairs", "train")
    card.write_text("---\na: &x 1\nb: *x\n---\n", encoding="utf-8")
    for read in (lambda: front_matter(card), lambda: card_configs(tmp_path)):
        with pytest.raises(FrontMatterError, match="alias"):
            read()
    card.write_text("# no block\n", encoding="utf-8")
    with pytest.raises(FrontMatterError, match="no YAML front matter"):
        front_matter(card)
    assert card_configs(tmp_path) == ([], None, None)
