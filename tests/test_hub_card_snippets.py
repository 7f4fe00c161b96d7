"""Every loading snippet of a published card runs as written against the local Hub server."""

from __future__ import annotations

import re
import sys

from tests import procs
from tests.hub_fixtures import client_env, run_cli

BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _card(hub, env, repo_id: str, revision: str) -> str:
    code = (
        "from huggingface_hub import hf_hub_download\n"
        f"print(open(hf_hub_download({repo_id!r}, 'README.md', repo_type='dataset', revision={revision!r})).read())"
    )
    proc = procs.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _run_snippets(card: str, env) -> int:
    """Run each python block that loads data; returns the number of load_dataset calls that ran."""
    loaded = 0
    for block in BLOCK.findall(card):
        if "load_dataset(" not in block:
            continue
        probe = (
            block
            + "\nprint('rows', sum(len(v) for k, v in dict(globals()).items() if type(v).__name__ == 'Dataset'))\n"
        )
        proc = procs.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, block + proc.stderr[-3000:]
        assert int(proc.stdout.split()[-1]) > 0
        loaded += block.count("load_dataset(")
    return loaded


def test_every_snippet_of_the_published_cards_loads(builds, hub, tmp_path):
    env = client_env(hub, tmp_path / "home")
    total = 0
    for kind, repo_id in (("tenets", "demo/tenet-snippets"), ("spl", "demo/spl-snippets")):
        pub = run_cli(["publish", str(builds[kind]), "--repo_id", repo_id], env)
        assert pub.returncode == 0, pub.stderr[-2000:]
        card = _card(hub, env, repo_id, "main")
        assert "ORG/NAME" not in card and f'load_dataset("{repo_id}"' in card
        assert "## Example rows" in card
        total += _run_snippets(card, env)
    assert total >= 6  # tenets: all, one tenet's config, judge_scores; spl: three configs/splits


def test_a_card_published_to_a_branch_names_it(builds, hub, tmp_path):
    env = client_env(hub, tmp_path / "home")
    pub = run_cli(["publish", str(builds["tenets"]), "--repo_id", "demo/branched", "--revision", "v1"], env)
    assert pub.returncode == 0, pub.stderr[-2000:]
    card = _card(hub, env, "demo/branched", "v1")
    assert card.count('revision="v1"') >= 3
    assert _run_snippets(card, env) >= 3
