"""Source adapters: public preference pools and prompt sets read into unified, typed rows.

Any preference file (``GENERIC``): ``preference`` reads TRL's preference formats, or any table
through a column mapping, under a source name the user chooses (:mod:`spl_hf.sources.adapters.preference`,
:mod:`spl_hf.sources.mapping`).

Pair pools (``ADAPTERS``, in the order of the per-tenet dataset card): ``pku_train``, ``hh_train``,
``ultrafeedback_train``, ``helpsteer2_train``, ``community_alignment_en``, ``wildfeedback_st``,
``ca_en_mt_p1``, ``wf_mt``. Prompt sources (``PROMPT_SOURCES``): ``ultrachat``, ``or_bench_80k``,
``or_bench_hard_1k``, ``or_bench_toxic``, ``xstest``, ``harmbench``, ``do_not_answer``,
``malicious_instruct``.

Rows have fixed Features (``PAIR_FEATURES``, ``PROMPT_FEATURES``). ``row_id`` numbers the rows a
pool yields from 0 in record order, ``pair_id`` is ``f"{source}_{row_id}"``, ``record_index`` is
the 0-based position of the originating record in the file (or Hub split), and ``prompt_id`` is
:func:`prompt_id` of the conversation the prompt shows: the turn list (roles and normalised texts),
not its display, so HH-RLHF's ``Human: …`` transcripts and the clipped ``User: …`` flattenings of
multi-turn pools get the id of the same conversation anywhere else (a one-turn HH prompt has the id
of the same question in PKU-SafeRLHF or a prompt source). ``response_a_safe``/``response_b_safe``
and ``response_a_severity``/``response_b_severity`` carry a source's safety labels of the two
responses (PKU-SafeRLHF), null for the other pools. ``response_a``/``response_b`` keep the source's order:
chosen then rejected where the source is split that way (HH, UltraFeedback, WildFeedback),
otherwise the listed order (PKU response_0/1, HelpSteer2 response_1/2, Community Alignment letter
order). ``source_preference`` says which side the source prefers, ``"tie"`` when it rates both
equal, None when it says nothing (Community Alignment pairs of two non-preferred candidates).

No record disappears: each one yields rows, is counted in ``report.filtered`` (valid but outside
the pool, e.g. another language or the other WildFeedback pool), or has at least one quarantine
entry with source, record_index, field and a reason code (a Community Alignment record can yield
some pairs and quarantine others; a HelpSteer2 per-response row can be the partner of the row
before it). Reasons shared by all adapters: ``missing_field``,
``wrong_type``, ``empty_prompt``, ``empty_response``, ``identical_responses`` (same text after
whitespace/NFKC normalisation: a judge has nothing to compare), ``bad_value``,
``bad_role_sequence``, ``unparsable_record``, ``duplicate_pair`` / ``duplicate_prompt`` (a repeat,
after normalisation, of an earlier row of the same pool: valid, but it would be judged or
generated for twice, so only the first is kept and the repeat names it), ``bad_text`` (a NUL
character or lone surrogate in a prompt or response), ``text_too_long`` (over
``SourceOptions.max_text_chars``, 200,000 by default); from reading the file (see
:mod:`spl_hf.sources.formats.damage`): ``invalid_utf8``, ``lone_surrogate``, ``too_deep``, ``bad_csv_row``,
``duplicate_key`` (a JSON object naming a key twice),
``truncated_file`` (one entry for the unreadable tail of a cut file, after every intact record; such
a file, a cut ``.gz``, an unclosed JSON list or a ``.jsonl`` whose last line is cut, is refused,
naming it, unless ``SourceOptions.accept_partial``, and then the report's
``partial`` is true).
Adapter-specific reasons are documented in each adapter module. A file lacking a required column altogether is a wrong input, not a malformed row, and
raises ValueError naming the source, file and columns; so does a file that is unusable as a whole
(missing, a directory, a Git LFS pointer, a ``.gz`` that is not gzip, unreadable parquet, no records
at all: 0 bytes, only a header, a 0-row parquet, or none that decodes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.sources.adapter import Converted, PairAdapter, PromptAdapter
    from spl_hf.sources.convert import (
        PoolResult,
        PoolsResult,
        PromptPoolResult,
        pairs_from_table,
        prompts_from_table,
        quarantine_dataset,
    )
    from spl_hf.sources.fields import RowError
    from spl_hf.sources.io import HubSpec, RawTable, SourceFileError, is_hub_id, read_local, read_table
    from spl_hf.sources.mapping import ColumnMap, MappingError, parse_columns
    from spl_hf.sources.options import SourceOptions, SourcesReadArgs
    from spl_hf.sources.pools import (
        ADAPTERS,
        GENERIC,
        PROMPT_SOURCES,
        preview,
        read_pool,
        read_pools,
        read_prompt_pool,
        read_prompt_pools,
        require_rows,
        resolve_adapter,
    )
    from spl_hf.sources.registry import check_category, known_adapters
    from spl_hf.sources.report import BuildReport, SourceReport
    from spl_hf.sources.rows import (
        PAIR_FEATURES,
        PROMPT_FEATURES,
        QUARANTINE_FEATURES,
        Issue,
        PairDraft,
        PromptDraft,
        QuarantineRecord,
        normalize_text,
        prompt_id,
    )
    from spl_hf.sources.samples import eval_sample_paths, prompt_sample_paths, sample_paths
    from spl_hf.sources.transcript import DEFAULT_CLIP_CHARS, OMITTED_MARKER, Flattened, flatten_history


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.sources.adapter": (
        "Converted",
        "PairAdapter",
        "PromptAdapter",
    ),
    "spl_hf.sources.fields": ("RowError",),
    "spl_hf.sources.io": (
        "HubSpec",
        "RawTable",
        "SourceFileError",
        "is_hub_id",
        "read_local",
        "read_table",
    ),
    "spl_hf.sources.mapping": (
        "ColumnMap",
        "MappingError",
        "parse_columns",
    ),
    "spl_hf.sources.options": (
        "SourceOptions",
        "SourcesReadArgs",
    ),
    "spl_hf.sources.convert": (
        "PoolResult",
        "PoolsResult",
        "PromptPoolResult",
        "pairs_from_table",
        "prompts_from_table",
        "quarantine_dataset",
    ),
    "spl_hf.sources.pools": (
        "ADAPTERS",
        "GENERIC",
        "PROMPT_SOURCES",
        "preview",
        "read_pool",
        "read_pools",
        "read_prompt_pool",
        "read_prompt_pools",
        "require_rows",
        "resolve_adapter",
    ),
    "spl_hf.sources.registry": (
        "check_category",
        "known_adapters",
    ),
    "spl_hf.sources.report": (
        "BuildReport",
        "SourceReport",
    ),
    "spl_hf.sources.rows": (
        "PAIR_FEATURES",
        "PROMPT_FEATURES",
        "QUARANTINE_FEATURES",
        "Issue",
        "PairDraft",
        "PromptDraft",
        "QuarantineRecord",
        "normalize_text",
        "prompt_id",
    ),
    "spl_hf.sources.samples": (
        "eval_sample_paths",
        "prompt_sample_paths",
        "sample_paths",
    ),
    "spl_hf.sources.transcript": (
        "DEFAULT_CLIP_CHARS",
        "OMITTED_MARKER",
        "Flattened",
        "flatten_history",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
