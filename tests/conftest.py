"""Shared fixtures: the default schema and rule base, pair tables, and a built SPL folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pytest
from hypothesis import settings

from tests import leaks

# No test asserts timing (the suite shares its cores with other workers): property tests have no deadline.
settings.register_profile("spl_hf", deadline=None)
settings.load_profile("spl_hf")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A free TCP port on 127.0.0.1, for a torchrun rendezvous."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# No process outlives the session (tests/leaks.py): each test process adopts its orphaned descendants,
# and its end checks that none is alive. Under xdist a worker checks its own, the controller the rest.
_CLOCK = leaks.Clock()


def pytest_configure(config) -> None:
    leaks.become_subreaper()


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid, location) -> None:
    _CLOCK.after(nodeid)


@pytest.fixture(scope="session", autouse=True)
def _no_process_outlives_the_session(request):
    """Set up before any other session fixture, so torn down after all of them (servers, Ray)."""
    yield
    where = getattr(request.config, "workerinput", {}).get("workerid", "the test process")
    names = leaks.leaked(_CLOCK)
    if names:
        pytest.fail(leaks.report(names, where), pytrace=False)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    """The xdist controller (which runs no test): its children other than the workers, which by now
    have been shut down (xdist's own sessionfinish runs first)."""
    if hasattr(session.config, "workerinput") or not getattr(session.config.option, "numprocesses", None):
        return
    names = leaks.leaked(None)
    if names:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(leaks.report(names, "the xdist controller"), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Tiny random Llama models with the embedded model's tokenizer, for the LM-backend tests.
pytest_plugins = ("tests.backends_fixtures", "tests.audit_fixtures", "tests.hub_fixtures")


@pytest.fixture(scope="session")
def rulebase():
    from spl_hf.rules import default_rulebase

    return default_rulebase()


@pytest.fixture(scope="session")
def schema():
    from spl_hf.schema import default_schema

    return default_schema()


def make_pair(i: int, prompt_attrs: dict | None, ra: dict | None, rb_: dict | None, **extra) -> dict:
    row = {
        "pair_id": f"pair{i}",
        "prompt_id": f"prompt{i // 3}",
        "source": extra.pop("source", "ultrachat"),
        "source_category": "benign",
        "prompt": [{"role": "user", "content": f"question number {i}?"}],
        "response_a": f"answer a {i}",
        "response_b": f"answer b {i}",
        "instruction_a": "comply",
        "instruction_b": "refuse",
        "prompt_attributes": prompt_attrs,
        "response_a_attributes": ra,
        "response_b_attributes": rb_,
        "attribute_status": {
            "prompt": "ok" if prompt_attrs else "invalid_json",
            "response_a": "ok" if ra else "invalid_json",
            "response_b": "ok" if rb_ else "invalid_json",
        },
        # Producer keys that vary by row, with nulls, so the digests of both paths cover them.
        "producers": {
            "prompt_labeler": f"{i % 2:016x}",
            "response_a_labeler": f"{i % 3:016x}",
            "response_b_labeler": None if i % 4 == 0 else f"{i % 5:016x}",
            "response_a_generator": "9" * 16,
            "response_b_generator": None if i % 2 else "9" * 16,
        },
    }
    row.update(extra)
    return row


@pytest.fixture(scope="session")
def sample_pairs(schema) -> pa.Table:
    """The shipped sample's candidate pairs (144 rows with every no-label reason)."""
    from spl_hf.build.spl import _sample
    from spl_hf.derive.pairs import pairs_from_records, read_jsonl

    return pairs_from_records(
        read_jsonl(_sample("spl_prompts.jsonl")), read_jsonl(_sample("spl_candidates.jsonl")), schema
    )


@pytest.fixture(scope="session")
def sample_derived(sample_pairs, rulebase) -> pa.Table:
    from spl_hf.derive import derive_table

    return derive_table(sample_pairs, rulebase)


@pytest.fixture(scope="session")
def built_spl(tmp_path_factory) -> Path:
    """The sample built into a dataset folder once per session (treat as read-only)."""
    from spl_hf.build import SPLBuildConfig, build_spl

    out = tmp_path_factory.mktemp("spl") / "dataset"
    build_spl(SPLBuildConfig(output_dir=str(out)))
    return out


def write_verdicts(path: Path, seed: int = 0, skip: int = 0) -> Path:
    """Verdict-judge records for the shipped sample's candidates: seeded random probabilities (peaked so
    that verdicts vary), as the SPL release's verdict stage writes them. ``skip`` records every
    ``skip``-th candidate as not judged."""
    import random

    from spl_hf.build.spl import _sample
    from spl_hf.derive.pairs import read_jsonl
    from spl_hf.derive.verdict_labels import VerdictRecord, verdict_options, verdict_record_json
    from spl_hf.rules import default_rulebase

    options = verdict_options(dict(default_rulebase().verdicts))
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i, c in enumerate(read_jsonl(_sample("spl_candidates.jsonl"))):
            weights = [rng.random() ** 3 for _ in options]
            probs = tuple(w / sum(weights) for w in weights)
            rec = (
                VerdictRecord(c["candidate_id"], "not_judged", None, None, None, None, None)
                if skip and i % skip == 0
                else VerdictRecord(c["candidate_id"], "ok", probs, 0.9, "test/judge", "rev1", "tmpl1")
            )
            fh.write(verdict_record_json(rec, c["prompt_id"], options) + "\n")
    return path


@pytest.fixture(scope="session")
def built_spl_judge(tmp_path_factory) -> Path:
    """The sample built with synthetic verdict-judge records (treat as read-only)."""
    from spl_hf.build import SPLBuildConfig, build_spl

    root = tmp_path_factory.mktemp("spl_judge")
    verdicts = write_verdicts(root / "verdicts.jsonl", skip=23)
    build_spl(SPLBuildConfig(output_dir=str(root / "dataset"), verdicts=str(verdicts)))
    return root / "dataset"


@pytest.fixture
def judge_copy(built_spl_judge, tmp_path) -> Path:
    """A copy of ``built_spl_judge`` that a test may edit."""
    import shutil

    out = tmp_path / "ds"
    shutil.copytree(built_spl_judge, out)
    return out


def edit_first_file(folder: Path, config: str, edit) -> str:
    """Apply ``edit(rows)`` to the rows of the first parquet file of ``config``; returns its relative path."""
    import pyarrow.parquet as pq

    path = sorted((folder / config).glob("*.parquet"))[0]
    table = pq.read_table(path)
    rows = table.to_pylist()
    edit(rows)
    pq.write_table(table.from_pylist(rows, schema=table.schema), path)
    return path.relative_to(folder).as_posix()


class DemoRun(NamedTuple):
    out: Path
    code: int
    output: str
    rerun_code: int
    rerun_output: str
    files_before: dict[str, bytes]  # the published datasets and model outputs after the first run
    files_after: dict[str, bytes]  # the same after the rerun
    reports_before: dict[str, Any]  # the JSON records of DEMO_REPORTS after the first run
    reports_after: dict[str, Any]  # the same after the rerun
    trained_before: int  # st_mtime_ns of the trained adapter after the first run
    trained_after: int  # the same after the rerun (equal: the rerun did not train again)


DEMO_KEPT = (
    "spl",
    "tenets_release/dataset",
    "spl_release/dataset",
    "spl_recorded_release/dataset",
    "train_run/run.json",
    "eval",
)


DEMO_REPORTS = (
    "tenets_release/run_report.json",
    "spl_release/run_report.json",
    "spl_recorded_release/run_report.json",
    "spl_audit.json",
    "train_stamp.json",
)
DEMO_ADAPTER = "train_run/adapter_model.safetensors"


def _demo_reports(out: Path) -> dict[str, Any]:
    return {rel: json.loads((out / rel).read_text()) for rel in DEMO_REPORTS if (out / rel).is_file()}


def _demo_files(out: Path) -> dict[str, bytes]:
    files = {}
    for rel in DEMO_KEPT:
        path = out / rel
        for p in sorted([path] if path.is_file() else path.rglob("*")):
            if p.is_file():
                files[p.relative_to(out).as_posix()] = p.read_bytes()
    return files


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> DemoRun:
    """The demo, run once per session on the embedded model and then rerun (shared by every demo test)."""
    import contextlib
    import io

    from spl_hf.demo import run_demo

    out = tmp_path_factory.mktemp("demo") / "demo"
    runs = []
    for _ in range(2):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = run_demo(str(out))
        adapter = out / DEMO_ADAPTER
        trained = adapter.stat().st_mtime_ns if adapter.is_file() else 0
        runs.append((code, buf.getvalue(), _demo_files(out), _demo_reports(out), trained))
    (code, output, before, reports, trained), (rerun_code, rerun_output, after, reports_again, again) = runs
    return DemoRun(
        out, code, output, rerun_code, rerun_output, before, after, reports, reports_again, trained, again
    )
