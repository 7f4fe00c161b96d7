"""``spl-hf sources``: read source pools into unified rows, list the adapters."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

# Kept equal to spl_hf.sources.transcript.DEFAULT_CLIP_CHARS (a test checks); importing it here
# would pull in `datasets` for every `spl-hf --help`.
DEFAULT_CLIP_CHARS = 6000


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description="Read a preference pool (or prompt source) from a local file of its Hub schema, or from "
        "its Hub id, into unified rows; malformed records go to a quarantine file with their reason.",
    )
    sub = p.add_subparsers(dest="sources_command", metavar="ACTION")
    read = sub.add_parser("read", help="read one pool into pairs/prompts parquet + quarantine jsonl")
    read.add_argument("--source", required=True, help="adapter name (see `spl-hf sources list`)")
    read.add_argument(
        "--path",
        required=True,
        help="local .jsonl/.json/.csv/.parquet (optionally .gz) file, or a Hub dataset id (network access)",
    )
    read.add_argument(
        "--clip-chars",
        type=int,
        default=None,
        help=f"character budget for flattened multi-turn histories (default {DEFAULT_CLIP_CHARS}; 0 = no clipping)",
    )
    read.add_argument(
        "--pku-preference",
        choices=("safer", "better"),
        default="safer",
        help="PKU-SafeRLHF label used as source_preference (safer_response_id or better_response_id)",
    )
    read.add_argument(
        "--seed", type=int, default=42, help="seed of the representative-pair draw (ca_en_mt_p1)"
    )
    read.add_argument(
        "--pku-drop-both-unsafe",
        action="store_true",
        help="PKU-SafeRLHF: leave out pairs whose two responses are both labelled unsafe (counted as filtered)",
    )
    read.add_argument(
        "--harmbench-category",
        action="append",
        choices=("standard", "contextual", "copyright"),
        default=None,
        help="HarmBench official CSV: FunctionalCategory to keep; repeat for several (default: standard, "
        "the 200 behaviours of the Hub config walledai/HarmBench standard)",
    )
    read.add_argument(
        "--max-text-chars",
        type=int,
        default=None,
        help="longest prompt/response kept, in characters; longer ones are quarantined (default 200000; "
        "0 = no limit)",
    )
    read.add_argument("--split", default=None, help="Hub split to read instead of the adapter's")
    read.add_argument("--revision", default=None, help="Hub revision to pin")
    read.add_argument(  # CLI-MERGE
        "--accept-partial", action="store_true", help="keep the readable part of a truncated file"
    )
    read.add_argument(
        "--out", required=True, type=Path, help="output directory (new, empty, or an earlier output)"
    )
    read.add_argument(
        "--overwrite", action="store_true", help="replace an earlier `sources read` output in --out"
    )
    read.add_argument("--json", action="store_true", help="print the report as JSON")
    lst = sub.add_parser("list", help="list the adapters with their Hub location and licence")
    lst.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run, _sources_parser=p)


def _options(args: argparse.Namespace) -> Any:
    from spl_hf.sources import SourceOptions

    kwargs: dict[str, Any] = {
        "progress": True,
        "seed": args.seed,
        "pku_preference": args.pku_preference,
        "split": args.split,
        "revision": args.revision,
        "pku_drop_both_unsafe": args.pku_drop_both_unsafe,
        "accept_partial": args.accept_partial,
    }
    if args.harmbench_category:
        kwargs["harmbench_categories"] = tuple(dict.fromkeys(args.harmbench_category))
    if args.max_text_chars is not None:
        if args.max_text_chars < 0:
            raise ValueError(
                f"--max-text-chars must be >= 0 (0 disables the limit), got {args.max_text_chars}"
            )
        kwargs["max_text_chars"] = args.max_text_chars or None
    if args.clip_chars is not None:
        if args.clip_chars < 0:
            raise ValueError(f"--clip-chars must be >= 0 (0 disables clipping), got {args.clip_chars}")
        kwargs["clip_chars"] = args.clip_chars or None
    return SourceOptions(**kwargs)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def _read(args: argparse.Namespace) -> int:
    from spl_hf.outputs import guard_dir, mark_output
    from spl_hf.sources import ADAPTERS, PROMPT_SOURCES, read_pool, read_prompt_pool

    options = _options(args)
    guard_dir(args.out, overwrite=args.overwrite, inputs=[args.path])
    if args.source in ADAPTERS:
        pairs, quarantine, report = read_pool(args.source, args.path, options)
        rows, rows_name = pairs, "pairs.parquet"
    elif args.source in PROMPT_SOURCES:
        rows, quarantine, report = read_prompt_pool(args.source, args.path, options)
        rows_name = "prompts.parquet"
    else:
        known = ", ".join([*ADAPTERS, *PROMPT_SOURCES])
        raise ValueError(f"unknown source {args.source!r}; known sources: {known}")
    out: Path = args.out
    mark_output(out, "sources read")
    tmp = out / (rows_name + ".tmp")
    rows.to_parquet(str(tmp))
    os.replace(tmp, out / rows_name)
    _write_jsonl(out / "quarantine.jsonl", [q.to_dict() for q in quarantine])
    summary = report.to_dict()
    (out / "report.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print(
            f"{report.source}: {report.records_read} records -> {report.rows_yielded} rows "
            f"({report.distinct_prompts} distinct prompts), {report.n_filtered} filtered, "
            f"{report.n_quarantined} quarantined; wrote {out / rows_name}"
        )
        for reason, count in sorted(report.quarantined.items()):
            print(f"  quarantined {reason}: {count}")
        if report.partial:  # CLI-MERGE (say it where the user looks, not only in the JSON report)
            print("  partial file: only the part before the break was read (--accept-partial)")
    return 0


def _list(args: argparse.Namespace) -> int:
    from spl_hf.sources import ADAPTERS, PROMPT_SOURCES

    entries = [
        {
            "source": a.name,
            "kind": a.kind,
            "hub": a.hub.describe(),
            "license": a.license,
            "description": a.description,
        }
        for a in [*ADAPTERS.values(), *PROMPT_SOURCES.values()]
    ]
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        for e in entries:
            print(f"{e['source']:<24} {e['kind']:<8} {e['license']:<16} {e['hub']}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.sources_command == "read":
        return _read(args)
    if args.sources_command == "list":
        return _list(args)
    args._sources_parser.print_help(sys.stderr)
    return 2
