"""The SPL audit: each label recomputed from its recorded derivation, the build's set checks and its evidence.

``labels`` recomputes the rules' derivation, ``verdicts`` the verdict judge's, ``folder`` audits a whole
build (every config, and the configs against each other) and ``evidence`` what the build states about
its model outputs. It mirrors :mod:`spl_hf.build.spl`; the two never import each other.
"""
