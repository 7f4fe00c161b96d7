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
