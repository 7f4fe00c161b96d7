"""The viewer's rows index: filters, search and paging in Arrow agree with the release's own files."""

from __future__ import annotations

import pyarrow.parquet as pq

from spl_hf.explain import open_release
from spl_hf.view import RowFilter, ViewerSession, rows_index
from spl_hf.view.composition import composition_counts
from tests.audit_fixtures import data_file, tenet_files


def _tenet_rows(folder):
    return [r for f in tenet_files(folder, min_rows=0) for r in pq.read_table(f).to_pylist()]


def test_tenet_rows_filter_search_and_page_like_the_files(built_tenets):
    rows = _tenet_rows(built_tenets)
    with open_release(str(built_tenets)) as release:
        index = rows_index(release)
        assert index.total == len(rows)
        assert [r["id"] for r in index.page(RowFilter(), 0, 1000).rows] == [r["scenario_id"] for r in rows]
        tenet, source = rows[0]["tenet"], rows[-1]["source"]
        cases = {
            RowFilter(tenet=tenet): [r for r in rows if r["tenet"] == tenet],
            RowFilter(source=source): [r for r in rows if r["source"] == source],
            RowFilter(score_min=0.5): [r for r in rows if r["score"] >= 0.5],
            RowFilter(score_max=0.7, label="b"): [
                r for r in rows if r["score"] <= 0.7 and r["derivation"]["chosen_side"] == "b"
            ],
            RowFilter(label="a"): [r for r in rows if r["derivation"]["chosen_side"] == "a"],
            RowFilter(text="BAKERY"): [r for r in rows if "bakery" in r["prompt"][0]["content"].lower()],
        }
        for flt, want in cases.items():
            assert [r["id"] for r in index.page(flt, 0, 1000).rows] == [r["scenario_id"] for r in want], flt
        page = index.page(RowFilter(), page=1, size=3)
        assert (page.matched, page.pages, page.page, len(page.rows)) == (len(rows), -(-len(rows) // 3), 1, 3)
        r = page.rows[0]
        assert (r["config"], r["split"], r["index"], r["id"]) == ("all", "train", 3, rows[3]["scenario_id"])
        cats, _sources, counts = composition_counts(index)
        assert counts.sum() == len(rows) and counts[cats.index(tenet)].sum() == len(
            cases[RowFilter(tenet=tenet)]
        )


def test_spl_rows_span_every_split_and_explain_through_the_session(built_spl):
    table = pq.read_table(data_file(built_spl, "derivations", "xstest"))
    with open_release(str(built_spl)) as release:
        session = ViewerSession(release, audit=False)
        index = session.index
        assert index.total == sum(
            pq.read_metadata(p).num_rows for p in (built_spl / "derivations").glob("*.parquet")
        )
        hits = index.page(RowFilter(source="xstest"), 0, 1000)
        assert [r["id"] for r in hits.rows] == table.column("pair_id").to_pylist()
        no_label = index.page(RowFilter(label="no_verdict"), 0, 1000)
        assert no_label.matched == 32 and all(r["label"] == "no_verdict" for r in no_label.rows)
        r = hits.rows[2]
        assert (r["config"], r["split"], r["index"]) == ("derivations", "xstest", 2)
        text, ex = session.explain([r["config"], r["split"], str(r["index"])])
        assert ex["pair_id"] == r["id"] and "audit" not in ex and r["id"] in text


def test_the_card_tab_points_at_the_figures_it_cannot_load(built_tenets):
    from spl_hf.view.app import card_markdown

    body = (built_tenets / "README.md").read_text().split("---\n", 2)[2]
    assert "](judge_quality.png)" in body
    shown = card_markdown(body)
    assert "](judge_quality.png)" not in shown and "figure `judge_quality.png`: see the Figures tab" in shown
