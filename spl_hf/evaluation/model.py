"""Load the policy to evaluate: a base model, optionally with a LoRA adapter merged in.

The adapter's identity (hash of its ``adapter_*`` files) joins the base model's revision, so cached
generations of a base model and of each adapter never mix.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from spl_hf.backends import ModelInfo, cache_root
from spl_hf.errors import SplHfError
from spl_hf.filehash import files_sha256
from spl_hf.files import atomic_dir, write_json


def adapter_hash(adapter: str | Path) -> str:
    """sha256 over the adapter's own files (``adapter_config.json``, ``adapter_model.*``)."""
    folder = Path(adapter)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.startswith("adapter_"))
    if not (folder / "adapter_config.json").is_file():
        raise FileNotFoundError(f"{folder / 'adapter_config.json'}: not a PEFT adapter folder")
    return files_sha256((f.name, f) for f in files)


ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")


def check_adapter(adapter: str | Path) -> Path:
    """A PEFT adapter folder that can load: a JSON-object ``adapter_config.json`` and non-empty weights.

    Checked before the base model is loaded, so a broken folder fails in a second, naming the file.
    """

    folder = Path(adapter)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such adapter folder")
    config = folder / "adapter_config.json"
    if not config.is_file():
        raise FileNotFoundError(f"{config}: missing; {folder} is not a PEFT adapter folder")
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SplHfError(f"{config}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("peft_type"), str):
        raise SplHfError(f"{config}: not a PEFT adapter config (a JSON object with 'peft_type')")
    weights = [folder / name for name in ADAPTER_WEIGHTS if (folder / name).is_file()]
    if not weights:
        raise FileNotFoundError(f"{folder}: no adapter weights ({' or '.join(ADAPTER_WEIGHTS)})")
    if weights[0].stat().st_size == 0:
        raise SplHfError(f"{weights[0]}: empty file (a broken copy?)")
    return folder


def with_adapter(info: ModelInfo, adapter: str | Path | None) -> ModelInfo:
    if adapter is None:
        return info
    return ModelInfo(info.model_id, f"{info.revision}+adapter-sha256:{adapter_hash(adapter)}", info.path)


def _merged(model: Any, adapter: str | Path) -> Any:
    from peft import PeftModel

    # Merging once makes generation as fast as the base model's; the adapter never changes here.
    merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    merged.eval()
    return merged


def load_policy(
    kind: str = "hf",
    model: str | None = None,
    adapter: str | Path | None = None,
    threads: int = 1,
    max_length: int | None = None,
    **kw: Any,
) -> Any:
    """A generation backend (``hf`` or ``vllm``) for ``model`` with ``adapter`` merged in."""
    if adapter is not None:
        check_adapter(adapter)
    if kind == "hf":
        from spl_hf.backends import HFBackend, LoadedModel, load_model

        loaded = load_model(model, threads=threads)
        if adapter is not None:
            loaded = LoadedModel(
                _merged(loaded.model, adapter), loaded.tokenizer, with_adapter(loaded.info, adapter)
            )
        return HFBackend(loaded, max_length=max_length, **kw)
    if kind == "vllm":
        from spl_hf.backends import VLLMBackend

        path = model if adapter is None else str(merged_folder(model, adapter))
        return VLLMBackend(path, max_length=max_length, **kw)
    raise SplHfError(f"backend: expected 'hf' or 'vllm', got {kind!r}")


def merged_folder(model: str | None, adapter: str | Path) -> Path:
    """Base + adapter merged and saved once (for vLLM), under the spl_hf cache, keyed by both hashes."""

    from spl_hf.backends import load_model, resolve_model

    _, base_info, _ = resolve_model(model)
    info = with_adapter(base_info, adapter)
    key = hashlib.sha256(info.revision.encode()).hexdigest()[:24]
    target = cache_root() / "merged" / key
    marker = target / "spl_hf_model.json"
    if marker.is_file():
        return target
    loaded = load_model(model, threads=0, device="cpu")
    merged = _merged(loaded.model, adapter)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(target, ".tmp") as tmp:
        merged.save_pretrained(str(tmp))
        loaded.tokenizer.save_pretrained(str(tmp))
        # resolve_model reads this marker, so the vLLM backend reports base + adapter identity.
        write_json(tmp / "spl_hf_model.json", info.to_dict(), sort_keys=True, ascii_only=True)
    return target
