"""A release's --dry_run refuses what the real run would refuse in its first seconds (issue 36 item 4, F9):
a backend whose package is not installed, and a Hub pool id that the configured endpoint does not have."""

from __future__ import annotations

import importlib.util

import pytest

from spl_hf.cli import main
from tests.conftest import REPO
from tests.hub_fixtures import TOKEN

DEMO = REPO / "recipes" / "tenets" / "demo.yaml"


def _dry(tmp_path, *extra: str) -> list[str]:
    return [
        "release",
        "tenets",
        "--config",
        str(DEMO),
        *extra,
        "--dry_run",
        "--run_dir",
        str(tmp_path / "run"),
        "--output_dir",
        str(tmp_path / "ds"),
    ]


@pytest.fixture
def no_vllm(monkeypatch):
    """vLLM missing, as on a machine without the [vllm] extra (this venv has none; if it had, a name
    that no package has stands in for it)."""
    import spl_hf.backends.loading as loading

    if importlib.util.find_spec("vllm") is not None:
        monkeypatch.setitem(loading.ENGINE_PACKAGES, "vllm", ("spl_hf_no_such_package", "pip install it"))


def test_a_dry_run_refuses_a_backend_whose_package_is_missing(tmp_path, capsys, no_vllm):
    assert main(_dry(tmp_path, "--backend", "vllm")) == 2
    err = capsys.readouterr().err
    assert "backend vllm: the " in err and "is not installed" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_the_vllm_backend_without_vllm_is_a_one_line_error_not_a_traceback(no_vllm):
    # review F9: the real run ended in an ImportError traceback
    from spl_hf.backends import MissingPackageError
    from spl_hf.errors import SplHfError

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    from spl_hf.backends.vllm import VLLMBackend

    with pytest.raises(MissingPackageError, match=r"pip install 'spl_hf\[vllm\]'") as info:
        VLLMBackend("any/model")
    assert isinstance(info.value, SplHfError) and isinstance(info.value, ImportError)


@pytest.fixture
def hub_pool(hub, hub_client, monkeypatch):
    """A dataset repo on the local Hub server, with HF_ENDPOINT pointing there: (repo id, commit)."""
    from huggingface_hub import HfApi

    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    api = HfApi(endpoint=hub.url, token=TOKEN)
    repo = "team/hh-pool"
    api.create_repo(repo, repo_type="dataset", exist_ok=True)
    line = b'{"chosen": "\\n\\nHuman: q\\n\\nAssistant: a", "rejected": "\\n\\nHuman: q\\n\\nAssistant: b"}\n'
    info = api.upload_file(
        path_or_fileobj=line, path_in_repo="train.jsonl", repo_id=repo, repo_type="dataset"
    )
    return repo, info.oid


def test_a_dry_run_asks_the_configured_hub_for_each_pool_id(tmp_path, capsys, hub_pool, hub):
    repo, commit = hub_pool
    assert main(_dry(tmp_path, "--pools", f"hh_train={repo}@{commit}")) == 0
    assert f"commit {commit}" in capsys.readouterr().out
    assert main(_dry(tmp_path, "--pools", "hh_train=team/no-such-pool")) == 2
    err = capsys.readouterr().err
    assert "no Hub dataset 'team/no-such-pool' on " + hub.url in err and "Traceback" not in err
    assert main(_dry(tmp_path, "--pools", f"hh_train={repo}@{'0' * 40}")) == 2
    assert f"has no revision '{'0' * 40}'" in capsys.readouterr().err
