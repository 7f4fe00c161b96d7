"""The gradio app of ``spl-hf view``: card, figures, the rows table with filters and search, and the
explanation of any row (a click on a row, or ``?row=ID`` in the URL).

The URL's query parameters set the filters and the explained row when the page loads (``tenet``,
``source``, ``label``, ``q``, ``smin``, ``smax``, ``page``, ``row``), so a view can be linked to.
"""

# No `from __future__ import annotations` here: gradio reads the handlers' annotations (gr.Request,
# gr.SelectData) at runtime to know what to inject.

from spl_hf.view.rows import COLUMNS, RowFilter
from spl_hf.view.session import ViewerSession

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


def build_app(session: ViewerSession, page_size: int = 50):
    """The ``gradio.Blocks`` app over one session."""
    import gradio as gr

    idx = session.index
    score_name = "score" if idx.kind == "tenets" else "rank difference"
    with gr.Blocks(title=f"spl-hf view: {session.release.describe()}", analytics_enabled=False) as demo:
        gr.Markdown(f"# {session.title}", elem_id="release-title")
        with gr.Tabs() as tabs:
            with gr.Tab("Rows", id="rows"):
                with gr.Row():
                    tenet = gr.Dropdown(
                        [ANY, *idx.values("tenet")],
                        value=ANY,
                        label="tenet" if idx.kind == "tenets" else "topic",
                    )
                    source = gr.Dropdown([ANY, *idx.values("source")], value=ANY, label="source")
                    label = gr.Dropdown([ANY, *idx.values("label")], value=ANY, label="label")
                    smin = gr.Number(None, label=f"{score_name} ≥")
                    smax = gr.Number(None, label=f"{score_name} ≤")
                with gr.Row():
                    text = gr.Textbox(label="search prompt or id", scale=3)
                    page = gr.Number(1, label="page", precision=0, minimum=1, scale=1)
                    apply = gr.Button("apply", scale=1)
                count = gr.Markdown(elem_id="match-count")
                table = gr.Dataframe(headers=HEADERS, interactive=False, wrap=True, elem_id="rows-table")
                gr.Markdown("Click a row to explain it.")
            with gr.Tab("Explain", id="explain"):
                with gr.Row():
                    row = gr.Textbox(label="row: scenario_id / pair_id, or CONFIG SPLIT INDEX", scale=4)
                    go = gr.Button("explain", scale=1)
                explained = gr.Markdown(elem_id="explain-text")
                details = gr.JSON(label="as JSON (spl-hf explain --json)")
            with gr.Tab("Card", id="card"):
                gr.Markdown(session.release.card_body, elem_id="card")
            with gr.Tab("Figures", id="figures"):
                for path, caption in session.figures():
                    gr.Image(str(path), label=caption, interactive=False)
                gr.Plot(session.composition(), label="composition")

        filters = [tenet, source, label, smin, smax, text, page]

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
            except ValueError as exc:  # an unknown row: say so in the view
                return f"**{exc}**", None
            return f"```text\n{text_out}```", ex

        def on_select(evt: gr.SelectData):
            values = evt.row_value
            spec = " ".join(str(v) for v in values[-3:])
            return (spec, *explain(spec), gr.Tabs(selected="explain"))

        def on_load(request: gr.Request):
            q = dict(request.query_params) if request is not None else {}
            values = [
                q.get("tenet", ANY),
                q.get("source", ANY),
                q.get("label", ANY),
                _number(q.get("smin")),
                _number(q.get("smax")),
                q.get("q", ""),
                int(_number(q.get("page")) or 1),
            ]
            note, rows = show(*values)
            spec = q.get("row", "")
            text_out, ex = explain(spec)
            tab = gr.Tabs(selected="explain" if spec else "rows")
            return (*values, note, rows, spec, text_out, ex, tab)

        apply.click(show, filters, [count, table])
        text.submit(show, filters, [count, table])
        go.click(explain, [row], [explained, details])
        row.submit(explain, [row], [explained, details])
        table.select(on_select, None, [row, explained, details, tabs])
        demo.load(on_load, None, [*filters, count, table, row, explained, details, tabs])
    return demo
