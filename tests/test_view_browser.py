"""`spl-hf view` in a real browser: the system's headless Chromium opens the viewer of a tenet release
and must show the row count, a filter's match count and one row's explanation with the numbers the
audit recomputes; a click on a row opens its explanation. Screenshots are saved (to
$SPL_HF_SCREENSHOT_DIR as well, when set: that is how docs/viewer.png is made)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests import procs
from tests.audit_fixtures import tenet_files
from tests.browser import Browser, chromium_path
from tests.conftest import free_port

pytest.importorskip("gradio", reason="the [viewer] extra (gradio) is not installed")
if chromium_path() is None:
    pytest.skip("no chromium on PATH (.ci/run installs Debian's chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def viewer(built_tenets, tmp_path_factory):
    log = tmp_path_factory.mktemp("viewer") / "view.log"
    port = free_port()
    cmd = [sys.executable, "-m", "spl_hf.cli", "view", str(built_tenets), "--port", str(port)]
    with open(log, "w") as err:
        proc = procs.start(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        line = proc.stdout.readline().strip()
        if line != f"serving on http://127.0.0.1:{port}/":
            raise RuntimeError(f"viewer did not start: {line!r} {log.read_text()[-3000:]}")
        yield line.removeprefix("serving on ")
    finally:
        procs.stop(proc, grace_s=20)


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def _save(browser: Browser, tmp_path: Path, name: str) -> Path:
    shot = browser.screenshot(tmp_path / name)
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("SPL_HF_SCREENSHOT_DIR")
    if target:
        shutil.copyfile(shot, Path(target) / name)
    return shot


def test_the_viewer_shows_counts_a_filter_and_an_explanation_the_audit_agrees_with(
    viewer, browser, built_tenets, tmp_path
):
    from spl_hf.audit import audit

    report = audit(built_tenets)
    files = tenet_files(built_tenets, min_rows=0)
    total = sum(pq.read_metadata(f).num_rows for f in files)
    first = pq.read_table(files[0]).slice(0, 1).to_pylist()[0]
    tenet = first["tenet"]
    in_tenet = sum(pq.read_metadata(f).num_rows for f in files if f.parent.name == tenet)
    browser.open(f"{viewer}?tenet={tenet}")
    text = browser.wait_for(f"{in_tenet} of {total} rows match", f"({'tenets'} release, {total} rows)")
    assert first["scenario_id"] in text
    _save(browser, tmp_path, "viewer_rows.png")

    judge = first["derivation"]["judge"]
    browser.open(f"{viewer}?row={first['scenario_id']}")
    text = browser.wait_for("audit: this row", timeout=60)
    p1, p2 = judge["p_a_first"], judge["p_a_second"]
    assert f"score = p_a_first − p_a_second = {p1:.6f} − {p2:.6f} = {p1 - p2:.6f}" in text
    assert f"threshold {first['derivation']['threshold']}" in text and "reduced costs all >= 0" in text
    assert (
        f"audit: this row reproduced; release {report.rows} rows, {report.reproduced} reproduced, "
        f"{report.mismatch_count} mismatches; certificate verified; passed"
    ) in text
    _save(browser, tmp_path, "viewer.png")


def test_one_click_on_a_row_opens_its_explanation(viewer, browser, built_tenets):
    second = pq.read_table(tenet_files(built_tenets)[-1]).slice(0, 1).to_pylist()[0]
    browser.open(f"{viewer}?q={second['scenario_id']}")
    browser.wait_for("1 of ", second["scenario_id"])
    clicked = browser.click("#rows-table", second["scenario_id"])
    assert clicked
    text = browser.wait_for(f"{second['scenario_id']}  (", "score = p_a_first", timeout=60)
    assert f"{second['derivation']['judge']['p_a_first']:.6f}" in text
