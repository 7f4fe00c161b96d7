"""The gradio app of ``spl-hf view``: card, figures, the rows table with filters and search, and the
explanation of any row (a click on a row, or ``?row=ID`` in the URL).

The URL's query parameters set the filters and the explained row when the page loads (``tenet``,
``source``, ``label``, ``q``, ``smin``, ``smax``, ``page``, ``row``), so a view can be linked to.
"""

# No `from __future__ import annotations` here: gradio reads the handlers' annotations (gr.Request,
# gr.SelectData) at runtime to know what to inject.

import re

from spl_hf.view.rows import COLUMNS, RowFilter
from spl_hf.view.session import ViewerSession

IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+\.png)\)")
HEADERS = [*COLUMNS, "config", "split", "index"]
ANY = "(any)"


def _choice(value: str | None) -> str | None:
    return None if value in (None, "", ANY) else value


def _number(value) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _rows_tab(gr, idx) -> dict:
    score_name = "score" if idx.kind == "tenets" else "rank difference"
    w: dict = {}
    with gr.Row():
        kind = "tenet" if idx.kind == "tenets" else "topic"
        w["tenet"] = gr.Dropdown([ANY, *idx.values("tenet")], value=ANY, label=kind)
        w["source"] = gr.Dropdown([ANY, *idx.values("source")], value=ANY, label="source")
        w["label"] = gr.Dropdown([ANY, *idx.values("label")], value=ANY, label="label")
        w["smin"] = gr.Number(None, label=f"{score_name} ≥")
        w["smax"] = gr.Number(None, label=f"{score_name} ≤")
    with gr.Row():
        w["text"] = gr.Textbox(label="search prompt or id", scale=3)
        w["page"] = gr.Number(1, label="page", precision=0, minimum=1, scale=1)
        w["apply"] = gr.Button("apply", scale=1)
    w["count"] = gr.Markdown(elem_id="match-count")
    w["table"] = gr.Dataframe(headers=HEADERS, interactive=False, wrap=True, elem_id="rows-table")
    gr.Markdown("Click a row to explain it.")
    return w


def _explain_tab(gr) -> dict:
    w: dict = {}
    with gr.Row():
        w["row"] = gr.Textbox(label="row: scenario_id / pair_id, or CONFIG SPLIT INDEX", scale=4)
        w["go"] = gr.Button("explain", scale=1)
    w["explained"] = gr.Markdown(elem_id="explain-text")
    w["details"] = gr.JSON(label="as JSON (spl-hf explain --json)")
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
        _number(q.get("smin")),
        _number(q.get("smax")),
        q.get("q", ""),
        int(_number(q.get("page")) or 1),
    ]


def _handlers(gr, session: ViewerSession, page_size: int):
    """The event handlers: a filtered page, an explanation, a row click, the page load."""

    def show(tenet_v, source_v, label_v, smin_v, smax_v, text_v, page_v):
        flt = RowFilter(
            _choice(tenet_v),
            _choice(source_v),
            _number(smin_v),
            _number(smax_v),
            _choice(label_v),
            text_v or None,
        )
        p = session.page(flt, int(_number(page_v) or 1) - 1, page_size)
        note = f"**{p.matched}** of {p.total} rows match; page {p.page + 1} of {p.pages}"
        return note, session.table(p)

    def explain(spec: str):
        words = (spec or "").split()
        if not words:
            return "", None
        try:
            text_out, ex = session.explain(words)
        except ValueError as exc:  # an unknown row (SplHfError): say so in the view
            return f"**{exc}**", None
        return f"```text\n{text_out}```", ex

    def on_select(evt: gr.SelectData):
        spec = " ".join(str(v) for v in evt.row_value[-3:])  # config, split, index
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

    with gr.Blocks(title=f"spl-hf view: {session.release.describe()}", analytics_enabled=False) as demo:
        gr.Markdown(f"# {session.title}", elem_id="release-title")
        with gr.Tabs() as tabs:
            with gr.Tab("Rows", id="rows"):
                r = _rows_tab(gr, session.index)
            with gr.Tab("Explain", id="explain"):
                e = _explain_tab(gr)
            _static_tabs(gr, session)
        show, explain, on_select, on_load = _handlers(gr, session, page_size)
        filters = [r[k] for k in ("tenet", "source", "label", "smin", "smax", "text", "page")]
        shown = [r["count"], r["table"]]
        explained = [e["explained"], e["details"]]
        r["apply"].click(show, filters, shown)
        r["text"].submit(show, filters, shown)
        e["go"].click(explain, [e["row"]], explained)
        e["row"].submit(explain, [e["row"]], explained)
        r["table"].select(on_select, None, [e["row"], *explained, tabs])
        demo.load(on_load, None, [*filters, *shown, e["row"], *explained, tabs])
    return demo
