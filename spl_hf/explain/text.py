"""Clipping texts for display: the start of a text, and its full length, so nothing is hidden silently."""

from __future__ import annotations


def clipped(text: str | None, limit: int) -> dict:
    """``{"text", "chars", "clipped"}``: the text cut at ``limit`` characters (marked with …)."""
    text = text or ""
    cut = len(text) > limit
    return {"text": text[: limit - 1] + "…" if cut else text, "chars": len(text), "clipped": cut}


def messages_text(messages: list[dict] | None, limit: int) -> list[dict]:
    """Each message's role and clipped content."""
    return [{"role": m["role"], **clipped(m["content"], limit)} for m in messages or []]


def last_content(messages: list[dict] | None) -> str:
    return messages[-1]["content"] if messages else ""
