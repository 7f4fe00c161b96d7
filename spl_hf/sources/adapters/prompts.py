"""Prompt sources for SPL candidate generation and refusal evaluation (Table VI of the SPL paper).

Each yields prompt rows with the source's category (benign, over_refusal_prone, harmful), a
``source_label`` carrying the source's own classification, and the licence of the prompt text.
XSTest mixes both kinds: its ``safe`` prompts (the 250 the paper uses) are over-refusal-prone and
its ``unsafe`` contrast prompts are harmful.

HarmBench: the official ``harmbench_behaviors_text_all.csv`` holds 400 behaviours of three
``FunctionalCategory`` values: 200 ``standard``, 100 ``contextual`` and 100 ``copyright`` (song lyrics
and book passages to reproduce, judged by a hash match rather than a harm classifier). Only the
categories in ``SourceOptions.harmbench_categories`` are kept, by default ``("standard",)``, the 200
behaviours of the Hub config the adapter names (``walledai/HarmBench`` ``standard``); the others are
counted as filtered (``functional_category_<name>``). A record without a known FunctionalCategory is
quarantined (``bad_value``). The walledai mirror has one config per category and no such column, so
nothing is filtered there. Contextual behaviours are rendered the way HarmBench presents them,
context first, then ``---``, then the behaviour. The CSV's ``\r\n`` line ends (inside quoted
contexts too) become ``\n`` and the texts are trimmed.
"""

from __future__ import annotations

from collections.abc import Callable

from spl_hf.sources.adapter import Filtered, PromptAdapter, Record, SourceOptions
from spl_hf.sources.fields import RowError, get_optional_text, get_text, show
from spl_hf.sources.io import HubSpec
from spl_hf.sources.rows import Category, PromptDraft


def _simple(
    category: Category, text_field: str = "prompt", label_field: str | None = None
) -> Callable[[Record, SourceOptions], PromptDraft]:
    def convert(record: Record, options: SourceOptions) -> PromptDraft:
        text = get_text(record, text_field, empty_reason="empty_prompt")
        label = get_optional_text(record, label_field) if label_field else None
        return PromptDraft(text, category, label)

    return convert


def convert_xstest(record: Record, options: SourceOptions) -> PromptDraft:
    text = get_text(record, "prompt", empty_reason="empty_prompt")
    label = get_text(record, "label", empty_reason="missing_label").strip().lower()
    if label not in ("safe", "unsafe"):
        raise RowError("bad_value", "label", f"'label' should be 'safe' or 'unsafe', got {label!r}")
    category: Category = "over_refusal_prone" if label == "safe" else "harmful"
    return PromptDraft(text, category, get_optional_text(record, "type"))


HARMBENCH_CATEGORIES = ("standard", "contextual", "copyright")


def _unix(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def convert_harmbench(record: Record, options: SourceOptions) -> PromptDraft | Filtered:
    # The official CSV and the walledai mirror name the same fields differently.
    if "Behavior" in record:
        category = get_optional_text(record, "FunctionalCategory")
        if category is not None:
            category = category.strip().lower()
            if category not in HARMBENCH_CATEGORIES:
                raise RowError(
                    "bad_value",
                    "FunctionalCategory",
                    f"'FunctionalCategory' should be one of {', '.join(HARMBENCH_CATEGORIES)}, got {show(category)}",
                )
            if category not in options.harmbench_categories:
                return Filtered(f"functional_category_{category}")
        behavior = get_text(record, "Behavior", empty_reason="empty_prompt")
        context = get_optional_text(record, "ContextString")
        label = get_optional_text(record, "SemanticCategory")
    else:
        behavior = get_text(record, "prompt", empty_reason="empty_prompt")
        context = get_optional_text(record, "context")
        label = get_optional_text(record, "category")
    behavior = _unix(behavior)
    context = _unix(context) if context else None
    text = f"{context}\n\n---\n\n{behavior}" if context else behavior
    return PromptDraft(text, "harmful", _unix(label) if label else None)


# Any file of prompts (a team's red-team set, a CSV of questions) under a source name the user chooses;
# its category is what the recipe declares, "unknown" otherwise (spl_hf.sources.registry).
PROMPTS = PromptAdapter(
    name="prompts",
    hub=HubSpec("prompts", split="train"),
    license="unknown",
    description="prompts of a file of the user's own (column prompt, optional source_label).",
    schemas=(("prompt",),),
    convert=_simple("unknown", label_field="source_label"),
)
ULTRACHAT = PromptAdapter(
    name="ultrachat",
    hub=HubSpec("HuggingFaceH4/ultrachat_200k", split="train_sft"),
    license="mit",
    description="UltraChat 200k opening prompts (benign).",
    schemas=(("prompt",),),
    convert=_simple("benign"),
)
OR_BENCH_80K = PromptAdapter(
    name="or_bench_80k",
    hub=HubSpec("bench-llm/or-bench", config="or-bench-80k", split="train"),
    license="cc-by-4.0",
    description="OR-Bench 80k seemingly-toxic prompts (over-refusal-prone); source_label = category.",
    schemas=(("prompt", "category"),),
    convert=_simple("over_refusal_prone", label_field="category"),
)
OR_BENCH_HARD_1K = PromptAdapter(
    name="or_bench_hard_1k",
    hub=HubSpec("bench-llm/or-bench", config="or-bench-hard-1k", split="train"),
    license="cc-by-4.0",
    description="OR-Bench hard-1k (over-refusal-prone); source_label = category.",
    schemas=(("prompt", "category"),),
    convert=_simple("over_refusal_prone", label_field="category"),
)
OR_BENCH_TOXIC = PromptAdapter(
    name="or_bench_toxic",
    hub=HubSpec("bench-llm/or-bench", config="or-bench-toxic", split="train"),
    license="cc-by-4.0",
    description="OR-Bench toxic prompts (harmful); source_label = category.",
    schemas=(("prompt", "category"),),
    convert=_simple("harmful", label_field="category"),
)
XSTEST = PromptAdapter(
    name="xstest",
    hub=HubSpec("Paul/XSTest", split="train"),
    license="cc-by-4.0",
    description="XSTest: safe prompts over-refusal-prone, unsafe contrast prompts harmful; source_label = type.",
    schemas=(("prompt", "type", "label"),),
    convert=convert_xstest,
)
HARMBENCH = PromptAdapter(
    name="harmbench",
    hub=HubSpec("walledai/HarmBench", config="standard", split="train"),
    license="mit",
    description="HarmBench text behaviours (harmful); official CSV or walledai mirror; source_label = semantic category.",
    schemas=(("Behavior", "SemanticCategory"), ("prompt", "category")),
    convert=convert_harmbench,
)
DO_NOT_ANSWER = PromptAdapter(
    name="do_not_answer",
    hub=HubSpec("LibrAI/do-not-answer", split="train"),
    license="cc-by-nc-sa-4.0",
    description="Do-Not-Answer questions (harmful); source_label = types_of_harm.",
    schemas=(("question", "types_of_harm"),),
    convert=_simple("harmful", text_field="question", label_field="types_of_harm"),
)
MALICIOUS_INSTRUCT = PromptAdapter(
    name="malicious_instruct",
    hub=HubSpec("walledai/MaliciousInstruct", split="train"),
    license="cc-by-sa-4.0",
    description="MaliciousInstruct (harmful).",
    schemas=(("prompt",),),
    convert=_simple("harmful"),
)
