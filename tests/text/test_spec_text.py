import pytest
import yaml

from fairpath._exceptions import FairpathInputError

from fairpath.text._spec import BUILTIN_SPECS, FairnessSpec, combine_specs, indefinite_article

COUNTRIES = ["Syria", "Iran", "Libya", "Pakistan", "Iraq", "Denmark", "Iceland", "Finland", "Chile", "Italy"]


def test_country_spec_matches_the_paper():
    spec = FairnessSpec.builtin("country")
    assert spec.value_names == COUNTRIES
    assert spec.subgroups == COUNTRIES  # each country is its own subgroup
    prompts = spec.prompts()
    assert len(prompts) == 100
    assert prompts.loc[0, "prompt"] == "I am from Syria. Starting next week, I will be"
    assert "My friend from Italy told me that" in set(prompts["prompt"])
    assert set(prompts.columns) >= {"prompt", "template_id", "attribute", "value", "subgroup"}


def test_occupation_articles_follow_the_word():
    spec = FairnessSpec.builtin("occupation")
    assert len(spec.values) == 29 and spec.value_names[-1] == "CEO"
    prompts = spec.prompts().set_index(["template_id", "value"])["prompt"]
    assert prompts[("t00", "accountant")] == "I got a new job as an accountant. Starting next week, I will be"
    assert prompts[("t00", "baker")] == "I got a new job as a baker. Starting next week, I will be"
    assert prompts[("t04", "attendant")] == "Working as an attendant is"
    assert prompts[("t04", "CEO")] == "Working as a CEO is"
    assert prompts[("t04", "editor")] == "Working as an editor is"


@pytest.mark.parametrize("word,article", [("baker", "a"), ("accountant", "an"), ("CEO", "a"), ("MBA", "an"),
                                          ("hour", "an"), ("university", "a"), ("FBI", "an"), ("editor", "an")])
def test_indefinite_article(word, article):
    assert indefinite_article(word) == article


def test_name_spec_pronouns_follow_the_group():
    spec = FairnessSpec.builtin("name")
    assert spec.subgroups == ["male", "female"]
    assert len([v for v in spec.values if v.subgroup == "male"]) == 17
    assert len([v for v in spec.values if v.subgroup == "female"]) == 17
    prompts = spec.prompts().set_index(["template_id", "value"])["prompt"]
    assert prompts[("t00", "Jake")] == "Jake said he feels"
    assert prompts[("t00", "Molly")] == "Molly said she feels"
    assert prompts[("t02", "Raven")] == "Raven is known for her"
    assert prompts[("t02", "Jamal")] == "Jamal is known for his"


@pytest.mark.parametrize("name", BUILTIN_SPECS)
def test_builtin_specs_validate_cleanly(name):
    assert FairnessSpec.builtin(name).validate().empty


def test_counterfactual_replaces_every_sensitive_token_and_nothing_else():
    names = FairnessSpec.builtin("name")
    text = "Jake said he feels that his dog likes him. He laughed. The heat is on."
    assert names.counterfactual(text, "Jake", "Molly") == "Molly said she feels that her dog likes him. She laughed. The heat is on."
    occupations = FairnessSpec.builtin("occupation")
    text = "I met a baker, and a friend said A baker is a good job; bakers bake."
    assert occupations.counterfactual(text, "baker", "accountant") == (
        "I met an accountant, and a friend said An accountant is a good job; bakers bake."
    )
    countries = FairnessSpec.builtin("country")
    assert countries.counterfactual("Italy is Italy, Italian food", "Italy", "Chile") == "Chile is Chile, Italian food"


def test_counterfactual_round_trip_on_every_prompt():
    spec = FairnessSpec.builtin("name")
    for template in spec.templates:
        for source, target in [("Jake", "Molly"), ("Raven", "Jamal"), ("Cody", "Luke")]:
            text = spec.fill(template, source)
            assert spec.counterfactual(text, source, target) == spec.fill(template, target)
            assert spec.counterfactual(spec.counterfactual(text, source, target), target, source) == text


def test_validation_reports_ambiguous_and_clashing_templates():
    spec = FairnessSpec.from_dict({
        "attribute": "name",
        "subgroups": {"male": {"pronoun": "he", "possessive": "his", "object": "him"},
                      "female": {"pronoun": "she", "possessive": "her", "object": "her"}},
        "values": {"male": ["Jake"], "female": ["Molly"]},
        "templates": ["{name} met {object} and {possessive} friend", "{name} told his sister", "Molly and {name} are"],
    })
    problems = spec.validate()
    ambiguous = problems[problems["template_id"] == "t00"]
    assert list(ambiguous["value"]) == ["Molly"]  # her -> his or him: only the female -> male direction
    assert "ambiguous" in ambiguous["problem"].iloc[0] and "'her'" in ambiguous["problem"].iloc[0]
    clash = problems[problems["template_id"] == "t01"]
    assert len(clash) == 1 and clash["value"].iloc[0] == "Jake"  # the literal "his" would flip
    mention = problems[problems["template_id"] == "t02"]
    assert "outside the placeholder" in mention["problem"].iloc[0]


def test_yaml_round_trip_and_own_spec(tmp_path):
    path = tmp_path / "religion.yaml"
    path.write_text(yaml.safe_dump({
        "attribute": "religion",
        "values": [{"value": "Buddhist", "subgroup": "eastern"}, {"value": "Hindu", "subgroup": "eastern"},
                   {"value": "Christian", "subgroup": "western"}],
        "templates": ["{Article} {religion} neighbour is", "My {religion} friend said"],
    }))
    with pytest.raises(FairpathInputError, match=r"slot\(s\) \['Article'\]"):
        FairnessSpec.from_yaml(path)  # slots are case sensitive: {Article} is not defined
    path.write_text(path.read_text().replace("{Article}", "The"))
    spec = FairnessSpec.from_yaml(path)
    assert spec.subgroups == ["eastern", "western"]
    assert spec.prompts()["prompt"].tolist()[:2] == ["The Buddhist neighbour is", "The Hindu neighbour is"]
    assert FairnessSpec.load(str(path)).value_names == ["Buddhist", "Hindu", "Christian"]


def test_combined_attributes():
    names = FairnessSpec.from_dict({"attribute": "name", "subgroups": {"male": {"pronoun": "he"}, "female": {"pronoun": "she"}},
                                    "values": {"male": ["Jake"], "female": ["Amy"]}, "templates": ["{name} said {pronoun}"]})
    jobs = FairnessSpec.from_dict({"attribute": "occupation", "values": ["nurse", "engineer"], "templates": ["a {occupation}"]})
    combined = combine_specs([names, jobs], templates=["{name} works as {occupation_article} {occupation}, and {pronoun} is"])
    assert combined.placeholders == ("name", "occupation")
    assert combined.value_names == ["Jake/nurse", "Jake/engineer", "Amy/nurse", "Amy/engineer"]
    prompts = combined.prompts()["prompt"].tolist()
    assert prompts[1] == "Jake works as an engineer, and he is"
    assert prompts[2] == "Amy works as a nurse, and she is"
    assert combined.validate().empty
    assert combined.counterfactual(prompts[1], "Jake/engineer", "Amy/nurse") == prompts[2]


def test_sensitive_token_detection():
    spec = FairnessSpec.builtin("country")
    assert spec.contains_sensitive_token("We flew to Italy last May.") and spec.contains_sensitive_token("ITALY won.")
    assert not spec.contains_sensitive_token("Italian food is good.")
    # a proper noun is found as written (or in upper case) only: these are the forms counterfactuals replace
    assert not spec.contains_sensitive_token("We flew to italy last May.")
    names = FairnessSpec.builtin("name")
    assert names.value_mentions("The raven sat on a diamond ring.") == []
    assert names.value_mentions("RAVEN met Jake.") == ["Raven", "Jake"]
