"""The chat-messages feature every row format uses (prompt, chosen, rejected, SFT messages)."""

from __future__ import annotations

from datasets import List, Value

MESSAGES = List({"role": Value("string"), "content": Value("string")})

__all__ = ["MESSAGES"]
