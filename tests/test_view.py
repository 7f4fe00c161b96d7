"""The viewer's rows index: filters, search and paging in Arrow agree with the release's own files."""

from __future__ import annotations

import pyarrow.parquet as pq

from spl_hf.explain import open_release
from spl_hf.view import RowFilter, ViewerSession, rows_index
from spl_hf.view.composition import composition_counts
from spl_hf.view.rows import SNIPPET
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


def test_the_position_filter_and_the_table_show_each_judgements_orderings(built_tenets):
    from spl_hf.contract import name_orderings

    rows = _tenet_rows(built_tenets)
    klass = {
        r["scenario_id"]: name_orderings(
            r["derivation"]["judge"]["p_a_first"], r["derivation"]["judge"]["p_a_second"]
        ).position
        for r in rows
    }
    with open_release(str(built_tenets)) as release:
        session = ViewerSession(release, audit=False)
        for value, want in {
            "inconsistent": {"first_slot", "second_slot"},
            "consistent": {"consistent"},
            "first_slot": {"first_slot"},
        }.items():
            got = [r["id"] for r in session.page(RowFilter(position=value), 0, 1000).rows]
            assert got == [i for i, k in klass.items() if k in want], value
        page = session.page(RowFilter(), 0, 1000)
        shown = [dict(zip(session.headers, r)) for r in session.table(page)]
        assert list(shown[0])[:6] == [
            "scenario id",
            "tenet",
            "source",
            "|score|",
            "chosen side",
            "judge orderings",
        ]
        for r, s in zip(rows, shown):
            assert s["|score|"] == round(r["score"], 3) and s["chosen side"] == r["derivation"]["chosen_side"]
            assert s["chosen"].startswith(" ".join(r["chosen"][-1]["content"].split())[:100])
            assert s["rejected"].startswith(" ".join(r["rejected"][-1]["content"].split())[:100])
            assert ("⚠" in s["judge orderings"]) == (klass[r["scenario_id"]] in ("first_slot", "second_slot"))


def test_the_composition_axis_counts_whole_rows(built_tenets):
    from spl_hf.view.composition import composition_figure

    with open_release(str(built_tenets)) as release:
        fig = composition_figure(rows_index(release))
    ticks = fig.axes[0].get_xticks()
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)


def test_the_record_view_escapes_what_the_release_holds():
    from spl_hf.view.record import num, turns

    shown = turns(
        [{"role": "user", "text": "<script>alert(1)</script> & <b>", "chars": 30, "clipped": False}]
    )
    assert "<script>" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in shown
    assert num(0.040369808127921236) == '<span class="num" title="0.040369808127921236">0.040</span>'
    assert ">0.000123<" in num(0.000123) and ">+2<" in num(2, signed=True)


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
        text, ex, record = session.explain([r["config"], r["split"], str(r["index"])])
        assert ex["pair_id"] == r["id"] and "audit" not in ex and r["id"] in text and r["id"] in record
        # Headers named for what the columns hold; the texts of the page's rows are the files' own.
        assert session.headers[:5] == [
            "pair id",
            "prompt topic",
            "source",
            "rank difference",
            "label or why none",
        ]
        row = table.to_pylist()[2]
        shown = dict(zip(session.headers, session.table(index.page(RowFilter(source="xstest"), 0, 1000))[2]))
        full = " ".join(row["response_a"].split())  # one line, clipped with … past SNIPPET characters
        want = full if len(full) <= SNIPPET else full[: SNIPPET - 1] + "…"
        assert shown["response A"] == want and shown["prompt"] == row["prompt"][0]["content"]
        assert shown["rank difference"] == row["derivation"]["rank_diff"] and "judge orderings" not in shown


def test_the_card_tab_points_at_the_figures_it_cannot_load(built_tenets):
    from spl_hf.view.app import card_markdown

    body = (built_tenets / "README.md").read_text().split("---\n", 2)[2]
    assert "](judge_quality.png)" in body
    shown = card_markdown(body)
    assert "](judge_quality.png)" not in shown and "figure `judge_quality.png`: see the Figures tab" in shown
