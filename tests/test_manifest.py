"""MANIFEST.sha256: one rule set for every reader, and a writer whose bytes depend only on the files."""

from pathlib import Path

import pytest

from spl_hf.filehash import sha256_file
from spl_hf.manifest import (
    MANIFEST,
    check_manifest,
    format_manifest,
    parse_manifest,
    update_manifest,
    write_manifest,
)
from spl_hf.outputs import owned_by_spl_hf

A, B = "a" * 64, "b" * 64


@pytest.mark.parametrize(
    "line",
    [
        f"{A} README.md",  # one space
        f"{'A' * 64}  README.md",  # upper-case hex
        f"{A[:63]}  README.md",  # short digest
        f"{'g' * 64}  README.md",  # not hex
        f"{A}  /etc/passwd",
        f"{A}  data/../../x",
        f"{A}  data\\x.parquet",
        f"{A}  ",
    ],
)
def test_a_line_that_breaks_the_rules_is_a_problem_naming_its_line(line):
    m = parse_manifest(f"{B}  ok.txt\n{line}\n")
    assert list(m.entries) == ["ok.txt"]
    assert len(m.problems) == 1 and m.problems[0].startswith(f"{MANIFEST}:2: malformed manifest line")


def test_a_path_listed_twice_is_a_problem_and_the_first_digest_counts():
    m = parse_manifest(f"{A}  x.txt\n{B}  x.txt\n")
    assert m.entries == {"x.txt": A} and m.problems == [f"{MANIFEST}:2: x.txt is listed twice"]


def test_written_in_path_part_order_whatever_the_mapping_order(tmp_path):
    # 'a-b/x' sorts before 'a/x' as text but after it by parts: builds have always used parts order.
    digests = {"b.txt": A, "a-b/x.parquet": B, "a/x.parquet": A}
    text = format_manifest(digests)
    assert [line.split("  ")[1] for line in text.splitlines()] == ["a/x.parquet", "a-b/x.parquet", "b.txt"]
    assert format_manifest(dict(reversed(digests.items()))) == text
    with pytest.raises(ValueError, match="cannot list '../x'"):
        format_manifest({"../x": A})


def _sealed(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "t.parquet").write_bytes(b"rows")
    (folder / "README.md").write_text("card")
    write_manifest(folder, {rel: sha256_file(folder / rel) for rel in ("README.md", "data/t.parquet")})
    return folder


def test_every_reader_agrees_on_a_broken_manifest(tmp_path):
    folder = _sealed(tmp_path / "build")
    assert check_manifest(folder).ok and owned_by_spl_hf(folder)
    # Lenient parsers once took this line; now no reader vouches for the folder.
    with (folder / MANIFEST).open("a") as fh:
        fh.write(f"{A}  /abs/path\n")
    check = check_manifest(folder)
    assert not check.ok and check.problems and not check.mismatched
    assert not owned_by_spl_hf(folder)  # never replaced on --overwrite
    with pytest.raises(ValueError, match=r"MANIFEST.sha256:3: malformed"):
        update_manifest(folder, {"README.md": B})


def test_non_utf8_manifest_is_a_problem(tmp_path):
    folder = _sealed(tmp_path / "build")
    (folder / MANIFEST).write_bytes(b"\xff\xfe")
    assert check_manifest(folder).problems == [f"{MANIFEST}: not UTF-8 text"]
    assert not owned_by_spl_hf(folder)


def test_update_changes_only_listed_digests(tmp_path):
    folder = _sealed(tmp_path / "build")
    (folder / "README.md").write_text("new card")
    update_manifest(folder, {"README.md": sha256_file(folder / "README.md"), "other": A})
    assert check_manifest(folder).ok
    assert "other" not in (folder / MANIFEST).read_text()
