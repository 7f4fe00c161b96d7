"""The tenets a pairwise judge scores responses against (default: the 49 of constitution_tenets_v3)."""

from spl_hf.tenets.registry import Tenet, TenetSet, default_tenets, load_tenets, parse_tenets, select_tenets

__all__ = ["Tenet", "TenetSet", "default_tenets", "load_tenets", "parse_tenets", "select_tenets"]
