"""The tenet audit: rows, scores and the assignment certificate (``rows``) and the judge-quality figures
(``judge_quality``), recomputed from a per-tenet build. It mirrors :mod:`spl_hf.build.tenets`.
"""
