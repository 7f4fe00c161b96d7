"""``python -m spl_hf.train`` / ``accelerate launch -m spl_hf.train``: the same run as ``train.py``."""

from spl_hf.train.entry import cli

if __name__ == "__main__":
    raise SystemExit(cli())
