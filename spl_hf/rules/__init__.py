from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.rules.apply import CONFLICT, NO_VERDICT, apply_rules, apply_rules_row
    from spl_hf.rules.compile import Program, compile_program, evaluate, expand, row_evaluator
    from spl_hf.rules.config import RulesArgs
    from spl_hf.rules.coverage import CoverageReport, check_coverage
    from spl_hf.rules.expr import And, Eq, Expr, ExprError, In, Not, Or, Ref, parse_expr, to_source
    from spl_hf.rules.rulebase import (
        Rule,
        RuleBase,
        RuleBaseError,
        default_rulebase,
        load_rulebase,
        parse_rulebase,
    )


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.rules.apply": (
        "CONFLICT",
        "NO_VERDICT",
        "apply_rules",
        "apply_rules_row",
    ),
    "spl_hf.rules.compile": (
        "Program",
        "compile_program",
        "evaluate",
        "expand",
        "row_evaluator",
    ),
    "spl_hf.rules.config": ("RulesArgs",),
    "spl_hf.rules.coverage": (
        "CoverageReport",
        "check_coverage",
    ),
    "spl_hf.rules.expr": (
        "And",
        "Eq",
        "Expr",
        "ExprError",
        "In",
        "Not",
        "Or",
        "Ref",
        "parse_expr",
        "to_source",
    ),
    "spl_hf.rules.rulebase": (
        "Rule",
        "RuleBase",
        "RuleBaseError",
        "default_rulebase",
        "load_rulebase",
        "parse_rulebase",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
