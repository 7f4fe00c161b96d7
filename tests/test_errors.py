"""Bad input raises SplHfError (or a subclass); a plain ValueError or KeyError is left to bugs.

The CLI prints only SplHfError, OSError and decode errors as one-line messages (tests/test_cli.py);
a validation site that raised a plain ValueError would turn a user's mistake into a traceback.
"""

from __future__ import annotations

import ast
from pathlib import Path

import spl_hf
from spl_hf.errors import OutputError, SplHfError, UnknownNameError

PACKAGE = Path(spl_hf.__file__).parent
# A guard on the server's own response headers: it fires only on a server bug.
ALLOWED = {("hub/server/http.py", "ValueError")}


def _plain_raises() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = getattr(node.exc.func, "id", None)
                if name in ("ValueError", "KeyError") and (rel, name) not in ALLOWED:
                    found.append((rel, node.lineno, name))
    return found


def test_no_validation_site_raises_a_plain_value_or_key_error():
    assert _plain_raises() == []


def test_the_domain_errors_are_bad_input_and_keep_their_builtin_bases():
    assert issubclass(OutputError, SplHfError) and issubclass(SplHfError, ValueError)
    err = UnknownNameError("tenets.yaml: unknown tenet 'x'")
    assert isinstance(err, KeyError) and isinstance(err, SplHfError)
    assert str(err) == "tenets.yaml: unknown tenet 'x'"  # no KeyError quotes in the one-line message


# Entry points that catch errors: only USER_ERRORS become one line and exit 2; a KeyError or a plain
# ValueError from inside (here injected) is a bug and shows its traceback with exit 1.
PUBLISH_BUG = """
import sys
import spl_hf.audit
def audit(*args, **kwargs):
    raise {exc}("injected")
spl_hf.audit.audit = audit
from spl_hf.cli import main
sys.exit(main(["publish", sys.argv[1], "--repo_id", "org/name"]))
"""
TRAIN_BUG = """
import sys, types
from spl_hf.errors import SplHfError
args = types.ModuleType("spl_hf.train.args")
args.parse_args = lambda argv: ()
run = types.ModuleType("spl_hf.train.run")
def main(*parsed, argv):
    raise {exc}("injected")
run.main = main
sys.modules["spl_hf.train.args"], sys.modules["spl_hf.train.run"] = args, run
from spl_hf.train.entry import cli
sys.exit(cli([]))
"""


def _run(code: str, *argv: str):
    import sys

    from tests import procs

    return procs.run([sys.executable, "-c", code, *argv], timeout=120)


def _folder(tmp_path: Path) -> str:
    (tmp_path / "MANIFEST.sha256").write_text("")  # publish checks it is a build folder, then audits
    return str(tmp_path)


def test_a_bug_inside_publish_or_train_keeps_its_traceback(tmp_path):
    for exc in ("KeyError", "ValueError"):
        for out in (_run(PUBLISH_BUG.format(exc=exc), _folder(tmp_path)), _run(TRAIN_BUG.format(exc=exc))):
            assert out.returncode == 1, out.stderr[-2000:]
            assert "Traceback (most recent call last)" in out.stderr and f"{exc}: " in out.stderr


def test_bad_input_inside_publish_or_train_is_one_line_and_exit_2(tmp_path):
    for out in (
        _run(
            PUBLISH_BUG.format(exc="SplHfError").replace(
                "import spl_hf.audit", "import spl_hf.audit\nfrom spl_hf.errors import SplHfError"
            ),
            _folder(tmp_path),
        ),
        _run(TRAIN_BUG.format(exc="SplHfError")),
    ):
        assert out.returncode == 2, out.stderr[-2000:]
        assert "Traceback" not in out.stderr and out.stderr.strip().count("\n") == 0
        assert "injected" in out.stderr
