import pytest

from spl_hf.tenets import default_tenets, parse_tenets, select_tenets


def test_default_tenets_are_the_49_from_the_card() -> None:
    ts = default_tenets()
    assert len(ts) == 49
    assert len(set(ts.names())) == 49
    assert ts["upfront_concerns"].statement.startswith("raising foreseeable concerns and asking necessary")
    assert ts.names()[0] == "accurate_overall_impressions"
    assert ts.names()[-1] == "weighting_recoverability"
    assert all(t.statement and t.statement == " ".join(t.statement.split()) for t in ts.tenets)


def test_select_all_list_and_order() -> None:
    assert select_tenets("all") == default_tenets().tenets
    picked = select_tenets("no_preachy_tone, calibrated_caveats")
    assert [t.name for t in picked] == ["no_preachy_tone", "calibrated_caveats"]
    assert select_tenets(["calibrated_caveats"])[0].name == "calibrated_caveats"


def test_unknown_tenet_names_a_close_match() -> None:
    with pytest.raises(KeyError, match="did you mean no_preachy_tone"):
        select_tenets("no_preachy_tones")
    with pytest.raises(ValueError, match="twice"):
        select_tenets("no_preachy_tone,no_preachy_tone")
    with pytest.raises(ValueError, match="no tenets"):
        select_tenets(" , ")


def test_parse_rejects_bad_tenet_files() -> None:
    with pytest.raises(ValueError, match="lower_snake_case"):
        parse_tenets({"tenets": {"Bad Name": "x"}})
    with pytest.raises(ValueError, match="non-empty statement"):
        parse_tenets({"tenets": {"ok": "  "}})
    with pytest.raises(ValueError, match="tenets"):
        parse_tenets({"name": "x"})


def test_statement_edit_changes_tenet_hash() -> None:
    a = parse_tenets({"tenets": {"t": "being kind"}}).tenets[0]
    b = parse_tenets({"tenets": {"t": "being very kind"}}).tenets[0]
    assert a.hash != b.hash
