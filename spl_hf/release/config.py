"""Settings shared by the release builders: where a run lives, the model, the output and the Hub."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ReleaseSettings:
    run_dir: str = field(
        default="out/release",
        metadata={"help": "Folder of the run: stage outputs, model caches and the run report."},
    )
    output_dir: str = field(
        default="out/release/dataset", metadata={"help": "Folder the dataset is written to."}
    )
    overwrite: bool = field(
        default=False, metadata={"help": "Replace an earlier spl_hf build in output_dir (never other files)."}
    )
    repo_id: str | None = field(
        default=None,
        metadata={"help": "Publish to this Hub dataset repo (HF_ENDPOINT, HF_TOKEN from the environment)."},
    )
    hub_revision: str | None = field(default=None, metadata={"help": "Branch to publish to (default: main)."})
    private: bool = field(default=False, metadata={"help": "Create the Hub repo as private."})
    pretty_name: str = field(default="", metadata={"help": "Card title (default: the builder's)."})
    heldout_files: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Files of the held-out prompt sets named by 'heldout', as 'set=path' or 'set=org/name@sha' "
            "(prompt sources such as or_bench_hard_1k, or_bench_toxic, xstest)."
        },
    )
    accept_partial: bool = field(
        default=False,
        metadata={
            "help": "Build from the readable part of a source file that breaks off (a truncated .gz); "
            "the card's source table marks it partial. Off: such a file stops the release, naming it."
        },
    )
    dry_run: bool = field(
        default=False,
        metadata={"help": "Validate the inputs and print the stage plan without running a model."},
    )


def parse_assignments(entries: list[str], what: str) -> dict[str, str]:
    """'name=value' entries as a dict; names must be unique."""
    out: dict[str, str] = {}
    for entry in entries:
        name, sep, value = str(entry).partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise ValueError(f"{what}: expected 'name=value', got {entry!r}")
        if name in out:
            raise ValueError(f"{what}: {name!r} given twice")
        out[name] = value
    return out
