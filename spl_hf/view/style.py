"""The viewer's stylesheet (given to ``launch``): conversations as wrapped turns, chosen and rejected
side by side, badges and flags, the per-tenet bar chart, and raw text that wraps instead of scrolling."""

CSS = """
#rows-table .virtual-row, #rows-table th { font-family: var(--font-sans, ui-sans-serif, system-ui, sans-serif);
  font-size: 0.88rem; line-height: 1.35; }
#rows-table th { font-size: 0.84rem; }
#rows-table th { word-break: normal; overflow-wrap: normal; hyphens: none; }
.record { font-size: 0.95em; line-height: 1.45; }
.record h3 { margin: 0 0 2px 0; }
.record h4 { margin: 14px 0 4px 0; font-variant: normal; }
.record .rec-head .where { color: #555; font-size: 0.85em; margin-bottom: 4px; }
.record .turn { border: 1px solid #d9dce1; border-radius: 8px; padding: 6px 10px; margin: 6px 0; }
.record .turn.user { background: #eef4ff; }
.record .turn.assistant { background: #f7f7f8; }
.record .turn.system { background: #fff7e6; }
.record .role { font-size: 0.72em; color: #555; text-transform: uppercase; letter-spacing: 0.04em;
  display: flex; justify-content: space-between; }
.record .role .chars { text-transform: none; letter-spacing: 0; }
.record .text, pre.raw { white-space: pre-wrap; overflow-wrap: anywhere; }
.record .sides { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 14px; }
.record .col.chosen h4 { color: #1a7f37; }
.record .col.rejected h4 { color: #b42318; }
.record .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; background: #eceef1;
  margin: 2px 4px 2px 0; font-size: 0.85em; }
.record .badge.ok { background: #dcfce7; color: #14532d; }
.record .badge.bad { background: #fee2e2; color: #7f1d1d; }
.record .badge.on { background: #dbeafe; color: #1e3a8a; }
.record .badge.off { background: #f3f4f6; color: #6b7280; }
.record .flag.bad { color: #b42318; font-weight: 600; }
.record .flag.ok { color: #1a7f37; }
.record .aside { color: #666; font-size: 0.85em; }
.record table.orderings { border-collapse: collapse; margin: 4px 0; }
.record table.orderings th, .record table.orderings td { padding: 3px 10px; border-bottom: 1px solid #e5e7eb;
  text-align: left; }
.record .bars { margin: 4px 0; }
.record .bar-row { display: grid; grid-template-columns: 15em minmax(8em, 1fr) 5em 23em; gap: 8px;
  align-items: center; font-size: 0.88em; padding: 1px 0; }
.record .bar-row.this { font-weight: 600; }
.record .bar-row.weak .bar { opacity: 0.4; }
.record .bar-name { overflow-wrap: anywhere; }
.record .track { position: relative; height: 14px; background: #f1f2f4; border-radius: 2px; }
.record .track::after { content: ""; position: absolute; left: 50%; top: -2px; bottom: -2px;
  border-left: 1px solid #555; }
.record .thr { position: absolute; top: 0; bottom: 0; border-left: 1px dashed #999; }
.record .bar { position: absolute; top: 2px; bottom: 2px; border-radius: 2px; }
.record .bar.pos { background: #2563eb; }
.record .bar.neg { background: #ea580c; }
.record .bar-axis { display: grid; grid-template-columns: 15em minmax(8em, 1fr) 5em 23em; gap: 8px;
  font-size: 0.88em; }
.record .bar-axis .ticks { display: flex; justify-content: space-between; font-size: 0.85em; color: #666; }
.record .num { font-variant-numeric: tabular-nums; }
.record .num[title] { text-decoration: underline dotted #999; cursor: help; }
pre.raw { font-size: 0.8em; background: #f7f7f8; padding: 8px; border-radius: 6px; margin: 0; }
"""
