"""What a release stage reads of its configs, declared once on the stage, keyed and enforced.

A stage's key must change with everything that can change its output. Listing the settings by hand
next to each stage let one be forgotten (the write stage of the tenet release left out the threshold
and the seed, so a rerun with a new threshold kept the old rows and card). So each stage declares
:class:`Reads`: the release-config fields its output depends on, the sub-configs it takes whole, and
the fields it may read that only say how to run. The runner hashes the values of the first two into
the key (:meth:`Reads.values`), and while the stage runs the release's configs are replaced by
views (:class:`Guarded`) that refuse any other field, naming the stage: a stage that starts reading a
new setting without declaring it fails on its first run instead of going stale on a rerun.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The model settings a model stage's output depends on (every ModelArgs field engine_kwargs and
# model_settings pass on; `threads` only sets torch's CPU threads, so it is runs_only).
MODEL_FIELDS = (
    "model",
    "gguf_file",
    "max_length",
    "backend",
    "dtype",
    "chat_template_kwargs",
    "close_thinking",
    "min_label_mass",
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "max_model_len",
    "enable_prefix_caching",
    "enforce_eager",
    "base_url",
    "tokenizer",
    "concurrency",
    "request_timeout",
    "retries",
)
PUBLISH = ("output_dir", "repo_id", "revision", "private", "create_pr")
# Fields that say where and how a run goes, read before any stage (no stage's output depends on them).
RUN_SETTINGS = ("run_dir", "results_dir", "overwrite", "dry_run")
# SourceOptions fields a read stage sets per pool (a progress bar, a Hub split or revision): not settings.
PER_READ_OPTIONS = ("source_options.progress", "source_options.split", "source_options.revision")


class UndeclaredRead(RuntimeError):
    """A stage read a config field it does not declare (a bug in the stage, not bad input)."""


@dataclass(frozen=True)
class Reads:
    """The configs one stage reads. ``fields``: release-config (``cfg``) fields its output depends on;
    ``configs``: sub-configs of the release (attribute names such as ``assign``) taken whole, every field
    keyed; ``runs_only``: fields it may read that do not change its output (``threads``; ``judge.progress``
    for a sub-config's), left out of the key."""

    fields: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    runs_only: tuple[str, ...] = ()

    def values(self, owner: Any) -> dict[str, Any]:
        """The declared values, for the stage key: each field of ``owner.cfg``, each sub-config whole."""
        cfg = _plain(owner.cfg)
        out: dict[str, Any] = {f: getattr(cfg, f) for f in sorted(self.fields)}
        for name in sorted(self.configs):
            sub = _plain(getattr(owner, name))
            skip = self.allowed(name)
            out[name] = (
                {k: v for k, v in dataclasses.asdict(sub).items() if k not in skip}
                if sub is not None
                else None
            )
        return out

    def allowed(self, sub: str | None = None) -> frozenset[str]:
        """What the stage may read of ``owner.cfg`` (sub None) or of a sub-config it does not take whole."""
        if sub is None:
            return frozenset(self.fields) | frozenset(f for f in self.runs_only if "." not in f)
        return frozenset(f.split(".", 1)[1] for f in self.runs_only if f.startswith(f"{sub}."))


class Guarded:
    """A view of a config that gives only the declared fields, raising :class:`UndeclaredRead` otherwise.

    Pickles as the config itself, so a worker process the stage hands it to gets the real settings.
    """

    __slots__ = ("_allowed", "_obj", "_stage")

    def __init__(self, obj: Any, allowed: frozenset[str], stage: str) -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_allowed", allowed)
        object.__setattr__(self, "_stage", stage)

    def __getattr__(self, name: str) -> Any:
        obj = object.__getattribute__(self, "_obj")
        if name.startswith("__") or name in object.__getattribute__(self, "_allowed"):
            return getattr(obj, name)
        if not any(f.name == name for f in dataclasses.fields(obj)):
            return getattr(obj, name)  # a method or property: what it reads is checked field by field
        stage = object.__getattribute__(self, "_stage")
        raise UndeclaredRead(
            f"the {stage!r} stage read {type(obj).__name__}.{name}, which its Reads do not declare: "
            "add it to the stage's fields (it changes the output) or runs_only (it does not)"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise UndeclaredRead(
            f"the {object.__getattribute__(self, '_stage')!r} stage set {name} on its config"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_identity, (object.__getattribute__(self, "_obj"),))


def with_changes(cfg: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` of a config that may be a :class:`Guarded` view (and stays one)."""
    if not isinstance(cfg, Guarded):
        return dataclasses.replace(cfg, **changes)
    allowed, stage = object.__getattribute__(cfg, "_allowed"), object.__getattribute__(cfg, "_stage")
    return Guarded(dataclasses.replace(_plain(cfg), **changes), allowed, stage)


def _identity(obj: Any) -> Any:
    return obj


def _plain(obj: Any) -> Any:
    return object.__getattribute__(obj, "_obj") if isinstance(obj, Guarded) else obj


def guarded(reads: Reads, owner: Any, stage: str, fn: Callable[[Path], Mapping[str, Any]]) -> Callable:
    """``fn`` run with ``owner.cfg``, and each sub-config in ``owner.SUBCONFIGS`` it does not take whole,
    showing only what ``reads`` declares."""

    def run(out: Path) -> Mapping[str, Any]:
        names = ["cfg", *(n for n in getattr(owner, "SUBCONFIGS", ()) if n not in reads.configs)]
        real = {n: _plain(getattr(owner, n)) for n in names}
        for n, obj in real.items():
            if obj is not None:
                setattr(owner, n, Guarded(obj, reads.allowed(None if n == "cfg" else n), stage))
        try:
            return fn(out)
        finally:
            for n, obj in real.items():
                setattr(owner, n, obj)

    return run
