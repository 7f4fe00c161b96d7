"""`spl-hf view` in a real browser: the system's headless Chromium opens the viewer of a tenet release
(served by the CLI) and of an SPL release (served in this process), and checks what a reviewer reads:
the card's title, rounded numbers with the stored value on hover, conversations with chosen and
rejected side by side, headers named for what they hold, the structured explanation (both orderings
as named probabilities, the per-tenet bars, the certificate in words, the position flag) with the
raw text and JSON one click away, the position-inconsistent filter, and a click on a row.

Screenshots are saved; with $SPL_HF_SCREENSHOT_DIR set (docs/img) they are copied there: that is how
docs/img/viewer-*.png are made."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests import procs
from tests.audit_fixtures import data_file, tenet_files
from tests.browser import Browser, chromium_path
from tests.conftest import free_port

pytest.importorskip("gradio", reason="the [viewer] extra (gradio) is not installed")
if chromium_path() is None:
    pytest.skip("no chromium on PATH (.ci/run installs Debian's chromium)", allow_module_level=True)

# Per header of the rows table: its text, and whether any of its words is split over two lines (a
# header broken inside a word, as "la/be/l" was).
HEADER_BREAKS = """(() => Array.from(document.querySelectorAll('#rows-table thead th span.header')).map(h => {
  const node = Array.from(h.childNodes).find(n => n.nodeType === 3);
  const broken = Array.from(node.textContent.matchAll(/\\S+/g)).some(m => {
    const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
    return new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top))).size > 1;
  });
  return [h.innerText.trim(), broken]; }))()"""
OVERFLOW = "(() => {{ const e = document.querySelector({sel}); return e.scrollWidth - e.clientWidth; }})()"


@pytest.fixture(scope="module")
def built_tenets(tmp_path_factory) -> Path:
    """A tenet build of the sample pools whose made-up judge is first-slot biased on every other
    judgement (both orderings prefer the response shown first), so some released rows are
    position-inconsistent and others are not."""
    from spl_hf.build.tenets import TenetBuildConfig, build_tenets
    from tests.audit_fixtures import tenet_inputs

    tmp = tmp_path_factory.mktemp("view_tenets")
    pairs, scores = tenet_inputs(tmp)
    rows = pq.read_table(scores).to_pylist()
    for r in rows[::2]:
        low, high = 0.51, min(0.99, 0.51 + abs(r["score"]))
        r["p_a_first"], r["p_a_second"] = (high, low) if r["score"] >= 0 else (low, high)
        r["score"] = r["p_a_first"] - r["p_a_second"]
    pq.write_table(pa.Table.from_pylist(rows), scores)
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp / "ds")
    )
    return build_tenets(cfg).path


@pytest.fixture(scope="module")
def viewer(built_tenets, tmp_path_factory):
    log = tmp_path_factory.mktemp("viewer") / "view.log"
    port = free_port()
    cmd = [sys.executable, "-m", "spl_hf.cli", "view", str(built_tenets), "--port", str(port)]
    with open(log, "w") as err, procs.started(cmd, stdout=subprocess.PIPE, stderr=err, text=True) as proc:
        line = proc.stdout.readline().strip()
        if line != f"serving on http://127.0.0.1:{port}/":
            raise RuntimeError(f"viewer did not start: {line!r} {log.read_text()[-3000:]}")
        yield line.removeprefix("serving on ")


@pytest.fixture(scope="module")
def spl_viewer(built_spl):
    """The SPL sample's viewer, served in this process (gradio is imported here already)."""
    from spl_hf.explain import open_release
    from spl_hf.view import ViewerSession, build_app
    from spl_hf.view._serve import launch

    with open_release(str(built_spl)) as release:
        demo = build_app(ViewerSession(release, audit=False))
        try:
            yield launch(demo, "127.0.0.1", free_port())
        finally:
            demo.close()


@pytest.fixture(scope="module")
def browser():
    b = Browser(height=1000)
    yield b
    b.close()


def _save(browser: Browser, tmp_path: Path, name: str, full_page: bool = False) -> Path:
    shot = browser.screenshot(tmp_path / name, full_page=full_page)
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("SPL_HF_SCREENSHOT_DIR")
    if target:
        shutil.copyfile(shot, Path(target) / name)
    return shot


def _rows(folder: Path) -> list[dict]:
    return [r for f in tenet_files(folder, min_rows=0) for r in pq.read_table(f).to_pylist()]


def _inconsistent(row: dict) -> bool:
    p1, p2 = row["derivation"]["judge"]["p_a_first"], row["derivation"]["judge"]["p_a_second"]
    return (p1 > 0.5 and p2 > 0.5) or (p1 < 0.5 and p2 < 0.5)


def _title(folder: Path) -> str:
    from spl_hf.explain import open_release

    with open_release(str(folder)) as release:
        return release.front_matter["pretty_name"]


def _assert_headers_read_whole(browser: Browser, want: list[str]) -> None:
    headers = browser.evaluate(HEADER_BREAKS)
    assert [h[0] for h in headers] == want
    assert not any(broken for _, broken in headers), headers
    assert browser.evaluate(OVERFLOW.format(sel=json.dumps("#rows-table table"))) <= 1


def test_the_rows_table_reads_like_a_dataset_viewer(viewer, browser, built_tenets, tmp_path):
    rows = _rows(built_tenets)
    first = rows[0]
    tenet = first["tenet"]
    in_tenet = [r for r in rows if r["tenet"] == tenet]
    browser.open(f"{viewer}?tenet={tenet}")
    text = browser.wait_for(f"{len(in_tenet)} of {len(rows)} rows match", first["scenario_id"])
    title = _title(built_tenets)
    assert browser.evaluate("document.title") == title and text.startswith(title)
    _assert_headers_read_whole(
        browser,
        [
            "scenario id",
            "tenet",
            "source",
            "|score|",
            "chosen side",
            "judge orderings",
            "prompt",
            "chosen",
            "rejected",
        ],
    )
    for r in in_tenet:  # 3 decimals, not the stored 17 digits; chosen and rejected texts in the row
        assert f"{r['score']:.3f}" in text and repr(r["score"]) not in text
        assert " ".join(r["chosen"][-1]["content"].split())[:40] in text
        assert " ".join(r["rejected"][-1]["content"].split())[:40] in text
    _save(browser, tmp_path, "viewer-rows.png")

    flagged = [r for r in rows if _inconsistent(r)]
    assert 0 < len(flagged) < len(rows)  # the fixture's made-up judge is position-biased on some rows
    browser.open(f"{viewer}?position=inconsistent")
    text = browser.wait_for(f"{len(flagged)} of {len(rows)} rows match", flagged[0]["scenario_id"])
    assert all(r["scenario_id"] in text for r in flagged) and "wins twice" in text
    assert not any(r["scenario_id"] in text for r in rows if not _inconsistent(r))


def test_an_explanation_names_both_orderings_and_the_certificate_in_words(
    viewer, browser, built_tenets, tmp_path
):
    row = next(r for r in _rows(built_tenets) if _inconsistent(r))
    judge = row["derivation"]["judge"]
    p1, p2 = judge["p_a_first"], judge["p_a_second"]
    browser.open(f"{viewer}?row={row['scenario_id']}")
    text = browser.wait_for("audit: this row", timeout=60)
    assert f"P(A better | A first) = {p1:.3f}" in text and f"P(A better | B first) = {1 - p2:.3f}" in text
    slot = "first" if p1 > 0.5 else "second"
    assert f"position-inconsistent: the response shown {slot} wins in both orderings" in text
    # Full precision on hover.
    titles = browser.evaluate(
        "Array.from(document.querySelectorAll('#record .num[title]')).map(e => e.title)"
    )
    assert repr(p1) in titles and repr(row["score"]) in titles
    # The pair's score on every tenet it was judged on, one bar each.
    scores = pq.read_table(data_file(built_tenets, "judge_scores"))
    judged = scores.filter(pc.equal(scores["pair_id"], row["derivation"]["pair_id"]))
    bars = browser.evaluate(
        "Array.from(document.querySelectorAll('#record .bar-row')).map(e => e.dataset.tenet)"
    )
    assert sorted(bars) == sorted(judged["tenet"].to_pylist())
    # The certificate in words, and the audit.
    assert "moving this prompt to " in text or "nowhere else to move it" in text
    assert "π(p)" not in text and "every reduced cost is ≥ 0" in text
    # The audit's verdict (its numbers are checked against the files in tests/test_explain.py).
    assert (
        "audit: this row reproduced · release " in text
        and "0 mismatches; certificate verified · passed" in text
    )
    # Chosen and rejected side by side (one row, two columns), nothing wider than the view.
    cols = browser.evaluate(
        "Array.from(document.querySelectorAll('#record .sides .col')).map(e => e.getBoundingClientRect())"
        ".map(r => [Math.round(r.top), Math.round(r.left)])"
    )
    assert len(cols) == 2 and cols[0][0] == cols[1][0] and cols[0][1] < cols[1][1]
    assert browser.evaluate(OVERFLOW.format(sel=json.dumps("#record"))) <= 1
    # The raw text and the JSON are one click away.
    formula = f"score = p_a_first − p_a_second = {p1:.6f} − {p2:.6f} = {p1 - p2:.6f}"
    assert formula not in text
    assert browser.click("#raw-text", "raw text (spl-hf explain)")
    browser.wait_for(formula, "reduced costs all >= 0")
    assert browser.evaluate(OVERFLOW.format(sel=json.dumps("#explain-text pre"))) <= 1  # wrapped
    _save(browser, tmp_path, "viewer-explain.png", full_page=True)
    assert browser.click("#raw-json", "JSON (spl-hf explain --json), full precision")
    browser.wait_for('"p_a_better_b_first"')


def test_one_click_on_a_row_opens_its_explanation_and_the_figures_count_whole_rows(
    viewer, browser, built_tenets, tmp_path
):
    second = pq.read_table(tenet_files(built_tenets)[-1]).slice(0, 1).to_pylist()[0]
    browser.open(f"{viewer}?q={second['scenario_id']}")
    browser.wait_for("1 of ", second["scenario_id"])
    assert browser.click("#rows-table", second["scenario_id"])
    text = browser.wait_for("P(A better | A first)", "Chosen (response", timeout=60)
    assert second["scenario_id"] in text and f"{second['derivation']['judge']['p_a_first']:.3f}" in text
    assert browser.click("[role=tablist]", "Figures")
    browser.wait_for("composition")
    assert browser.evaluate("document.querySelectorAll('img').length") >= 1
    _save(browser, tmp_path, "viewer-figures.png", full_page=True)


def test_the_spl_table_names_topics_and_rank_differences(spl_viewer, browser, built_spl, tmp_path):
    table = pq.read_table(data_file(built_spl, "derivations", "xstest"))
    labeled = next(r for r in table.to_pylist() if r["derivation"]["label"])
    browser.open(f"{spl_viewer}?source=xstest")
    text = browser.wait_for(f"{table.num_rows} of ", labeled["pair_id"])
    assert browser.evaluate("document.title") == _title(built_spl)
    _assert_headers_read_whole(
        browser,
        ["pair id", "prompt topic", "source", "rank difference", "label or why none", "prompt",
         "response A", "response B"],
    )  # fmt: skip
    assert " ".join(labeled["response_a"].split())[:40] in text
    _save(browser, tmp_path, "viewer-spl-rows.png")
    der = labeled["derivation"]
    browser.open(f"{spl_viewer}?row={labeled['pair_id']}")
    text = browser.wait_for("rank A ", "audit not run", timeout=60)
    assert f"rank A {der['rank_a']} − rank B {der['rank_b']} = rank difference {der['rank_diff']}" in text
    chosen = "A" if der["label"] == "a" else "B"
    assert f"Response {chosen} (chosen)" in text and f"label {der['label']}" in text
    _save(browser, tmp_path, "viewer-spl-explain.png", full_page=True)
