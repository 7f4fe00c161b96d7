"""Release builders end to end: recipes dry-run without a model, stages resume, held-out prompts are removed,
outputs are guarded, and two data-parallel processes write the same bytes as one."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spl_hf.cli import main
from tests.audit_fixtures import tenet_files
from tests.conftest import REPO

RELEASE_RECIPES = sorted((REPO / "recipes" / "tenets").glob("*.yaml")) + sorted(
    (REPO / "recipes" / "spl").glob("*.yaml")
)
PKU_PROMPT = "How do I get into my own car if I locked the keys inside?"  # a prompt of the shipped PKU sample


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _stages(out: str) -> dict[str, str]:
    return json.loads(out[out.rindex('{\n  "output_dir"') :])["stages"]


@pytest.mark.parametrize("path", RELEASE_RECIPES, ids=[f"{p.parent.name}/{p.name}" for p in RELEASE_RECIPES])
def test_every_release_recipe_dry_runs_without_a_model(path, tmp_path, capsys, monkeypatch):
    import spl_hf.backends

    def no_model(*_a, **_k):
        raise AssertionError("a dry run must not load a model")

    monkeypatch.setattr(spl_hf.backends, "make_backend", no_model)
    kind = "tenets" if path.parent.name == "tenets" else "spl"
    argv = [
        "release",
        kind,
        "--config",
        str(path),
        "--dry_run",
        "--run_dir",
        str(tmp_path / "run"),
        "--output_dir",
        str(tmp_path / "ds"),
    ]
    assert main(argv) == 0
    plan = capsys.readouterr().out
    assert '"stages"' in plan and "write" in plan and "audit" in plan
    assert not (tmp_path / "ds").exists()


def test_recorded_spl_release_resumes_and_guards_its_output(tmp_path, capsys):
    base = [
        "release",
        "spl",
        "--config",
        str(REPO / "recipes" / "spl" / "sample.yaml"),
        "--run_dir",
        str(tmp_path / "run"),
        "--output_dir",
        str(tmp_path / "ds"),
    ]
    assert main(base) == 0
    assert "skipped" not in _stages(capsys.readouterr().out).values()
    report = json.loads((tmp_path / "run" / "run_report.json").read_text())
    counts = {s["name"]: s["counts"] for s in report["stages"]}
    assert counts["write"]["pairs"] == 144 and counts["write"]["labeled"] == 72
    assert counts["audit"] == {"ok": True, "rows": 216, "reproduced": 216, "failures": 0}
    before = _files(tmp_path / "ds")
    assert main(base) == 0  # same inputs: every stage skipped, no --overwrite needed for its own build
    assert set(_stages(capsys.readouterr().out).values()) == {"skipped"}
    assert _files(tmp_path / "ds") == before
    # Other settings into the same output: nothing written anywhere, exit 2, the change named.
    run_before = _files(tmp_path / "run")
    assert main([*base, "--margin", "2"]) == 2
    assert "margin (1 -> 2)" in capsys.readouterr().err
    assert _files(tmp_path / "ds") == before and _files(tmp_path / "run") == run_before
    assert main([*base, "--margin", "2", "--overwrite"]) == 0  # asked for: replaced
    assert _files(tmp_path / "ds") != before
    capsys.readouterr()
    assert main([*base, "--margin", "2"]) == 0  # and that release now resumes
    assert set(_stages(capsys.readouterr().out).values()) == {"skipped"}
    assert main([*base, "--overwrite"]) == 0
    assert _files(tmp_path / "ds") == before
    capsys.readouterr()
    # Another run may not replace it, and a folder holding a user's file is refused untouched.
    other = [
        "release",
        "spl",
        "--config",
        str(REPO / "recipes" / "spl" / "sample.yaml"),
        "--run_dir",
        str(tmp_path / "r2"),
    ]
    assert main([*other, "--output_dir", str(tmp_path / "ds")]) == 2
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep me")
    assert main([*other, "--output_dir", str(user), "--overwrite"]) == 2
    assert "did not write" in capsys.readouterr().err
    assert [p.name for p in user.iterdir()] == ["notes.txt"] and _files(tmp_path / "ds") == before


def _tenet_args(tmp_path: Path, model: Path, heldout: Path, **over: str) -> list[str]:
    args = {
        "pools": "sample",
        "tenets": "no_preachy_tone,upfront_concerns,calibrated_caveats",
        "capacity": "1",
        "threshold": "0.000001",
        "seed": "42",
        "model": str(model),
        "heldout": "or_bench_hard_1k",
        "heldout_files": f"or_bench_hard_1k={heldout}",
        "run_dir": str(tmp_path / "run"),
        "output_dir": str(tmp_path / "ds"),
        **over,
    }
    return ["release", "tenets", *[x for k, v in args.items() for x in (f"--{k}", v)], "--no_progress"]


@pytest.fixture
def heldout_csv(tmp_path: Path) -> Path:
    path = tmp_path / "heldout.csv"
    path.write_text(f'prompt,category\n"{PKU_PROMPT}",illegal\n"An unrelated held-out question?",benign\n')
    return path


@pytest.mark.slow
def test_tenet_release_decontaminates_resumes_and_recomputes_only_what_changed(
    tmp_path, tiny_model_dir, heldout_csv, capsys
):
    assert main(_tenet_args(tmp_path, tiny_model_dir, heldout_csv)) == 0
    first = _stages(capsys.readouterr().out)
    assert "skipped" not in first.values() and list(first) == [
        "read",
        "decontaminate",
        "judge",
        "assign",
        "write",
        "audit",
    ]
    report = json.loads((tmp_path / "run" / "run_report.json").read_text())
    counts = {s["name"]: s["counts"] for s in report["stages"]}
    assert counts["decontaminate"]["rows_removed"] == 1 and counts["decontaminate"]["prompts_removed"] == 1
    removed = pq.read_table(next((tmp_path / "run" / "stages").glob("decontaminate-*")) / "removed.parquet")
    pid = removed.column("prompt_id")[0].as_py()
    assert removed.column("heldout")[0].as_py() == "or_bench_hard_1k"
    judged = pq.read_table(next((tmp_path / "run" / "stages").glob("judge-*")) / "scores.parquet")
    assert (
        pid not in set(judged.column("prompt_id").to_pylist())
        and judged.num_rows == 3 * counts["decontaminate"]["rows_kept"]
    )
    assert counts["audit"]["ok"] and counts["assign"]["tenets_kept"] == 3
    assert (counts["judge"]["not_judged"], counts["judge"]["boundary_fallbacks"]) == (0, 0)
    record = json.loads((tmp_path / "ds" / "decontamination.json").read_text())
    assert [r["prompt_id"] for r in record["removed"]] == [pid]
    decon = json.loads((tmp_path / "ds" / "build_report.json").read_text())["decontamination"]
    assert decon["rows_removed"] == 1 and decon["heldout_prompts"] == {"or_bench_hard_1k": 2}
    # every source file's read report (real-data review D9): counts, quarantine, sha256, by file name
    from spl_hf.sources import sample_paths

    reads = {(r["source"], r["role"]): r for r in decon["sources"]}
    assert set(reads) == {*((s, "source") for s in sample_paths()), ("or_bench_hard_1k", "heldout")}
    assert all(len(r["sha256"]) == 64 and "/" not in r["origin"] for r in reads.values())
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "## Decontamination" in card and "### Source files read" in card
    assert "| or_bench_hard_1k | 2 | 1 |" in card
    built = _files(tmp_path / "ds")

    assert main(_tenet_args(tmp_path, tiny_model_dir, heldout_csv)) == 0
    assert set(_stages(capsys.readouterr().out).values()) == {"skipped"}
    assert _files(tmp_path / "ds") == built

    # A changed setting without --overwrite writes nothing (issue: a published release was replaced).
    run_before = _files(tmp_path / "run")
    assert main(_tenet_args(tmp_path, tiny_model_dir, heldout_csv, threshold="0.5")) == 2
    assert "threshold" in capsys.readouterr().err
    assert _files(tmp_path / "ds") == built and _files(tmp_path / "run") == run_before
    assert main([*_tenet_args(tmp_path, tiny_model_dir, heldout_csv, capacity="2"), "--overwrite"]) == 0
    again = _stages(capsys.readouterr().out)
    assert [k for k, v in again.items() if v == "skipped"] == ["read", "decontaminate", "judge"]
    assert _files(tmp_path / "ds") != built
    # A threshold or seed that picks the same pairs still reruns the write stage (review F1: the rows,
    # card and certificate kept the old threshold while the run said the new one).
    for over in ({"threshold": "0.0000011"}, {"threshold": "0.0000011", "seed": "7"}):
        assert main([*_tenet_args(tmp_path, tiny_model_dir, heldout_csv, **over), "--overwrite"]) == 0
        again = _stages(capsys.readouterr().out)
        assert again["write"] != "skipped" and again["audit"] != "skipped"
        settings = json.loads((tmp_path / "ds" / "build_report.json").read_text())["settings"]
        assert (settings["threshold"], settings["seed"]) == (1.1e-06, int(over.get("seed", 42)))
        rows = [
            d for f in tenet_files(tmp_path / "ds") for d in pq.read_table(f).column("derivation").to_pylist()
        ]
        assert rows and {(d["threshold"], d["seed"]) for d in rows} == {(1.1e-06, int(over.get("seed", 42)))}


def test_spl_release_writes_the_judge_comparison_from_recorded_verdicts(tmp_path, capsys):
    from tests.conftest import write_verdicts

    verdicts = write_verdicts(tmp_path / "verdicts.jsonl")
    base = [
        "release",
        "spl",
        "--config",
        str(REPO / "recipes" / "spl" / "sample.yaml"),
        "--run_dir",
        str(tmp_path / "run"),
        "--output_dir",
        str(tmp_path / "ds"),
    ]
    assert main([*base, "--recorded_verdicts", str(verdicts)]) == 0
    capsys.readouterr()
    report = json.loads((tmp_path / "run" / "run_report.json").read_text())
    counts = {s["name"]: s["counts"] for s in report["stages"]}
    common = counts["write"]["common_support"]
    assert common > 0 and counts["write"]["judge_labeled"] >= common
    assert counts["audit"]["ok"] and counts["audit"]["judge_rows"] == 144 + 2 * common
    assert counts["audit"]["judge_reproduced"] == counts["audit"]["judge_rows"]
    # One audit result: the stage's audit.json is what `spl-hf audit --json` prints for the build.
    from spl_hf.audit import audit

    (recorded,) = (tmp_path / "run").rglob("audit.json")
    assert json.loads(recorded.read_text()) == json.loads(json.dumps(audit(str(tmp_path / "ds")).to_dict()))
    # Other verdicts are another input: the build is written again, and its comparison changes.
    write_verdicts(verdicts, seed=1)
    assert main([*base, "--recorded_verdicts", str(verdicts)]) == 0
    assert _stages(capsys.readouterr().out)["write"] != "skipped"
    # A recorded verdict file needs recorded attributes; the verdict stage judges generated candidates.
    assert main([*base, "--verdict_judge"]) == 2
    assert "verdict_judge judges generated candidates" in capsys.readouterr().err


SOURCES = REPO / "tests" / "fixtures" / "sources"


def _spl_args(tmp_path: Path, **over: str) -> list[str]:
    args = {
        "prompt_sources": f"harmbench={SOURCES / 'harmbench_behaviors_text_all.csv'},xstest={SOURCES / 'xstest.jsonl'}",
        "model": "/nonexistent/model",  # the stages under test stop before any model
        "heldout": "harmbench",
        "heldout_files": f"harmbench={SOURCES / 'harmbench_behaviors_text_all.csv'}",
        "run_dir": str(tmp_path / "run"),
        "output_dir": str(tmp_path / "ds"),
        **over,
    }
    return ["release", "spl", *[x for k, v in args.items() for x in (f"--{k}", v)]]


def test_spl_release_draws_after_decontamination_and_names_an_emptied_source(tmp_path, monkeypatch):
    # real-data review D7: pool_sizes was drawn before decontamination, leaving harmbench 0 of 2 unsaid
    import spl_hf.backends.model_stages as model_stages

    monkeypatch.setattr(model_stages, "load_backend", lambda *a, **k: pytest.fail("model loaded"))
    from spl_hf.decontam import DecontamConfig
    from spl_hf.release.spl import SPLReleaseConfig, make_release

    cfg = SPLReleaseConfig(
        prompt_sources=[
            f"harmbench={SOURCES / 'harmbench_behaviors_text_all.csv'}",
            f"xstest={SOURCES / 'xstest.jsonl'}",
        ],
        pool_sizes=["harmbench=2", "xstest=2"],
        heldout_files=[f"harmbench={SOURCES / 'harmbench_behaviors_text_all.csv'}"],
        run_dir=str(tmp_path / "run"),
        output_dir=str(tmp_path / "ds"),
    )
    from spl_hf.backends.settings import GenerationConfig

    release = make_release(cfg, GenerationConfig(), DecontamConfig(heldout=["harmbench"]))
    read, clean = tmp_path / "prompts", tmp_path / "clean"
    read.mkdir()
    clean.mkdir()
    counts = release._prompts(read)
    assert counts["per_source"]["harmbench"] == 2  # a training source keeps its default filter
    summary = release._decontaminate(read, clean)
    kept = pq.read_table(clean / "prompts.parquet")
    assert summary["drawn"] == {"harmbench": 0, "xstest": 2} and summary["empty_sources"] == ["harmbench"]
    assert kept.column("source").to_pylist() == ["xstest", "xstest"]
    assert summary["heldout_prompts"] == {"harmbench": 4}  # the held-out file is read whole
    roles = {(r["source"], r["role"]) for r in summary["sources"]}
    assert roles == {("harmbench", "source"), ("xstest", "source"), ("harmbench", "heldout")}
    record = json.loads((clean / "decontamination.json").read_text())
    assert record["summary"]["empty_sources"] == ["harmbench"]
    assert all(r["heldout_prompt"] for r in record["removed"])
    # the card names the emptied source and shows every held-out set's prompt count
    from spl_hf.dataset.card import render_card

    card = render_card(
        "spl_dataset.md.j2", [], license="mit", pretty_name="t", tags=[], decontamination=summary
    )
    assert "Sources left without prompts after decontamination:** harmbench" in card
    assert "| harmbench | 4 | 2 |" in card


def test_a_release_whose_decontamination_removes_everything_stops_before_any_model(
    tmp_path, capsys, monkeypatch
):
    # real-data review D2: the SPL release loaded the model for an empty stage, then a KeyError
    import spl_hf.backends.model_stages as model_stages

    monkeypatch.setattr(model_stages, "load_backend", lambda *a, **k: pytest.fail("model loaded"))
    args = _spl_args(
        tmp_path,
        prompt_sources=f"xstest={SOURCES / 'xstest.jsonl'}",
        heldout="xstest",
        heldout_files=f"xstest={SOURCES / 'xstest.jsonl'}",
    )
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "decontamination removed all" in err and "xstest" in err and "Traceback" not in err


def test_spl_release_in_json_mode_records_producers_parse_failures_and_the_candidate_share(
    tmp_path, tiny_model_dir
):
    # issue 16: the paper's procedure (JSON labeling, Table VI's generation share) and who produced what
    from spl_hf.backends.settings import GenerationConfig
    from spl_hf.decontam import DecontamConfig
    from spl_hf.release.spl import SPLReleaseConfig, make_release

    cfg = SPLReleaseConfig(
        prompt_sources=[
            f"xstest={SOURCES / 'xstest.jsonl'}",
            f"do_not_answer={SOURCES / 'do_not_answer.jsonl'}",
        ],
        candidate_fraction=["xstest=1/2", "do_not_answer=1"],
        model=str(tiny_model_dir),
        labeler_mode="json",
        verdict_judge=True,
        heldout_files=[f"harmbench={SOURCES / 'harmbench_behaviors_text_all.csv'}"],
        run_dir=str(tmp_path / "run"),
        output_dir=str(tmp_path / "ds"),
        min_rows=0,  # a random tiny model labels nothing: this test reads what it recorded, not its rows
    )
    gen = GenerationConfig(instructions=["comply", "refuse"], max_new_tokens=4, progress=False)
    release = make_release(cfg, gen, DecontamConfig(heldout=["harmbench"]))
    release.log = lambda *_: None
    report = release.run()
    counts = {s["name"]: s["counts"] for s in report["stages"]}
    # xstest: half of its drawn prompts (rounded half up) get candidates, the rest are counted
    drawn = counts["decontaminate"]["drawn"]
    assert counts["generate"]["without_candidates"] == {"xstest": drawn["xstest"] // 2, "do_not_answer": 0}
    assert counts["generate"]["prompts"] == drawn["do_not_answer"] + drawn["xstest"] - drawn["xstest"] // 2
    built = json.loads((tmp_path / "ds" / "build_report.json").read_text())
    producers = built["producers"]
    (labeler,) = producers["labeler"]["identities"]
    (generator,) = producers["generator"]["identities"]
    (judge,) = producers["verdict_judge"]["identities"]
    assert labeler["mode"] == "json" and labeler["backend"] == "hf" and labeler["dtype"] == "float32"
    assert generator["mode"] == "generate" and generator["model_revision"] == labeler["model_revision"]
    assert judge["mode"] == "constrained" and judge["model_id"] == labeler["model_id"]
    assert all(p["records_without_identity"] == 0 for p in producers.values())
    # a random tiny model writes no JSON: every item is a recorded parse failure, none defaulted
    quality = built["label_quality"]["attributes"]
    assert quality["topic"]["parse_failures"] == quality["topic"]["items"] > 0
    assert quality["refusal"]["off_label_mass"]["q50"] is None  # json mode stores no letter mass
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "## Who produced the model outputs" in card and f"`{labeler['template_hash']}`" in card
    from spl_hf.audit import audit

    assert audit(tmp_path / "ds").ok


# Table VI: (pool, candidate generation) per source, in prompts.
TABLE_VI = {
    "ultrachat": (1439, 1007),
    "or_bench_80k": (1189, 833),
    "xstest": (250, 174),
    "harmbench": (400, 280),
    "do_not_answer": (938, 656),
    "malicious_instruct": (100, 70),
}


def test_the_paper_recipe_labels_in_json_mode_and_generates_for_table_vis_share(tmp_path, capsys):
    assert (
        main(["release", "spl", "--config", str(REPO / "recipes" / "spl" / "paper.yaml"), "--dry_run"]) == 0
    )
    out = capsys.readouterr().out
    plan, _ = json.JSONDecoder().raw_decode(out[out.index("{") :])
    assert plan["labeler_mode"] == "json"
    assert plan["pool_sizes"] == {s: pool for s, (pool, _) in TABLE_VI.items()}
    from spl_hf.recipes import parse_recipe
    from spl_hf.release.spl import make_release

    cfg, gen, decontam = parse_recipe(REPO / "recipes" / "spl" / "paper.yaml")[:3]
    release = make_release(cfg, gen, decontam)
    prompts = [
        {"prompt_id": f"{s}-{i}", "source": s} for s, (pool, _) in TABLE_VI.items() for i in range(pool)
    ]
    chosen, without = release._with_candidates(prompts)
    assert without == {s: pool - generated for s, (pool, generated) in TABLE_VI.items()}
    # seeded and independent of row order: the same prompts get candidates when the rows are reversed
    again, _ = release._with_candidates(prompts[::-1])
    assert {p["prompt_id"] for p in again} == {p["prompt_id"] for p in chosen}
    (constrained,) = parse_recipe(REPO / "recipes" / "spl" / "paper_constrained.yaml")[:1]
    assert (
        constrained.labeler_mode == "constrained" and constrained.candidate_fraction == cfg.candidate_fraction
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("xstest=0", "candidate_fraction xstest: must be above 0 and at most 1, got 0"),
        ("xstest=3/2", "candidate_fraction xstest: must be above 0 and at most 1, got 3/2"),
        ("xstest=most", "candidate_fraction xstest: expected a share such as 0.7 or 1007/1439, got 'most'"),
        ("ultrachat=0.5", "candidate_fraction: ['ultrachat'] are not among prompt_sources"),
    ],
)
def test_a_bad_candidate_fraction_is_a_one_line_error(tmp_path, capsys, value, message):
    args = _spl_args(tmp_path, prompt_sources=f"xstest={SOURCES / 'xstest.jsonl'}", candidate_fraction=value)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_recorded_spl_release_with_a_panel_shows_the_labelers_agreement(tmp_path, capsys):
    panel = tmp_path / "panel.jsonl"
    rows = [
        {"item_id": "p001", "rater_id": f"r{i}", "attribute": "topic", "label": label}
        for i, label in enumerate(["benign", "benign", "chemistry_biology"])
    ]
    panel.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["release", "spl", "--config", str(REPO / "recipes" / "spl" / "sample.yaml")]
    where = ["--run_dir", str(tmp_path / "run"), "--output_dir", str(tmp_path / "ds")]
    assert main([*base, *where, "--panel", str(panel)]) == 0
    report = json.loads((tmp_path / "ds" / "build_report.json").read_text())
    assert report["panel"]["agreement"]["attributes"]["topic"]["correct"] == 1  # p001 is recorded benign
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "### Agreement with the rater panel (`panel.jsonl`)" in card and "| topic | 1/1 |" in card
    assert card.count("recorded, producer not recorded") == 2  # the sample's records name no producer
    capsys.readouterr()
    assert main([*base, *where, "--panel", str(tmp_path / "missing.jsonl")]) == 2
    assert "panel: " in capsys.readouterr().err
