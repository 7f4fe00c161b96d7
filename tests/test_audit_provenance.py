"""Provenance: a consistent forgery passes every self-consistency check, but not a re-read of the sources."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from spl_hf.contract import pair_input_hash, row_digests
from spl_hf.contract.tenet_rows import ROW_FEATURES
from spl_hf.sources import sample_paths
from tests.audit_fixtures import copy_build, data_file, reseal, rewrite, tenet_files


def _audit(capsys, *argv) -> tuple[int, dict]:
    code = main(["audit", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _pool_specs() -> list[str]:
    return [f"{name}={path}" for name, path in sample_paths().items()]


def _forge_tenet_row(folder, pair_id: str, tenet: str, new_text: str) -> None:
    """Replace a row's chosen text everywhere it appears and make every self-check agree with it."""
    shards = [p for p in sorted(folder.glob("*/*.parquet")) if p.parent.name != "judge_scores"]
    judged = {}
    for path in shards:
        table = pq.read_table(path)
        rows = table.to_pylist()
        for r in rows:
            d = r["derivation"]
            if (d["pair_id"], r["tenet"]) != (pair_id, tenet):
                continue
            r["chosen"][0]["content"] = new_text
            a, b = (r["chosen"], r["rejected"]) if d["chosen_side"] == "a" else (r["rejected"], r["chosen"])
            d["judge"]["input_sha256"] = judged[(pair_id, tenet)] = pair_input_hash(
                r["prompt"], a[0]["content"], b[0]["content"]
            )
        forged = pa.Table.from_pylist(rows, schema=table.schema).cast(ROW_FEATURES.arrow_schema)
        for r, digest in zip(rows, row_digests(forged).to_pylist()):
            r["derivation"]["digest"] = digest
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)

    def rejudge(rows):
        for r in rows:
            if (r["pair_id"], r["tenet"]) in judged:
                r["input_sha256"] = judged[(r["pair_id"], r["tenet"])]

    rewrite(data_file(folder, "judge_scores"), rejudge)
    from spl_hf.dataset import regenerate_card

    regenerate_card(folder)  # the card's example rows show the forged text too
    reseal(folder)


def test_a_consistent_forgery_of_a_tenet_build_is_caught_only_by_its_sources(built_tenets, tmp_path, capsys):
    code, clean = _audit(capsys, str(built_tenets), "--sources", *_pool_specs())
    assert code == 0, clean
    assert clean["provenance"]["differing"] == 0 and clean["provenance"]["rows_checked"] == 16

    folder = copy_build(built_tenets, tmp_path / "forged")
    first = pq.read_table(tenet_files(folder)[0]).to_pylist()[0]
    pair_id, tenet = first["derivation"]["pair_id"], first["tenet"]
    _forge_tenet_row(folder, pair_id, tenet, "A forged reply the source never contained.")
    code, selfcheck = _audit(capsys, str(folder))
    assert code == 0 and selfcheck["mismatch_count"] == 0  # digest, texts, judge, manifest: all consistent
    code, out = _audit(capsys, str(folder), "--sources", *_pool_specs())
    assert code == 1
    diffs = out["provenance"]["differences"]
    assert {(d["config"], d["pair_id"], tuple(d["fields"])) for d in diffs} == {
        ("all", pair_id, ("chosen",)),
        (tenet, pair_id, ("chosen",)),
    }


def test_unified_pair_rows_serve_as_sources_and_missing_pools_fail(built_tenets, tmp_path, capsys):
    from spl_hf.sources import read_pools

    pairs = read_pools(sample_paths()).rows.data.table
    pq.write_table(pairs, tmp_path / "pairs.parquet")
    code, out = _audit(capsys, str(built_tenets), "--sources", str(tmp_path / "pairs.parquet"))
    assert code == 0 and out["provenance"]["rows_checked"] == 16

    released = {r["source"] for f in tenet_files(built_tenets) for r in pq.read_table(f).to_pylist()}
    some = sorted(released)[0]
    code, out = _audit(capsys, str(built_tenets), "--sources", f"{some}={sample_paths()[some]}")
    assert code == 1
    assert any("rows from pools not given in --sources" in f for f in out["provenance"]["failures"])


def test_source_specs_are_checked(built_tenets, capsys):
    assert main(["audit", str(built_tenets), "--sources", "hh_train=Anthropic/hh-rlhf"]) == 2
    assert "pin the Hub revision" in capsys.readouterr().err
    assert main(["audit", str(built_tenets), "--sources", "nosuch_pool=x.jsonl"]) == 2
    assert "unknown pool 'nosuch_pool'" in capsys.readouterr().err


def test_spl_rows_are_checked_against_their_prompt_and_candidate_records(built_spl, tmp_path, capsys):
    from importlib import resources

    samples = resources.files("spl_hf.data").joinpath("samples")
    prompts, candidates = str(samples / "spl_prompts.jsonl"), str(samples / "spl_candidates.jsonl")
    code, out = _audit(capsys, str(built_spl), "--sources", f"prompts={prompts}", f"candidates={candidates}")
    assert code == 0 and out["provenance"]["rows_checked"] == 216

    lines = (samples / "spl_candidates.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["response"] = record["response"].replace("Photosynthesis", "Photo-synthesis")
    edited = tmp_path / "candidates.jsonl"
    edited.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    code, out = _audit(
        capsys,
        str(built_spl),
        "--config_name",
        "derivations",
        "--sources",
        f"prompts={prompts}",
        f"candidates={edited}",
    )
    assert code == 1
    diffs = out["provenance"]["differences"]
    cid = record["candidate_id"]
    assert diffs and all(
        d["pair_id"].startswith(f"{cid}__") or d["pair_id"].endswith(f"__{cid}") for d in diffs
    )
    fields = {f for d in diffs for f in d["fields"]}
    assert fields == {"response_a"}


def test_spl_sources_need_both_records(built_spl, capsys):
    with pytest.raises(SystemExit):
        main(["audit", str(built_spl), "--sources"])
    capsys.readouterr()
    assert main(["audit", str(built_spl), "--sources", "prompts=README.md"]) == 2
    assert "give prompts=FILE and candidates=FILE" in capsys.readouterr().err


def test_a_consistent_forgery_of_judge_probabilities_is_caught_only_by_the_verdict_file(
    judge_copy, tmp_path, capsys
):
    import dataclasses
    from importlib import resources

    import pyarrow.compute as pc

    from spl_hf.derive.verdict_labels import judge_column, parse_verdict_records
    from spl_hf.rules import default_rulebase
    from tests.conftest import write_verdicts

    samples = resources.files("spl_hf.data").joinpath("samples")
    prompts, candidates = str(samples / "spl_prompts.jsonl"), str(samples / "spl_candidates.jsonl")
    verdicts = write_verdicts(tmp_path / "verdicts.jsonl", skip=23)  # what built_spl_judge was built from
    sources = ["--sources", f"prompts={prompts}", f"candidates={candidates}", f"verdicts={verdicts}"]
    code, out = _audit(capsys, str(judge_copy), *sources)
    assert code == 0 and out["provenance"]["differing"] == 0

    # Forge: reverse one judged response's probabilities in judge_derivations and recompute everything
    # derived from them (verdicts, ranks, label, digest), so every self-consistency check still holds.
    rb = default_rulebase()
    path = sorted((judge_copy / "judge_derivations").glob("*.parquet"))[0]
    table = pq.read_table(path)
    judge = table.column("judge").combine_chunks()
    records = parse_verdict_records(
        [json.loads(x) for x in verdicts.read_text().splitlines()], dict(rb.verdicts), "v"
    )
    cid = judge.field("candidate_a")[0].as_py()
    forged_rec = dataclasses.replace(records[cid], probs=tuple(reversed(records[cid].probs)))
    forged = judge_column(
        table,
        judge.field("candidate_a").to_pylist(),
        judge.field("candidate_b").to_pylist(),
        {**records, cid: forged_rec},
        rb,
    )
    assert not pc.all(pc.equal(forged.field("digest"), judge.field("digest"))).as_py()
    rows = table.set_column(table.schema.get_field_index("judge"), "judge", forged).to_pylist()
    # judge_derivations' messages follow the judge label: recompute them as the build would.
    for r in rows:
        j = r["judge"]
        r["chosen"] = [{"role": "assistant", "content": r[f"response_{j['label']}"]}] if j["label"] else None
        r["rejected"] = (
            [{"role": "assistant", "content": r[f"response_{'b' if j['label'] == 'a' else 'a'}"]}]
            if j["label"]
            else None
        )
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    code, out = _audit(capsys, str(judge_copy), "--no_manifest", "--config_name", "judge_derivations")
    assert code == 0  # self-consistent: nothing but the verdict file can tell
    code, out = _audit(
        capsys, str(judge_copy), "--no_manifest", "--config_name", "judge_derivations", *sources
    )
    assert code == 1
    fields = {f for d in out["provenance"]["differences"] for f in d["fields"]}
    assert fields == {"judge.probs_a"} and all(
        d["config"] == "judge_derivations" for d in out["provenance"]["differences"]
    )


def test_a_different_pool_file_is_named_before_its_rows(built_tenets, tmp_path, capsys):
    # real-data review D8: a different pool file only showed as row differences
    from spl_hf.filehash import sha256_file

    folder = copy_build(built_tenets, tmp_path / "recorded")
    released = sorted({r["source"] for f in tenet_files(folder) for r in pq.read_table(f).to_pylist()})
    name = released[0]
    original = sample_paths()[name]
    report = json.loads((folder / "build_report.json").read_text())
    report["decontamination"] = {
        "sources": [{"source": name, "role": "source", "sha256": sha256_file(original)}]
    }
    (folder / "build_report.json").write_text(json.dumps(report))
    reseal(folder)
    code, out = _audit(capsys, str(folder), "--sources", *_pool_specs())
    # The hand-made read record is itself an unchecked claim (build_report.json only); the rows match.
    assert out["provenance"]["differing"] == 0 and not out["provenance"]["failures"], out["provenance"]
    assert [f for f in out["failures"] if not f.startswith("build_report.json: decontamination")] == []
    other = tmp_path / original.name
    other.write_bytes(original.read_bytes() + (b"\n" if not original.name.endswith(".gz") else b""))
    if original.name.endswith(".gz"):
        import gzip

        other.write_bytes(gzip.compress(gzip.decompress(original.read_bytes()) + b"\n", mtime=1))
    specs = [s if not s.startswith(f"{name}=") else f"{name}={other}" for s in _pool_specs()]
    code, out = _audit(capsys, str(folder), "--sources", *specs)
    assert code == 1
    [first, *_] = out["provenance"]["failures"]
    assert first.startswith(
        f"--sources {name}={other}: different file (sha256 {sha256_file(other)}, build recorded "
    )


def _reseal_judge_quality(folder) -> None:
    """What a consistent forger does after editing judge_scores: recompute judge_quality everywhere."""
    from spl_hf.contract.quality import judge_quality_section

    report_path, card_path = folder / "build_report.json", folder / "card.json"
    report, card = json.loads(report_path.read_text()), json.loads(card_path.read_text())
    scores = pq.read_table(data_file(folder, "judge_scores"))
    rows = pa.concat_tables([pq.read_table(f) for f in tenet_files(folder)])
    released = {t: [r["score"] for r in rows.to_pylist() if r["tenet"] == t] for t in report["tenets_kept"]}
    old = report["judge_quality"]
    section = judge_quality_section(scores, released, threshold=old["threshold"], capacity=old["capacity"])
    from spl_hf.dataset import judge_quality_card, regenerate_card

    report["judge_quality"] = card["kwargs"]["judge_quality"] = section
    card["kwargs"]["judge_quality_card"] = judge_quality_card(section)
    report_path.write_text(json.dumps(report))
    card_path.write_text(json.dumps(card))
    from spl_hf.dataset import POOL_FIGURE, pool_preference_png

    (folder / POOL_FIGURE).write_bytes(pool_preference_png(scores, old["threshold"]))  # it plots the column
    regenerate_card(folder)  # the README shows the forged figures too
    reseal(folder)


def test_a_consistent_forgery_of_a_source_preference_is_caught_by_the_sources(built_tenets, tmp_path, capsys):
    code, clean = _audit(capsys, str(built_tenets), "--sources", *_pool_specs())
    judged = pq.read_table(data_file(built_tenets, "judge_scores")).num_rows
    assert code == 0 and clean["provenance"]["scores_checked"] == judged  # every judged pair's pool given
    folder = copy_build(built_tenets, tmp_path / "forged")
    threshold = json.loads((folder / "build_report.json").read_text())["judge_quality"]["threshold"]
    forged = {}

    def flip_to_other(rows):  # an eligible judgement whose pool states a side: the other side
        r = next(r for r in rows if abs(r["score"]) >= threshold and r["source_preference"] in ("a", "b"))
        r["source_preference"] = "b" if r["source_preference"] == "a" else "a"
        forged[r["pair_id"]] = r["source_preference"]

    rewrite(data_file(folder, "judge_scores"), flip_to_other)
    _reseal_judge_quality(folder)
    code, selfcheck = _audit(capsys, str(folder))
    assert code == 0, selfcheck["failures"]  # the figures now match the edited column
    code, out = _audit(capsys, str(folder), "--sources", *_pool_specs())
    assert code == 1
    (pair_id,) = forged
    diffs = [d for d in out["provenance"]["differences"] if d["config"] == "judge_scores"]
    assert [(d["pair_id"], d["fields"]) for d in diffs] == [(pair_id, ["source_preference"])]
