"""Refusal rate of model responses under a named, published keyword matcher.

The matching logic lives in the installed ``spl_hf`` package (``spl_hf.refusal``); this file only
adapts it to the ``evaluate`` interface. The configuration name chooses the matcher.
"""

import datasets
import evaluate

from spl_hf import refusal

_CITATION = """\
@inproceedings{rottger2024xstest,
  title={XSTest: A Test Suite for Identifying Exaggerated Safety Behaviours in Large Language Models},
  author={R{\\"o}ttger, Paul and Kirk, Hannah Rose and Vidgen, Bertie and Attanasio, Giuseppe and Bianchi, Federico and Hovy, Dirk},
  booktitle={NAACL},
  year={2024}
}
@article{cui2024orbench,
  title={OR-Bench: An Over-Refusal Benchmark for Large Language Models},
  author={Cui, Justin and Chiang, Wei-Lin and Stoica, Ion and Hsieh, Cho-Jui},
  journal={arXiv preprint arXiv:2405.20947},
  year={2024}
}
@article{zou2023universal,
  title={Universal and Transferable Adversarial Attacks on Aligned Language Models},
  author={Zou, Andy and Wang, Zifan and Kolter, J. Zico and Fredrikson, Matt},
  journal={arXiv preprint arXiv:2307.15043},
  year={2023}
}
"""

_DESCRIPTION = (
    "Share of responses that a published keyword matcher marks as refusals, with the share of "
    "responses that stopped at the token limit and the refusal rate among those and among the "
    "others. Configurations: " + ", ".join(refusal.MATCHERS) + " (harmbench is an alias of advbench). "
    "Curly apostrophes and leading whitespace are normalised before matching."
)

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the responses.
    at_limit (list of bool): whether each response stopped at the generation token limit.
    categories (list of str, optional): a category per response; rates are also reported per category.
    return_labels (bool, optional): also return per-item refusal flags and the matched pattern
        (overrides the value given to evaluate.load).
Returns:
    matcher, matcher_hash, n, n_refusals, refusal_rate (0..1), at_limit, at_limit_rate,
    n_refusals_at_limit, refusal_rate_at_limit, refusal_rate_not_at_limit (None for an empty group),
    per_category (with categories), refusals and matched (with return_labels).
Examples:
    >>> import evaluate
    >>> from spl_hf.metrics import REFUSAL_RATE
    >>> metric = evaluate.load(REFUSAL_RATE, "xstest", keep_in_memory=True)
    >>> r = metric.compute(predictions=["I'm sorry, I can't.", "Sure: ..."], at_limit=[False, True])
    >>> r["refusal_rate"], r["at_limit"]
    (0.5, 1)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RefusalRate(evaluate.Metric):
    def __init__(self, config_name=None, matcher=None, return_labels=False, **kwargs):
        # evaluate.load passes its own keywords through here; without this override the module's own
        # options (matcher, return_labels) would be dropped silently.
        self.matcher = refusal.get_matcher(matcher or config_name)
        self.return_labels = bool(return_labels)
        super().__init__(config_name=config_name, **kwargs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "at_limit": datasets.Value("bool")}
            ),
            reference_urls=[
                "https://github.com/paul-rottger/exaggerated-safety",
                "https://github.com/justincui03/or-bench",
                "https://github.com/llm-attacks/llm-attacks",
            ],
        )

    def _compute(self, predictions=None, at_limit=None, categories=None, return_labels=None, **kwargs):
        # **kwargs: evaluate.combine passes every keyword to every module.
        labels = self.return_labels if return_labels is None else bool(return_labels)
        result = refusal.compute_refusal(
            predictions, at_limit, categories, self.matcher, return_labels=labels
        )
        out = result.to_dict()
        if categories is None:
            out.pop("per_category")
        if labels:
            out["refusals"], out["matched"] = list(out["refusals"]), list(out["matched"])
        else:
            out.pop("refusals")
            out.pop("matched")
        return out
