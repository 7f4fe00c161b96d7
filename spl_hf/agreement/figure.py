"""Figure 3: accuracies against the panel reference (left) and kappas (right), per attribute.

Built as a ``matplotlib.figure.Figure`` without pyplot; matplotlib is imported only here.
"""

from __future__ import annotations

from spl_hf.agreement.panel import AgreementReport


def figure_agreement(report: AgreementReport):
    from matplotlib.figure import Figure

    names = [a.attribute for a in report.attributes]
    x = list(range(len(names)))
    fig = Figure(figsize=(9.0, 4.2))
    left, right = fig.subplots(1, 2)
    w = 0.38

    def bars(ax, values, offset, label, hatch=None):
        # An undefined value is drawn as no bar and marked, never as zero.
        ys = [0.0 if v is None else v for v in values]
        ax.bar([i + offset for i in x], ys, width=w, label=label, hatch=hatch)
        for i, v in zip(x, values):
            if v is None:
                ax.text(i + offset, 0.02, "n/a", ha="center", va="bottom", fontsize=7, rotation=90)

    bars(left, [a.conditional_accuracy for a in report.attributes], -w / 2, "conditional")
    bars(left, [a.coverage_aware_accuracy for a in report.attributes], w / 2, "coverage-aware")
    left.set_ylim(0, 1.05)
    left.set_ylabel("accuracy (proportion)")
    left.set_title("Accuracy against the plurality reference", fontsize=9)
    bars(right, [a.cohen_kappa for a in report.attributes], -w / 2, "Cohen's κ: model vs reference")
    bars(right, [a.fleiss_kappa for a in report.attributes], w / 2, "Fleiss' κ: among raters", hatch="//")
    right.set_ylim(
        min(0.0, *[v for a in report.attributes for v in (a.cohen_kappa, a.fleiss_kappa) if v is not None])
        - 0.05,
        1.05,
    )
    right.set_title("Kappa (not directly comparable)", fontsize=9)
    for ax in (left, right):
        ax.set_xticks(x, names, rotation=20)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    fig.tight_layout()
    return fig
