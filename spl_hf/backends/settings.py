"""The model a command or release runs (which, on which backend, with how many threads and tokens),
and the settings of the workers that run on it (judge, labeler, generator).

One dataclass serves the model-backed subcommands (``judge``, ``label``, ``generate``) and the
release builders; its checks, and the context-length check against the model's config, run
before any weights are loaded.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from spl_hf.backends.engines import ENGINE_NAMES, engine
from spl_hf.errors import SplHfError, UnknownNameError

DTYPES = ("auto", "float32", "bfloat16", "float16")
Mode = Literal["constrained", "json"]


@functools.cache
def shipped_instructions() -> dict[str, str | None]:
    """The shipped instruction set (spl_hf/data/instructions.yaml), read on first use: --help reads no YAML."""
    from spl_hf.backends.instructions import load_instructions

    return load_instructions()


def check_positive(name: str, value: int | None, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SplHfError(f"--{name} must be a positive integer, got {value!r}")


@dataclass
class ModelArgs:
    """Model and engine"""

    model: str | None = field(
        default=None,
        metadata={"help": "Hub id, local folder or .gguf file (default: the embedded SmolLM2-135M)."},
    )
    gguf_file: str | None = field(
        default=None,
        metadata={
            "help": "A GGUF file to load (transformers' gguf_file): a file name inside the model folder or Hub "
            "repo, or a path. Converted once to a cached safetensors folder, as the embedded model is; the "
            "file's sha256 is the recorded revision."
        },
    )
    threads: int = field(default=1, metadata={"help": "torch CPU threads (1 measured fastest on 2 cores)."})
    max_length: int | None = field(
        default=None, metadata={"help": "Token limit per input (default and maximum: the model's context)."}
    )
    backend: Literal[ENGINE_NAMES] = field(  # type: ignore[valid-type]  # the table's names, as choices
        default="hf",
        metadata={
            "help": "vllm needs the [vllm] extra; openai: a model behind an OpenAI-compatible server at "
            "--base_url (its API key from OPENAI_API_KEY only)."
        },
    )
    base_url: str | None = field(
        default=None, metadata={"help": "openai: the server's API root, e.g. http://127.0.0.1:8000/v1."}
    )
    tokenizer: str | None = field(
        default=None,
        metadata={
            "help": "openai: a tokenizer (Hub id or folder) to render prompts here and send token ids to the "
            "completions endpoint, many per request; unset, the chat endpoint renders on the server."
        },
    )
    concurrency: int = field(default=8, metadata={"help": "openai: requests in flight at once."})
    request_timeout: float = field(
        default=120.0, metadata={"help": "openai: seconds per request before a retry."}
    )
    retries: int = field(
        default=5,
        metadata={"help": "openai: retries of a request after 429, 5xx, a timeout or a malformed reply."},
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = field(
        default="auto",
        metadata={
            "help": "Weights and compute dtype; auto = float32 on CPU, bfloat16 on CUDA (recorded with every "
            "result; bf16 flips the sign of small judge scores, so compare backends at float32)."
        },
    )
    gpu_memory_utilization: float = field(
        default=0.9, metadata={"help": "vLLM: share of GPU memory the engine may take (0-1]."}
    )
    tensor_parallel_size: int = field(default=1, metadata={"help": "vLLM: GPUs one model is split over."})
    max_model_len: int | None = field(
        default=None,
        metadata={
            "help": "vLLM: the engine's context (KV-cache sizing); default --max_length, else the model's."
        },
    )
    enable_prefix_caching: bool = field(
        default=True,
        metadata={
            "help": "vLLM: reuse the KV blocks of shared prompt prefixes (the judge's).",
            "negated_help": "vLLM: recompute every prompt in full (no prefix caching).",
        },
    )
    enforce_eager: bool = field(
        default=False,
        metadata={
            "help": "vLLM: skip torch.compile and CUDA graphs (starts in seconds instead of minutes on CPU)."
        },
    )
    chat_template_kwargs: dict[str, Any] | str | None = field(
        default=None,
        metadata={
            "help": "Keyword arguments for the chat template, a YAML mapping or a JSON object on the command "
            "line, e.g. '{\"enable_thinking\": false}' for a Qwen3-family judge (part of the template hash)."
        },
    )
    close_thinking: bool = field(
        default=False,
        metadata={
            "help": "Reasoning judges (DeepSeek-R1 distills, Qwen3 with thinking on): end the generation "
            "prompt with a closed, empty thinking block so the first token is the answer (the closing text "
            "is in the template hash). Without it such a template is refused before the model loads.",
            "negated_help": "Refuse a reasoning chat template (the default).",
        },
    )
    min_label_mass: float = field(
        default=0.0,
        metadata={
            "help": "Judge, labeler, verdict: a judgement whose answer labels hold less next-token probability "
            "than this is recorded as not judged, never a score or label (0 = off; recorded in the template hash)."
        },
    )

    def __post_init__(self) -> None:
        check_positive("threads", self.threads)
        check_positive("max_length", self.max_length, optional=True)
        check_positive("tensor_parallel_size", self.tensor_parallel_size)
        check_positive("max_model_len", self.max_model_len, optional=True)
        served = engine(self.backend).served
        check_positive("concurrency", self.concurrency)
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise SplHfError(f"--retries must be a non-negative integer, got {self.retries!r}")
        timeout = self.request_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise SplHfError(f"--request_timeout must be a positive number of seconds, got {timeout!r}")
        if served and not self.base_url:
            raise SplHfError(
                f"--backend {self.backend} needs --base_url (the server's API root, e.g. http://127.0.0.1:8000/v1)"
            )
        if self.dtype not in DTYPES:
            raise SplHfError(f"--dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if (
            not isinstance(self.gpu_memory_utilization, (int, float))
            or not 0 < self.gpu_memory_utilization <= 1
        ):
            raise SplHfError(
                f"--gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization!r}"
            )
        mass = self.min_label_mass
        if isinstance(mass, bool) or not isinstance(mass, (int, float)) or not 0.0 <= mass <= 1.0:
            raise SplHfError(f"--min_label_mass must be a number in [0, 1], got {mass!r}")
        self.chat_template_kwargs = parse_template_kwargs(self.chat_template_kwargs)


def parse_template_kwargs(value: Any) -> dict[str, Any]:
    """A JSON object (command line) or mapping (recipe) of chat-template arguments, checked."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise SplHfError(
                f"--chat_template_kwargs: not a JSON object ({exc.msg} at char {exc.pos})"
            ) from None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise SplHfError(f"--chat_template_kwargs: expected a mapping of names to values, got {value!r}")
    try:
        json.dumps(value, sort_keys=True)
    except TypeError as exc:
        raise SplHfError(f"--chat_template_kwargs: values must be JSON values ({exc})") from None
    return dict(value)


def resolve_dtype(dtype: str, device: str) -> str:
    """The stated default per device: float32 on CPU (exact agreement between backends), bf16 on CUDA."""
    if dtype != "auto":
        return dtype
    return "bfloat16" if device.startswith("cuda") else "float32"


def check_context(model: ModelArgs) -> None:
    """Reject a --max_length beyond the model's context, reading its config only (no weights)."""
    if model.max_length is None or engine(model.backend).served:  # a served model: its server's context
        return
    from spl_hf.backends.loading import resolve_model

    path, _, _ = resolve_model(model.model, model.gguf_file)
    config = Path(path) / "config.json"
    if not config.is_file():
        return
    try:
        meta = json.loads(config.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SplHfError(f"{config}: not valid JSON ({exc.msg})") from None
    context = meta.get("max_position_embeddings") or meta.get("n_positions")
    if isinstance(context, int) and model.max_length > context:
        raise SplHfError(f"--max_length {model.max_length} exceeds the model's context of {context} tokens")


def engine_kwargs(model: ModelArgs) -> dict[str, Any]:
    """The engine settings of ``model`` as backend constructor arguments (see :func:`make_backend`)."""
    return {
        "dtype": model.dtype,
        "chat_template_kwargs": parse_template_kwargs(model.chat_template_kwargs),
        "min_label_mass": model.min_label_mass,
        "close_thinking": model.close_thinking,
        "gpu_memory_utilization": model.gpu_memory_utilization,
        "tensor_parallel_size": model.tensor_parallel_size,
        "max_model_len": model.max_model_len,
        "enable_prefix_caching": model.enable_prefix_caching,
        "enforce_eager": model.enforce_eager,
        # only when set, so the recorded settings of every other run keep their fingerprint
        **({"gguf_file": model.gguf_file} if model.gguf_file else {}),
        **{name: getattr(model, name) for name in engine(model.backend).own},
    }


@dataclass(frozen=True)
class JudgeConfig:
    """Pairwise judge"""

    chunk_size: int = field(
        default=8, metadata={"help": "tenet questions scored per forward pass (8-16 best on CPU)"}
    )
    progress: bool = field(
        default=True, metadata={"help": "Show a tqdm progress bar.", "negated_help": "Hide the progress bar."}
    )
    batch_pairs: int = field(
        default=0,
        metadata={
            "help": "Pairs whose questions go to the engine in one submission (0 = auto: 64 on vllm, whose "
            "continuous batching needs many requests at once; 1 on hf, which batches within a pair)."
        },
    )

    def __post_init__(self) -> None:
        value = self.chunk_size
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SplHfError(f"chunk_size must be a positive integer, got {value!r}")
        if (
            isinstance(self.batch_pairs, bool)
            or not isinstance(self.batch_pairs, int)
            or self.batch_pairs < 0
        ):
            raise SplHfError(f"batch_pairs must be 0 (auto) or a positive integer, got {self.batch_pairs!r}")


@dataclass(frozen=True)
class LabelerConfig:
    """Attribute labeler"""

    mode: Mode = field(default="constrained", metadata={"help": "constrained (letter probabilities) or json"})
    max_new_tokens: int = field(default=160, metadata={"help": "json mode: generation limit per item"})
    progress: bool = field(
        default=True, metadata={"help": "Show a tqdm progress bar.", "negated_help": "Hide the progress bar."}
    )

    def __post_init__(self) -> None:
        if self.mode not in ("constrained", "json"):
            raise SplHfError(f"mode must be constrained or json, got {self.mode!r}")
        if (
            isinstance(self.max_new_tokens, bool)
            or not isinstance(self.max_new_tokens, int)
            or self.max_new_tokens < 1
        ):
            raise SplHfError(f"max_new_tokens must be a positive integer, got {self.max_new_tokens!r}")


@dataclass
class GenerationConfig:
    """Candidate generation"""

    instructions: list[str] = field(
        default_factory=lambda: ["comply", "refuse"],
        metadata={"help": "instruction names, from spl_hf/data/instructions.yaml or --instructions_file"},
    )
    k: int = field(default=1, metadata={"help": "candidates per (prompt, instruction); > 1 needs sampling"})
    max_new_tokens: int = field(default=128, metadata={"help": "token limit per candidate"})
    seed: int = field(default=0, metadata={"help": "run seed; each item's seed is derived from it"})
    do_sample: bool = field(default=False, metadata={"help": "sample instead of greedy decoding"})
    temperature: float = field(default=0.7, metadata={"help": "sampling temperature"})
    progress: bool = field(
        default=True, metadata={"help": "Show a tqdm progress bar.", "negated_help": "Hide the progress bar."}
    )
    instructions_file: str | None = field(
        default=None, metadata={"help": "YAML of named instructions (default: spl_hf/data/instructions.yaml)"}
    )

    def __post_init__(self) -> None:
        self.instructions = list(self.instructions)
        known = self.texts()
        unknown = [i for i in self.instructions if i not in known]
        if unknown:
            raise UnknownNameError(f"unknown instruction(s) {unknown}; known: {', '.join(known)}")
        if not self.instructions:
            raise SplHfError("instructions: at least one is needed")
        if self.k < 1:
            raise SplHfError("k must be at least 1")
        if self.k > 1 and not self.do_sample:
            raise SplHfError("k > 1 gives identical greedy candidates; enable sampling (--sample)")
        if self.max_new_tokens < 1:
            raise SplHfError("max_new_tokens must be at least 1")

    def texts(self) -> dict[str, str | None]:
        from spl_hf.backends.instructions import load_instructions

        return (
            shipped_instructions()
            if self.instructions_file is None
            else load_instructions(self.instructions_file)
        )
