from spl_hf.hub.card import render_card
from spl_hf.hub.folder import ConfigData, WrittenFolder, verify_manifest, write_dataset_folder, yaml_metadata

__all__ = ["ConfigData", "WrittenFolder", "render_card", "verify_manifest", "write_dataset_folder", "yaml_metadata"]
