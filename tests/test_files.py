"""The one writer of files: whole files, random temporaries, never through a symlink."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from spl_hf.errors import OutputError, SplHfError
from spl_hf.files import atomic_path, write_json, write_jsonl, write_text


def _write_many(path: str, tag: str, n: int) -> None:
    for i in range(n):
        write_jsonl(path, [{"tag": tag, "i": i, "pad": "x" * 4096} for _ in range(50)])


def test_two_processes_writing_one_output_both_finish_whole(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_many, args=(str(out), tag, 20)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 50 and len({(r["tag"], r["i"]) for r in rows}) == 1  # one whole file, not a mix
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]  # no temporary left behind


def test_a_failed_write_leaves_neither_temp_nor_destination(tmp_path: Path) -> None:
    out = tmp_path / "x.txt"
    with pytest.raises(RuntimeError), atomic_path(out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_writes_refuse_a_symlink_and_leave_its_target_alone(tmp_path: Path) -> None:
    target = tmp_path / "USER.txt"
    target.write_text("mine")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    with pytest.raises(OutputError, match="symlink"):
        write_json(link, {"a": 1})
    assert target.read_text() == "mine" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["USER.txt", "report.json"]


def test_output_error_is_bad_input() -> None:
    assert issubclass(OutputError, SplHfError) and issubclass(SplHfError, ValueError)


def test_write_text_is_exact(tmp_path: Path) -> None:
    path = write_text(tmp_path / "a" / "b.md", "x\r\ny")
    assert path.read_bytes() == b"x\r\ny"


# Where each kind of file is written or read, and the only modules allowed to do it by hand.
BYPASSES = {
    "parquet writer": ({"write_table", "to_parquet", "ParquetWriter"}, {"files.py"}),
    "YAML reader": ({"safe_load", "load", "full_load", "unsafe_load"}, {"yamlio.py"}),
    "folder swap": ({"replace", "rename", "move"}, {"files.py"}),
}
# os.rename of a build moved aside back into place: the recovery of the one folder swap
ALLOWED = {("dataset/folder.py", "folder swap", "os.rename")}
MODULES = {
    "parquet writer": {"pq", "pyarrow.parquet"},
    "YAML reader": {"yaml"},
    "folder swap": {"os", "shutil"},
}


def _bypasses() -> list[str]:
    """``file:line: kind (call)`` for every hand-written writer or reader of a kind that has its one home."""
    import ast

    import spl_hf

    root = Path(spl_hf.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner, name = ast.unparse(node.func.value), node.func.attr
            for kind, (names, homes) in BYPASSES.items():
                by_module = owner in MODULES[kind] or (kind == "parquet writer" and name == "to_parquet")
                if (
                    name in names
                    and by_module
                    and rel not in homes
                    and (rel, kind, f"{owner}.{name}") not in ALLOWED
                ):
                    found.append(f"{rel}:{node.lineno}: {kind} ({owner}.{name})")
            text = ast.unparse(node)
            if name in ("split", "partition") and "'---" in text and rel != "dataset/frontmatter.py":
                found.append(f"{rel}:{node.lineno}: front-matter reader ({text[:60]})")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            # JSON spelled by hand into a file or a JSON Lines record: json.dumps(...) + "\n"
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Add)
                and "json.dumps(" in ast.unparse(node.left)
                and isinstance(node.right, ast.Constant)
                and node.right.value == "\n"
                and rel != "files.py"
            ):
                found.append(f"{rel}:{node.lineno}: JSON writer ({ast.unparse(node)[:60]})")
    return found


def test_each_kind_of_file_has_one_writer_and_one_reader():
    """Parquet, JSON, JSON Lines, folder swaps (spl_hf.files), YAML (spl_hf.yamlio) and card front
    matter (spl_hf.dataset.frontmatter): no module spells them by hand."""
    assert _bypasses() == []


def test_a_large_table_is_written_a_row_group_at_a_time_with_the_bytes_of_a_whole_cast(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spl_hf import files
    from spl_hf.held import hold

    monkeypatch.setattr(files, "ROW_GROUP_ROWS", 100)
    table = pa.table({"s": [f"v{i % 7}" for i in range(250)], "f": [i / 3 for i in range(250)]})
    schema = pa.schema(table.schema, metadata={"huggingface": "{}"})
    files.write_parquet(tmp_path / "plain.parquet", table.cast(schema))
    files.write_parquet(tmp_path / "held.parquet", hold(table), schema)  # decoded per row group
    assert (tmp_path / "plain.parquet").read_bytes() == (tmp_path / "held.parquet").read_bytes()
    meta = pq.ParquetFile(tmp_path / "held.parquet").metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [100, 100, 50]
    assert pq.read_schema(tmp_path / "held.parquet").metadata == schema.metadata
    files.write_parquet(tmp_path / "empty.parquet", hold(table.slice(0, 0)), schema)
    assert pq.read_table(tmp_path / "empty.parquet").schema.equals(schema, check_metadata=True)
