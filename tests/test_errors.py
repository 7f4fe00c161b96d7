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
