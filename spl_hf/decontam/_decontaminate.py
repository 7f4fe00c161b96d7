"""Removing training prompts that match held-out evaluation prompts, and rechecking a removal.

The unit of removal is the ``prompt_id``: rows with the same id carry the same prompt (the id is a
hash of it), so every pair or prompt row of a contaminated prompt goes. Only user turns are
compared (a held-out prompt is a user request); a multi-turn prompt is contaminated when any of
its user turns matches. Every removal is recorded with the held-out set and prompt it matched, how
(exact or near) and the overlap, so that :func:`recheck` can later confirm each removal and that
no kept row matches.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tqdm.auto import tqdm

from spl_hf.decontam.config import DecontamConfig
from spl_hf.decontam.index import CONTAINED, EXACT, NEAR, HeldoutIndex, Match
from spl_hf.errors import SplHfError

REMOVED_SCHEMA = pa.schema(
    [
        ("prompt_id", pa.string()),
        ("heldout", pa.string()),
        ("heldout_prompt_id", pa.string()),
        ("match", pa.string()),
        ("overlap", pa.float64()),
        ("heldout_prompt", pa.string()),  # the matched held-out text, so a removal can be judged by eye
    ]
)


@dataclass(frozen=True)
class DecontamResult:
    kept: pa.Table  # the input rows that match no held-out prompt, in input order
    removed: pa.Table  # REMOVED_SCHEMA: one row per removed prompt_id, sorted by prompt_id
    rows_in: int
    removed_rows: int
    by_source: dict[str, int]  # removed rows per training source (every source of the input)
    by_heldout: dict[str, int]  # removed prompts per held-out set (every configured set)
    by_match: dict[str, int]  # removed prompts per match kind ("exact", "contained", "near")
    config: DecontamConfig = field(default_factory=DecontamConfig)
    heldout_prompts: dict[str, int] = field(default_factory=dict)  # prompts each held-out set contributed

    @property
    def removed_ids(self) -> tuple[str, ...]:
        return tuple(self.removed.column("prompt_id").to_pylist())

    def summary(self) -> dict:
        """Counts for a build report or card (the removed ids are in `removed`)."""
        return {
            "rows_in": self.rows_in,
            "rows_kept": self.kept.num_rows,
            "rows_removed": self.removed_rows,
            "prompts_removed": self.removed.num_rows,
            "removed_by_source": dict(self.by_source),
            "removed_by_heldout": dict(self.by_heldout),
            "removed_by_match": dict(self.by_match),
            "near_by_score": near_by_score(self.removed, self.config.overlap_threshold),
            "heldout_prompts": dict(self.heldout_prompts),
            "config": self.config.to_dict(),
        }


def near_by_score(removed: pa.Table, threshold: float) -> dict[str, int]:
    """Near-duplicate removals per overlap band of 0.1 from the threshold up: what the threshold costs.

    Every band from the threshold to 1 is listed (the last one closed), so a reader sees where the
    removals concentrate and how many a higher threshold would keep.
    """
    lows = [
        round(float(threshold) + 0.1 * i, 6) for i in range(10) if float(threshold) + 0.1 * i < 1.0 - 1e-9
    ]
    if not lows:
        names = ["[1, 1]"]
        lows = [1.0]
    else:
        names = [f"[{lo:g}, {hi:g})" for lo, hi in itertools.pairwise(lows)] + [f"[{lows[-1]:g}, 1]"]
    bands = dict.fromkeys(names, 0)
    for kind, overlap in zip(removed.column("match").to_pylist(), removed.column("overlap").to_pylist()):
        if kind == NEAR:
            bands[names[max(i for i, lo in enumerate(lows) if overlap >= lo - 1e-9)]] += 1
    return bands


@dataclass(frozen=True)
class RecheckResult:
    ok: bool
    checked_rows: int
    confirmed: int  # removed prompts found in the rows whose recorded match holds
    unchecked: int  # removed prompts not among the rows (nothing to recheck them against)
    failures: tuple[str, ...]


_SPEAKER = re.compile(r"\n+(Human|User|Assistant):[ \t]*")
_FIRST_USER = re.compile(r"\n(Human|User):")


def transcript_user_turns(text: str) -> list[str]:
    """The user turns a transcript message shows, or the message itself when it is no transcript.

    Pools show a history as one user message: HH-RLHF natively (``Human: …\n\nAssistant: …``) and
    the flattened multi-turn pools as ``User: …\nAssistant: …`` (after an omitted-turns marker when
    clipped). A held-out prompt is compared with what the user said, not with the speaker tags.
    """
    if "Human:" not in text and "User:" not in text:  # no speaker tag at all: a plain prompt
        return [text]
    # The patterns below need a newline before a tag; one put in front stands for the start of the
    # text, which lets the regex engine skip to newlines instead of trying every position.
    first = _FIRST_USER.search("\n" + text)
    start = max(first.start() - 1, 0) if first else 0
    # A transcript starts with its first user turn, or has one marker line before it.
    if first is None or "\n" in text[:start]:
        return [text]
    body = text[start:].lstrip("\n")
    parts = _SPEAKER.split("\n" + body)  # ['', speaker, text, speaker, text, ...]
    users = [parts[i + 1].strip() for i in range(1, len(parts) - 1, 2) if parts[i] in ("Human", "User")]
    return [u for u in users if u] or [text]


def user_turns(rows: pa.Table, source: str = "rows") -> list[list[str]]:
    """The user-turn texts of each row: pair rows (prompt = messages) or prompt rows (prompt = text)."""
    for col in ("prompt_id", "source", "prompt"):
        if col not in rows.column_names:
            raise SplHfError(f"{source}: lacks column {col!r}")
    kind = rows.schema.field("prompt").type
    ids = rows.column("prompt_id").to_pylist()
    if _is_message_list(kind):
        return _message_user_turns(rows.column("prompt"), ids, source)
    prompts = rows.column("prompt").to_pylist()
    out: list[list[str]] = []
    for i, (pid, prompt) in enumerate(zip(ids, prompts)):
        if not isinstance(pid, str):
            raise SplHfError(f"{source}: row {i} has no prompt_id")
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            if prompt is None:
                raise SplHfError(f"{source}: row {i} (prompt_id {pid}) has no prompt")
            out.append([prompt])
            continue
        if not isinstance(prompt, list) or not prompt:
            raise SplHfError(f"{source}: row {i} (prompt_id {pid}) has no prompt messages")
        turns = [m["content"] for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        if not turns or not all(isinstance(t, str) for t in turns):
            raise SplHfError(f"{source}: row {i} (prompt_id {pid}) has no user message with text")
        out.append([u for t in turns for u in transcript_user_turns(t)])
    return out


def _is_message_list(kind: pa.DataType) -> bool:
    """A list of structs with string ``role`` and ``content`` (the pair rows' prompt)."""
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or not pa.types.is_struct(
        kind.value_type
    ):
        return False
    fields = {f.name: f.type for f in kind.value_type}
    return all(name in fields and pa.types.is_string(fields[name]) for name in ("role", "content"))


def _message_user_turns(prompts: pa.ChunkedArray, ids: list, source: str) -> list[list[str]]:
    """:func:`user_turns` of message-list prompts, read from the flat role and content columns.

    Converting every message to a dict costs more than the rest of the pass; the checks and errors
    are those of the per-row path in :func:`user_turns`.
    """
    out: list[list[str]] = []
    i = 0
    for chunk in prompts.chunks:
        offsets = chunk.offsets.to_numpy().tolist()
        present = chunk.is_valid().to_numpy(zero_copy_only=False).tolist()
        messages = chunk.values
        roles = pc.struct_field(messages, "role").to_pylist()
        contents = pc.struct_field(messages, "content").to_pylist()
        is_message = messages.is_valid().to_numpy(zero_copy_only=False).tolist()
        for k in range(len(chunk)):
            pid = ids[i]
            if not isinstance(pid, str):
                raise SplHfError(f"{source}: row {i} has no prompt_id")
            lo, hi = offsets[k], offsets[k + 1]
            if not present[k] or lo == hi:
                raise SplHfError(f"{source}: row {i} (prompt_id {pid}) has no prompt messages")
            turns = [contents[j] for j in range(lo, hi) if is_message[j] and roles[j] == "user"]
            if not turns or not all(isinstance(t, str) for t in turns):
                raise SplHfError(f"{source}: row {i} (prompt_id {pid}) has no user message with text")
            out.append([u for t in turns for u in transcript_user_turns(t)])
            i += 1
    return out


def _matches(
    rows: pa.Table, index: HeldoutIndex, source: str, progress: bool
) -> tuple[list[str], dict[str, Match | None]]:
    """prompt_id of each row and the best match of each distinct prompt_id (decided once per id)."""
    turns = user_turns(rows, source)
    ids = rows.column("prompt_id").to_pylist()
    decided: dict[str, Match | None] = {}
    for pid, texts in tqdm(zip(ids, turns), total=len(ids), desc="decontaminate", disable=not progress):
        if pid not in decided:
            decided[pid] = index.match(texts)
    return ids, decided


def decontaminate(
    rows: pa.Table,
    heldout: pa.Table,
    config: DecontamConfig | None = None,
    *,
    source: str = "training rows",
    progress: bool = False,
) -> DecontamResult:
    """Remove rows whose prompt matches a prompt of the configured held-out sets (see module doc)."""
    config = config or DecontamConfig()
    index = HeldoutIndex(heldout, config)
    ids, decided = _matches(rows, index, source, progress)
    removed_mask = np.array([decided[pid] is not None for pid in ids], dtype=bool)
    sources = rows.column("source").to_pylist()
    by_source = dict.fromkeys(sorted(set(map(str, sources))), 0)
    for s, gone in zip(sources, removed_mask):
        if gone:
            by_source[str(s)] += 1
    hits = sorted((pid, m) for pid, m in decided.items() if m is not None)
    by_heldout = dict.fromkeys(config.heldout, 0)
    by_heldout.update(Counter(m.heldout for _, m in hits))
    by_match = {EXACT: 0, CONTAINED: 0, NEAR: 0}
    by_match.update(Counter(m.kind for _, m in hits))
    removed = pa.table(
        {
            "prompt_id": [pid for pid, _ in hits],
            "heldout": [m.heldout for _, m in hits],
            "heldout_prompt_id": [m.heldout_prompt_id for _, m in hits],
            "match": [m.kind for _, m in hits],
            "overlap": [m.overlap for _, m in hits],
            "heldout_prompt": [index.text_of(m.heldout_prompt_id, m.heldout) for _, m in hits],
        },
        schema=REMOVED_SCHEMA,
    )
    return DecontamResult(
        kept=rows.filter(pa.array(~removed_mask)),
        removed=removed,
        rows_in=rows.num_rows,
        removed_rows=int(removed_mask.sum()),
        by_source=by_source,
        by_heldout=by_heldout,
        by_match=by_match,
        config=config,
        heldout_prompts={name: index.sizes.get(name, 0) for name in config.heldout},
    )


def recheck(
    rows: pa.Table,
    removed: pa.Table,
    heldout: pa.Table,
    config: DecontamConfig | None = None,
    *,
    source: str = "rows",
) -> RecheckResult:
    """Recheck a recorded removal against `rows` (a release, its input, or the source pools).

    For every row: if its prompt_id is recorded as removed, the recorded match must hold (same
    held-out set, prompt and kind, overlap at least the threshold); otherwise it must match no
    held-out prompt. A release passes with the removed table of its build; removed prompts that
    are not among `rows` are counted as unchecked, not failed.
    """
    config = config or DecontamConfig()
    # heldout_prompt only shows the matched text (and tables written before it lack it)
    needed = [c for c in REMOVED_SCHEMA.names if c != "heldout_prompt"]
    missing = [c for c in needed if c not in removed.column_names]
    if missing:
        raise SplHfError(f"removed-prompts table lacks columns {missing}")
    index = HeldoutIndex(heldout, config)
    ids, decided = _matches(rows, index, source, progress=False)
    recorded = {r["prompt_id"]: r for r in removed.select(needed).to_pylist()}
    failures: list[str] = []
    confirmed = 0
    for pid in sorted(decided):
        found, rec = decided[pid], recorded.get(pid)
        if rec is None:
            if found is not None:
                failures.append(
                    f"prompt {pid} matches {found.heldout} prompt {found.heldout_prompt_id} ({found.kind}, "
                    f"overlap {found.overlap}) but is not recorded as removed"
                )
            continue
        if found is None:
            failures.append(
                f"prompt {pid} is recorded as removed for {rec['heldout']} but matches no held-out prompt"
            )
        elif (found.heldout, found.heldout_prompt_id, found.kind) != (
            rec["heldout"],
            rec["heldout_prompt_id"],
            rec["match"],
        ):
            failures.append(
                f"prompt {pid}: recorded match {rec['heldout']}/{rec['heldout_prompt_id']} ({rec['match']}), "
                f"found {found.heldout}/{found.heldout_prompt_id} ({found.kind})"
            )
        else:
            confirmed += 1
    unchecked = sum(1 for pid in recorded if pid not in decided)
    return RecheckResult(not failures, len(ids), confirmed, unchecked, tuple(failures))
