import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from datasets import get_dataset_config_names, load_dataset

from spl_hf.audit.tenets.rows import audit_tenet_build
from spl_hf.build.tenets import TenetBuildConfig, build_tenets
from spl_hf.cli import main
from tests.audit_fixtures import TENETS, tenet_inputs


def _inputs(tmp_path, seed=0):
    """The shipped sample pools plus judge scores made up per (pair, tenet) (no model), and those rows."""
    pairs, scores = tenet_inputs(tmp_path, seed)
    return pairs, scores, pq.read_table(scores).to_pylist()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tenets")
    pairs, scores, rows = _inputs(tmp)
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp / "ds")
    )
    return build_tenets(cfg), rows


def test_build_keeps_saturated_tenets_with_disjoint_prompts(built):
    result, rows = built
    assert result.certificate_ok
    all_rows = load_dataset(str(result.path), split="train")
    assert all_rows.num_rows == 2 * len(result.tenets_kept) == result.rows
    assert len(set(all_rows["scenario_id"])) == all_rows.num_rows
    prompt_ids = [d["prompt_id"] for d in all_rows["derivation"]]
    assert len(set(prompt_ids)) == len(prompt_ids)  # each prompt at most once in the release
    assert all(s >= 0.3 for s in all_rows["score"])
    by_key = {(r["pair_id"], r["tenet"]): r for r in rows}
    for r in all_rows:
        judged = by_key[(r["derivation"]["pair_id"], r["tenet"])]
        assert r["score"] == pytest.approx(abs(judged["score"]))
        assert r["derivation"]["chosen_side"] == ("a" if judged["score"] > 0 else "b")
        assert r["scenario_id"] == f"{r['tenet']}_{r['source']}_{r['derivation']['row_id']}"
        assert r["chosen"][0]["role"] == "assistant" and r["chosen"] != r["rejected"]


def test_folder_has_per_tenet_configs_scores_and_card(built):
    result, _ = built
    names = get_dataset_config_names(str(result.path))
    assert names[0] == "all" and names[-1] == "judge_scores"
    assert set(names[1:-1]) == set(result.tenets_kept)
    one = load_dataset(str(result.path), result.tenets_kept[0])
    assert sum(ds.num_rows for ds in one.values()) == 2
    assert set(one) <= set(result.rows_per_source)
    card = (result.path / "README.md").read_text()
    assert "capacity 2 per tenet" in card and "test-judge" in card
    report = json.loads((result.path / "build_report.json").read_text())
    assert report["kind"] == "tenets" and report["certificate_ok"] is True


def test_audit_reproduces_and_catches_edits(built, tmp_path):
    import shutil

    result, _ = built
    report = audit_tenet_build(str(result.path))
    judged = 12 * len(TENETS)
    assert report.ok and report.rows == report.reproduced == 2 * result.rows + judged
    edited = tmp_path / "edited"
    shutil.copytree(result.path, edited)
    # `all` lists the per-tenet files in order: row 0 of the first two files are `all` rows 0 and n0.
    first, second = _all_files(edited)[:2]
    n0 = pq.read_metadata(first).num_rows

    def flip_judge(data):
        data[0]["derivation"]["judge"]["p_a_first"] = 1 - data[0]["derivation"]["judge"]["p_a_first"]

    def swap(data):
        data[0]["chosen"], data[0]["rejected"] = data[0]["rejected"], data[0]["chosen"]

    _rewrite(first, flip_judge)
    _rewrite(second, swap)
    bad = audit_tenet_build(str(edited))
    fields = {(m["config"], m["row"]): m["fields"] for m in bad.mismatches if m["config"] == "all"}
    assert "judge" in fields[("all", 0)] and "digest" in fields[("all", 0)]
    assert fields[("all", n0)] == ["digest", "texts"]
    assert bad.mismatch_count == 4  # each edited row, once in `all` and once in its tenet config


def test_audit_catches_a_tampered_certificate(built, tmp_path):
    import shutil

    result, _ = built
    edited = tmp_path / "cert"
    shutil.copytree(result.path, edited)
    cert_path = edited / "assignment_certificate.json"
    cert = json.loads(cert_path.read_text())
    cert["objective"] = cert["objective"] + 0.5
    cert_path.write_text(json.dumps(cert))
    assert main(["audit", str(edited), "--json"]) == 1


def test_cli_build_and_audit(tmp_path, capsys):
    pairs, scores, _ = _inputs(tmp_path, seed=1)
    out = tmp_path / "cli"
    assert (
        main(
            [
                "tenets",
                "build",
                "--pairs",
                str(pairs),
                "--scores",
                str(scores),
                "--capacity",
                "2",
                "--threshold",
                "0.3",
                "--output_dir",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["certificate_ok"] is True
    assert main(["audit", str(out), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert audit["kind"] == "tenets" and audit["mismatch_count"] == 0 and audit["certificate_ok"]


def test_scores_that_do_not_match_their_probabilities_are_rejected(tmp_path):
    pairs, scores, rows = _inputs(tmp_path)
    rows[3]["score"] += 0.1
    pq.write_table(pa.Table.from_pylist(rows), scores)
    with pytest.raises(ValueError, match=r"rows \[3\] have a score that is not p_a_first - p_a_second"):
        build_tenets(
            TenetBuildConfig(pairs=str(pairs), scores=str(scores), capacity=2, output_dir=str(tmp_path / "x"))
        )


def test_build_is_byte_identical(tmp_path):
    pairs, scores, _ = _inputs(tmp_path)
    a = build_tenets(
        TenetBuildConfig(
            pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp_path / "a")
        )
    )
    b = build_tenets(
        TenetBuildConfig(
            pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp_path / "b")
        )
    )
    files = sorted(p.relative_to(a.path) for p in a.path.rglob("*") if p.is_file())
    for rel in files:
        assert (a.path / rel).read_bytes() == (b.path / rel).read_bytes(), rel


def _copy(result, tmp_path, name):
    import shutil

    dest = tmp_path / name
    shutil.copytree(result.path, dest)
    return dest


def _rewrite(path, edit):
    table = pq.read_table(path)
    rows = table.to_pylist()
    edit(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def test_audit_catches_edited_unassigned_judge_scores(built, tmp_path):
    result, _ = built
    edited = _copy(result, tmp_path, "scores")

    def scale(rows):
        for r in rows:
            r["score"] *= 0.999

    _rewrite(edited / "judge_scores" / "train-00000-of-00001.parquet", scale)
    report = audit_tenet_build(str(edited))
    assert not report.ok and not report.certificate_ok
    assert {m["config"] for m in report.mismatches} == {"judge_scores"}


def test_audit_catches_swapped_texts_even_with_a_recomputed_digest(built, tmp_path):
    from spl_hf.build.tenets import ROW_FEATURES, row_digests

    result, _ = built
    edited = _copy(result, tmp_path, "swap")
    path = _all_files(edited)[0]
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["chosen"], rows[0]["rejected"] = rows[0]["rejected"], rows[0]["chosen"]
    forged = pa.Table.from_pylist(rows, schema=table.schema).cast(ROW_FEATURES.arrow_schema)
    for i, d in enumerate(row_digests(forged).to_pylist()):
        rows[i]["derivation"]["digest"] = d
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    report = audit_tenet_build(str(edited))
    assert [(m["config"], m["row"], m["fields"]) for m in report.mismatches] == [
        ("all", 0, ["texts"]),
        (path.parent.name, 0, ["texts"]),
    ]


def test_audit_requires_per_tenet_configs_to_partition_all(built, tmp_path):
    import yaml

    result, _ = built
    edited = _copy(result, tmp_path, "dup")
    # A card whose `all` leaves out one per-tenet file no longer covers every row.
    readme = edited / "README.md"
    _, front, body = readme.read_text().split("---", 2)
    meta = yaml.safe_load(front)
    entry = next(c for c in meta["configs"] if c["config_name"] == "all")
    entry["data_files"][0]["path"] = entry["data_files"][0]["path"][:-1]
    readme.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---" + body)
    report = audit_tenet_build(str(edited))
    assert not report.certificate_ok
    assert any("must partition 'all'" in f for f in report.certificate_failures)


def test_a_repeated_row_fails_the_certificate(built, tmp_path):
    result, _ = built
    edited = _copy(result, tmp_path, "dup")
    shard = sorted((edited / result.tenets_kept[0]).glob("*.parquet"))[0]
    _rewrite(shard, lambda rows: rows.append(rows[0]))
    report = audit_tenet_build(str(edited))
    assert not report.certificate_ok and report.certificate_failures


def _all_files(folder):
    """The data files of `all`'s train split, in the order the card lists them."""
    import yaml

    meta = yaml.safe_load((folder / "README.md").read_text().split("---", 2)[1])
    entry = next(c for c in meta["configs"] if c["config_name"] == "all")
    (train,) = entry["data_files"]
    return [f for pattern in train["path"] for f in sorted(folder.glob(pattern + ".parquet"))]


def test_build_rejects_pairs_that_are_not_the_judged_texts(tmp_path):
    pairs, scores, _ = _inputs(tmp_path)
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp_path / "x")
    )
    table = pq.read_table(pairs)
    data = table.to_pylist()
    data[2]["response_a"] += " (edited after judging)"
    pq.write_table(pa.Table.from_pylist(data, schema=table.schema), pairs)
    with pytest.raises(ValueError, match=r"score rows \[8, 9, 10, 11\] were judged on other texts"):
        build_tenets(cfg)
    data[2]["response_a"] = table.to_pylist()[2]["response_a"]
    data[3]["prompt_id"] = "another"
    pq.write_table(pa.Table.from_pylist(data, schema=table.schema), pairs)
    with pytest.raises(ValueError, match=r"score rows \[12, 13, 14, 15\] have a prompt_id that differs"):
        build_tenets(cfg)
    data[3] = dict(data[4])
    pq.write_table(pa.Table.from_pylist(data, schema=table.schema), pairs)
    with pytest.raises(ValueError, match="pair rows repeat pair_ids"):
        build_tenets(cfg)


def test_custom_tenets_need_their_statements(tmp_path):
    pairs, scores, rows = _inputs(tmp_path)
    for r in rows:
        r["tenet"] = "my_" + r["tenet"]
    pq.write_table(pa.Table.from_pylist(rows), scores)
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp_path / "x")
    )
    with pytest.raises(ValueError, match="kept tenets without a statement"):
        build_tenets(cfg)
    tenets = tmp_path / "tenets.yaml"
    tenets.write_text("tenets:\n" + "".join(f"  my_{t}: a custom statement about {t}\n" for t in TENETS))
    result = build_tenets(TenetBuildConfig(**{**cfg.__dict__, "tenets_file": str(tenets)}))
    assert "a custom statement about" in (result.path / "README.md").read_text()


def test_build_uses_a_given_assignment_after_verifying_its_certificate(built, tmp_path):
    """`spl-hf assign` then `tenets build --assignment`: the same release as solving inside the build."""
    from spl_hf.assign import (
        AssignConfig,
        assign_tenets,
        certificate_path,
        read_table,
        write_certificate,
        write_table,
    )

    result, _ = built
    pairs, scores, _ = _inputs(tmp_path)
    solved = assign_tenets(read_table(scores), AssignConfig(capacity=2, threshold=0.3))
    given = tmp_path / "assignment.parquet"
    write_table(solved.assignment, given)
    write_certificate(solved.certificate, certificate_path(given))
    cfg = TenetBuildConfig(
        pairs=str(pairs),
        scores=str(scores),
        capacity=2,
        threshold=0.3,
        assignment=str(given),
        output_dir=str(tmp_path / "ds"),
    )
    out = build_tenets(cfg)
    assert out.certificate_ok and out.tenets_kept == result.tenets_kept and out.objective == result.objective
    files = sorted(p.relative_to(out.path) for p in out.path.rglob("*") if p.is_file())
    assert (
        len(files) > 4
        and sorted(p.relative_to(result.path) for p in result.path.rglob("*") if p.is_file()) == files
    )
    for rel in files:  # the report (and so the manifest) holds network sizes only a solve has
        if rel.name not in ("build_report.json", "MANIFEST.sha256"):
            assert (out.path / rel).read_bytes() == (result.path / rel).read_bytes(), rel

    # An assignment whose certificate does not match the scores is refused, naming the file.
    tampered = solved.assignment.set_column(3, "score", pa.array([0.99] * solved.assignment.num_rows))
    bad = tmp_path / "bad.parquet"
    write_table(tampered, bad)
    write_certificate(solved.certificate, certificate_path(bad))
    with pytest.raises(ValueError, match="bad.parquet: the certificate does not verify"):
        build_tenets(
            TenetBuildConfig(
                pairs=str(pairs),
                scores=str(scores),
                capacity=2,
                threshold=0.3,
                assignment=str(bad),
                output_dir=str(tmp_path / "ds2"),
            )
        )
    # Settings of the build that disagree with those of the given assignment are named.
    with pytest.raises(
        ValueError, match="assignment.parquet: solved with capacity=2, the build is set to capacity=3"
    ):
        build_tenets(
            TenetBuildConfig(
                pairs=str(pairs),
                scores=str(scores),
                capacity=3,
                threshold=0.3,
                assignment=str(given),
                output_dir=str(tmp_path / "ds3"),
            )
        )
    with pytest.raises(FileNotFoundError):
        build_tenets(
            TenetBuildConfig(
                pairs=str(pairs),
                scores=str(scores),
                capacity=2,
                threshold=0.3,
                assignment=str(tmp_path / "none.parquet"),
                output_dir=str(tmp_path / "ds4"),
            )
        )


def test_strategy_is_a_build_setting_recorded_in_certificate_and_card(tmp_path):
    pairs, scores, _ = _inputs(tmp_path)
    cfg = TenetBuildConfig(
        pairs=str(pairs),
        scores=str(scores),
        capacity=2,
        threshold=0.3,
        strategy="prefilter+one-at-a-time",
        output_dir=str(tmp_path / "ds"),
    )
    out = build_tenets(cfg)
    cert = json.loads((out.path / "assignment_certificate.json").read_text())
    assert cert["strategy"] == "prefilter+one-at-a-time"
    assert "prefilter+one-at-a-time" in (out.path / "README.md").read_text()
    assert TenetBuildConfig(pairs="p", scores="s").strategy == "prefilter+bounded"
    with pytest.raises(ValueError, match="strategy must be one of"):
        build_tenets(
            TenetBuildConfig(
                pairs=str(pairs),
                scores=str(scores),
                capacity=2,
                threshold=0.3,
                strategy="greedy",
                output_dir=str(tmp_path / "ds2"),
            )
        )


def test_sft_messages_are_prompt_then_chosen_for_sliced_lists():
    """The sft config joins prompt and chosen column-wise; it must be the per-row list concatenation."""
    from spl_hf.build.sft import SFT_FEATURES, concat_lists

    kind = SFT_FEATURES.arrow_schema.field("messages").type
    prompts = [[{"role": "user", "content": f"q{i}"}] * (i % 3) for i in range(7)]
    chosen = [[{"role": "assistant", "content": f"a{i}"}] * (i % 2 + 1) for i in range(7)]
    for start, length in ((0, 7), (2, 4), (5, 0), (6, 1)):
        got = concat_lists(
            pa.array(prompts, kind).slice(start, length), pa.array(chosen, kind).slice(start, length)
        )
        assert got.type == kind
        assert got.to_pylist() == [
            p + c for p, c in zip(prompts[start : start + length], chosen[start : start + length])
        ]


# The v3 card's declared schema (constitution-v3-dpo front matter, dataset_info.features).
V3_FEATURES = [
    {"name": "tenet", "dtype": "large_string"},
    {"name": "source", "dtype": "large_string"},
    {"name": "scenario_id", "dtype": "large_string"},
    {"name": "score", "dtype": "float64"},
    *(
        {"name": m, "list": [{"name": "role", "dtype": "string"}, {"name": "content", "dtype": "string"}]}
        for m in ("prompt", "chosen", "rejected")
    ),
]


def test_release_concatenates_with_the_v3_card_schema_without_a_cast(built):
    from datasets import Dataset, Features, concatenate_datasets

    result, _ = built
    release = load_dataset(str(result.path), "all", split="train")
    v3_features = Features._from_yaml_list(V3_FEATURES)
    msg = [{"role": "user", "content": "hi"}]
    v3 = Dataset.from_dict(
        {
            "tenet": ["t"],
            "source": ["pku_train"],
            "scenario_id": ["t_pku_train_0"],
            "score": [0.9],
            "prompt": [msg],
            "chosen": [msg],
            "rejected": [msg],
        },
        features=v3_features,
    )
    both = concatenate_datasets([release, v3])  # raises when a shared column's type differs
    assert both.num_rows == release.num_rows + 1
    assert all(both.features[k] == v3_features[k] for k in v3_features)
    assert both[-1]["scenario_id"] == "t_pku_train_0" and both[0]["tenet"] == release[0]["tenet"]


def test_build_report_and_card_carry_judge_quality_and_the_figure(built):
    result, rows = built
    report = json.loads((result.path / "build_report.json").read_text())
    jq = report["judge_quality"]
    overall = jq["overall"]
    assert overall["tenet"] == "all" and overall["position"]["judged"] == len(rows)
    assert [t["tenet"] for t in jq["tenets"]] == sorted(TENETS)
    pos = overall["position"]
    assert pos["consistent"] + pos["first_slot"] + pos["second_slot"] <= pos["judged"]
    assert overall["released"] == result.rows and overall["capacity"] == 2 * len(result.tenets_kept)
    assert overall["eligible"] == sum(abs(r["score"]) >= 0.3 for r in rows)
    assert jq["not_judged_recorded"] is False and overall["not_judged"] == 0
    # Source agreement: recomputed here from the judged rows and the pair rows' own preference.
    prefs = dict(
        zip(
            *pq.read_table(result.path.parent / "pairs.parquet", columns=["pair_id", "source_preference"])
            .to_pydict()
            .values()
        )
    )
    for agreement in overall["sources"]:
        eligible = [
            r
            for r in rows
            if r["source"] == agreement["source"]
            and abs(r["score"]) >= 0.3
            and prefs[r["pair_id"]] in ("a", "b")
        ]
        agree = sum((r["score"] > 0) == (prefs[r["pair_id"]] == "a") for r in eligible)
        assert (agreement["compared"], agreement["agree"]) == (len(eligible), agree)
    assert any(a["compared"] for a in overall["sources"])
    card_inputs = json.loads((result.path / "card.json").read_text())
    assert card_inputs["kwargs"]["judge_quality"] == jq
    card = (result.path / "README.md").read_text()
    assert "## Judge quality" in card and "![Score distribution" in card and "(judge_quality.png)" in card
    assert f"| **all** | {len(rows)} |" in card
    manifest = (result.path / "MANIFEST.sha256").read_text()
    assert "  judge_quality.png\n" in manifest
    assert (result.path / "judge_quality.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    released = load_dataset(str(result.path), "judge_scores", split="train")
    assert [prefs[p] for p in released["pair_id"]] == released["source_preference"]


def test_card_says_when_the_judge_prefers_the_first_shown_response(tmp_path):
    # The demo's judge: P("A") high in both orderings, so the first-shown response wins every time.
    pairs, scores = tenet_inputs(tmp_path)
    table = pq.read_table(scores)
    n = table.num_rows
    table = table.set_column(table.schema.get_field_index("p_a_first"), "p_a_first", pa.array([0.9] * n))
    table = table.set_column(table.schema.get_field_index("p_a_second"), "p_a_second", pa.array([0.6] * n))
    table = table.set_column(table.schema.get_field_index("score"), "score", pa.array([0.9 - 0.6] * n))
    pq.write_table(table, scores)
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.2, output_dir=str(tmp_path / "ds")
    )
    result = build_tenets(cfg)
    pos = json.loads((result.path / "build_report.json").read_text())["judge_quality"]["overall"]["position"]
    assert (pos["judged"], pos["consistent"], pos["first_slot"]) == (n, 0, n)
    card = (result.path / "README.md").read_text()
    assert f"the first-shown response was preferred in both orderings in {n} of {n} judgements" in card


def test_not_judged_counts_from_the_judge_stage_reach_the_table_and_still_audit(tmp_path):
    from spl_hf.audit import audit

    pairs, scores, rows = _inputs(tmp_path)
    tenets = sorted({r["tenet"] for r in rows})
    counts = {t: i for i, t in enumerate(tenets)}  # judgements below min_label_mass, per tenet
    (tmp_path / "not_judged.json").write_text(json.dumps(counts))
    cfg = TenetBuildConfig(
        pairs=str(pairs),
        scores=str(scores),
        capacity=2,
        threshold=0.3,
        output_dir=str(tmp_path / "ds"),
        not_judged=str(tmp_path / "not_judged.json"),
    )
    result = build_tenets(cfg)
    jq = json.loads((result.path / "build_report.json").read_text())["judge_quality"]
    assert jq["not_judged_recorded"] is True
    assert {t["tenet"]: t["not_judged"] for t in jq["tenets"]} == counts
    assert jq["overall"]["not_judged"] == sum(counts.values())
    card = (result.path / "README.md").read_text()
    assert "records no count of judgements it gave up on" not in card
    assert audit(result.path).ok


def test_a_not_judged_file_that_is_not_counts_is_refused_naming_it(tmp_path):
    pairs, scores, _ = _inputs(tmp_path)
    bad = tmp_path / "not_judged.json"
    bad.write_text('{"calibrated_caveats": -1}')
    cfg = TenetBuildConfig(
        pairs=str(pairs), scores=str(scores), capacity=2, threshold=0.3, output_dir=str(tmp_path / "ds")
    )
    cfg.not_judged = str(bad)
    with pytest.raises(ValueError, match="not_judged.json: expected a JSON object of tenet -> count"):
        build_tenets(cfg)
    assert not (tmp_path / "ds").exists()


def _count(table: pa.Table, column: str = "pair_id") -> str:
    """'pairs (distinct prompts)' of a table, as the card's stage table prints a cell."""
    return f"{len(set(table.column(column).to_pylist())):,} ({len(set(table.column('prompt_id').to_pylist())):,})"


def test_card_states_each_stage_per_source_the_shares_and_the_pools_with_harmful_prompts(built):
    result, rows = built
    card = (result.path / "README.md").read_text()
    scores = pa.Table.from_pylist(rows)
    eligible = scores.filter(pc.greater_equal(pc.abs(scores.column("score")), 0.3))
    # the total row: pairs judged and eligible (distinct prompts), and the rows released
    total = next(line for line in card.splitlines() if line.startswith("| **total** |"))
    cells = [c.strip() for c in total.strip("|").split("|")]
    assert cells[6] == _count(scores) and cells[7] == _count(eligible)
    assert cells[8] == f"{result.rows:,} ({result.rows:,})"  # one row per released prompt
    assert f"{_count(scores)} response pairs (distinct prompts) entered the build" in card
    # rows per source with their share, largest first, and the multi-turn share
    n = result.rows_per_source
    for s, k in n.items():
        assert f"| `{s}` | {k} | {100 * k / result.rows:.1f}% |" in card
    mt = n.get("wf_mt", 0) + n.get("ca_en_mt_p1", 0)
    assert f": {mt}, {100 * mt / result.rows:.1f}% of the release." in card
    # where each pool was read: without a read record the adapter's Hub location, marked as such
    assert "[microsoft/WildFeedback](https://huggingface.co/datasets/microsoft/WildFeedback/tree/" in card
    assert "no read record" in card
    warning = card.split("## Content warning and licence", 1)[1]
    assert "`pku_train`" in warning and "`hh_train`" in warning and "`ultrafeedback_train`" not in warning
    assert "--clip_chars" in card and "--clip-chars" not in card
    assert "`test-judge` (revision `sha256:0`, prompt template" in card


def test_card_names_local_files_by_sha256_with_the_read_counts_and_lists_sft(tmp_path):
    from spl_hf.dataset import regenerate_card
    from spl_hf.decontam import DecontamConfig
    from spl_hf.release.decontam_stage import public_report
    from spl_hf.sources import read_pools, sample_paths

    pairs, scores, _ = _inputs(tmp_path)
    reports = [
        public_report({**r, "role": "source"}) for r in read_pools(sample_paths()).report.to_dict()["sources"]
    ]
    summary = {
        "rows_in": 12,
        "rows_kept": 12,
        "rows_removed": 0,
        "prompts_removed": 0,
        "removed_by_source": {},
        "removed_by_heldout": {"xstest": 0},
        "removed_by_match": {},
        "near_by_score": {},
        "heldout_prompts": {"xstest": 3},
        "config": {**DecontamConfig(heldout=["xstest"]).to_dict()},
        "sources": reports,
    }
    record = tmp_path / "decontamination.json"
    record.write_text(json.dumps({"summary": summary, "removed": []}))
    cfg = TenetBuildConfig(
        pairs=str(pairs),
        scores=str(scores),
        capacity=2,
        threshold=0.3,
        output_dir=str(tmp_path / "ds"),
        decontamination=str(record),
        sft=True,
    )
    result = build_tenets(cfg)
    card = (result.path / "README.md").read_text()
    pku = next(r for r in reports if r["source"] == "pku_train")
    assert f"| `pku_train` | local file `{pku['origin']}` | – | – | sha256 `{pku['sha256']}` |" in card
    wf = next(r for r in reports if r["source"] == "wildfeedback_st")
    line = next(x for x in card.splitlines() if x.startswith("| `wildfeedback_st` | ") and "(" in x)
    read, quarantined, filtered, removed = [c.strip() for c in line.strip("|").split("|")][1:5]
    assert read == f"{wf['rows_yielded']} ({wf['distinct_prompts']})"
    assert (quarantined, filtered, removed) == (str(wf["n_quarantined"]), str(wf["n_filtered"]), "0")
    assert "no read record" not in card
    assert (
        f"| `sft` | the rows of `all` as supervised fine-tuning examples (`messages` = prompt + chosen) | {result.rows} |"
        in card
    )
    assert regenerate_card(result.path) == card  # card.json renders the same README


def test_a_build_that_keeps_no_tenet_says_why_instead_of_header_only_tables(tmp_path):
    from spl_hf.dataset import regenerate_card

    pairs, scores, _ = _inputs(tmp_path)
    cfg = TenetBuildConfig(pairs=str(pairs), scores=str(scores), capacity=100, output_dir=str(tmp_path / "x"))
    result = build_tenets(cfg)
    assert result.rows == 0 and not result.tenets_kept
    card = (result.path / "README.md").read_text()
    assert "| tenet | statement |" not in card and "| source | rows | share |" not in card
    assert "No tenet was kept" in card and "no share per source" in card
    assert regenerate_card(result.path) == card


def _joined_rows(keys, table, on):
    """The row numbers by the plain left join (the definition the lookup must match)."""
    import numpy as np

    left = keys.select(on).append_column("k", pa.array(np.arange(keys.num_rows)))
    right = table.select(on).append_column("r", pa.array(np.arange(table.num_rows)))
    return left.join(right, on, join_type="left outer").sort_by("k").column("r").to_pylist()


def test_row_numbers_match_the_join_and_its_errors():
    from spl_hf.build.rows import row_numbers
    from spl_hf.errors import SplHfError

    table = pa.table({"pair_id": ["p1", "p2", "p3", "p1", "p4"], "tenet": ["a", "a", "b", "b", "a"]})
    on = ["pair_id", "tenet"]
    for keys in (
        pa.table({"pair_id": ["p3", "p1", "p1"], "tenet": ["b", "b", "a"]}),
        pa.table({"pair_id": ["p1", "p1"], "tenet": ["a", "a"]}),  # a key asked twice
        pa.table(
            {"pair_id": ["p4", "p2", "p1", "p3", "p1"], "tenet": ["a", "a", "a", "b", "b"]}
        ),  # more keys
    ):
        assert row_numbers(keys, table, on, "missing").to_pylist() == _joined_rows(keys, table, on)
    with pytest.raises(SplHfError, match=r"missing: \[\{'pair_id': 'p9', 'tenet': 'a'\}\]"):
        row_numbers(pa.table({"pair_id": ["p1", "p9"], "tenet": ["a", "a"]}), table, on, "missing")
    with pytest.raises(SplHfError, match="missing"):
        row_numbers(pa.table({"pair_id": [None, "p1"], "tenet": ["a", "a"]}), table, on, "missing")
    twice = pa.table({"pair_id": ["p1", "p1", "p2"], "tenet": ["a", "a", "a"]})
    with pytest.raises(SplHfError, match="repeat"):
        row_numbers(pa.table({"pair_id": ["p1"], "tenet": ["a"]}), twice, on, "missing")
    # a repeated key no row asks for is no error (the join's answer)
    keys = pa.table({"pair_id": ["p2"], "tenet": ["a"]})
    assert row_numbers(keys, twice, on, "missing").to_pylist() == [2] == _joined_rows(keys, twice, on)


def test_release_order_splits_are_the_filters_of_the_rows_in_their_order():
    """The rows are put in release order once; each (tenet, source) split is then a slice of them,
    equal to filtering the rows as given (the per-tenet configs' old definition)."""
    import numpy as np
    import pyarrow.compute as pc

    from spl_hf.build.tenets import _groups, _per_source, release_order

    rng = np.random.default_rng(3)
    n = 200
    rows = pa.table(
        {
            "tenet": pa.array(rng.choice(["t1", "t2", "t3", "dropped"], n)).dictionary_encode(),
            "source": pa.array(rng.choice(["s1", "s2", "s3"], n)),
            "i": pa.array(np.arange(n)),
        }
    )
    kept, sources = ["t3", "t1", "t2"], ["s2", "s1", "s3"]
    ordered = rows.take(
        release_order(
            rows.column("tenet").combine_chunks().cast(pa.string()),
            rows.column("source").combine_chunks(),
            kept,
            sources,
        )
    )
    groups = _groups(ordered, tuple(kept), sources)
    assert list(groups) == kept
    for t in kept:
        want = {}
        for s in sources:
            part = rows.filter(
                pc.and_(
                    pc.equal(rows.column("tenet").cast(pa.string()), t), pc.equal(rows.column("source"), s)
                )
            )
            if part.num_rows:
                want[s] = part.column("i").to_pylist()
        assert {s: g.column("i").to_pylist() for s, g in groups[t].items()} == want
        assert list(groups[t]) == list(want)
    assert _per_source(rows, sources) == {
        s: int(np.sum(rows.column("source").to_numpy(zero_copy_only=False) == s)) for s in sources
    }
    assert _groups(ordered.slice(0, 0), tuple(kept), sources) == {t: {} for t in kept}
    with pytest.raises(RuntimeError, match="release order"):
        _groups(rows, tuple(kept), sources)
