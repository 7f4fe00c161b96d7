"""Resumable stages of a release build.

Each stage writes its outputs into ``<run_dir>/stages/<name>-<key>/``, where ``key`` hashes the
stage's name, its settings and the keys or content hashes of everything it reads. The folder is
filled under a temporary name and renamed once complete, with ``stage.json`` (settings and counts)
inside, so a rerun with the same inputs finds the finished stage and skips it, a changed setting
or input gives a new key (and recomputes only from there on), and a stage killed midway leaves
nothing that a rerun could mistake for a result. Model work inside a stage goes through the
runner (:mod:`spl_hf.backends.worker`), whose finished shards live in the results folder
(``<run_dir>/results`` by default), so a killed judge or labeling stage resumes shard by shard,
on either executor. ``ranks``/``parallel`` remain for callers that run stages on several processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.filehash import files_sha256, sha256_file
from spl_hf.files import replace_dir, temp_dir_beside, write_json
from spl_hf.release.reads import Reads, guarded

STAGE_FILE = "stage.json"
STAGE_VERSION = 1


def read_stage_json(path: Path) -> Any:
    """A JSON file a finished stage wrote. Damage is an error naming it: removing the stage's folder
    makes the release run that stage again."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SplHfError(
            f"{path}: damaged ({exc.msg}, line {exc.lineno}); remove {path.parent} and rerun to redo that stage"
        ) from None


def fingerprint(path: str | Path) -> str:
    """SHA-256 of a file's bytes, or of a folder's (relative path, file hash) list."""
    p = Path(path)
    if p.is_file():
        return sha256_file(p)
    if p.is_dir():
        return files_sha256((f.relative_to(p).as_posix(), f) for f in sorted(p.rglob("*")) if f.is_file())
    raise FileNotFoundError(f"{path}: no such file or folder")


def stage_key(name: str, settings: Mapping[str, Any]) -> str:
    blob = json.dumps(
        {"stage": name, "version": STAGE_VERSION, "settings": settings},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class StageOutcome:
    name: str
    key: str
    path: Path
    skipped: bool
    counts: dict[str, Any]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["path"] = str(self.path)
        return d


@dataclass
class StageRunner:
    run_dir: Path
    log: Callable[[str], None] = print
    ranks: Any = None  # spl_hf.backends.parallel.Ranks under a launcher; None for one process
    outcomes: list[StageOutcome] = field(default_factory=list)

    @property
    def is_main(self) -> bool:
        return self.ranks is None or self.ranks.is_main

    def _wait(self) -> None:
        if self.ranks is not None:
            self.ranks.wait()

    def plan(self, name: str, settings: Mapping[str, Any]) -> tuple[str, Path, bool]:
        key = stage_key(name, settings)
        path = Path(self.run_dir) / "stages" / f"{name}-{key}"
        return key, path, (path / STAGE_FILE).is_file()

    def run(
        self,
        name: str,
        settings: Mapping[str, Any],
        fn: Callable[[Path], Mapping[str, Any]],
        *,
        parallel: bool = False,
        still_valid: Callable[[Path], bool] | None = None,
        reuse: bool = True,
        reads: tuple[Reads, Any] | None = None,
    ) -> StageOutcome:
        """Run ``fn(tmp_dir) -> counts`` unless a finished stage with the same key exists.

        ``still_valid`` checks a finished stage whose result also lives outside its folder (the
        dataset a 'write' stage put in the output folder); when it fails, the stage runs again.
        ``reuse=False`` always runs (a read of an unpinned Hub revision); later stages are keyed
        by the content of what it wrote, so they are still skipped when nothing changed.

        ``reads``: the stage's declaration of the config fields it reads and the release holding them
        (:class:`~spl_hf.release.reads.Reads`): their values join ``settings`` in the key, and while
        ``fn`` runs the release's configs let it read nothing else.
        """
        if reads is not None:
            declared, owner = reads
            settings = {**settings, "reads": declared.values(owner)}
            fn = guarded(declared, owner, name, fn)
        key, path, done = self.plan(name, settings)
        if done and (not reuse or (still_valid is not None and not still_valid(path))):
            self.log(f"[{name}] finished earlier, but its inputs may have changed since: running again")
            if self.is_main:
                shutil.rmtree(path)
            self._wait()
            done = False
        if done:
            counts = read_stage_json(path / STAGE_FILE)["counts"]
            self.log(f"[{name}] finished earlier with the same inputs and settings: skipped ({path})")
            outcome = StageOutcome(name, key, path, True, counts, 0.0)
            self.outcomes.append(outcome)
            return outcome
        self.log(f"[{name}] running -> {path}")
        t0 = time.perf_counter()
        tmp = self._temp(path)
        counts: Mapping[str, Any] = {}
        try:
            if parallel or self.is_main:
                counts = fn(tmp)
        except BaseException:
            if self.ranks is None:  # a launch's other ranks may still be writing into it
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        from spl_hf.held import give_back_freed

        give_back_freed()  # what the stage freed is not counted again in the next stage's peak
        if self.is_main:
            record = {"name": name, "key": key, "settings": settings, "counts": counts}
            write_json(tmp / STAGE_FILE, record, sort_keys=True, ascii_only=True, default=str)
            replace_dir(tmp, path)
        self._wait()
        if not self.is_main:
            counts = read_stage_json(path / STAGE_FILE)["counts"]
        seconds = time.perf_counter() - t0
        self.log(f"[{name}] done in {seconds:.1f} s: {_short(counts)}")
        outcome = StageOutcome(name, key, path, False, dict(counts), seconds)
        self.outcomes.append(outcome)
        return outcome

    def _temp(self, path: Path) -> Path:
        """A new folder to fill, renamed to ``path`` when whole; never shared with another run.

        One process takes a random name carrying its pid (so a later run can remove a dead one's);
        the ranks of one launch share the name of their rendezvous port, which no concurrent
        launch on the host can hold.
        """
        if self.is_main:
            path.parent.mkdir(parents=True, exist_ok=True)
            _remove_dead_temps(path)
        if self.ranks is None:
            return temp_dir_beside(path, f".partial-{os.getpid()}")
        tmp = path.with_name(f".{path.name}.partial-port{os.environ.get('MASTER_PORT', '0')}")
        if self.is_main:
            shutil.rmtree(tmp, ignore_errors=True)  # this launch's own name: a killed earlier attempt
            tmp.mkdir()
        self._wait()
        return tmp

    def report(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "stages": [o.to_dict() for o in self.outcomes]}


def _remove_dead_temps(path: Path) -> None:
    """Delete the temp folders of attempts at this stage whose process died (on this host)."""
    for tmp in path.parent.glob(f".{path.name}.partial-*"):
        pid = tmp.name.rsplit(".partial-", 1)[1].split("-", 1)[0]
        if not pid.isdigit():
            continue  # a launch's folder: its next attempt replaces it
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(tmp, ignore_errors=True)
        except PermissionError:
            continue


def _short(counts: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if isinstance(v, (int, float, str, bool)))
