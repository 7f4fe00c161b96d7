"""Score-weighted DPO: each pair's sigmoid DPO loss weighted by a numeric column of the dataset.

The batch loss is the weighted mean ``sum_i w_i * l_i / sum_i w_i`` of the per-pair losses, so a
pair of weight 0 contributes nothing (the gradient equals that of the batch without it) and
uniform weights give exactly TRL's plain DPO loss. The weight column travels through tokenization
untouched, past ``remove_unused_columns`` (it is added to the signature columns) and into the
batch as ``pair_weight`` (the collator is wrapped). Only the configuration the weighting is
defined for is accepted: sigmoid loss, reverse-KL, no length desensitisation, no WPO weighting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from accelerate.utils import is_peft_model
from trl import DPOTrainer
from trl.models.utils import disable_gradient_checkpointing
from trl.trainer.utils import use_adapter

from spl_hf.errors import SplHfError

WEIGHT_KEY = "pair_weight"


class WeightCollator:
    """Wraps a preference collator: takes each example's weight out, collates the rest, adds the weights."""

    def __init__(self, inner: Callable[[list[dict[str, Any]]], dict[str, Any]], column: str) -> None:
        self.inner = inner
        self.column = column

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        weights = [float(ex[self.column]) for ex in examples]
        batch = self.inner([{k: v for k, v in ex.items() if k != self.column} for ex in examples])
        batch[WEIGHT_KEY] = torch.tensor(weights, dtype=torch.float32)
        return batch


def weighted_sigmoid_loss(delta: torch.Tensor, weights: torch.Tensor, beta: float) -> torch.Tensor:
    """``sum w * -logsigmoid(beta * delta) / sum w``; an all-zero batch gives 0 with zero gradient."""
    per_pair = -F.logsigmoid(beta * delta)
    w = weights.to(per_pair.dtype)
    return (w * per_pair).sum() / w.sum().clamp_min(torch.finfo(per_pair.dtype).tiny)


class WeightedDPOTrainer(DPOTrainer):
    """``DPOTrainer`` whose per-pair sigmoid loss is weighted by ``weight_column``."""

    def __init__(self, *args: Any, weight_column: str = "score", **kwargs: Any) -> None:
        self.weight_column = weight_column
        super().__init__(*args, **kwargs)
        unsupported = []
        if list(self.loss_types) != ["sigmoid"]:
            unsupported.append(f"loss_type={self.loss_types} (only ['sigmoid'])")
        if self.f_divergence_type != "reverse_kl":
            unsupported.append(f"f_divergence_type={self.f_divergence_type!r}")
        if self.ld_alpha is not None:
            unsupported.append("ld_alpha")
        if self.use_weighting:
            unsupported.append("use_weighting (WPO)")
        if self.aux_loss_enabled:
            unsupported.append("MoE router aux loss")
        if self._is_vision_dataset:
            unsupported.append("vision datasets")
        if unsupported:
            raise SplHfError(
                "score-weighted DPO supports the plain sigmoid loss only; unsupported: "
                + ", ".join(unsupported)
            )
        self.data_collator = WeightCollator(self.data_collator, weight_column)

    def _set_signature_columns_if_needed(self) -> None:
        super()._set_signature_columns_if_needed()
        if self.weight_column not in self._signature_columns:
            self._signature_columns = [*self._signature_columns, self.weight_column]

    def _sequence_logps(self, model: Any, model_kwargs: dict[str, Any], labels: torch.Tensor, seq_len: int):
        outputs = model(**model_kwargs, labels=labels, fused_lm_head=True)
        return outputs.log_probs[:, -seq_len:].sum(dim=1)

    def _compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool):
        if return_outputs:
            raise SplHfError(
                "score-weighted DPO computes no logits for compute_metrics; unset compute_metrics"
            )
        mode = "train" if self.model.training else "eval"
        weights = inputs[WEIGHT_KEY]
        non_model = {"completion_mask", "ref_chosen_logps", "ref_rejected_logps", WEIGHT_KEY}
        model_kwargs = {k: v for k, v in inputs.items() if k not in non_model}
        model_kwargs["use_cache"] = False
        completion_mask = inputs["completion_mask"]
        seq_len = completion_mask.size(1) - 1
        labels = inputs["input_ids"].masked_fill(completion_mask == 0, -100)

        logps = self._sequence_logps(model, model_kwargs, labels, seq_len)
        chosen_logps, rejected_logps = logps.chunk(2, dim=0)
        if self.precompute_ref_logps:
            ref_chosen_logps, ref_rejected_logps = inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]
        else:
            # Same reference as DPOTrainer: with a fresh adapter, the base model with adapters disabled.
            with (
                torch.no_grad(),
                disable_gradient_checkpointing(self.model, self.args.gradient_checkpointing_kwargs),
            ):
                if is_peft_model(self.model) and self.ref_model is None:
                    unwrapped = self.accelerator.unwrap_model(self.model)
                    with use_adapter(
                        unwrapped, adapter_name="ref" if "ref" in unwrapped.peft_config else None
                    ):
                        ref_logps = self._sequence_logps(self.model, model_kwargs, labels, seq_len)
                else:
                    ref_logps = self._sequence_logps(self.ref_model, model_kwargs, labels, seq_len)
            ref_chosen_logps, ref_rejected_logps = ref_logps.chunk(2, dim=0)

        chosen_logratios = chosen_logps - ref_chosen_logps
        rejected_logratios = rejected_logps - ref_rejected_logps
        loss = weighted_sigmoid_loss(chosen_logratios - rejected_logratios, weights, self.beta)

        chosen_rewards = self.beta * chosen_logratios.detach()
        rejected_rewards = self.beta * rejected_logratios.detach()
        gather = self.accelerator.gather
        metrics = self._metrics[mode]
        metrics["rewards/chosen"].append(gather(chosen_rewards).mean().item())
        metrics["rewards/rejected"].append(gather(rejected_rewards).mean().item())
        metrics["rewards/accuracies"].append(
            gather((chosen_rewards > rejected_rewards).float()).mean().item()
        )
        metrics["rewards/margins"].append(gather(chosen_rewards - rejected_rewards).mean().item())
        metrics["logps/chosen"].append(gather(chosen_logps.detach()).mean().item())
        metrics["logps/rejected"].append(gather(rejected_logps.detach()).mean().item())
        metrics["weights/mean"].append(gather(weights.to(chosen_logps.device).float()).mean().item())
        return loss
