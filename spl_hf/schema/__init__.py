from spl_hf.schema.attributes import Attribute, AttributeSchema, default_schema, load_schema, parse_schema

__all__ = ["Attribute", "AttributeSchema", "default_schema", "load_schema", "parse_schema"]
