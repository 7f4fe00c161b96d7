"""The text ``spl-hf explain`` prints: the same values as ``--json``, laid out for reading."""

from __future__ import annotations

from spl_hf.contract import INCONSISTENT, POSITION_TEXT


def render(ex: dict) -> str:
    lines = _head(ex)
    lines += _tenet_lines(ex) if ex["kind"] == "tenets" else _spl_lines(ex)
    if "audit" in ex:
        lines += _audit_lines(ex["audit"])
    return "\n".join(lines) + "\n"


def _head(ex: dict) -> list[str]:
    ident = ex.get("scenario_id") or ex["pair_id"]
    lines = [
        f"{ident}  ({ex['release']}: {ex['config']}/{ex['split']} row {ex['index']}, source {ex['source']})"
    ]
    lines.append("prompt:")
    lines += [_text(f"  [{m['role']}] ", m) for m in ex["prompt"]]
    return lines


def _text(prefix: str, t: dict) -> str:
    more = f" [{t['chars']} chars, clipped]" if t["clipped"] else f" [{t['chars']} chars]"
    return prefix + t["text"].replace("\n", " ") + more


def _tenet_lines(ex: dict) -> list[str]:
    s = ex["score"]
    lines = [
        f"response A{' (chosen)' if ex['chosen_side'] == 'a' else ' (rejected)'}:",
        _text("  ", ex["response_a"]),
        f"response B{' (chosen)' if ex['chosen_side'] == 'b' else ' (rejected)'}:",
        _text("  ", ex["response_b"]),
        f"tenet: {ex['tenet']}: {ex['statement'] or '(statement not in card.json)'}",
        f"judge: {ex['judge']['model_id']} @ {ex['judge']['model_revision']} (template {ex['judge']['template_hash']})",
        # The judge stores P(the response shown first is better) per ordering; named here by what it is.
        f"  P(A better | A first) = p_a_first      = {s['p_a_better_a_first']:.6f}   label mass {s['mass_first']:.4f}",
        f"  P(A better | B first) = 1 − p_a_second = {s['p_a_better_b_first']:.6f}   label mass {s['mass_second']:.4f}"
        f"   (stored p_a_second = P(B better | B first) = {s['p_a_second']:.6f})",
        f"  {POSITION_TEXT[s['position']]}",
        f"  {s['formula']} (the row stores |score| {s['stored']:.6f}: {'same' if s['matches'] else 'DIFFERENT'})",
        f"  |score| {abs(s['recomputed']):.6f} {'>=' if s['eligible'] else '<'} threshold {s['threshold']}: "
        f"{'eligible' if s['eligible'] else 'NOT eligible'}; sign gives chosen side {s['side_from_sign']}"
        f" (stored {ex['chosen_side']})",
        "why this tenet: the pair's scores on every tenet it was judged on",
    ]
    for o in ex["other_tenets"]:
        mark = "<- this row" if o["this_row"] else ("eligible" if o["eligible"] else "below threshold")
        flag = "  position-inconsistent" if o["position"] in INCONSISTENT else ""
        lines.append(f"  {o['tenet']:<32} {o['score']:+.6f}  {o['tenet_status']:<10} {mark}{flag}")
    lines += _assignment_lines(ex["assignment"])
    return lines


def _assignment_lines(a: dict | None) -> list[str]:
    if a is None:
        return ["assignment: no certificate or judge_scores in this release"]
    lines = [
        f"assignment certificate ({a['strategy']}, {a['kept_tenets']} kept tenets, objective {a['objective']:.6f}):",
        f"  gain = round(|score|·{a['scale']})·M + tie, M = {a['big_m']}, tie in [0, {a['tie_range']})",
        f"  prompt potential π(p) = {a['prompt_potential']}",
    ]
    here = a["assigned_arc"]
    if here:
        lines.append(
            f"  assigned: {here['tenet']} pair {here['pair_id']} gain {here['gain']} π(t) {here['tenet_potential']}"
            f" reduced cost of p→t = gain + π(p) − π(t) = {here['reduced_cost']}"
        )
    for alt in a["alternatives"]:
        lines += [
            f"  instead {alt['tenet']} (pair {alt['pair_id']}, score {alt['score']:+.6f}): {move_sentence(alt)}",
            f"    reduced cost of t'→p = −gain' + π(t') − π(p) = {alt['reduced_cost']}; Σ|score| here changes by "
            f"{alt['gain_change']:+.6f} against a slot price difference of {alt['price_difference']:+.6f}: "
            f"net {_net(alt['net_change'])}",
        ]
    if not a["alternatives"]:
        lines.append("  no other kept tenet has this prompt eligible: no alternative arc")
    verdict = (
        "all >= 0: no reassignment of this prompt improves the total"
        if a["all_reduced_costs_nonnegative"]
        else "NEGATIVE: the certificate does not hold here"
    )
    lines.append(f"  reduced costs {verdict}")
    return lines


def move_sentence(alt: dict, fmt=lambda x: f"{x:.6f}", name=str) -> str:
    """What the certificate says about moving the prompt to ``alt``'s tenet, in one sentence.

    The net change (gain change minus the slot price difference) is −(both reduced costs): by how much
    at least any reassignment that moves the prompt there lowers the total Σ|score|. ``fmt`` and
    ``name`` format the number and the tenet (the viewer escapes and rounds them)."""
    net, tenet = alt["net_change"], name(alt["tenet"])
    if net is None:
        return "the certificate does not price this prompt (not in its network)"
    if net > 0:
        return f"moving this prompt to {tenet} would RAISE the total by {fmt(net)}: not optimal"
    if net == 0:
        return f"moving this prompt to {tenet} would leave the total unchanged (a tie)"
    return f"moving this prompt to {tenet} would lower the total by at least {fmt(-net)}"


def _net(value: float | None) -> str:
    return "unknown (prompt not in the certificate)" if value is None else f"{value:+.6f} (≤ 0)"


def _side_lines(ex: dict, side: str) -> list[str]:
    d = ex[side]
    lab = d["labeler"]["identity"] if d["labeler"]["key"] is None else d["labeler"]["key"]
    gen = d["generator"]["identity"] if d["generator"]["key"] is None else d["generator"]["key"]
    rules = (
        "; ".join(f"{r['id']}: {r.get('when')} -> {r.get('verdict')}" for r in d["rules"]) or "no rule fired"
    )
    return [
        f"response {side.upper()} (instruction {d['instruction']}, generator {gen}):",
        _text("  ", d["response"]),
        f"  attributes ({d['status']}, labeler {lab}): {d['attributes']}",
        f"  rules fired: {rules}",
        f"  verdict {d['verdict']} rank {d['rank']}",
    ]


def _spl_lines(ex: dict) -> list[str]:
    pl = ex["prompt_labeler"]
    lines = [
        f"prompt attributes ({ex['prompt_status']}, labeler {pl['key'] or pl['identity']}): {ex['prompt_attributes']}"
    ]
    lines += _side_lines(ex, "a") + _side_lines(ex, "b")
    label = f"label {ex['label']}" if ex["label"] else f"no label: {ex['no_label_reason']}"
    lines.append(f"rank difference {ex['rank_diff']} (margin {ex['margin']}): {label}")
    lines.append(
        f"rule base {ex['rulebase']['id']} {ex['rulebase']['hash'][:12]}; verdict ranks {ex['verdict_ranks']}"
    )
    if ex.get("judge"):
        lines += _judge_lines(ex["judge"])
    return lines


def _judge_lines(j: dict) -> list[str]:
    """The verdict judge's reading of the same pair (configs judge_derivations, common_support)."""
    lines = [f"verdict judge {j['model_id']} @ {j['model_revision']} (template {j['template_hash']}):"]
    for side in ("a", "b"):
        probs = dict(zip(j["options"] or [], j[f"probs_{side}"] or []))
        shown = ", ".join(f"{k} {v:.3f}" for k, v in probs.items()) or "not judged"
        lines.append(
            f"  {side.upper()}: {j[f'verdict_{side}']} rank {j[f'rank_{side}']} ({j[f'status_{side}']}; {shown})"
        )
    verdict = f"label {j['label']}" if j["label"] else f"no label: {j['no_label_reason']}"
    lines.append(f"  judge's {verdict}")
    return lines


def _audit_lines(a: dict) -> list[str]:
    row = {True: "reproduced", False: "MISMATCH", None: "not listed (the audit's list was cut)"}[
        a["row_reproduced"]
    ]
    lines = [
        f"audit: this row {row}; release {a['rows']} rows, {a['reproduced']} reproduced, "
        f"{a['mismatch_count']} mismatches{'' if a['certificate_ok'] is None else '; certificate ' + ('verified' if a['certificate_ok'] else 'FAILED')}"
        f"; {'passed' if a['release_ok'] else 'FAILED'}"
    ]
    lines += [
        f"  {m['config']}/{m['split']} row {m['row']}: {', '.join(m['fields'])}" for m in a["row_mismatches"]
    ]
    lines += [f"  FAILED: {f}" for f in a["failures"]]
    return lines
