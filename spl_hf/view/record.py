"""One row's explanation as a structured HTML view (the viewer's Explain tab), from explain's JSON.

Every text of the release is escaped here (``esc``): a release is data from anyone, and the page
renders this HTML as it is. Numbers are shown at 3 decimals with the stored value in the hover
title (``num``); the JSON beside the view keeps full precision.
"""

from __future__ import annotations

import html

from spl_hf.contract import INCONSISTENT, POSITION_TEXT
from spl_hf.explain import move_sentence

# Short names for the table and the flags (the full sentences are in POSITION_TEXT).
POSITION_SHORT = {
    "consistent": "consistent",
    "first_slot": "⚠ first shown wins twice",
    "second_slot": "⚠ second shown wins twice",
    "undecided": "undecided (0.5)",
}


def esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def num(x: float | int | None, digits: int = 3, signed: bool = False) -> str:
    """``x`` at ``digits`` decimals (3 significant digits when smaller), the stored value on hover."""
    if x is None:
        return "–"
    if isinstance(x, int) and not isinstance(x, bool):
        return f'<span class="num" title="{x}">{x:+d}</span>' if signed else f'<span class="num">{x}</span>'
    sign = "+" if signed else ""
    small = x != 0 and abs(x) < 10**-digits
    shown = f"{x:{sign}.{digits}g}" if small else f"{x:{sign}.{digits}f}"
    return f'<span class="num" title="{esc(repr(x))}">{shown}</span>'


def turns(messages: list[dict], cls: str = "") -> str:
    """A conversation: each turn with its role, wrapped, with its length (and a clipped mark)."""
    out = []
    for m in messages:
        more = f"{m['chars']} chars" + (", clipped" if m["clipped"] else "")
        out.append(
            f'<div class="turn {esc(m["role"])} {cls}"><div class="role">{esc(m["role"])}'
            f'<span class="chars">{esc(more)}</span></div><div class="text">{esc(m["text"])}</div></div>'
        )
    return "".join(out) or '<div class="turn"><div class="text">(no messages)</div></div>'


def _badge(text: str, kind: str = "") -> str:
    return f'<span class="badge {kind}">{esc(text)}</span>'


def _side_by_side(left: tuple[str, str, str], right: tuple[str, str, str]) -> str:
    """Two response columns: (title, css class, body html) each."""
    cols = "".join(f'<div class="col {c}"><h4>{esc(t)}</h4>{body}</div>' for t, c, body in (left, right))
    return f'<div class="sides">{cols}</div>'


def _response(resp: dict) -> list[dict]:
    return [{"role": "assistant", **resp}]


def _head(ex: dict, ident: str, badges: list[str]) -> str:
    where = f"{ex['config']}/{ex['split']} row {ex['index']} · source {ex['source']}"
    return f'<div class="rec-head"><h3>{esc(ident)}</h3><div class="where">{esc(where)}</div>{"".join(badges)}</div>'


def audit_html(a: dict | None) -> str:
    if a is None:
        return '<p class="audit">audit not run (<code>--no_audit</code>)</p>'
    row = {True: ("reproduced", "ok"), False: ("MISMATCH", "bad"), None: ("not listed", "")}[
        a["row_reproduced"]
    ]
    cert = (
        ""
        if a["certificate_ok"] is None
        else f"; certificate {'verified' if a['certificate_ok'] else 'FAILED'}"
    )
    rel = f"release {a['rows']} rows, {a['reproduced']} reproduced, {a['mismatch_count']} mismatches{cert}"
    return (
        f'<p class="audit">audit: this row {_badge(row[0], row[1])} · {esc(rel)} · '
        f"{_badge('passed' if a['release_ok'] else 'FAILED', 'ok' if a['release_ok'] else 'bad')}</p>"
    )


def orderings_html(s: dict) -> str:
    """Both orderings as named probabilities, which response each prefers, and the score."""

    def prefers(p_a: float) -> str:
        return "A" if p_a > 0.5 else ("B" if p_a < 0.5 else "neither")

    rows = [
        ("A shown first", s["p_a_better_a_first"], "p_a_first", s["mass_first"]),
        ("B shown first", s["p_a_better_b_first"], "1 − p_a_second", s["mass_second"]),
    ]
    body = "".join(
        f"<tr><td>{esc(o)}</td><td>P(A better | {esc(o[0])} first) = {num(p)}</td>"
        f"<td>P(B better | {esc(o[0])} first) = {num(1 - p)}</td><td>{esc(prefers(p))}</td>"
        f"<td>{esc(stored)}</td><td>{num(mass)}</td></tr>"
        for o, p, stored, mass in rows
    )
    flag = "flag bad" if s["position"] in INCONSISTENT else "flag ok"
    score = (
        f"score = P(A better | A first) − P(B better | B first) = {num(s['p_a_better_a_first'])} − "
        f"{num(s['p_b_better_b_first'])} = {num(s['recomputed'], signed=True)}; the row stores |score| "
        f"{num(s['stored'])} ({'same' if s['matches'] else 'DIFFERENT'}); |score| "
        f"{'≥' if s['eligible'] else '<'} threshold {num(s['threshold'])}: "
        f"{'eligible' if s['eligible'] else 'NOT eligible'}; the sign gives chosen side {s['side_from_sign'].upper()}"
    )
    return (
        '<table class="orderings"><thead><tr><th>ordering</th><th>P(A better)</th><th>P(B better)</th>'
        "<th>prefers</th><th>stored as</th><th>label mass</th></tr></thead>"
        f'<tbody>{body}</tbody></table><p class="{flag}">{esc(POSITION_TEXT[s["position"]])}</p>'
        f'<p class="score">{score}</p>'
    )


def tenet_bars(others: list[dict], threshold: float) -> str:
    """The pair's score on every tenet it was judged on, as a small diverging bar chart (A right)."""
    if not others:
        return "<p>(no judge_scores in this release)</p>"
    out = []
    for o in others:
        w = min(abs(o["score"]), 1.0) * 50  # half the track is |score| 1
        side = "pos" if o["score"] >= 0 else "neg"
        left = 50 if o["score"] >= 0 else 50 - w
        status = "this row" if o["this_row"] else ("eligible" if o["eligible"] else "below threshold")
        flag = " ⚠ position-inconsistent" if o["position"] in INCONSISTENT else ""
        cls = "bar-row" + (" this" if o["this_row"] else "") + (" weak" if not o["eligible"] else "")
        out.append(
            f'<div class="{cls}" data-tenet="{esc(o["tenet"])}"><span class="bar-name">{esc(o["tenet"])}</span>'
            f'<span class="track"><span class="thr" style="left:{50 - threshold * 50:.2f}%"></span>'
            f'<span class="thr" style="left:{50 + threshold * 50:.2f}%"></span>'
            f'<span class="bar {side}" style="left:{left:.2f}%;width:{w:.2f}%"></span></span>'
            f'<span class="bar-val">{num(o["score"], signed=True)}</span>'
            f'<span class="bar-status">{esc(o["tenet_status"])}, {esc(status)}{esc(flag)}</span></div>'
        )
    axis = (
        '<div class="bar-axis"><span></span><span class="ticks"><span>−1 ← B better</span><span>0</span>'
        "<span>A better → +1</span></span><span></span><span></span></div>"
    )
    return f'<div class="bars">{"".join(out)}{axis}</div>'


def certificate_html(a: dict | None, tenet: str) -> str:
    if a is None:
        return "<p>no certificate or judge_scores in this release</p>"
    moves = "".join(
        f"<li>{move_sentence(alt, num, esc)} <span class='aside'>(score there {num(alt['score'], signed=True)})</span></li>"
        for alt in a["alternatives"]
    )
    if not moves:
        moves = "<li>no other kept tenet has this prompt eligible: there is nowhere else to move it</li>"
    holds = (
        "every reduced cost is ≥ 0: no reassignment of this prompt raises the total"
        if a["all_reduced_costs_nonnegative"]
        else "a reduced cost is NEGATIVE: the certificate does not hold for this prompt"
    )
    cls = "flag ok" if a["all_reduced_costs_nonnegative"] else "flag bad"
    return (
        f"<p>Assigned to <b>{esc(tenet)}</b> by min-cost flow over {a['kept_tenets']} kept tenets "
        f"(objective Σ|score| = {num(a['objective'])}).</p><ul class='moves'>{moves}</ul>"
        f'<p class="{cls}">{esc(holds)}</p>'
    )


def tenet_record(ex: dict) -> str:
    s = ex["score"]
    chosen, rejected = ("a", "b") if ex["chosen_side"] == "a" else ("b", "a")
    badges = [
        _badge(f"tenet {ex['tenet']}"),
        _badge(f"chosen: response {chosen.upper()}", "ok"),
        _badge(POSITION_SHORT[s["position"]], "bad" if s["position"] in INCONSISTENT else "ok"),
    ]
    return (
        _head(ex, ex["scenario_id"], badges)
        + f'<p class="statement"><b>{esc(ex["tenet"])}</b>: {esc(ex["statement"] or "(statement not in card.json)")}</p>'
        + f"<h4>Prompt</h4>{turns(ex['prompt'])}"
        + _side_by_side(
            (f"Chosen (response {chosen.upper()})", "chosen", turns(_response(ex[f"response_{chosen}"]))),
            (
                f"Rejected (response {rejected.upper()})",
                "rejected",
                turns(_response(ex[f"response_{rejected}"])),
            ),
        )
        + f"<h4>Judge: {esc(ex['judge']['model_id'])}</h4>"
        + orderings_html(s)
        + "<h4>Scores of this pair on every tenet</h4>"
        + tenet_bars(ex["other_tenets"], s["threshold"])
        + "<h4>Why this tenet: the assignment certificate</h4>"
        + certificate_html(ex["assignment"], ex["tenet"])
        + audit_html(ex.get("audit"))
    )


def _chips(attrs: dict | None) -> str:
    if not attrs:
        return '<span class="aside">(no attributes)</span>'
    return "".join(
        _badge(f"{k}: {v}", "on" if v is True else ("off" if v is False else "")) for k, v in attrs.items()
    )


def _spl_side(d: dict) -> str:
    rules = "".join(
        f"<li><code>{esc(r['id'])}</code>: {esc(r.get('when'))} → <b>{esc(r.get('verdict'))}</b></li>"
        for r in d["rules"]
    )
    return (
        turns(_response(d["response"]))
        + f'<div class="attrs">attributes ({esc(d["status"])}): {_chips(d["attributes"])}</div>'
        + f"<ul class='rules'>{rules or '<li>no rule fired</li>'}</ul>"
        + f"<p>verdict <b>{esc(d['verdict'])}</b>, rank {num(d['rank'])}</p>"
    )


def _spl_judge(j: dict | None) -> str:
    if not j:
        return ""
    rows = []
    for side in ("a", "b"):
        probs = zip(j["options"] or [], j[f"probs_{side}"] or [])
        shown = ", ".join(f"{esc(k)} {num(v)}" for k, v in probs) or "not judged"
        rows.append(
            f"<li>{side.upper()}: {esc(j[f'verdict_{side}'])} rank {esc(j[f'rank_{side}'])} "
            f"({esc(j[f'status_{side}'])}; {shown})</li>"
        )
    verdict = f"label {j['label']}" if j["label"] else f"no label: {j['no_label_reason']}"
    return (
        f"<h4>Verdict judge: {esc(j['model_id'])}</h4><ul>{''.join(rows)}</ul><p>judge's {esc(verdict)}</p>"
    )


def spl_record(ex: dict) -> str:
    label = ex["label"]
    badge = _badge(f"label {label}", "ok") if label else _badge(f"no label: {ex['no_label_reason']}", "bad")
    badges = [_badge(f"topic {(ex['prompt_attributes'] or {}).get('topic')}"), badge]
    if ex.get("source_category"):
        badges.insert(1, _badge(f"category {ex['source_category']}"))

    def title(side: str) -> str:
        role = "chosen" if label == side else ("rejected" if label in ("a", "b") else "no label")
        return f"Response {side.upper()} ({role})"

    ranks = ex["verdict_ranks"]
    diff = ex["rank_diff"]
    outcome = f"label {label}" if label else f"no label ({ex['no_label_reason']})"
    return (
        _head(ex, ex["pair_id"], badges)
        + f"<h4>Prompt</h4>{turns(ex['prompt'])}"
        + f'<div class="attrs">prompt attributes ({esc(ex["prompt_status"])}): {_chips(ex["prompt_attributes"])}</div>'
        + _side_by_side(
            (title("a"), "chosen" if label == "a" else "", _spl_side(ex["a"])),
            (title("b"), "chosen" if label == "b" else "", _spl_side(ex["b"])),
        )
        + f"<p class='score'>rank A {esc(ex['a']['rank'])} − rank B {esc(ex['b']['rank'])} = rank difference "
        f"{esc(diff)} (margin {esc(ex['margin'])}): <b>{esc(outcome)}</b></p>"
        + f"<p class='aside'>rule base {esc(ex['rulebase']['id'])} {esc(ex['rulebase']['hash'][:12])}; "
        f"verdict ranks {esc(', '.join(f'{k} {v}' for k, v in ranks.items()))}</p>"
        + _spl_judge(ex.get("judge"))
        + audit_html(ex.get("audit"))
    )


def record_html(ex: dict) -> str:
    body = tenet_record(ex) if ex["kind"] == "tenets" else spl_record(ex)
    return f'<div class="record">{body}</div>'
