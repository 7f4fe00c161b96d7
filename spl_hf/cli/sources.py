"""``spl-hf sources``: read source pools into unified rows, list the adapters."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.files import write_json


def add_parser(subparsers: Any, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import JsonArgs, OutputArgs, RevisionArgs, add_config_parser
    from spl_hf.sources import SourceOptions, SourcesReadArgs

    p = subparsers.add_parser(
        name,
        help=help_text,
        description="Read a preference pool (or prompt source) from a local file of its Hub schema, or from "
        "its Hub id, into unified rows; malformed records go to a quarantine file with their reason.",
    )
    sub = p.add_subparsers(dest="sources_command", metavar="ACTION")
    add_config_parser(
        sub,
        "read",
        (SourcesReadArgs, SourceOptions, RevisionArgs, OutputArgs, JsonArgs),
        help="read one pool into pairs/prompts parquet + quarantine jsonl",
        description="Read one pool into --output_dir (a folder: new, empty, or an earlier `sources read` "
        "output): pairs.parquet or prompts.parquet, quarantine.jsonl and report.json. --revision pins the "
        "Hub dataset.",
    )
    add_config_parser(
        sub,
        "list",
        (JsonArgs,),
        help="list the adapters with their Hub location and licence",
        description="List the adapters with their Hub location and licence.",
    )
    p.set_defaults(func=run, _sources_parser=p)


def _read(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.files import write_jsonl, write_parquet
    from spl_hf.outputs import guard_dir, mark_output, seal_output
    from spl_hf.sources import (
        ADAPTERS,
        GENERIC,
        PROMPT_SOURCES,
        parse_columns,
        read_pool,
        read_prompt_pool,
        require_rows,
        resolve_adapter,
    )

    read, given, rev, output, js = configs_from_args(args)
    if not output.output_dir:
        raise SplHfError("--output_dir is required: the folder to write the rows to")
    options = read.options(given, rev.revision)
    out = Path(output.output_dir)
    named = {
        "name": read.source_name,
        "columns": parse_columns(read.columns),
        "license": read.license,
        "category": read.category,
    }
    resolve_adapter(
        read.source, read.source_name, read.license, read.category
    )  # a bad name fails before any write
    guard_dir(out, overwrite=output.overwrite, inputs=[read.path])
    if read.source in ADAPTERS or (read.source in GENERIC and GENERIC[read.source].kind == "pairs"):
        pairs, quarantine, report = read_pool(read.source, read.path, options, **named)
        rows, rows_name = pairs, "pairs.parquet"
    elif read.source in PROMPT_SOURCES or read.source in GENERIC:
        rows, quarantine, report = read_prompt_pool(read.source, read.path, options, **named)
        rows_name = "prompts.parquet"
    else:
        known = ", ".join([*ADAPTERS, *PROMPT_SOURCES, *GENERIC])
        raise SplHfError(f"unknown source {read.source!r}; known sources: {known}")
    # every record quarantined: a file in another format than the adapter reads (or a wrong mapping)
    require_rows(report, quarantine)
    mark_output(out, "sources read", replace=True)  # the guard above passed before any work
    # the rows with their features in the schema metadata, as Dataset.to_parquet writes them
    write_parquet(out / rows_name, rows.with_format("arrow")[:].cast(rows.features.arrow_schema))
    write_jsonl(out / "quarantine.jsonl", [q.to_dict() for q in quarantine])
    summary = report.to_dict()
    write_json(out / "report.json", summary)
    seal_output(out)
    if js.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print(
            f"{report.source}: {report.records_read} records -> {report.rows_yielded} rows "
            f"({report.distinct_prompts} distinct prompts), {report.n_filtered} filtered, "
            f"{report.n_quarantined} quarantined; wrote {out / rows_name}"
        )
        for reason, count in sorted(report.quarantined.items()):
            print(f"  quarantined {reason}: {count}")
        if report.partial:  # said where the user looks, not only in the JSON report
            print("  partial file: only the part before the break was read (--accept_partial)")
    return 0


def _list(args: argparse.Namespace) -> int:
    from spl_hf.sources import ADAPTERS, GENERIC, PROMPT_SOURCES

    entries = [
        {
            "source": a.name,
            "kind": a.kind,
            "hub": a.hub.describe() if a.name not in GENERIC else "any file (--source_name, --columns)",
            "license": a.license,
            "description": a.description,
        }
        for a in [*ADAPTERS.values(), *PROMPT_SOURCES.values(), *GENERIC.values()]
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
