"""Lazy package faces: names load on first use, and a re-exported function is never shadowed by its module."""

from __future__ import annotations

import subprocess
import sys

import pytest

# (package, name) pairs where a submodule has the same name as the function the face re-exports.
SAME_NAMES = [("spl_hf.decontam", "decontaminate"), ("spl_hf.hub", "publish")]


@pytest.mark.parametrize(("package", "name"), SAME_NAMES)
def test_a_face_name_stays_the_function_after_its_submodule_is_imported(package, name):
    # A fresh interpreter, so the submodule is imported before the face name is ever read.
    code = (
        f"import importlib, types; importlib.import_module('{package}.{name}'); "
        f"from {package} import {name}; "
        f"assert callable({name}) and not isinstance({name}, types.ModuleType), {name}; "
        f"assert isinstance(importlib.import_module('{package}.{name}'), types.ModuleType)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1500:]


def test_reading_a_face_imports_only_what_is_asked():
    code = (
        "import sys, spl_hf.contract as c; assert 'spl_hf.contract.quality' not in sys.modules; "
        "c.position_counts; assert 'spl_hf.contract.quality' in sys.modules"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1500:]
