"""The `spl-hf` command line: help, outputs that never destroy inputs, argument checks, error exits."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.cli import COMMANDS, build_parser, main
from spl_hf.outputs import OutputError
from tests import procs
from tests.backends_rows import pair_row, write_jsonl
from tests.conftest import REPO

SAMPLES = REPO / "spl_hf" / "data" / "samples"


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A project folder: the SPL sample inputs and a user's notes, side by side."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("spl_prompts.jsonl", "spl_candidates.jsonl"):
        shutil.copy(SAMPLES / name, folder / name)
    (folder / "notes.md").write_text("my notes\n")
    return folder


def derive_args(inputs: Path, out: str | Path) -> list[str]:
    return [
        "build",
        "spl",
        "--prompts",
        str(inputs / "spl_prompts.jsonl"),
        "--candidates",
        str(inputs / "spl_candidates.jsonl"),
        "--output_dir",
        str(out),
    ]


# --- help --------------------------------------------------------------------------------------


def leaf_parsers(parser=None, path=()):
    """(command path, parser) of every command and sub-action that runs something."""
    parser = parser or build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from leaf_parsers(child, (*path, name))


LEAVES = [path for path, _ in leaf_parsers()]


def test_every_command_is_a_leaf_here():
    assert {p[0] for p in LEAVES} == {name for name, _, _ in COMMANDS}
    assert (
        ("release", "tenets") in LEAVES and ("eval", "at-limit") in LEAVES and ("sources", "read") in LEAVES
    )


@pytest.mark.parametrize("path", LEAVES, ids=[" ".join(p) for p in LEAVES])
def test_every_option_has_its_own_help_written_once(path):
    parser = dict(leaf_parsers())[path]
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    assert options, path
    flags = {s for a in options for s in a.option_strings}
    for action in options:
        text = " ".join((action.help or "").split())
        assert text, f"{' '.join(path)} {action.option_strings}: no help"
        assert text.lower().count("default") <= 1, f"{action.option_strings}: default written twice: {text}"
        for flag in action.option_strings:
            assert re.fullmatch(r"--[a-z0-9]+(_[a-z0-9]+)*", flag), f"{flag}: not --snake_case"
            if flag.startswith("--no_"):  # a negated flag says what turning it off does
                assert f"--{flag[5:]}" not in flags and "show" not in text.lower(), text
    # Options are grouped by the dataclass declaring them, not one flat list.
    if getattr(parser, "_defaults", {}).get("_config_classes"):
        titles = [g.title for g in parser._action_groups if g._group_actions]
        assert len(titles) >= 2, titles


@pytest.mark.parametrize("path", LEAVES, ids=[" ".join(p) for p in LEAVES])
def test_a_parser_built_for_one_action_configures_it_as_the_full_parser_does(path):
    """`spl-hf release tenets ...` configures only `release tenets` (fast --help); its options are the same."""
    lazy = dict(leaf_parsers(build_parser([*path, "--help"])))
    assert _options(lazy[path]) == _options(dict(leaf_parsers())[path])
    assert {p[0] for p in lazy} == {path[0]}  # no other command gets a parser
    siblings = [p for p in lazy if p[0] == path[0] and p != path]
    if len(path) > 1 and path[0] in ("release", "eval"):  # the other actions: listed, not configured
        assert siblings and all(_options(lazy[p]) == [("-h", "--help")] for p in siblings), siblings


def test_help_groups_options_by_dataclass(capsys):
    with pytest.raises(SystemExit):
        main(["release", "tenets", "--help"])
    out = capsys.readouterr().out
    for title in ("Model and engine:", "Publishing to the Hub", "Pairwise judge:", "Per-tenet DPO release:"):
        assert title in out
    assert "--no_progress" in out and "Hide the progress bar." in out and "--no_sft" in out


# Every `spl-hf [COMMAND [ACTION]] --help` in one fresh interpreter: when none of the heavy libraries is
# loaded after all of them, none of them loaded one.
HELP_PROBE = """
import json, sys
from spl_hf.cli import main
paths = json.loads(sys.argv[1])
for path in paths:
    try:
        main([*path, "--help"])
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in ("torch", "transformers", "datasets", "pyarrow") if m in sys.modules)))
"""


def test_help_of_every_command_imports_no_heavy_library():
    paths = [[], *(list(p[:i]) for p in LEAVES for i in range(1, len(p) + 1))]
    out = procs.run(
        [sys.executable, "-c", HELP_PROBE, json.dumps(paths)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "usage: spl-hf release tenets" in out.stdout
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_no_option_is_declared_by_a_hand_written_add_argument():
    cli = REPO / "spl_hf" / "cli"
    calls = {p.name: p.read_text().count("add_argument(") for p in sorted(cli.glob("*.py"))}
    assert {k: v for k, v in calls.items() if v} == {}


def test_console_script_runs():
    out = procs.run(
        [sys.executable, "-m", "spl_hf.cli", "--help"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "audit" in out.stdout


def test_every_config_field_is_a_flag():
    """Settings that could only be set in a recipe before (issue 9) are flags now."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    tenets = next(a for a in sub.choices["tenets"]._actions if a.dest == "tenets_command")
    build_help = tenets.choices["build"].format_help()
    for flag in ("--tenets_file", "--repo_id", "--pretty_name", "--overwrite", "--config"):
        assert flag in build_help
    assert "--output_dir" in sub.choices["derive"].format_help()


def _options(parser) -> list[tuple[str, ...]]:
    return sorted(tuple(a.option_strings) for a in parser._actions)


def test_derive_and_tenets_build_are_aliases_of_build_spl_and_build_tenets():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    kinds = next(a for a in sub.choices["build"]._actions if a.dest == "build_command").choices
    tenets = next(a for a in sub.choices["tenets"]._actions if a.dest == "tenets_command").choices
    assert _options(sub.choices["derive"]) == _options(kinds["spl"])
    assert _options(tenets["build"]) == _options(kinds["tenets"])
    assert sub.choices["derive"].get_default("func") is kinds["spl"].get_default("func")
    assert tenets["build"].get_default("func") is kinds["tenets"].get_default("func")


@pytest.mark.parametrize("flag", ["--out", "--output-dir", "--tenets-file", "--no-progress"])
def test_one_spelling_per_option(tmp_path, flag, capsys):
    """Kebab spellings and the old --out are gone everywhere (argparse would also take a prefix of a flag)."""
    with pytest.raises(SystemExit) as info:
        main(["tenets", "build", "--pairs", "p.jsonl", "--scores", "s.jsonl", flag, str(tmp_path / "x")])
    assert info.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err


# --- outputs never destroy inputs or a user's files -------------------------------------------


def test_derive_into_a_folder_with_user_files_and_git_is_refused(tmp_path, inputs, capsys):
    target = tmp_path / "project"
    (target / ".git").mkdir(parents=True)
    (target / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (target / "todo.txt").write_text("mine\n")
    before = snapshot(tmp_path)
    for extra in ([], ["--overwrite"]):
        assert main([*derive_args(inputs, target), *extra]) == 2
        assert ".git" in error_line(capsys)
    (target / ".git" / "HEAD").unlink()
    (target / ".git").rmdir()
    assert main([*derive_args(inputs, target), "--overwrite"]) == 2
    assert "todo.txt" in error_line(capsys)
    assert {k: v for k, v in snapshot(tmp_path).items() if ".git" not in k} == {
        k: v for k, v in before.items() if ".git" not in k
    }


@pytest.mark.parametrize("where", ["inputs", "parent", "dot", "file", "under_file"])
def test_derive_out_at_or_around_its_inputs_is_refused(tmp_path, inputs, capsys, monkeypatch, where):
    out = {
        "inputs": inputs,
        "parent": tmp_path,
        "dot": Path("."),
        "file": inputs / "notes.md",
        "under_file": inputs / "notes.md" / "ds",
    }[where]
    monkeypatch.chdir(inputs if where == "dot" else tmp_path)
    before = snapshot(tmp_path)
    assert main([*derive_args(inputs, out), "--overwrite"]) == 2
    line = error_line(capsys)
    assert str(out) in line or "refusing" in line
    assert snapshot(tmp_path) == before


def test_derive_replaces_its_own_build_only_with_overwrite(tmp_path, inputs, capsys):
    out = tmp_path / "ds"
    assert main(derive_args(inputs, out)) == 0
    capsys.readouterr()
    first = snapshot(out)
    assert main(derive_args(inputs, out)) == 2
    assert "--overwrite" in error_line(capsys)
    assert snapshot(out) == first
    assert main([*derive_args(inputs, out), "--overwrite"]) == 0
    assert {k: v[0] for k, v in snapshot(out).items()} == {k: v[0] for k, v in first.items()}  # same bytes
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".ds.")] == []


def test_tenets_build_out_at_its_inputs_is_refused(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    pq.write_table(pa.table({"pair_id": ["a"]}), folder / "pairs.parquet")
    pq.write_table(pa.table({"pair_id": ["a"]}), folder / "scores.parquet")
    before = snapshot(tmp_path)
    base = [
        "tenets",
        "build",
        "--pairs",
        str(folder / "pairs.parquet"),
        "--scores",
        str(folder / "scores.parquet"),
    ]
    for out in (folder, tmp_path, folder / "pairs.parquet"):
        assert main([*base, "--capacity", "1", "--output_dir", str(out), "--overwrite"]) == 2
        error_line(capsys)
    assert snapshot(tmp_path) == before


def test_assign_out_over_its_scores_is_refused(tmp_path, capsys):
    scores = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"pair_id": ["a"], "prompt_id": ["q"], "tenet": ["t"], "score": [0.9]}), scores)
    before = snapshot(tmp_path)
    for extra in ([], ["--overwrite"]):
        assert (
            main(["assign", "--scores", str(scores), "--capacity", "1", "--output_dir", str(scores), *extra])
            == 2
        )
        assert "also an input" in error_line(capsys)
    assert (
        main(["assign", "--scores", str(scores), "--capacity", "1", "--output_dir", str(tmp_path / "a.csv")])
        == 2
    )
    assert "extension" in error_line(capsys)
    assert snapshot(tmp_path) == before


def test_demo_refuses_a_folder_with_user_files(tmp_path, capsys):
    (tmp_path / "notes.md").write_text("mine\n")
    before = snapshot(tmp_path)
    assert main(["demo", "--output_dir", str(tmp_path)]) == 2
    assert "notes.md" in error_line(capsys)
    assert snapshot(tmp_path) == before


# --- model commands: every argument checked before a model is loaded ----------------------------

NO_MODEL = "/nonexistent/model-folder"  # loading it would fail with "not a model folder"


@pytest.fixture
def pairs(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "pairs.jsonl", [pair_row(i) for i in range(2)])


def judge_args(pairs: Path, tmp_path: Path, *extra: str, model: str = NO_MODEL) -> list[str]:
    return [
        "judge",
        "--pairs",
        str(pairs),
        "--model",
        model,
        "--cache",
        str(tmp_path / "c.db"),
        "--output_dir",
        str(tmp_path / "scores.jsonl"),
        "--no_progress",
        *extra,
    ]


@pytest.mark.parametrize(
    "extra,flag",
    [
        (["--chunk_size", "0"], "chunk_size"),
        (["--chunk_size", "-1"], "chunk_size"),
        (["--threads", "0"], "threads"),
        (["--threads", "-2"], "threads"),
        (["--max_length", "0"], "max_length"),
        (["--limit", "0"], "limit"),
        (["--limit", "-1"], "limit"),
        (["--output_dir", "scores.csv"], "extension"),
        (["--backend", "tgi"], "invalid choice"),
    ],
)
def test_judge_rejects_bad_arguments_before_loading_a_model(tmp_path, pairs, capsys, extra, flag):
    code = main(judge_args(pairs, tmp_path, *extra)) if flag != "invalid choice" else None
    if code is None:
        with pytest.raises(SystemExit) as info:
            main(judge_args(pairs, tmp_path, *extra))
        assert info.value.code == 2 and flag in capsys.readouterr().err
        return
    assert code == 2
    line = error_line(capsys)
    assert flag in line and "model" not in line
    assert not (tmp_path / "c.db").exists()


def test_max_length_beyond_the_model_context_is_rejected_before_loading(tmp_path, pairs, capsys):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama", "max_position_embeddings": 8192}))
    # No weights in the folder: a load would fail; the context check must come first.
    assert main(judge_args(pairs, tmp_path, "--max_length", "100000000", model=str(model))) == 2
    assert "exceeds the model's context of 8192" in error_line(capsys)


def test_judge_output_over_its_input_is_refused(tmp_path, pairs, capsys):
    before = pairs.read_bytes()
    args = judge_args(pairs, tmp_path, "--overwrite")
    args[args.index("--output_dir") + 1] = str(pairs)
    assert main(args) == 2
    assert "also an input" in error_line(capsys)
    assert pairs.read_bytes() == before


@pytest.mark.parametrize("kind", ["foreign_folder", "text", "under_a_file"])
def test_bad_results_folder_is_a_clear_error_before_loading(tmp_path, pairs, capsys, kind):
    cache = tmp_path / "cache"
    if kind == "foreign_folder":
        cache.mkdir()
        (cache / "notes.txt").write_text("mine\n")
    elif kind == "text":
        cache.write_text("my notes, not a results folder\n")
    else:
        (tmp_path / "file").write_text("x")
        cache = tmp_path / "file" / "results"
    args = judge_args(pairs, tmp_path)
    args[args.index("--cache") + 1] = str(cache)
    assert main(args) == 2
    line = error_line(capsys)
    assert str(cache) in line and "model" not in line
    if kind == "foreign_folder":  # refused, never cleaned
        assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]
    elif kind == "text":
        assert cache.read_text() == "my notes, not a results folder\n"


def test_label_items_of_the_wrong_kind_fail_before_loading(tmp_path, capsys):
    scores = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"pair_id": ["a", "b"], "tenet": ["t", "t"], "score": [0.5, -0.5]}), scores)
    base = ["label", "--items", str(scores), "--model", NO_MODEL, "--cache", str(tmp_path / "c.db")]
    assert main([*base, "--output_dir", str(tmp_path / "labels.jsonl")]) == 2
    assert "none of the 2 rows is a label item" in error_line(capsys)
    assert (
        main([*base, "--output_dir", str(tmp_path / "l.jsonl"), "--pair_labels", str(tmp_path / "p.jsonl")])
        == 2
    )
    assert "--task verdict" in error_line(capsys)


def test_generate_checks_its_settings_before_loading(tmp_path, capsys):
    prompts = write_jsonl(tmp_path / "prompts.jsonl", [pair_row(0)])
    base = [
        "generate",
        "--prompts",
        str(prompts),
        "--model",
        NO_MODEL,
        "--cache",
        str(tmp_path / "c.db"),
        "--output_dir",
        str(tmp_path / "cands.jsonl"),
    ]
    assert main([*base, "--k", "2"]) == 2
    assert "--sample" in error_line(capsys)
    assert main([*base, "--instructions", "obey"]) == 2
    assert "obey" in error_line(capsys)


def test_judge_recipe_sets_and_flags_override(tmp_path, pairs, capsys):
    recipe = tmp_path / "judge.yaml"
    recipe.write_text("chunk_size: 0\nthreads: 1\n")
    assert main([*judge_args(pairs, tmp_path), "--config", str(recipe)]) == 2
    assert "chunk_size" in error_line(capsys)  # the recipe's value was used ...
    recipe.write_text("chunk_sise: 4\n")
    assert main([*judge_args(pairs, tmp_path), "--config", str(recipe)]) == 2
    assert "unknown setting(s) 'chunk_sise' (did you mean 'chunk_size'?)" in error_line(capsys)
    recipe.write_text("chunk_size: 0\nlimit: 0\n")  # ... and a flag overrides it
    assert main([*judge_args(pairs, tmp_path), "--config", str(recipe), "--chunk_size", "4"]) == 2
    line = error_line(capsys)
    assert "limit" in line and "chunk_size" not in line


# --- error classes: one line, exit 2; --debug shows the traceback; bugs keep theirs -------------


@pytest.mark.parametrize(
    "exc,expect",
    [
        (
            PermissionError(13, "Permission denied", "/data/out.parquet"),
            "/data/out.parquet: Permission denied",
        ),
        (NotADirectoryError(20, "Not a directory", "/data/f/x"), "/data/f/x: Not a directory"),
        (IsADirectoryError(21, "Is a directory", "/data/d"), "/data/d: Is a directory"),
        (FileExistsError(17, "File exists", "/data/x"), "/data/x: File exists"),
        (
            EOFError("Compressed file ended before the end-of-stream marker was reached"),
            "compressed file ended",
        ),
        (gzip.BadGzipFile("pairs.jsonl.gz: not a gzip file"), "pairs.jsonl.gz"),
        (
            UnicodeDecodeError("utf-8", b"\xe9", 0, 1, "invalid continuation byte"),
            "latin1.jsonl: not valid UTF-8",
        ),
        (OutputError("out: holds files spl_hf did not write"), "holds files spl_hf did not write"),
        (FileNotFoundError("x.jsonl: no such file"), "x.jsonl: no such file"),
    ],
)
def test_user_errors_exit_2_with_one_line(tmp_path, monkeypatch, capsys, exc, expect):
    import spl_hf.cli.build as build

    def boom(args):
        raise exc

    monkeypatch.setattr(build, "run_spl", boom)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin1.jsonl").write_bytes(b"caf\xe9\n")
    assert main(["build", "spl", "--prompts", "latin1.jsonl"]) == 2
    line = error_line(capsys)
    assert line.startswith("spl-hf build: error: ") and expect in line
    with pytest.raises(type(exc)):
        main(["--debug", "build", "spl"])


@pytest.mark.parametrize(
    "exc",
    [
        TypeError("unsupported operand"),
        KeyError("pair_id"),
        ValueError("a plain ValueError is a bug, not bad input"),
        sqlite3.DatabaseError("database disk image is malformed"),
    ],
)
def test_bugs_keep_their_traceback(monkeypatch, exc):
    import spl_hf.cli.build as build

    def bug(args):
        raise exc

    monkeypatch.setattr(build, "run_spl", bug)
    with pytest.raises(type(exc)):
        main(["build", "spl"])


def test_a_key_error_from_a_bug_exits_1_with_its_traceback_in_a_real_process(tmp_path):
    code = (
        "import sys, spl_hf.cli.build as build; from spl_hf.cli import main\n"
        "def run(args):\n    return {}['pair_id']  # a bug deep inside a command\n"
        "build.run_spl = run\nsys.exit(main(['build', 'spl']))"
    )
    out = procs.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 1
    assert "Traceback" in out.stderr and "KeyError: 'pair_id'" in out.stderr
    assert "error:" not in out.stderr


def test_debug_flag_shows_the_traceback_in_a_real_process(tmp_path):
    (tmp_path / "a_file").write_text("x")
    argv = [sys.executable, "-m", "spl_hf.cli", "derive", "--output_dir", str(tmp_path / "a_file" / "ds")]
    plain = procs.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr and "a_file" in plain.stderr
    debug = procs.run(
        [*argv[:3], "--debug", *argv[3:]], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "OutputError" in debug.stderr


def test_required_settings_are_named(tmp_path, capsys):
    assert main(["judge", "--cache", str(tmp_path / "c.db"), "--output_dir", str(tmp_path / "s.jsonl")]) == 2
    assert "--pairs is required" in error_line(capsys)
    assert main(["tenets", "build", "--scores", "s.parquet"]) == 2
    assert "--pairs is required" in error_line(capsys)


def test_an_unknown_command_is_refused_with_every_command_listed(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["relase", "tenets"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'relase'" in err
    assert all(f"'{name}'" in err for name, _, _ in COMMANDS)


@pytest.mark.parametrize("argv", [["release", "--help"], ["eval", "--help"], ["release", "tenet"]])
def test_a_command_named_without_its_action_lists_its_actions_unconfigured(argv):
    lazy = dict(leaf_parsers(build_parser(argv)))
    assert len(lazy) > 1 and all(_options(p) == [("-h", "--help")] for p in lazy.values()), lazy
