"""The licence a release declares, from the licences of its sources: one function for the build and the audit.

A build writes ``LICENSE.md`` and the card's licence fields from the sources its rows come from; the
audit takes the sources from the released rows and calls the same functions, so an edited licence
file or card entry differs from its recomputation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

LICENSE_FILE = "LICENSE.md"
# The licence of each prompt source of an SPL build (the pools' own terms).
SPL_SOURCE_LICENSES = {
    "ultrachat": "MIT",
    "or_bench_80k": "CC-BY-4.0",
    "or_bench_hard_1k": "CC-BY-4.0",
    "or_bench_toxic": "CC-BY-4.0",
    "xstest": "CC-BY-4.0",
    "harmbench": "MIT",
    "do_not_answer": "CC-BY-NC-SA-4.0",
    "malicious_instruct": "CC-BY-SA-4.0",
}
TENET_LICENSE_ORDER = ("cc-by-nc-4.0", "cc-by-4.0", "odc-by", "mit")  # most restrictive first
SPL_INTRO = "Prompt texts keep the licences of their sources:"
TENET_INTRO = "Rows keep the licences of their source pools:"


def license_text(intro: str, licenses: Mapping[str, str]) -> str:
    """``LICENSE.md``: each source (in release order) with its licence."""
    return f"# Licences\n\n{intro}\n\n" + "".join(f"- `{s}`: {lic}\n" for s, lic in licenses.items())


def spl_source_licenses(sources: list[str]) -> dict[str, str]:
    return {s: SPL_SOURCE_LICENSES.get(s, "unknown") for s in sources}


def spl_license_fields(source_licenses: Mapping[str, str]) -> dict[str, str | None]:
    """The card's ``license``, ``license_name``, ``license_link`` and ``license_note`` of an SPL build."""
    licenses = sorted(set(source_licenses.values()))
    single = licenses[0].lower() if len(licenses) == 1 and licenses[0] != "unknown" else None
    return {
        "license": single or "other",
        "license_name": None if single else "spl-source-licenses",
        "license_link": None if single else LICENSE_FILE,
        "license_note": _spl_note(source_licenses),
    }


def _spl_note(source_licenses: Mapping[str, str]) -> str:
    """The licence the card declares and why: one licence when every source has it, else each row keeps
    its source's licence, with the obligations that come with the non-commercial and share-alike ones."""
    licenses = sorted(set(source_licenses.values()))
    listed = ", ".join(f"`{s}`: {lic}" for s, lic in source_licenses.items())
    if not source_licenses:
        return "The build has no prompt source, so no source licence applies."
    if len(licenses) == 1 and licenses[0] != "unknown":
        note = f"{licenses[0]}, the licence of every prompt source of this build ({listed})."
    else:
        note = (
            "`other`: the prompt sources carry different licences and no single one both covers them "
            f"and keeps their terms, so every row keeps the licence of its prompt's source ({listed}; "
            f"[{LICENSE_FILE}]({LICENSE_FILE}))."
        )
    nc = [s for s, lic in source_licenses.items() if "-NC" in lic.upper()]
    sa = [s for s, lic in source_licenses.items() if "-SA" in lic.upper()]
    if nc:
        note += " Rows from " + ", ".join(f"`{s}`" for s in nc) + " are for non-commercial use only."
    if sa:
        note += (
            " Rows from "
            + ", ".join(f"`{s}`" for s in sa)
            + " must be shared under the same licence when redistributed."
        )
    return (
        note + " The candidate responses are model outputs; their use may also fall under the terms of the"
        " model that generated them. Please also cite the source datasets."
    )


def pool_licenses(
    per_source: Mapping[str, int], adapters: Mapping[str, str], reports: Sequence[Mapping] = ()
) -> dict[str, str]:
    """Each source pool of the rows with its licence: a built-in adapter's (``adapters``: name ->
    licence), else, for a source the user named, the licence its read recorded (``reports``: the
    decontamination record's per-source read reports)."""
    recorded = {
        r.get("source"): r.get("license") for r in reports if r.get("role") != "heldout" and r.get("license")
    }
    return {s: adapters.get(s) or str(recorded.get(s) or "unknown") for s in per_source}


def tenet_license_fields(pool_licenses: Mapping[str, str]) -> dict[str, str | None]:
    """The card's licence fields of a tenet build: the most restrictive pool licence, else ``other``."""
    ordered = sorted(
        set(pool_licenses.values()),
        key=lambda lic: (TENET_LICENSE_ORDER.index(lic) if lic in TENET_LICENSE_ORDER else -1, lic),
    )
    known = bool(ordered) and "unknown" not in ordered
    license_ = ordered[0] if known else "other"
    return {
        "license": license_,
        "license_name": None if known else "tenet-pool-licenses",
        "license_link": None if known else LICENSE_FILE,
        "license_note": f"{license_} — the most restrictive licence among the source pools used "
        f"({', '.join(ordered)})."
        if known
        else f"The pools' licences are listed in [{LICENSE_FILE}]({LICENSE_FILE}): "
        + ", ".join(ordered)
        + ".",
    }
