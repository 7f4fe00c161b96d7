"""The ``>>>`` examples in the pure layers' docstrings run, and pass, as part of the suite."""

import doctest
import importlib

import pytest

MODULES = (
    "spl_hf.rules.expr",
    "spl_hf.rules.compile",
    "spl_hf.contract.digest",
    "spl_hf.contract.producers",
    "spl_hf.derive.derivation",
    "spl_hf.derive.features",
    "spl_hf.assign.scores",
    "spl_hf.assign.solve",
    "spl_hf.assign.certificate",
    "spl_hf.contract.scores",
    "spl_hf.manifest",
    "spl_hf.audit.files",
    "spl_hf.stats.at_limit",
    "spl_hf.train.layout",
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name} has no >>> examples"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
