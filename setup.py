"""Packaging step that pyproject.toml cannot express: card templates become package data.

People edit the dataset card templates in ``cards/``; the wheel must carry them, so ``build_py``
copies ``cards/*.j2`` into ``spl_hf/hub/templates/`` of the built package. A source checkout or an
editable install reads ``cards/`` directly (see ``spl_hf.hub.card.template_text``).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CARDS = Path(__file__).resolve().parent / "cards"


class BuildPyWithCards(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "spl_hf" / "hub" / "templates"
        self.mkpath(str(target))
        for src in sorted(CARDS.glob("*.j2")):
            self.copy_file(str(src), str(target / src.name))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        target = Path(self.build_lib) / "spl_hf" / "hub" / "templates"
        return [*super().get_outputs(include_bytecode), *(str(target / p.name) for p in sorted(CARDS.glob("*.j2")))]


setup(cmdclass={"build_py": BuildPyWithCards})
