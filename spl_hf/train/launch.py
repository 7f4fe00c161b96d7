"""accelerate launch configs (``recipes/accelerate/*.yaml``), checked the way ``accelerate launch`` reads them.

Scale-out is accelerate's job (DDP, DeepSpeed ZeRO, FSDP); this module only validates that a
config file is one ``accelerate launch --config_file`` accepts: top-level keys against
``ClusterConfig``, and the nested ``deepspeed_config`` / ``fsdp_config`` / ``dynamo_config`` keys
against the launch arguments they are copied onto.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError

# accelerate copies `fsdp_config.x` to the launch argument `fsdp_x` (and likewise for these).
_PREFIXED = {"fsdp_config": "fsdp_", "fp8_config": "fp8_", "dynamo_config": "dynamo_"}


def parse_accelerate_config(path: str | Path) -> Any:
    """The ``ClusterConfig`` of an accelerate config file; ``ValueError`` names any unknown key."""
    from accelerate.commands.config.config_args import ClusterConfig, load_config_from_file
    from accelerate.commands.launch import launch_command_parser

    config = load_config_from_file(str(path))  # unknown top-level keys raise here
    if not isinstance(config, ClusterConfig):
        raise SplHfError(f"{path}: expected a local/cluster config, got {type(config).__name__}")
    dests = {a.dest for a in launch_command_parser()._actions}
    for section in ("deepspeed_config", "fsdp_config", "fp8_config", "dynamo_config", "parallelism_config"):
        for key in getattr(config, section, None) or {}:
            prefix = _PREFIXED.get(section, "")
            dest = key if key.startswith(prefix) else prefix + key
            if dest not in dests:
                raise SplHfError(
                    f"{path}: unknown key {key!r} in {section} (accelerate launch has no --{dest})"
                )
    return config
