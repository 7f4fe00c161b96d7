"""The audit rechecks a build's decontamination record: a removed prompt must not be released."""

from __future__ import annotations

import json

import pyarrow as pa

from spl_hf.audit.decontam import check_decontamination
from spl_hf.audit.load import LoadedSplit


def _record(folder, removed):
    (folder / "decontamination.json").write_text(
        json.dumps(
            {
                "summary": {},
                "removed": [
                    {
                        "prompt_id": p,
                        "heldout": "or_bench_hard_1k",
                        "heldout_prompt_id": "h",
                        "match": "exact",
                        "overlap": 1.0,
                    }
                    for p in removed
                ],
            }
        )
    )


def test_a_released_removed_prompt_is_a_failure(tmp_path):
    spl = LoadedSplit("derivations", "xstest", pa.table({"prompt_id": ["a", "b", "c"]}))
    tenet = LoadedSplit(
        "all", "train", pa.table({"derivation": pa.array([{"prompt_id": "z"}, {"prompt_id": "b"}])})
    )
    assert check_decontamination(tmp_path, [spl, tenet]) == []  # no record: nothing to recheck
    _record(tmp_path, ["x", "y"])
    assert check_decontamination(tmp_path, [spl, tenet]) == []
    _record(tmp_path, ["b"])
    failures = check_decontamination(tmp_path, [spl, tenet])
    assert (
        len(failures) == 2
        and failures[0].startswith("derivations/xstest: rows [1]")
        and "all/train: rows [1]" in failures[1]
    )
    (tmp_path / "decontamination.json").write_text("{not json")
    assert "not a decontamination record" in check_decontamination(tmp_path, [spl])[0]


def test_held_and_many_file_splits_are_checked_chunk_by_chunk(tmp_path):
    """Judge scores hold their ids as dictionaries, and a many-file split comes in chunks: a removed
    prompt is found at its row across chunks, through the dictionary, and a null id is no hit."""
    _record(tmp_path, ["b"])
    held = pa.chunked_array(
        [pa.array(["a", None, "c"]).dictionary_encode(), pa.array(["c", "b", "b"]).dictionary_encode()]
    )
    scores = LoadedSplit("judge_scores", "train", pa.table({"prompt_id": held}))
    kind = pa.struct([("prompt_id", pa.string())])
    chunks = [
        pa.table({"derivation": pa.array([{"prompt_id": p} for p in ids], kind)})
        for ids in (["a"], [], ["z", "b"])
    ]
    rows = LoadedSplit("all", "train", pa.concat_tables(chunks))
    assert check_decontamination(tmp_path, [scores, rows]) == [
        "judge_scores/train: rows [4, 5] carry prompts that decontamination.json records as removed "
        "(held-out evaluation prompts)",
        "all/train: rows [2] carry prompts that decontamination.json records as removed "
        "(held-out evaluation prompts)",
    ]
    _record(tmp_path, ["q"])
    assert check_decontamination(tmp_path, [scores, rows]) == []
