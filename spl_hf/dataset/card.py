"""Dataset cards generated from a build: YAML metadata from the data, prose from a template.

Each build also stores what its card was rendered from (``card.json``: template, licence,
tags, template context and the config layout), so ``spl-hf card DIR`` can render the card again
from the build's own files, e.g. after a template changed, without rebuilding.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

import pyarrow as pa
from datasets import Features
from huggingface_hub import DatasetCard, DatasetCardData

from spl_hf.dataset.examples import card_examples
from spl_hf.dataset.folder import ConfigData, config_rows, sha256_file, yaml_metadata
from spl_hf.errors import SplHfError
from spl_hf.files import json_text, refuse_symlink, write_json, write_text
from spl_hf.held import read_parquet
from spl_hf.manifest import MANIFEST, update_manifest

CARD_INPUTS = "card.json"  # what the card is rendered from
PROVENANCE = "provenance.json"  # added to a published commit: what the rows were checked against


def size_category(n: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if n < limit:
            return name
    return "1M<n<10M"


def render_card(
    template: str | Path,
    configs: list[ConfigData],
    *,
    license: str,
    pretty_name: str,
    tags: list[str],
    source_datasets: list[str] | None = None,
    license_name: str | None = None,
    license_link: str | None = None,
    **context: object,
) -> str:
    """Render a card; ``template`` is a file path or the name of a template shipped in ``spl_hf/dataset/templates/``.

    ``license="other"`` needs ``license_name`` (a slug) and ``license_link`` (a URL or a file in
    the repo), as the Hub's card specification asks.
    """
    extra: dict = {}
    if license == "other":
        if not license_name or not license_link:
            raise SplHfError("license 'other' needs license_name and license_link")
        extra = {"license_name": license_name, "license_link": license_link}
    total = sum(config_rows(c, configs) for c in configs if c.default)
    data = DatasetCardData(
        language="en",
        license=license,
        pretty_name=pretty_name,
        task_categories=["text-generation"],
        size_categories=size_category(total),
        source_datasets=source_datasets,
        tags=tags,
        **extra,
        **yaml_metadata(configs),
    )
    text = _template_text(template)
    context.setdefault("revision", None)  # set by publish when it pushes to a branch other than main
    context["config_splits"] = {c.name: c.split_names() for c in configs}
    context["examples"] = card_examples(configs)
    return _card_markdown(data, text, pretty_name=pretty_name, **context)


def _card_markdown(data: DatasetCardData, template: str, **context: object) -> str:
    """``str(DatasetCard.from_template(data, template_str=template, **context))``, byte for byte, at a
    fraction of its cost: the metadata dumped once by libyaml's emitter (huggingface_hub dumps it with
    PyYAML's pure-Python one twice and parses it once, seconds for a card of many configs; the build
    renders each card and the audit renders it again), the template compiled once per process.

    The template must open with the YAML block ``---\n{{ card_data }}\n---``, as every shipped one
    does; ``tests/test_dataset_card_text.py`` checks the bytes against huggingface_hub's own path."""
    import yaml

    meta = data.to_dict()
    # huggingface_hub's yaml_dump: yaml.dump(..., allow_unicode=True) with the default (full) Dumper.
    block = yaml.dump(meta, Dumper=_DUMPER, sort_keys=False, allow_unicode=True).strip()
    content = _compiled(template).render(card_data=block, **{**meta, **context})
    head = f"---\n{block}\n---\n"
    if not content.startswith(head):  # a template of another shape: the library's own path decides
        return str(DatasetCard.from_template(data, template_str=template, **context))
    return content


def _dumper():
    import yaml

    return getattr(yaml, "CDumper", yaml.Dumper)  # PyYAML without libyaml falls back to the same bytes


_DUMPER = _dumper()


@functools.lru_cache(maxsize=16)
def _compiled(template: str):
    import jinja2

    return jinja2.Template(template)


def card_inputs(template: str, configs: list[ConfigData], **kwargs: object) -> str:
    """What ``render_card(template, configs, **kwargs)`` was called with, as the JSON of ``card.json``."""
    layout = [
        {
            "name": c.name,
            "default": c.default,
            "features": c.features._to_yaml_list(),
            "splits": list(c.splits),
            "unions": {s: [list(r) for r in refs] for s, refs in c.unions.items()},
        }
        for c in configs
    ]
    return json_text({"template": template, "configs": layout, "kwargs": kwargs}, indent=1, ascii_only=True)


def read_split(folder: Path, pattern: str, features: Features) -> pa.Table:
    """A split's rows as the card reads them (row counts and the first rows): strings as dictionaries
    (spl_hf.held), so rendering a card never holds a judge_scores table at its decoded size."""
    files = sorted(folder.glob(pattern + ".parquet"))
    tables = [read_parquet(f) for f in files]
    return pa.concat_tables(tables) if tables else features.arrow_schema.empty_table()


def regenerate_card(
    folder: str | Path, repo_id: str | None = None, template: str | Path | None = None
) -> str:
    """Render the card of a build folder again from its ``card.json`` and data; writes README.md.

    The README's line in ``MANIFEST.sha256`` is updated to the new card's hash.
    """
    folder = Path(folder)
    text = card_text(folder, repo_id, template=template)
    readme, inputs_path = folder / "README.md", folder / CARD_INPUTS
    # The files are rewritten: refuse a link at any of them before writing anything (a link's target
    # lies outside the build, and is a user's).
    for path in (readme, inputs_path, folder / MANIFEST):
        refuse_symlink(path)
    write_text(readme, text)
    changed = {"README.md": sha256_file(readme)}
    if repo_id or template:  # card.json records what the README was rendered from: the audit renders it again
        inputs = json.loads(inputs_path.read_text(encoding="utf-8"))
        inputs["kwargs"].update({"repo_id": repo_id} if repo_id else {})
        inputs["template"] = str(template or inputs["template"])
        write_json(inputs_path, inputs, indent=1, ascii_only=True)
        changed[CARD_INPUTS] = sha256_file(inputs_path)
    update_manifest(folder, changed)
    return text


def card_text(
    folder: Path, repo_id: str | None = None, revision: str | None = None, template: str | Path | None = None
) -> str:
    """The card of a build folder rendered from its ``card.json`` and data, with the loading snippets
    naming ``repo_id`` (and ``revision``, when given); nothing is written."""
    from spl_hf.dataset.folder import shard_pattern

    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such build folder")
    inputs_path = folder / CARD_INPUTS
    if not inputs_path.is_file():
        raise FileNotFoundError(f"{inputs_path}: not found; this build predates card.json, rebuild it once")
    try:
        inputs = json.loads(inputs_path.read_text())
    except json.JSONDecodeError as exc:
        raise SplHfError(f"{inputs_path}: not valid JSON ({exc.msg}); rebuild the folder") from None
    configs = []
    for c in inputs["configs"]:
        feats = Features._from_yaml_list(c["features"])  # a list: keeps the column order
        splits = {s: read_split(folder, shard_pattern(c["name"], s), feats) for s in c["splits"]}
        unions = {s: [tuple(r) for r in refs] for s, refs in c["unions"].items()}
        configs.append(ConfigData(c["name"], feats, splits, c["default"], unions))
    kwargs: dict = dict(inputs["kwargs"])
    if repo_id:
        kwargs["repo_id"] = repo_id
    kwargs["revision"] = revision
    return render_card(template or inputs["template"], configs, **kwargs)


# The templates are package data of spl_hf.dataset, read the same way from a checkout and a wheel.
CARDS_DIR = Path(__file__).resolve().parent / "templates"


def _template_text(template: str | Path) -> str:
    path = Path(template)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    packaged = resources.files("spl_hf.dataset").joinpath("templates", str(template))
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    raise FileNotFoundError(f"card template {template!r}: not a file, nor a template of {CARDS_DIR}")


def provenance_section(record: dict) -> str:
    """The card's account of the provenance check (appended to README.md in the published commit)."""
    lines = ["", "## Provenance check at publication", ""]
    if not record["checked"]:
        lines.append(
            "Not checked: this release was published without `--sources`, so its rows were audited for "
            "self-consistency only (digests, certificate, manifest), not re-read from their source files."
        )
    else:
        lines.append(
            f"Every row ({record.get('rows_checked', 0)}) was compared with the source records it names "
            f"(`spl-hf publish --sources`); {record.get('rows_differing', 0)} differ. Sources:"
        )
        lines.append("")
        for e in record["sources"]:
            what = (
                f"`{e['file']}` sha256 `{e['sha256']}`"
                if "file" in e
                else f"Hub dataset `{e['hub_dataset']}`"
            )
            lines.append(f"- {e['key'] or 'pairs'}: {what}")
    lines.append("")
    lines.append(f"The same record is in `{PROVENANCE}`.")
    return "\n".join(lines) + "\n"
