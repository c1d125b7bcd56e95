"""Bad intersectional specifications: each refused with a message naming what is wrong and what to do."""

import pytest
import yaml

from fairpath._exceptions import FairpathInputError
from fairpath.cli import main
from fairpath.text import FairnessSpec, combine_specs

COUNTRY = FairnessSpec.from_dict({"attribute": "country", "values": ["Chile", "Italy"], "templates": ["{country} is"]})
GENDER = FairnessSpec.builtin("gender")


def test_unknown_intersection_and_unknown_builtin():
    with pytest.raises(FairpathInputError, match=r"^no built-in intersection 'gender,country'; the built-in ones are "
                                                 r"\['country,gender', 'occupation,gender'\]: for others write a YAML file with "
                                                 r"'attributes: \[A, B\]' and templates using both placeholders$"):
        FairnessSpec.load("gender,country")
    with pytest.raises(FairpathInputError, match=r"unknown built-in specification 'religion,gender'; choose one of \['country', "):
        FairnessSpec.builtin("religion,gender")


def test_template_missing_a_placeholder():
    with pytest.raises(FairpathInputError, match=r"^combined templates must use every placeholder \['country', 'gender'\]: "
                                                 r"'The \{gender\} is' lacks \['\{country\}'\]; put each attribute's placeholder "
                                                 r"where its word belongs$"):
        combine_specs([COUNTRY, GENDER], templates=["A {gender} from {country} is", "The {gender} is"])


def test_same_attribute_twice():
    with pytest.raises(FairpathInputError, match=r"^attribute\(s\) \['country'\] appear in more than one of the specifications "
                                                 r"\['country', 'country'\]; an intersection crosses different attributes: give each once$"):
        combine_specs([COUNTRY, FairnessSpec.builtin("country")], templates=["{country} and {country}"])
    crossed = combine_specs([COUNTRY, GENDER], templates=["A {gender} from {country} is"])
    with pytest.raises(FairpathInputError, match=r"attribute\(s\) \['gender'\] appear in more than one .*\['country', 'gender', 'gender'\]"):
        combine_specs([crossed, GENDER], templates=["A {gender} from {country} is"])


def test_one_specification_and_reserved_attribute_names():
    with pytest.raises(FairpathInputError, match=r"^an intersection \(combine_specs\) needs at least two specifications, got 1$"):
        combine_specs([COUNTRY], templates=["{country} is"])
    named_value = FairnessSpec.from_dict({"attribute": "value", "values": ["low", "high"], "templates": ["{value} price"]})
    with pytest.raises(FairpathInputError, match=r"attribute\(s\) \['value'\] cannot be crossed under that name: the per-cell table "
                                                 r"names a column after each attribute"):
        combine_specs([COUNTRY, named_value], templates=["{value} price in {country}"])


def test_bad_yaml_intersections(tmp_path):
    path = tmp_path / "crossed.yaml"
    path.write_text(yaml.safe_dump({"attributes": ["country", "planet"], "templates": ["{country} {planet}"]}))
    with pytest.raises(FairpathInputError, match=r"attribute entry 'planet' is neither a built-in name \[.*\] nor a mapping with "
                                                 r"attribute, values, templates"):
        FairnessSpec.from_yaml(path)
    path.write_text(yaml.safe_dump({"attributes": "country", "templates": ["{country}"]}))
    with pytest.raises(FairpathInputError, match=r"'attributes' must be a list of built-in names or attribute mappings, got 'country'"):
        FairnessSpec.from_yaml(path)
    path.write_text(yaml.safe_dump({"attributes": ["country", "gender"]}))
    with pytest.raises(FairpathInputError, match=r"lacks the key 'templates' \(sentences using every attribute's placeholder\)"):
        FairnessSpec.from_yaml(path)
    path.write_text(yaml.safe_dump({"attributes": ["country", {"attribute": "gender", "values": ["woman"], "templates": ["{gender}"]}],
                                    "templates": ["A {gender} from {country}"]}))
    with pytest.raises(FairpathInputError, match=r"specification '.*crossed.yaml, attribute gender': attribute 'gender' has 1 "
                                                 r"value\(s\) \['woman'\]"):
        FairnessSpec.from_yaml(path)


def test_cli_refuses_an_unknown_intersection(tmp_path, capsys):
    logged = tmp_path / "logged.csv"
    logged.write_text("template,value,continuation\nt00,Syria/woman,fine\n")
    assert main(["text", "score", str(logged), "--attribute", "gender,country", "--scorers", "vader", "--no-quality",
                 "--out", str(tmp_path / "out")]) == 2
    assert "no built-in intersection 'gender,country'" in capsys.readouterr().err


def test_cells_must_list_one_part_per_crossed_attribute():
    crossed = combine_specs([COUNTRY, GENDER], templates=["A {gender} from {country} is"])
    with pytest.raises(FairpathInputError, match=r"^specification 'combined': values \['Chile/woman', 'Chile/man', 'Italy/woman', "
                                                 r"'Italy/man'\] do not list one part for each crossed attribute \['country', "
                                                 r"'gender', 'age'\]; build intersections with combine_specs$"):
        FairnessSpec(crossed.attribute, crossed.placeholders, crossed.values, crossed.templates, crossed.source,
                     components=("country", "gender", "age"))
