"""The gradio app of ``spl-hf view``: card, figures, the rows table with filters and search, and the
explanation of any row (a click on a row, or ``?row=ID`` in the URL).

The URL's query parameters set the filters and the explained row when the page loads (``tenet``,
``source``, ``label``, ``position``, ``q``, ``smin``, ``smax``, ``page``, ``row``), so a view can be
linked to. The explanation is a structured view (conversations, both orderings as named
probabilities, the per-tenet scores as bars, the certificate in words), with explain's raw text and
JSON one click away.
"""

# No `from __future__ import annotations` here: gradio reads the handlers' annotations (gr.Request,
# gr.SelectData) at runtime to know what to inject.

import html
import re

from spl_hf.view.rows import POSITION_FILTERS, RowFilter
from spl_hf.view.session import ViewerSession

IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+\.png)\)")
ANY = "(any)"
POSITION_CHOICES = [
    ("(any)", ANY),
    ("position-inconsistent (same slot wins twice)", "inconsistent"),
    ("position-consistent", "consistent"),
    ("first shown wins twice", "first_slot"),
    ("second shown wins twice", "second_slot"),
    ("undecided (a 0.5)", "undecided"),
]
# Share of the table's width per column (tenets: 9 columns, SPL: 8), so the texts wrap in view.
WIDTHS = {
    "tenets": ["12%", "10%", "8%", "7%", "6%", "9%", "16%", "16%", "16%"],
    "spl": ["11%", "8%", "8%", "9%", "9%", "17%", "19%", "19%"],
}


def _choice(value: str | None) -> str | None:
    return None if value in (None, "", ANY) else value


def _number(value) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _rows_tab(gr, session: ViewerSession) -> dict:
    idx = session.index
    score_name = "|score|" if idx.kind == "tenets" else "rank difference"
    w: dict = {}
    with gr.Row():
        kind = "tenet" if idx.kind == "tenets" else "prompt topic"
        w["tenet"] = gr.Dropdown([ANY, *idx.values("tenet")], value=ANY, label=kind)
        w["source"] = gr.Dropdown([ANY, *idx.values("source")], value=ANY, label="source")
        label = "chosen side" if idx.kind == "tenets" else "label or why none"
        w["label"] = gr.Dropdown([ANY, *idx.values("label")], value=ANY, label=label)
        w["position"] = gr.Dropdown(
            POSITION_CHOICES, value=ANY, label="judge orderings", visible=idx.kind == "tenets"
        )
        w["smin"] = gr.Number(None, label=f"{score_name} ≥")
        w["smax"] = gr.Number(None, label=f"{score_name} ≤")
    with gr.Row():
        w["text"] = gr.Textbox(label="search prompt or id", scale=3)
        w["page"] = gr.Number(1, label="page", precision=0, minimum=1, scale=1)
        w["apply"] = gr.Button("apply", scale=1)
    w["count"] = gr.Markdown(elem_id="match-count")
    w["table"] = gr.Dataframe(
        headers=session.headers,
        interactive=False,
        wrap=True,
        column_widths=WIDTHS[idx.kind],
        max_height=900,
        elem_id="rows-table",
    )
    w["refs"] = gr.State([])  # the shown page's (id, config, split, index), for a click
    gr.Markdown("Click a row to explain it: full texts, both orderings and the certificate.")
    return w


def _explain_tab(gr) -> dict:
    w: dict = {}
    with gr.Row():
        w["row"] = gr.Textbox(label="row: scenario_id / pair_id, or CONFIG SPLIT INDEX", scale=4)
        w["go"] = gr.Button("explain", scale=1)
    w["record"] = gr.HTML(elem_id="record")
    with gr.Accordion("raw text (spl-hf explain)", open=False, elem_id="raw-text"):
        w["explained"] = gr.HTML(elem_id="explain-text")
    with gr.Accordion("JSON (spl-hf explain --json), full precision", open=False, elem_id="raw-json"):
        w["details"] = gr.JSON(show_label=False)
    return w


def card_markdown(body: str) -> str:
    """The card's body with its figure links (files beside README.md, which the page cannot load)
    replaced by a pointer to the Figures tab, where they are shown."""
    return IMAGE.sub(lambda m: f"*(figure `{m.group(2)}`: see the Figures tab — {m.group(1)})*", body)


def _static_tabs(gr, session: ViewerSession) -> None:
    with gr.Tab("Card", id="card"):
        gr.Markdown(card_markdown(session.release.card_body), elem_id="card")
    with gr.Tab("Figures", id="figures"):
        for path, caption in session.figures():
            gr.Image(str(path), label=caption, interactive=False)
        gr.Plot(session.composition(), label="composition")


def _query_values(q: dict) -> list:
    """The filter values a URL's query parameters set (defaults where absent)."""
    return [
        q.get("tenet", ANY),
        q.get("source", ANY),
        q.get("label", ANY),
        q.get("position") if q.get("position") in POSITION_FILTERS else ANY,
        _number(q.get("smin")),
        _number(q.get("smax")),
        q.get("q", ""),
        int(_number(q.get("page")) or 1),
    ]


def _handlers(gr, session: ViewerSession, page_size: int):
    """The event handlers: a filtered page, an explanation, a row click, the page load."""

    def show(tenet_v, source_v, label_v, position_v, smin_v, smax_v, text_v, page_v):
        flt = RowFilter(
            _choice(tenet_v),
            _choice(source_v),
            _number(smin_v),
            _number(smax_v),
            _choice(label_v),
            text_v or None,
            _choice(position_v),
        )
        p = session.page(flt, int(_number(page_v) or 1) - 1, page_size)
        note = f"**{p.matched}** of {p.total} rows match; page {p.page + 1} of {p.pages}"
        refs = [[r["id"], r["config"], r["split"], r["index"]] for r in p.rows]
        return note, session.table(p), refs

    def explain(spec: str):
        words = (spec or "").split()
        if not words:
            return "", "", None
        try:
            text_out, ex, record = session.explain(words)
        except ValueError as exc:  # an unknown row (SplHfError): say so in the view
            return f'<p class="flag bad">{html.escape(str(exc))}</p>', "", None
        return record, f'<pre class="raw">{html.escape(text_out)}</pre>', ex

    def on_select(evt: gr.SelectData, refs: list):
        # By the row's id (the table may be sorted in the page), else by its position.
        ident = evt.row_value[0] if evt.row_value else None
        ref = next((r for r in refs if r[0] == ident), None) or refs[evt.index[0]]
        spec = " ".join(str(v) for v in ref[1:])  # config, split, index
        return (spec, *explain(spec), gr.Tabs(selected="explain"))

    def on_load(request: gr.Request):
        q = dict(request.query_params) if request is not None else {}
        values = _query_values(q)
        spec = q.get("row", "")
        tab = gr.Tabs(selected="explain" if spec else "rows")
        return (*values, *show(*values), spec, *explain(spec), tab)

    return show, explain, on_select, on_load


def build_app(session: ViewerSession, page_size: int = 50):
    """The ``gradio.Blocks`` app over one session."""
    import gradio as gr

    with gr.Blocks(title=session.title, analytics_enabled=False) as demo:
        gr.Markdown(f"# {session.title}\n{session.subtitle}", elem_id="release-title")
        with gr.Tabs() as tabs:
            with gr.Tab("Rows", id="rows"):
                r = _rows_tab(gr, session)
            with gr.Tab("Explain", id="explain"):
                e = _explain_tab(gr)
            _static_tabs(gr, session)
        show, explain, on_select, on_load = _handlers(gr, session, page_size)
        filters = [r[k] for k in ("tenet", "source", "label", "position", "smin", "smax", "text", "page")]
        shown = [r["count"], r["table"], r["refs"]]
        explained = [e["record"], e["explained"], e["details"]]
        r["apply"].click(show, filters, shown)
        r["text"].submit(show, filters, shown)
        e["go"].click(explain, [e["row"]], explained)
        e["row"].submit(explain, [e["row"]], explained)
        r["table"].select(on_select, [r["refs"]], [e["row"], *explained, tabs])
        demo.load(on_load, None, [*filters, *shown, e["row"], *explained, tabs])
    return demo
