from spl_hf.sources.adapters.community_alignment import CA_EN_MT_P1, COMMUNITY_ALIGNMENT_EN
from spl_hf.sources.adapters.helpsteer2 import HELPSTEER2
from spl_hf.sources.adapters.hh import HH
from spl_hf.sources.adapters.pku import PKU
from spl_hf.sources.adapters.prompts import (
    DO_NOT_ANSWER,
    HARMBENCH,
    MALICIOUS_INSTRUCT,
    OR_BENCH_80K,
    OR_BENCH_HARD_1K,
    OR_BENCH_TOXIC,
    ULTRACHAT,
    XSTEST,
)
from spl_hf.sources.adapters.ultrafeedback import ULTRAFEEDBACK
from spl_hf.sources.adapters.wildfeedback import WF_MT, WILDFEEDBACK_ST

# Pair pools in the order of the per-tenet dataset card; read_pools concatenates in this order.
PAIR_ADAPTERS = (
    PKU,
    HH,
    ULTRAFEEDBACK,
    HELPSTEER2,
    COMMUNITY_ALIGNMENT_EN,
    WILDFEEDBACK_ST,
    CA_EN_MT_P1,
    WF_MT,
)
PROMPT_ADAPTERS = (
    ULTRACHAT,
    OR_BENCH_80K,
    OR_BENCH_HARD_1K,
    OR_BENCH_TOXIC,
    XSTEST,
    HARMBENCH,
    DO_NOT_ANSWER,
    MALICIOUS_INSTRUCT,
)

__all__ = ["PAIR_ADAPTERS", "PROMPT_ADAPTERS"]
