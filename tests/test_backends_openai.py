"""The openai backend against a local HTTP server this test controls (faults injected on purpose).

The served-model agreement with the in-process backend is tested against a real ``vllm serve`` in
tests/test_backends_vllm.py (``make test-vllm``); here the server only scripts replies and faults.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from spl_hf.backends import ShardStore, judge_items, judge_outcome, run_worker
from spl_hf.backends.judge import JudgeConfig, PairwiseJudge, parse_pairs
from spl_hf.backends.openai_api import OpenAIBackend
from spl_hf.backends.served import ServerError, retry_after
from spl_hf.cli import main as cli_main
from spl_hf.tenets import select_tenets
from tests.backends_rows import pair_row, write_jsonl

SECRET = "sk-test-never-written-anywhere"
TOP = {"A": math.log(0.6), "B": math.log(0.25), "The": math.log(0.1)}


class Scripted(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script: list[tuple] = []  # faults to play, one per POST, before answering normally
        self.requests: list[dict[str, Any]] = []
        self.top = dict(TOP)
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: Scripted

    def log_message(self, *a: Any) -> None:  # keep pytest output clean
        pass

    def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200, json.dumps({"data": [{"id": "tiny-served", "object": "model"}]}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body, "t": time.time()}
            )
            action = self.server.script.pop(0) if self.server.script else ("ok",)
        if action[0] == "status":
            self._send(action[1], b'{"error": "scripted"}', action[2] if len(action) > 2 else None)
        elif action[0] == "sleep":
            time.sleep(action[1])
            self._send(200, self._answer(body))
        elif action[0] == "truncated":
            self._send(200, self._answer(body)[:40])
        else:
            self._send(200, self._answer(body))

    def _answer(self, body: dict[str, Any]) -> bytes:
        top = self.server.top
        if self.path.endswith("/chat/completions"):
            if body["max_tokens"] > 1:
                choice = {"index": 0, "message": {"content": "generated"}, "finish_reason": "length"}
                return json.dumps(
                    {"model": "tiny-served", "choices": [choice], "usage": {"completion_tokens": 3}}
                ).encode()
            entries = [{"token": t, "logprob": lp} for t, lp in top.items()]
            content = [{"token": "A", "logprob": top.get("A", -9.0), "top_logprobs": entries}]
            choice = {"index": 0, "message": {"content": "A"}, "logprobs": {"content": content}}
            return json.dumps({"model": "tiny-served", "choices": [choice]}).encode()
        choices = [
            {"index": i, "text": "A", "logprobs": {"tokens": ["A"], "top_logprobs": [top]}}
            for i in range(len(body["prompt"]))
        ]
        return json.dumps({"model": "tiny-served", "choices": choices}).encode()


@pytest.fixture
def server() -> Iterator[Scripted]:
    srv = Scripted()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _backend(server: Scripted, **kw: Any) -> OpenAIBackend:
    backend = OpenAIBackend("tiny-served", base_url=server.url, **kw)
    backend.client.backoff = 0.01  # fault tests should not sleep through real backoff
    return backend


def test_faults_are_retried_and_retry_after_is_honoured(server: Scripted) -> None:
    server.script = [("status", 429, {"Retry-After": "1"}), ("status", 503), ("truncated",), ("sleep", 1.5)]
    backend = _backend(server, request_timeout=0.5, concurrency=1)
    got = backend.next_token_scores_full(f"{chr(1)}user{chr(2)}Which?", ("A", "B"))
    assert got.probs == pytest.approx((0.6, 0.25)) and got.unobserved == ()
    assert backend.client.retried == 4 and len(server.requests) == 5
    first, second = server.requests[0]["t"], server.requests[1]["t"]
    assert second - first >= 1.0  # the 429's Retry-After, not the 0.01 s backoff
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0 and retry_after("x") is None


def test_a_server_that_keeps_failing_stops_the_run_and_a_client_error_is_not_retried(
    server: Scripted,
) -> None:
    backend = _backend(server, retries=2)
    server.script = [("status", 500)] * 3
    with pytest.raises(
        ServerError, match=r"127\.0\.0\.1:\d+ chat/completions: still failing after 2 retries \(HTTP 500\)"
    ):
        backend.next_token_scores_full(f"{chr(1)}user{chr(2)}Q", ("A", "B"))
    server.script = [("status", 400)]
    before = len(server.requests)
    with pytest.raises(ServerError, match="HTTP 400"):
        backend.next_token_scores_full(f"{chr(1)}user{chr(2)}Q", ("A", "B"))
    assert len(server.requests) == before + 1


def test_a_label_missing_from_the_top_k_is_not_judged_never_guessed(server: Scripted, tmp_path: Path) -> None:
    server.top = {"A": math.log(0.6), "The": math.log(0.1)}  # "B" is not among the returned top-k
    backend = _backend(server)
    judge = PairwiseJudge(backend, JudgeConfig(progress=False))
    pairs, _ = parse_pairs([pair_row(i) for i in range(2)])
    tenets = select_tenets("no_preachy_tone,upfront_concerns")
    result = run_worker(
        judge, judge_items(pairs, tenets), ShardStore(str(tmp_path / "r")), {}, progress=False
    )
    rows, refused, not_judged = judge_outcome(result, tenets)
    assert result.computed == 4 and rows == [] and refused == [] and not_judged.total == 4
    assert not_judged.by_tenet == {"no_preachy_tone": 2, "upfront_concerns": 2}
    assert all("top log-probabilities" in f.reason for f in not_judged.failures)
    # Chat endpoint: the server rendered the template from the messages it was sent.
    sent = server.requests[0]["body"]
    assert sent["messages"][0]["role"] == "user" and "[Response A]" in sent["messages"][0]["content"]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 20 and sent["temperature"] == 0.0


def test_the_key_is_sent_as_a_header_and_never_written(
    server: Scripted, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [pair_row(i) for i in range(2)])
    out = tmp_path / "scores.parquet"
    argv = ["judge", "--pairs", str(pairs), "--tenets", "no_preachy_tone", "--backend", "openai"]
    argv += ["--base_url", server.url, "--model", "tiny-served", "--cache", str(tmp_path / "c.db")]
    argv += ["--output_dir", str(out), "--json", "--no_progress"]
    assert cli_main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 2 and summary["model_id"] == "tiny-served"
    assert {r["auth"] for r in server.requests} == {f"Bearer {SECRET}"}
    rows = pq.read_table(out).to_pylist()
    assert {r["model_id"] for r in rows} == {"tiny-served"}
    assert {r["model_revision"] for r in rows} == {f"served:127.0.0.1:{server.server_address[1]}/tiny-served"}
    assert all(r["score"] == 0.0 for r in rows)  # same top-k both orderings: first-slot preference cancels
    shards = [f.read_bytes() for f in (tmp_path / "c.db").rglob("*") if f.is_file()]
    assert shards  # the results folder's shards are checked too
    written = [out.read_bytes(), *shards, json.dumps(summary).encode()]
    assert not any(SECRET.encode() in blob for blob in written)


def test_a_client_side_tokenizer_sends_many_token_id_prompts_per_request(
    server: Scripted, tiny_model_dir
) -> None:
    backend = _backend(server, tokenizer=str(tiny_model_dir), concurrency=2)
    assert backend.engine["endpoint"] == "completions"
    judge = PairwiseJudge(backend, JudgeConfig(progress=False))
    pairs, _ = parse_pairs([pair_row(1)])
    tenets = select_tenets("no_preachy_tone,upfront_concerns,harm_reduction_guidance")
    (res,) = judge.judge_pairs([(pairs[0], tenets)])
    assert len(server.requests) == 1  # 2 orderings x 3 tenets in one request
    prompts = server.requests[0]["body"]["prompt"]
    jobs = judge._jobs(pairs[0], tenets)
    assert prompts == [backend.encode(p + q) for p, qs, _ in jobs for q in qs]
    assert all(r.p_a_first == pytest.approx(0.6 / 0.85) for r in res)
    gen = _backend(server).generate(f"{chr(1)}user{chr(2)}Write", max_new_tokens=5)
    assert (gen.text, gen.n_tokens, gen.hit_limit) == ("generated", 3, True)
