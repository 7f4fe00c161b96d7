"""spl_hf.hub.local_server: the local Hub server is the [server] extra, never in the core package."""

from __future__ import annotations

import sys
from pathlib import Path

from tests import procs


def test_without_the_server_extra_the_command_says_what_to_install(tmp_path):
    """A core install (the server package absent): --help works, running exits 2 with the hint."""
    code = (
        "import sys; sys.modules['spl_hf_hub_server'] = None\n"  # as if not installed
        "from spl_hf.cli import main\nsys.exit(main(sys.argv[1:]))"
    )
    run = [sys.executable, "-c", code, "hub", "serve"]
    helped = procs.run([*run, "--help"], capture_output=True, text=True, timeout=300)
    assert helped.returncode == 0 and "--max_commit_body" in helped.stdout
    refused = procs.run([*run, "--root", str(tmp_path / "r")], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "pip install 'spl_hf[server]'" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_the_core_package_holds_no_server_code():
    import importlib.util

    import spl_hf

    assert importlib.util.find_spec("spl_hf.hub.server") is None
    assert not list(Path(spl_hf.__file__).parent.rglob("server/*.py"))
