"""Shared fixtures: the default schema and rule base, pair tables, and a built SPL folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pytest

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

# Tiny random Llama models with the embedded model's tokenizer, for the LM-backend tests.
pytest_plugins = ("tests.backends_fixtures",)


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


class DemoRun(NamedTuple):
    out: Path
    code: int
    output: str
    rerun_code: int
    rerun_output: str
    files_before: dict[str, bytes]  # the published datasets and model outputs after the first run
    files_after: dict[str, bytes]  # the same after the rerun


DEMO_KEPT = ("spl", "tenets_release/dataset", "spl_release/dataset", "train_run/run.json", "eval")


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
        runs.append((code, buf.getvalue(), _demo_files(out)))
    (code, output, before), (rerun_code, rerun_output, after) = runs
    return DemoRun(out, code, output, rerun_code, rerun_output, before, after)
