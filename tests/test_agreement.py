import json
import re
import sys
from collections import Counter
from importlib import resources

import pytest

from spl_hf.agreement import (
    cohen_kappa,
    fleiss_kappa,
    panel_agreement,
    plurality,
    read_model_labels,
    read_panel,
)
from spl_hf.cli import main
from spl_hf.schema import default_schema
from tests import procs

SAMPLES = resources.files("spl_hf.data").joinpath("samples")
PANEL = str(SAMPLES.joinpath("panel_ratings.jsonl"))
LABELS = str(SAMPLES.joinpath("panel_model_labels.jsonl"))

T, F = True, False
# Hand-worked example: 6 items, 4 raters on `method`; 4 items, 3 raters on `topic`.
METHOD = {
    "i1": ([T, T, T, F], T),  # reference true, model true: true positive
    "i2": ([F, F, F, F], T),  # reference false, model true: false positive
    "i3": ([T, T, T, T], F),  # reference true, model false: false negative
    "i4": ([T, T, F, F], T),  # tie: no reference
    "i5": ([F, F, F, T], None),  # parse failure on an item with a reference
    "i6": ([F, F, T, F], F),  # true negative
}
TOPIC = {
    "t1": (["benign", "benign", "privacy"], "benign"),
    "t2": (["self_harm"] * 3, "chemistry_biology"),
    "t3": (["benign", "privacy", "self_harm"], "benign"),  # three-way tie
    "t4": (["chemistry_biology", "chemistry_biology", "benign"], "chemistry_biology"),
}


def write_example(tmp_path, method=METHOD, topic=TOPIC):
    panel, labels = [], []
    for attr, spec in (("method", method), ("topic", topic)):
        for item, (ratings, model) in spec.items():
            panel += [
                {"item_id": item, "rater_id": f"r{k}", "attribute": attr, "label": v}
                for k, v in enumerate(ratings)
            ]
            labels.append({"item_id": item, "attribute": attr, "label": model})
    return write_jsonl(tmp_path / "panel.jsonl", panel), write_jsonl(tmp_path / "labels.jsonl", labels)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def example_report(tmp_path):
    schema = default_schema()
    panel, labels = write_example(tmp_path)
    return panel_agreement(read_panel(panel, schema), read_model_labels(labels, schema), schema)


def test_plurality_detects_ties():
    assert plurality(["a", "a", "b"]) == "a"
    assert plurality(["a", "b"]) is None
    assert plurality(["a", "b", "c"]) is None
    assert plurality(["a", "a", "b", "b", "c"]) is None
    assert plurality(["x"]) == "x"


def test_hand_computed_boolean_attribute(tmp_path):
    a = example_report(tmp_path).get("method")
    assert (a.items, a.raters, a.ties, a.parse_failures) == (6, 4, 1, 1)
    assert (a.unique_reference, a.parsed_unique, a.correct) == (5, 4, 2)
    assert a.conditional_accuracy == 0.5 and a.coverage_aware_accuracy == 0.4
    # predicted (T, T, F, F) against reference (T, F, T, F): p_o = 1/2, p_e = 1/2 -> kappa 0
    assert a.cohen_kappa == pytest.approx(0.0)
    assert (a.false_positives, a.false_negatives, a.reference_positives) == (1, 1, 2)
    assert a.f1 == pytest.approx(0.5)  # 2·1 / (2·1 + 1 + 1)
    # rating counts (false, true) per item; P̄ = 23/36, P_e = 290/576 -> kappa = 3/11
    assert a.fleiss_kappa == pytest.approx(3 / 11)
    assert a.confusion is None


def test_hand_computed_topic(tmp_path):
    a = example_report(tmp_path).get("topic")
    assert (a.ties, a.parsed_unique, a.correct, a.unique_reference) == (1, 3, 2, 3)
    assert a.conditional_accuracy == pytest.approx(2 / 3) and a.coverage_aware_accuracy == pytest.approx(
        2 / 3
    )
    assert a.cohen_kappa == pytest.approx(0.5)  # p_o = 2/3, p_e = 1/9 + 2/9 = 1/3
    assert a.f1 is None and a.false_positives is None
    assert a.fleiss_kappa == pytest.approx(5 / 26)  # P̄ = 5/12, P_e = 40/144
    c = a.confusion
    assert c.model_labels == ["benign", "chemistry_biology"]
    assert c.reference_labels == ["benign", "chemistry_biology", "self_harm"]  # schema order
    assert c.counts == [[1, 0, 0], [0, 1, 1]]


def test_undefined_values_are_stated(tmp_path):
    same = {f"i{k}": ([F, F, F], F) for k in range(3)}
    schema = default_schema()
    panel, labels = write_example(tmp_path, method=same, topic=TOPIC)
    a = panel_agreement(read_panel(panel, schema), read_model_labels(labels, schema), schema).get("method")
    assert a.conditional_accuracy == 1.0
    assert a.cohen_kappa is None and a.f1 is None and a.fleiss_kappa is None
    assert len(a.notes) == 3
    assert "NaN" not in json.dumps(a.to_dict())


def test_matches_sklearn_and_statsmodels_on_the_sample():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    irr = pytest.importorskip("statsmodels.stats.inter_rater")
    schema = default_schema()
    panel, model = read_panel(PANEL, schema), read_model_labels(LABELS, schema)
    report = panel_agreement(panel, model, schema)
    assert [a.attribute for a in report.attributes] == list(schema.names("prompt"))
    guesses = {(m.item_id, m.attribute): m.label for m in model}
    for a in report.attributes:
        options = schema.attribute(a.attribute).options
        by_item: dict = {}
        for r in panel:
            if r.attribute == a.attribute:
                by_item.setdefault(r.item_id, []).append(r.label)
        ref = {i: plurality(v) for i, v in by_item.items()}
        items = sorted(i for i in by_item if ref[i] is not None and guesses[(i, a.attribute)] is not None)
        y_ref = [ref[i] for i in items]
        y_pred = [guesses[(i, a.attribute)] for i in items]
        assert a.cohen_kappa == pytest.approx(sklearn_metrics.cohen_kappa_score(y_pred, y_ref))
        assert a.conditional_accuracy == pytest.approx(sklearn_metrics.accuracy_score(y_ref, y_pred))
        if a.kind == "bool":
            assert a.f1 == pytest.approx(sklearn_metrics.f1_score(y_ref, y_pred, pos_label="true"))
        table = [[Counter(v)[o] for o in options] for _, v in sorted(by_item.items())]
        assert a.fleiss_kappa == pytest.approx(irr.fleiss_kappa(table, method="fleiss"))
    # the sample is built to exercise every case: ties, parse failures, model topics outside the panel's
    assert sum(a.ties for a in report.attributes) > 0
    assert report.get("topic").parse_failures > 0


def test_measures_against_independent_implementations():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    irr = pytest.importorskip("statsmodels.stats.inter_rater")
    a = ["x", "y", "y", "z", "x", "x", "z", "y"]
    b = ["x", "y", "z", "z", "y", "x", "z", "x"]
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b))
    table = [[3, 1, 0], [0, 4, 0], [2, 1, 1], [1, 1, 2], [0, 0, 4]]
    assert fleiss_kappa(table) == pytest.approx(irr.fleiss_kappa(table))
    with pytest.raises(ValueError, match="item 1 has 3 ratings"):
        fleiss_kappa([[2, 2], [1, 2]])
    with pytest.raises(ValueError, match="3 labels against 2"):
        cohen_kappa(["a", "b", "c"], ["a", "b"])


def test_cli_json_on_the_shipped_sample():
    res = procs.run(
        [sys.executable, "-m", "spl_hf.cli", "agreement", "--panel", PANEL, "--labels", LABELS, "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    data = json.loads(res.stdout)["attributes"]
    assert set(data) == {"topic", "knowledge", "historical", "fictional", "method", "steps"}
    for name, a in data.items():
        for key in (
            "conditional_accuracy",
            "coverage_aware_accuracy",
            "cohen_kappa",
            "f1",
            "fleiss_kappa",
            "ties",
            "false_positives",
            "false_negatives",
            "correct",
            "parsed_unique",
            "unique_reference",
        ):
            assert key in a, (name, key)
        assert 0.0 <= a["conditional_accuracy"] <= 1.0
        assert a["conditional_accuracy"] == a["correct"] / a["parsed_unique"]
        assert a["coverage_aware_accuracy"] == a["correct"] / a["unique_reference"]
    assert data["topic"]["f1"] is None and data["topic"]["false_positives"] is None
    assert data["method"]["f1"] is not None


def test_cli_tables_and_figure(capsys, tmp_path):
    fig = tmp_path / "figure3.png"
    assert main(["agreement", "--panel", PANEL, "--labels", LABELS, "--output_dir", str(fig)]) == 0
    assert fig.read_bytes()[:4] == b"\x89PNG"
    text = capsys.readouterr().out
    assert "| topic | 31/33 | 93.94 | 31/36 | 86.11 |" in text
    assert "Table V" in text and "Table XI" in text and "Table XII" in text


@pytest.mark.parametrize(
    ("which", "edit", "message"),
    [
        (
            "labels",
            lambda p, lab: lab.pop(),
            r"labels.jsonl: no 'topic' label for 1 item\(s\) that .*panel.jsonl has: t4",
        ),
        (
            "panel",
            lambda p, lab: [p.remove(r) for r in [r for r in p if r["item_id"] == "t4"]],
            r"panel.jsonl: no 'topic' label for 1 item\(s\) that .*labels.jsonl has: t4",
        ),
        (
            "labels",
            lambda p, lab: lab[0].update(label="perhaps"),
            r"labels.jsonl:1: label 'perhaps' is not one of",
        ),
        (
            "panel",
            lambda p, lab: p[-1].update(label="gambling"),
            r"panel.jsonl:\d+: label 'gambling' is not one of",
        ),
        ("panel", lambda p, lab: p[0].update(attribute="tone"), r"panel.jsonl:1: unknown attribute 'tone'"),
        (
            "labels",
            lambda p, lab: lab[0].update(attribute="tone"),
            r"labels.jsonl:1: unknown attribute 'tone'",
        ),
        ("panel", lambda p, lab: p.append(dict(p[0])), r"labels 'method' of item 'i1' twice"),
        ("labels", lambda p, lab: lab.append(dict(lab[0])), r"item 'i1' has a second 'method' label"),
        ("panel", lambda p, lab: p.pop(0), r"has 3 ratings for item 'i1' but 4 for item 'i2'"),
        ("panel", lambda p, lab: p[0].update(label=None), r"panel.jsonl:1: a rater label may not be null"),
        ("panel", lambda p, lab: p[0].pop("rater_id"), r"panel.jsonl:1: missing field\(s\) rater_id"),
        (
            "labels",
            lambda p, lab: lab.append({"item_id": "i1", "attribute": "steps", "label": True}),
            r"attribute\(s\) \['steps'\] have model labels but no panel ratings",
        ),
    ],
)
def test_bad_input_names_file_and_what_is_missing(tmp_path, capsys, which, edit, message):
    panel_path, labels_path = write_example(tmp_path)
    panel = [json.loads(x) for x in panel_path.read_text().splitlines()]
    labels = [json.loads(x) for x in labels_path.read_text().splitlines()]
    edit(panel, labels)
    write_jsonl(panel_path, panel)
    write_jsonl(labels_path, labels)
    assert main(["agreement", "--panel", str(panel_path), "--labels", str(labels_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err), err
