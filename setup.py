"""Packaging step that pyproject.toml cannot express: the recipes become package data.

People edit the YAML recipes in ``recipes/``; the wheel must carry them (the demo runs its recipes),
so ``build_py`` copies ``recipes/**/*.yaml`` into ``spl_hf/data/recipes/`` of the built package. A
source checkout or an editable install reads ``recipes/`` directly (see
``spl_hf.recipes.recipe_path``). The dataset card templates are ordinary package data
(``spl_hf/dataset/templates/``, listed in pyproject.toml): no copy step.

It also compiles ``spl_hf.contract._strhash``, the C pass over every text byte of the row digest. The
extension is optional: where no C compiler is found the install still succeeds and
``spl_hf.contract.digest`` uses its numpy path, which gives the same digests (``digest.KERNEL`` says
which one runs).
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# (source folder, glob, target inside the built package)
COPIED = (("recipes", "**/*.yaml", "spl_hf/data/recipes"),)


class BuildPyWithRecipes(build_py):
    def _copies(self) -> list[tuple[Path, Path]]:
        out = []
        for folder, pattern, target in COPIED:
            for src in sorted((ROOT / folder).glob(pattern)):
                out.append((src, Path(self.build_lib) / target / src.relative_to(ROOT / folder)))
        return out

    def run(self) -> None:
        super().run()
        for src, dest in self._copies():
            self.mkpath(str(dest.parent))
            self.copy_file(str(src), str(dest))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *(str(dest) for _, dest in self._copies())]


STRHASH = Extension("spl_hf.contract._strhash", ["spl_hf/contract/_strhash.c"], optional=True)

setup(cmdclass={"build_py": BuildPyWithRecipes}, ext_modules=[STRHASH])
