"""spl_hf: auditable preference supervision on the Hugging Face stack."""

from spl_hf.schema import Attribute, AttributeSchema, default_schema, load_schema

__version__ = "0.1.0"

__all__ = ["Attribute", "AttributeSchema", "__version__", "default_schema", "load_schema"]
