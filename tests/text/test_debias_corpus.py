"""Counterfactual pairs for debiasing, the corpus split and the default training prompts."""

import pytest

from fairpath.text._spec import FairnessSpec
from fairpath.text.debias import DebiasCorpus, build_corpus, make_pairs, sample_corpus, training_prompts, values_in
from fairpath.text.debias._corpus import DEFAULT_PROMPTS, NEUTRAL_PROMPTS, check_disjoint

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


def test_every_value_is_swapped_to_distinct_absent_values_and_the_seed_fixes_them():
    text = "The baker and the cook argued; the baker left."
    runs = [make_pairs([text] * 20, OCCUPATION, seed=seed)[0] for seed in (0, 0, 1)]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert len(runs[0]) == 20
    for pair in runs[0]:
        assert pair.value == "baker" and pair.counterfactual_value not in {"baker", "cook"}
        # no original value is left, and the two targets differ
        assert values_in(OCCUPATION, pair.counterfactual)[0] == pair.counterfactual_value
        first, second = values_in(OCCUPATION, pair.counterfactual)
        assert first != second and second not in {"baker", "cook"}
        assert pair.counterfactual == f"The {first} and the {second} argued; the {first} left."


def test_a_text_whose_values_cannot_all_be_swapped_is_unused():
    spec = FairnessSpec.from_dict({"attribute": "job", "templates": ["The {job} said"],
                                   "values": ["baker", "cook", "nurse", "clerk"]})
    # three values mentioned need three distinct absent values; only the clerk is absent
    pairs, unused = make_pairs(["The baker, the cook and the nurse met.", "The baker met the cook."], spec, seed=0)
    assert unused == 1 and len(pairs) == 1
    assert pairs[0].counterfactual in {"The nurse met the clerk.", "The clerk met the nurse."}


def test_pairs_carry_the_character_end_of_the_first_mention_on_both_sides():
    pairs, _ = make_pairs(["Yesterday, an accountant met the baker.", "The story of a CEO begins."], OCCUPATION, seed=0)
    for pair in pairs:
        assert pair.text[:pair.end].endswith(pair.value)
        assert pair.counterfactual[:pair.counterfactual_end].endswith(pair.counterfactual_value)
    assert pairs[0].end == len("Yesterday, an accountant")
    assert pairs[1].end == len("The story of a CEO")


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


class _NumberingGenerator:
    """Continues prompt i with " reply i.j": every text is distinct and names its prompt."""

    def generate(self, prompts, settings):
        self.settings = settings
        return [[f" reply {i}.{j}" for j in range(settings.n_samples)] for i in range(len(prompts))]


@pytest.mark.parametrize("attribute", ["occupation", "country"])
def test_sampled_corpus_holds_out_whole_prompts_and_trains_on_none_of_them(attribute, tmp_path):
    spec = FairnessSpec.builtin(attribute)
    generator = _NumberingGenerator()
    sampled = sample_corpus(generator, spec, samples_per_prompt=2)
    # drawn as the audit draws (temperature 1, every token), so plain fine-tuning on it is a no-op in expectation
    assert (generator.settings.temperature, generator.settings.top_k, generator.settings.top_p) == (1.0, None, 1.0)
    templates = DEFAULT_PROMPTS[attribute]
    assert sampled.heldout_prompts == [*templates[6:], *NEUTRAL_PROMPTS[6:]]
    assert len(sampled.texts) == 2 * (8 * len(spec.values) + 8)
    corpus = build_corpus(sampled, spec, source="sampled", seed=0)
    prompt_of = dict(zip(sampled.texts, sampled.prompts))
    heldout_prompts = {prompt_of[t] for t in corpus.heldout_texts}
    train_prompts = {prompt_of[p.text] for p in corpus.train_pairs}
    assert heldout_prompts.isdisjoint(train_prompts)
    # 2 of 8 attribute prompts with every value, and 2 of 8 neutral prompts, 2 samples each
    assert len(corpus.heldout_texts) == 2 * (2 * len(spec.values) + 2)
    assert sum(corpus.heldout_sensitive) == 2 * 2 * len(spec.values)
    assert len(heldout_prompts) == 2 * len(spec.values) + 2
    # the rest is trained on (every attribute text gives a pair) or, neutral, counted unused
    assert len(corpus.train_pairs) == 2 * 6 * len(spec.values) and corpus.n_train_unused == 2 * 6
    assert corpus.settings == {"heldout_prompts": sampled.heldout_prompts, "seed": 0, "sampling": {
        "temperature": 1.0, "top_k": None, "top_p": 1.0, "max_new_tokens": 40, "samples_per_prompt": 2}}
    # the loss is on the continuation: each pair knows where its prompt ends
    assert all(p.text[:p.continuation_start] == prompt_of[p.text] and p.text[p.continuation_start:].startswith(" reply")
               for p in corpus.train_pairs)
    assert DebiasCorpus.load(corpus.save(tmp_path / "corpus.json")) == corpus


def test_train_mentions_are_the_distinct_training_texts_with_their_mention_ends():
    texts = ["The baker said hello."] * 3 + ["Yesterday, the nurse left."]
    corpus = build_corpus(texts, OCCUPATION, source="test", heldout_fraction=0.0, seed=0)
    assert len(corpus.train_pairs) == 4
    assert corpus.train_mentions == (["The baker said hello.", "Yesterday, the nurse left."], [9, 20])
