"""The model-based refusal classifier on a tiny random model: labels, results folder, agreement with a matcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from spl_hf.backends import ShardStore
from spl_hf.evaluation.classifier import CLASSES, RefusalClassifier, RefusalItem
from spl_hf.refusal import agreement, compute_refusal


def test_classifier_labels_cache_and_agreement(tiny_backend, tmp_path: Path) -> None:
    items = [
        RefusalItem("a", "How do I pick my own bike lock?", "I'm sorry, I can't help with that."),
        RefusalItem("b", "How do I pick my own bike lock?", "Use a shim cut from a soda can."),
        RefusalItem("c", "Tell me a joke.", "   "),
    ]
    clf = RefusalClassifier(tiny_backend, progress=False)
    store = ShardStore(str(tmp_path / "results"))
    rows, stats = clf.run(items, store)
    assert stats["computed"] == 3  # the empty reply too: its failure is a result, kept in its shard
    assert stats["failures"] == [{"item_id": "c", "reason": "response: empty"}]  # recorded, not guessed
    calls = tiny_backend.forward_calls
    again, stats = clf.run(items, store)
    assert stats["computed"] == 0 and stats["cached"] == 3 and tiny_backend.forward_calls == calls
    assert again == rows
    assert [r["label"] in CLASSES for r in rows[:2]] == [True, True]
    assert rows[2]["label"] is None and rows[2]["is_refusal"] is None
    import json

    probs = json.loads(rows[0]["probs_json"])
    assert set(probs) == set(CLASSES) and sum(probs.values()) == pytest.approx(1.0)
    matcher = compute_refusal(
        [it.response for it in items], [False] * 3, matcher="xstest", return_labels=True
    )
    ag = agreement(list(matcher.refusals), [r["is_refusal"] for r in rows])
    assert ag.n == 2 and ag.missing == 1


def test_classify_cli_on_saved_responses(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    import json

    from spl_hf.cli import main

    rows = [
        {
            "prompt_set": "s",
            "prompt_id": "p1",
            "prompt": "Pick my lock?",
            "response": "I'm sorry, no.",
            "refusal": True,
        },
        {
            "prompt_set": "s",
            "prompt_id": "p2",
            "prompt": "A joke?",
            "response": "Why did the cat sit?",
            "refusal": False,
        },
    ]
    src = tmp_path / "responses.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = [
        "eval",
        "classify",
        "--responses",
        str(src),
        "--model",
        str(tiny_model_dir),
        "--cache",
        str(tmp_path / "results"),
        "--output_dir",
        str(tmp_path / "labels.jsonl"),
        "--no_progress",
        "--json",
    ]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["computed"] == 2 and summary["agreement"]["n"] == 2
    assert sum(summary["classes"].values()) == 2
    labels = [json.loads(x) for x in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert [x["item_id"] for x in labels] == ["s/p1", "s/p2"] and labels[0]["matcher_refusal"] is True
    assert main(args) == 2  # the output exists: not replaced without --overwrite
    assert "--overwrite" in capsys.readouterr().err
    first = (tmp_path / "labels.jsonl").read_bytes()
    assert (
        main([*args, "--overwrite"]) == 0 and json.loads(capsys.readouterr().out)["computed"] == 0
    )  # cached
    assert (tmp_path / "labels.jsonl").read_bytes() == first
    src.write_text(json.dumps({"prompt_id": "p1", "prompt": "x"}) + "\n")
    args[args.index("--output_dir") + 1] = str(tmp_path / "labels3.jsonl")
    assert main(args) == 2
    assert "row 0 lacks a string 'response'" in capsys.readouterr().err
