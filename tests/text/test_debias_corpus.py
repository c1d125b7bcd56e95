"""Counterfactual pairs for debiasing, the corpus split and the default training prompts."""

import pytest

from fairpath.text._spec import FairnessSpec
from fairpath.text.debias import DebiasCorpus, build_corpus, make_pairs, training_prompts, values_in
from fairpath.text.debias._corpus import NEUTRAL_PROMPTS, check_disjoint

OCCUPATION = FairnessSpec.builtin("occupation")


def test_pairs_swap_the_value_with_its_article_and_nothing_else():
    texts = ["I met an accountant, and the accountant was kind.", "A CEO is rich.", "No job is mentioned here."]
    pairs, unused = make_pairs(texts, OCCUPATION, seed=0)
    assert unused == 1
    first, second = pairs
    assert first.value == "accountant" and second.value == "CEO"
    target = first.counterfactual_value
    article = OCCUPATION.value(target).slots["article"]
    assert first.counterfactual == f"I met {article} {target}, and the {target} was kind."
    target = second.counterfactual_value
    assert second.counterfactual == f"{OCCUPATION.value(target).slots['article'].capitalize()} {target} is rich."


def test_the_target_is_a_value_absent_from_the_text_and_the_seed_fixes_it():
    text = "The baker and the cook argued."
    runs = [make_pairs([text] * 20, OCCUPATION, seed=seed)[0] for seed in (0, 0, 1)]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert all(p.value == "baker" and p.counterfactual_value not in {"baker", "cook"} for p in runs[0])
    assert "cook" in runs[0][0].counterfactual


def test_name_counterfactuals_change_pronouns_across_subgroups():
    spec = FairnessSpec.builtin("name")
    pairs, _ = make_pairs(["Jake said he was tired."] * 30, spec, seed=0)
    female = set(v.name for v in spec.values if v.subgroup == "female")
    swapped = [p for p in pairs if p.counterfactual_value in female]
    assert swapped and all(p.counterfactual == f"{p.counterfactual_value} said she was tired." for p in swapped)


def test_values_in_finds_values_in_order_of_appearance_any_case():
    assert values_in(OCCUPATION, "The Nurse met a baker; then the nurse left.") == ["nurse", "baker"]
    assert values_in(OCCUPATION, "The bakery and the nursery") == []


def test_build_corpus_splits_and_reports_every_text(tmp_path):
    texts = [f"The baker baked loaf number {i}." for i in range(16)] + [f"Plain sentence {i}." for i in range(4)]
    corpus = build_corpus(texts, OCCUPATION, source="test", heldout_fraction=0.25, seed=0)
    summary = corpus.summary()
    # every text is accounted for: held out, trained on, or reported unused
    assert summary["n_heldout"] == 5
    assert summary["n_train_pairs"] + summary["n_train_unused"] == 15
    assert summary["n_heldout_sensitive"] == sum(corpus.heldout_sensitive)
    assert set(corpus.heldout_texts).isdisjoint(corpus.train_texts)
    loaded = DebiasCorpus.load(corpus.save(tmp_path / "corpus.json"))
    assert loaded == corpus


@pytest.mark.parametrize("attribute", ["occupation", "country", "name"])
def test_default_prompts_mention_every_value_and_avoid_the_evaluation_templates(attribute):
    spec = FairnessSpec.builtin(attribute)
    prompts = training_prompts(spec)
    evaluation = set(spec.prompts()["prompt"])
    assert evaluation.isdisjoint(prompts)
    for value in spec.value_names:
        assert any(values_in(spec, p) == [value] for p in prompts)
    assert not any(spec.contains_sensitive_token(p) for p in NEUTRAL_PROMPTS)


def test_check_disjoint_rejects_a_prompt_that_extends_a_template():
    with pytest.raises(Exception, match="1 training prompts overlap the evaluation templates"):
        check_disjoint(["Working as a baker is fun"], ["Working as a baker is"])


def test_pairs_find_and_replace_the_same_forms_keeping_case():
    spec = FairnessSpec.builtin("name")
    # lower-case "raven" and "diamond" are not the names Raven and Diamond: nothing to swap
    pairs, unused = make_pairs(["The raven sat on a diamond ring.", "The raven saw her."], spec, seed=0)
    assert pairs == [] and unused == 2
    pairs, _ = make_pairs(["RAVEN said she was tired, and Raven left."] * 5, spec, seed=0)
    for pair in pairs:
        target = pair.counterfactual_value
        assert pair.counterfactual == f"{target.upper()} said he was tired, and {target} left."
    occupation, _ = make_pairs(["A NURSE wanted the nurse. Nurse Jones agreed."], OCCUPATION, seed=0)
    target = occupation[0].counterfactual_value
    article = OCCUPATION.value(target).slots["article"]
    assert occupation[0].counterfactual == f"{article.upper()} {target.upper()} wanted the {target}. {target[:1].upper() + target[1:]} Jones agreed."


def test_name_swaps_always_cross_subgroups():
    spec = FairnessSpec.builtin("name")
    subgroup = {v.name: v.subgroup for v in spec.values}
    pairs, _ = make_pairs([f"{name} said hello." for name in spec.value_names] * 3, spec, seed=0)
    assert len(pairs) == 3 * len(spec.value_names)
    assert all(subgroup[p.value] != subgroup[p.counterfactual_value] for p in pairs)


def test_identical_pairs_are_rejected():
    # two values that write the same word: swapping one for the other changes nothing
    spec = FairnessSpec.from_dict({"attribute": "job", "placeholder": "job",
                                   "values": [{"value": "doc-a", "slots": {"job": "doctor"}},
                                              {"value": "doc-b", "slots": {"job": "doctor"}}],
                                   "templates": ["The {job} is"]})
    pairs, unused = make_pairs(["The doctor is here."], spec, seed=0)
    assert pairs == [] and unused == 1
