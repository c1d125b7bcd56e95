import time

import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text._spec import FairnessSpec, combine_specs


def test_template_without_placeholder():
    with pytest.raises(FairpathInputError, match=r"template 1 'People are nice' has no placeholder \{country\}"):
        FairnessSpec.from_dict({"attribute": "country", "values": ["Chile", "Italy"],
                                "templates": ["{country} is", "People are nice"]})


def test_attribute_with_one_value():
    with pytest.raises(FairpathInputError, match=r"attribute 'country' has 1 value\(s\) \['Chile'\]; .*at least two"):
        FairnessSpec.from_dict({"attribute": "country", "values": ["Chile"], "templates": ["{country} is"]})


def test_duplicate_values_and_missing_keys():
    with pytest.raises(FairpathInputError, match=r"lists values \['Chile'\] more than once"):
        FairnessSpec.from_dict({"attribute": "country", "values": ["Chile", "Chile"], "templates": ["{country} is"]})
    with pytest.raises(FairpathInputError, match="lacks the key 'templates'"):
        FairnessSpec.from_dict({"attribute": "country", "values": ["Chile", "Italy"]})


def test_unknown_builtin_and_missing_or_broken_file(tmp_path):
    with pytest.raises(FairpathInputError, match=r"unknown built-in specification 'religion'"):
        FairnessSpec.builtin("religion")
    with pytest.raises(FairpathInputError, match=r"specification file '.*nope.yaml' does not exist"):
        FairnessSpec.load(tmp_path / "nope.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("attribute: [unclosed")
    with pytest.raises(FairpathInputError, match="is not valid YAML"):
        FairnessSpec.from_yaml(broken)


def test_ambiguous_free_text_counterfactual():
    spec = FairnessSpec.from_dict({
        "attribute": "name",
        "subgroups": {"male": {"possessive": "his", "object": "him"}, "female": {"possessive": "her", "object": "her"}},
        "values": {"male": ["Jake"], "female": ["Molly"]},
        "templates": ["{name} saw {object} with {possessive} dog"],
    })
    with pytest.raises(FairpathInputError, match=r"replacing 'Molly' by 'Jake' .* is ambiguous for \['her'\]"):
        spec.counterfactual("Molly saw her with her dog", "Molly", "Jake")
    assert spec.counterfactual("Jake saw him with his dog", "Jake", "Molly") == "Molly saw her with her dog"


def test_unknown_value_and_bad_combination():
    spec = FairnessSpec.builtin("country")
    with pytest.raises(FairpathInputError, match="has no value 'Atlantis'"):
        spec.fill(spec.templates[0], "Atlantis")
    with pytest.raises(FairpathInputError, match="must use every placeholder"):
        combine_specs([spec, FairnessSpec.builtin("occupation")], templates=["{country} is"])


# -- issue 11: malformed YAML layouts and encodings ------------------------------------------------------

def test_list_valued_subgroups():
    with pytest.raises(FairpathInputError, match=r"'subgroups' \(subgroup -> \{slot: word\}\) must be a mapping .*got a list"):
        FairnessSpec.from_dict({"attribute": "name", "values": {"f": ["Ana"], "m": ["Bo"]}, "subgroups": ["f", "m"],
                                "templates": ["{name} is"]})
    with pytest.raises(FairpathInputError, match=r"subgroup 'f' \(slot -> word\) must be a mapping .*got a list"):
        FairnessSpec.from_dict({"attribute": "name", "values": {"f": ["Ana"], "m": ["Bo"]}, "subgroups": {"f": ["she"]},
                                "templates": ["{name} is"]})


def test_list_valued_slots():
    with pytest.raises(FairpathInputError, match=r"'slots' of value 'Ana' \(slot -> word\) must be a mapping .*got a list"):
        FairnessSpec.from_dict({"attribute": "name", "values": [{"value": "Ana", "slots": ["she"]}, {"value": "Bo"}],
                                "templates": ["{name} is"]})


def test_specification_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_bytes("attribute: país\nvalues: [Perú, Chile]\ntemplates: ['{país} es']\n".encode("cp1252"))
    with pytest.raises(FairpathInputError, match=r"specification file .*spec\.yaml' is not UTF-8 .*it looks like cp1252"):
        FairnessSpec.load(path)


@pytest.mark.parametrize("values, shown", [("[yes, no]", "True"), ("[on, off]", "True"), ("[1, 2]", "1"), ("{yes: [Chile], 'no': [Italy]}", "True")])
def test_yaml_booleans_and_numbers_are_refused_not_turned_into_text(tmp_path, values, shown):
    path = tmp_path / "spec.yaml"
    path.write_text(f"attribute: answer\nvalues: {values}\ntemplates: ['I say {{answer}} because']\n")
    with pytest.raises(FairpathInputError, match=rf"specification '.*spec.yaml': (value|subgroup) {shown} is not a text \((bool|int)\); "
                                                 r"YAML reads unquoted yes, no, on, off, true, false and numbers that way: put the word in quotes"):
        FairnessSpec.from_yaml(path)


def test_quoted_yaml_words_stay_as_written(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("attribute: answer\nvalues: ['yes', 'no']\ntemplates: ['I say {answer} because']\n")
    spec = FairnessSpec.from_yaml(path)
    assert spec.prompts()["prompt"].tolist() == ["I say yes because", "I say no because"]


def test_slot_words_and_templates_must_be_text():
    with pytest.raises(FairpathInputError, match=r"slot 'pronoun' word False is not a text \(bool\)"):
        FairnessSpec.from_dict({"attribute": "country", "values": [{"value": "Chile", "slots": {"pronoun": False}}, "Italy"],
                                "templates": ["{country} is"]})
    with pytest.raises(FairpathInputError, match=r"template 3 is not a text \(int\)"):
        FairnessSpec.from_dict({"attribute": "country", "values": ["Chile", "Italy"], "templates": ["{country} is", 3]})
def test_a_specification_with_yaml_aliases_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "aliases.yaml"
    path.write_text("attribute: job\nvalues: &v [baker, nurse]\nother: *v\ntemplates: ['{job} is']\n")
    with pytest.raises(FairpathInputError, match=r"specification file '.*aliases\.yaml' uses a YAML anchor or alias \(line 2\)"):
        FairnessSpec.from_yaml(path)


def _load_seconds(tmp_path, n_values: int, repeats: int) -> float:
    import yaml

    path = tmp_path / f"spec{n_values}.yaml"
    path.write_text(yaml.safe_dump({"attribute": "name", "values": [f"Name{i}" for i in range(n_values)],
                                    "templates": ["I met {name} and", "{name} is"]}))
    times = []
    for _ in range(repeats):  # CPU time, the least of several: the machine's other load only ever adds to it
        start = time.process_time()
        spec = FairnessSpec.from_yaml(path)
        times.append(time.process_time() - start)
    assert len(spec.values) == n_values
    return min(times)


def test_reading_and_checking_a_specification_is_linear_in_its_values(tmp_path):
    # Ten times the values take about ten times as long (a quadratic check took a hundred times).
    ratio = _load_seconds(tmp_path, 20_000, 3) / _load_seconds(tmp_path, 2_000, 7)
    assert ratio < 30, ratio
    duplicated = {"attribute": "name", "values": [f"N{i}" for i in range(20_000)] + ["N7"], "templates": ["{name} is"]}
    with pytest.raises(FairpathInputError, match=r"lists values \['N7'\] more than once"):
        FairnessSpec.from_dict(duplicated)


def test_a_spec_too_large_to_validate_is_refused_before_any_replacement():
    """3,000 values would take hours of pairwise replacements: refused at once, with the count and the bound."""
    from fairpath.text._spec import MAX_COUNTERFACTUAL_CHECKS

    spec = FairnessSpec.from_dict({"attribute": "c", "values": [f"v{i}" for i in range(3000)], "templates": ["I am {c}"]})
    with pytest.raises(FairpathInputError, match=r"has 3,000 values and 1 template\(s\): .* 8,997,000 replacements, above "
                                                 rf"fairpath's bound of {MAX_COUNTERFACTUAL_CHECKS:,}"):
        spec.validate()
