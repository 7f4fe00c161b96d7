"""Score-weighted DPO against TRL's own DPO loss, on a tiny random Llama with a LoRA adapter."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def _rows() -> list[dict]:
    turns = [
        ("How do I boil an egg?", "Put it in boiling water for nine minutes.", "No."),
        ("Name a prime number.", "Seven.", "Eight is prime, obviously, as everyone knows."),
        ("What is the capital of France?", "Paris.", "I cannot help with geography questions today."),
        ("Say hello.", "Hello!", "Goodbye."),
    ]
    return [
        {
            "prompt": [{"role": "user", "content": q}],
            "chosen": [{"role": "assistant", "content": c}],
            "rejected": [{"role": "assistant", "content": r}],
            "score": [0.9, 0.3, 0.0, 0.6][i],
        }
        for i, (q, c, r) in enumerate(turns)
    ]


@pytest.fixture(scope="module")
def trainer(tiny_model_dir, tmp_path_factory):
    from datasets import Dataset
    from peft import LoraConfig
    from trl import DPOConfig

    from spl_hf.train.weighted import WeightedDPOTrainer

    args = DPOConfig(
        output_dir=str(tmp_path_factory.mktemp("weighted")),
        use_cpu=True,
        bf16=False,
        report_to="none",
        per_device_train_batch_size=4,
        max_length=64,
        gradient_checkpointing=False,
        seed=0,
    )
    t = WeightedDPOTrainer(
        model=str(tiny_model_dir),
        args=args,
        train_dataset=Dataset.from_list(_rows()),
        peft_config=LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "v_proj"]),
        weight_column="score",
    )
    # A fresh adapter makes every pair's log-ratio 0; move it so pairs differ and weights matter.
    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in t.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.5)
    t.model.train()
    return t


def _batch(trainer, idx: list[int], weights: list[float] | None = None) -> dict:
    batch = trainer.data_collator([trainer.train_dataset[i] for i in idx])
    if weights is not None:
        batch["pair_weight"] = torch.tensor(weights)
    return batch


def _loss_grads(trainer, compute, batch) -> tuple[float, dict[str, torch.Tensor]]:
    from trl import DPOTrainer

    trainer.model.zero_grad()
    if compute == "trl":
        plain = {k: v for k, v in batch.items() if k != "pair_weight"}
        loss = DPOTrainer._compute_loss(trainer, trainer.model, plain, False)
    else:
        loss = trainer._compute_loss(trainer.model, batch, False)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    return float(loss.detach()), grads


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys() and a
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-4, atol=1e-7, msg=name)


def test_weight_column_reaches_the_batch(trainer):
    batch = next(iter(trainer.get_train_dataloader()))
    assert sorted(batch["pair_weight"].tolist()) == pytest.approx(sorted([0.9, 0.3, 0.0, 0.6]))


def test_uniform_weights_equal_plain_dpo(trainer):
    plain_loss, plain_grads = _loss_grads(trainer, "trl", _batch(trainer, [0, 1, 2, 3]))
    loss, grads = _loss_grads(trainer, "weighted", _batch(trainer, [0, 1, 2, 3], [2.5] * 4))
    assert loss == pytest.approx(plain_loss, rel=1e-6)
    _assert_same(grads, plain_grads)
    assert abs(plain_loss - 0.6931) > 1e-3  # the adapter is not at its neutral start


def test_weight_zero_rows_leave_the_gradient_unchanged(trainer):
    _, without = _loss_grads(trainer, "trl", _batch(trainer, [0, 1]))
    _, with_zero = _loss_grads(trainer, "weighted", _batch(trainer, [0, 1, 2, 3], [1.0, 1.0, 0.0, 0.0]))
    _assert_same(with_zero, without)


def test_weights_give_the_weighted_mean_of_trl_pair_losses(trainer):
    per_pair = [_loss_grads(trainer, "trl", _batch(trainer, [i]))[0] for i in range(4)]
    w = [1.0, 3.0, 0.5, 2.0]
    loss, _ = _loss_grads(trainer, "weighted", _batch(trainer, [0, 1, 2, 3], w))
    expected = sum(wi * li for wi, li in zip(w, per_pair)) / sum(w)
    assert loss == pytest.approx(expected, rel=1e-5)
    assert loss != pytest.approx(sum(per_pair) / 4, rel=1e-4)


def test_all_zero_batch_gives_zero_gradient(trainer):
    loss, grads = _loss_grads(trainer, "weighted", _batch(trainer, [0, 1], [0.0, 0.0]))
    assert loss == 0.0
    assert all(float(g.abs().max()) == 0.0 for g in grads.values())


def test_other_loss_types_are_refused(tiny_model_dir, tmp_path):
    from datasets import Dataset
    from peft import LoraConfig
    from trl import DPOConfig

    from spl_hf.train.weighted import WeightedDPOTrainer

    args = DPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        report_to="none",
        loss_type=["ipo"],
        gradient_checkpointing=False,
    )
    with pytest.raises(ValueError, match="sigmoid"):
        WeightedDPOTrainer(
            model=str(tiny_model_dir),
            args=args,
            train_dataset=Dataset.from_list(_rows()),
            peft_config=LoraConfig(r=2, target_modules=["q_proj"]),
            weight_column="score",
        )
