"""Fairness specifications: a sensitive attribute, its values, their subgroups and the templates.

A template is a sentence with placeholders in braces: ``"People from {country} are"``. The attribute's
placeholder (``{country}``) takes the value itself; other slots (``{article}``, ``{pronoun}``,
``{possessive}``, ``{object}``) take words that belong to the value or to its subgroup, so that a
counterfactual changes every sensitive token together and nothing else.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._validation import check_list_arg
from fairpath._io import parse_yaml, read_yaml

# Huang et al.'s three attributes, gender words, and intersections of two (their cells are one value of each).
BUILTIN_SPECS = ("country", "occupation", "name", "gender", "country,gender", "occupation,gender")
# The columns of the audit's per-cell table (TextAuditResult.cells) beside one named after each crossed attribute.
_CELL_COLUMNS = ("value", "subgroup", "n", "mean_score", "w1_to_all", "mean_pair_w1")
_SLOT = re.compile(r"\{(\w+)\}")
# validate() replaces every value by every other in every template (about 60 µs a pair): at most this many,
# about a minute, so that a spec of thousands of values is refused at once rather than checked for hours
MAX_COUNTERFACTUAL_CHECKS = 1_000_000
# Words whose first letter misleads the a/an choice, and letters read as a vowel sound when an
# acronym is spelled out (an FBI agent, an MP).
_AN_PREFIXES = ("hour", "honest", "honor", "honour", "heir")
_A_PREFIXES = ("uni", "use", "usu", "eu", "one", "once", "ur")
_VOWEL_SOUND_LETTERS = set("AEFHILMNORSX")


def indefinite_article(word: str) -> str:
    """'a' or 'an' for ``word`` by its first sound (a baker, an accountant, a CEO, an MBA)."""
    if not word:
        raise FairpathInputError("cannot choose an article for an empty word")
    if len(word) > 1 and word.isupper():  # an acronym is read letter by letter
        return "an" if word[0] in _VOWEL_SOUND_LETTERS else "a"
    lower = word.lower()
    if lower.startswith(_AN_PREFIXES):
        return "an"
    if lower.startswith(_A_PREFIXES):
        return "a"
    return "an" if lower[0] in "aeiou" else "a"


@dataclass(frozen=True)
class SensitiveValue:
    """One value of the attribute with the words it puts into every slot; a cell of an intersection (see
    :func:`combine_specs`) also lists its ``parts``, one value of each crossed attribute."""

    name: str
    subgroup: str
    slots: Mapping[str, str]
    parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class FairnessSpec:
    """A sensitive attribute, its values with their subgroups, and the templates they fill.

    Build one with :meth:`builtin`, :meth:`from_yaml` or :meth:`from_dict`; cross several with
    :func:`combine_specs` into an intersectional one, whose ``components`` name the crossed attributes and
    whose values are the cells.
    """

    attribute: str
    placeholders: tuple[str, ...]
    values: tuple[SensitiveValue, ...]
    templates: tuple[str, ...]
    source: str = field(default="<dict>", compare=False)
    components: tuple[str, ...] = ()

    def __post_init__(self):
        where = f"specification {self.source!r}"
        names = [value.name for value in self.values]
        if len(names) < 2:
            raise FairpathInputError(
                f"{where}: attribute {self.attribute!r} has {len(names)} value(s) {names}; "
                "a counterfactual comparison needs at least two values"
            )
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            raise FairpathInputError(f"{where}: attribute {self.attribute!r} lists values {duplicates} more than once")
        if not self.templates:
            raise FairpathInputError(f"{where}: no templates given for attribute {self.attribute!r}")
        unmatched = [value.name for value in self.values if len(value.parts) != len(self.components)]
        if unmatched:
            raise FairpathInputError(f"{where}: values {unmatched[:5]} do not list one part for each crossed attribute "
                                     f"{list(self.components)}; build intersections with combine_specs")
        for number, template in enumerate(self.templates):
            used = set(_SLOT.findall(template))
            if not used & set(self.placeholders):
                wanted = " or ".join("{" + p + "}" for p in self.placeholders)
                raise FairpathInputError(
                    f"{where}: template {number} {template!r} has no placeholder {wanted} for attribute "
                    f"{self.attribute!r}; put the placeholder where the value belongs"
                )
            for value in self.values:
                missing = sorted(used - set(value.slots))
                if missing:
                    raise FairpathInputError(
                        f"{where}: template {number} {template!r} uses slot(s) {missing} that value "
                        f"{value.name!r} does not define; add them to the value or its subgroup"
                    )

    # ----------------------------------------------------------------------------------------
    # Construction
    @classmethod
    def builtin(cls, name: str) -> "FairnessSpec":
        """One of the paper's specifications (``country``, ``occupation``, ``name``), gender words (``gender``), or
        an intersection of two (``country,gender``, ``occupation,gender``)."""
        if name not in BUILTIN_SPECS:
            raise FairpathInputError(f"unknown built-in specification {name!r}; choose one of {list(BUILTIN_SPECS)} or give a YAML file")
        file = name.replace(",", "_") + ".yaml"
        text = resources.files("fairpath.text").joinpath("specs", file).read_text(encoding="utf-8")
        return cls.from_dict(parse_yaml(text, f"built-in specification {name!r}"), source=f"builtin:{name}")

    @classmethod
    def from_yaml(cls, path: str | Path) -> "FairnessSpec":
        path = Path(path)
        if not path.is_file():
            raise FairpathInputError(f"specification file {str(path)!r} does not exist; give a YAML file or one of {list(BUILTIN_SPECS)}")
        return cls.from_dict(read_yaml(path, "specification file"), source=str(path))

    @classmethod
    def load(cls, name_or_path: "str | Path | FairnessSpec") -> "FairnessSpec":
        """A built-in name, a YAML path, or a spec (returned as is)."""
        if isinstance(name_or_path, FairnessSpec):
            return name_or_path
        if str(name_or_path) in BUILTIN_SPECS:
            return cls.builtin(str(name_or_path))
        if "," in str(name_or_path) and not Path(name_or_path).is_file():
            raise FairpathInputError(
                f"no built-in intersection {str(name_or_path)!r}; the built-in ones are "
                f"{[n for n in BUILTIN_SPECS if ',' in n]}: for others write a YAML file with 'attributes: [A, B]' "
                "and templates using both placeholders")
        return cls.from_yaml(name_or_path)

    @classmethod
    def from_dict(cls, data: Mapping, source: str = "<dict>") -> "FairnessSpec":
        """Read the YAML layout: ``attribute``, ``placeholder``, ``values``, ``subgroups``, ``templates``.

        ``values`` is a list of words (each its own subgroup), a mapping subgroup -> list of words,
        or a list of mappings with ``value``, ``subgroup`` and optional ``slots``. ``subgroups`` maps
        a subgroup to the slot words its values share (pronouns for example).

        An intersection has ``attributes`` instead of ``values``: a list of two or more specifications, each
        a built-in name or a mapping in the layout above, crossed by :func:`combine_specs` over ``templates``
        (which use every attribute's placeholder) and named ``attribute`` when given.
        """
        where = f"specification {source!r}"
        if not isinstance(data, Mapping):
            raise FairpathInputError(f"{where} must be a mapping with keys attribute, values, templates")
        if "attributes" in data:
            return _intersection_from_dict(data, source)
        for key in ("attribute", "values", "templates"):
            if key not in data:
                raise FairpathInputError(f"{where} lacks the key {key!r}")
        attribute = _text(data["attribute"], "the attribute", where)
        placeholder = _text(data.get("placeholder", attribute), "the placeholder", where)
        subgroups = _mapping(data.get("subgroups"), "'subgroups' (subgroup -> {slot: word})", where)
        subgroup_slots = {_text(k, "subgroup", where): _slots(_mapping(v, f"subgroup {k!r} (slot -> word)", where), where)
                          for k, v in subgroups.items()}
        entries = _value_entries(data["values"], where)
        values = []
        for name, subgroup, own_slots in entries:
            slots = {"article": indefinite_article(name), f"{placeholder}_article": indefinite_article(name)}
            slots.update(subgroup_slots.get(subgroup, {}))
            slots.update(own_slots)
            slots[placeholder] = name
            values.append(SensitiveValue(name, subgroup, slots))
        templates = data["templates"]
        if isinstance(templates, str) or not isinstance(templates, Iterable):
            raise FairpathInputError(f"{where}: 'templates' must be a list of sentences")
        return cls(attribute, (placeholder,), tuple(values), tuple(_text(t, "template", where) for t in templates), source)

    def to_dict(self) -> dict:
        """A YAML-ready description (values with every slot spelled out; an intersection's cells with their parts)."""
        crossed = {"attributes": list(self.components)} if self.components else {}
        return {
            "attribute": self.attribute,
            **crossed,
            "placeholders": list(self.placeholders),
            "values": [{"value": v.name, "subgroup": v.subgroup, "slots": dict(v.slots), **({"parts": list(v.parts)} if v.parts else {})}
                       for v in self.values],
            "templates": list(self.templates),
        }

    # ----------------------------------------------------------------------------------------
    # Prompts
    @property
    def value_names(self) -> list[str]:
        return [value.name for value in self.values]

    @property
    def subgroups(self) -> list[str]:
        return list(dict.fromkeys(value.subgroup for value in self.values))

    @property
    def margins(self) -> dict[str, dict[str, str]]:
        """For an intersection, each crossed attribute's value in every cell: ``{attribute: {cell: value}}``
        (``{"country": {"Syria/woman": "Syria", ...}, "gender": {"Syria/woman": "woman", ...}}``); empty for one attribute."""
        return {attribute: {value.name: value.parts[k] for value in self.values} for k, attribute in enumerate(self.components)}

    @cached_property
    def _value_of_name(self) -> dict[str, SensitiveValue]:
        return {value.name: value for value in self.values}

    def value(self, name: str) -> SensitiveValue:
        if name in self._value_of_name:
            return self._value_of_name[name]
        raise FairpathInputError(f"attribute {self.attribute!r} has no value {name!r}; its values are {self.value_names}")

    def fill(self, template: str, value: str | SensitiveValue) -> str:
        value = value if isinstance(value, SensitiveValue) else self.value(value)
        return _SLOT.sub(lambda match: value.slots[match.group(1)], template)

    def sensitive_context(self, template: str, value: str | SensitiveValue) -> str:
        """The sensitive words ``template`` puts in its prompt for ``value``, as the prompt shows them: each
        placeholder's word with its article when the template puts the article right before it ("an
        accountant"), else the word alone ("Iceland"); several placeholders are joined by spaces.

        This is the context S.S.c measures relevance to: the part of the prompt that names the value.
        """
        value = value if isinstance(value, SensitiveValue) else self.value(value)
        phrases = []
        for placeholder in self.placeholders:
            if "{" + placeholder + "}" not in template:
                continue
            article = self._article_slot(placeholder)
            together = article is not None and re.search(r"\{" + article + r"\}\s+\{" + placeholder + r"\}", template)
            phrases.append(f"{value.slots[article]} {value.slots[placeholder]}" if together else value.slots[placeholder])
        return " ".join(phrases)

    def template_ids(self) -> list[str]:
        return [f"t{number:02d}" for number in range(len(self.templates))]

    def prompts(self) -> pd.DataFrame:
        """Every template filled with every value: prompt, template_id, template, attribute, value, subgroup."""
        rows = [
            {"prompt": self.fill(template, value), "template_id": template_id, "template": template,
             "attribute": self.attribute, "value": value.name, "subgroup": value.subgroup}
            for template_id, template in zip(self.template_ids(), self.templates)
            for value in self.values
        ]
        return pd.DataFrame(rows)

    # ----------------------------------------------------------------------------------------
    # Counterfactuals on free text
    @cached_property
    def active_slots(self) -> tuple[str, ...]:
        """Slots the templates use: only their words are swapped in free text."""
        return tuple(dict.fromkeys(slot for template in self.templates for slot in _SLOT.findall(template)))

    def _article_slot(self, placeholder: str) -> str | None:
        for name in (f"{placeholder}_article", "article" if len(self.placeholders) == 1 else None):
            if name and name in self.active_slots:
                return name
        return None

    def _replacements(self, swaps: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
        """Word -> word map of all the swaps (source value -> target value), and the words that map to several targets."""
        mapping: dict[str, set[str]] = {}
        article_slots = {self._article_slot(p) for p in self.placeholders}
        for source_name, target_name in swaps.items():
            source, target = self.value(source_name), self.value(target_name)
            for slot in self.active_slots:
                if slot in article_slots:
                    continue  # articles are swapped only together with their word, below
                mapping.setdefault(source.slots[slot], set()).add(target.slots[slot])
            for placeholder in self.placeholders:
                article = self._article_slot(placeholder)
                if article:
                    phrase = f"{source.slots[article]} {source.slots[placeholder]}"
                    mapping.setdefault(phrase, set()).add(f"{target.slots[article]} {target.slots[placeholder]}")
        ambiguous = sorted(word for word, targets in mapping.items() if len(targets) > 1)
        single = {word: next(iter(targets)) for word, targets in mapping.items() if len(targets) == 1 and next(iter(targets)) != word}
        return single, ambiguous

    def ambiguities(self, text: str, source: str, target: str) -> list[str]:
        """Sensitive words in ``text`` whose replacement from ``source`` to ``target`` is not unique."""
        return self.swap_ambiguities(text, {source: target})

    def swap_ambiguities(self, text: str, swaps: Mapping[str, str]) -> list[str]:
        """Sensitive words in ``text`` with more than one replacement under ``swaps`` (see :meth:`swap`)."""
        _, ambiguous = self._replacements(swaps)
        return [word for word in ambiguous if _word_pattern(_forms(word)).search(text)]

    def counterfactual(self, text: str, source: str, target: str) -> str:
        """Replace every sensitive word of ``source`` in ``text`` by the matching word of ``target``.

        Articles change with their word ("a baker" -> "an accountant"); pronouns follow the
        subgroup. A word is found in the forms :meth:`contains_sensitive_token` finds (as written,
        capitalised, upper case) and replaced by the same form of its target. Raises :class:`FairpathInputError` when a word present in the text has more
        than one possible replacement (female "her" -> "his" or "him").
        """
        return self.swap(text, {source: target})

    def swap(self, text: str, swaps: Mapping[str, str]) -> str:
        """:meth:`counterfactual` for several values at once: each source value's words become its target's.

        The words are replaced in one pass, so a word written by one swap is never rewritten by another
        (Italy -> Chile and Chile -> Peru in one text give Chile and Peru, not Peru twice). A word
        that two swaps replace differently (the pronoun "she" of two names sent to different
        subgroups) is ambiguous and raises :class:`FairpathInputError`.
        """
        found = self.swap_ambiguities(text, swaps)
        if found:
            described = ", ".join(f"{s!r} by {t!r}" for s, t in swaps.items())
            raise FairpathInputError(
                f"replacing {described} in {text!r} is ambiguous for {found}; "
                "rephrase the text or use distinct slot words"
            )
        mapping, _ = self._replacements(swaps)
        if not mapping:
            return text
        keyed = {form: _same_form(form, word, target) for word, target in mapping.items() for form in _forms(word)}
        return _word_pattern(keyed).sub(lambda match: keyed[match.group(0)], text)

    def first_mention_end(self, text: str) -> int | None:
        """The character end of the first value mentioned in ``text`` (None when none is), in the forms
        :meth:`value_mentions` finds."""
        match = self._value_pattern.search(text)
        return match.end() if match else None

    def contains_sensitive_token(self, text: str) -> bool:
        """Whether ``text`` mentions any value of the attribute (whole words, see :meth:`value_mentions`)."""
        return bool(self._value_pattern.search(text))

    def value_mentions(self, text: str) -> list[str]:
        """The values ``text`` mentions, in order of first appearance.

        A value is found as written in the specification, capitalised (sentence start) or in upper
        case, never in other cases: "raven" and "diamond" are not the names Raven and Diamond. These
        are exactly the forms :meth:`counterfactual` replaces, so whatever is found can be swapped.
        """
        first = {}
        for value in self.values:
            match = _word_pattern(f for p in self.placeholders for f in _forms(value.slots[p])).search(text)
            if match:
                first[value.name] = match.start()
        return sorted(first, key=first.get)

    @cached_property
    def _value_pattern(self) -> re.Pattern:
        return _word_pattern(f for v in self.values for p in self.placeholders for f in _forms(v.slots[p]))

    def validate(self) -> pd.DataFrame:
        """Problems that would make counterfactuals unreliable, one row each (empty when none).

        Checks every template and ordered pair of values: free-text replacement of the filled
        template must give exactly the template filled with the other value, without ambiguous
        words; and no template may mention a value outside its placeholder. A spec that needs more than
        :data:`MAX_COUNTERFACTUAL_CHECKS` replacements is refused before any (:class:`FairpathInputError`).
        """
        checks = len(self.values) * (len(self.values) - 1) * len(self.templates)
        if checks > MAX_COUNTERFACTUAL_CHECKS:
            raise FairpathInputError(
                f"spec {self.source!r} has {len(self.values):,} values and {len(self.templates):,} template(s): checking its "
                f"counterfactuals replaces every value by every other in every template, {checks:,} replacements, above "
                f"fairpath's bound of {MAX_COUNTERFACTUAL_CHECKS:,} (about a minute); split the values into several specs "
                "or use fewer templates")
        rows = []
        for template_id, template in zip(self.template_ids(), self.templates):
            literal = _SLOT.sub(" ", template)
            mentioned = [v.name for v in self.values if self._mentions(literal, v)]
            if mentioned:
                rows.append({"template_id": template_id, "value": "", "counterfactual_value": "",
                             "problem": f"template text mentions value(s) {mentioned} outside the placeholder"})
            for source, target in itertools.permutations(self.values, 2):
                text = self.fill(template, source)
                expected = self.fill(template, target)
                ambiguous = self.ambiguities(text, source.name, target.name)
                if ambiguous:
                    problem = f"ambiguous replacement of {ambiguous}"
                else:
                    replaced = self.counterfactual(text, source.name, target.name)
                    if replaced == expected:
                        continue
                    problem = f"replacement gives {replaced!r}, the template gives {expected!r}"
                rows.append({"template_id": template_id, "value": source.name, "counterfactual_value": target.name, "problem": problem})
        return pd.DataFrame(rows, columns=["template_id", "value", "counterfactual_value", "problem"])

    def _mentions(self, text: str, value: SensitiveValue) -> bool:
        return any(_word_pattern([value.slots[p]]).search(text) for p in self.placeholders)

    def __repr__(self) -> str:
        return (f"FairnessSpec(attribute={self.attribute!r}, values={len(self.values)}, "
                f"subgroups={len(self.subgroups)}, templates={len(self.templates)}, source={self.source!r})")


def combine_specs(specs: list[FairnessSpec], *, templates: list[str], attribute: str | None = None) -> FairnessSpec:
    """The intersection of several attributes: every combination of their values (a cell) fills templates using
    all their placeholders, and a counterfactual swaps every attribute's words together.

    A cell is named by its values joined with "/" (``"Jake/baker"``), its subgroup by their subgroups
    (``"male/baker"``) and it lists its ``parts`` (``("Jake", "baker")``); the spec's ``components`` name the
    crossed attributes (a crossed intersection contributes its own). Each component's article is available as
    ``{<placeholder>_article}``. The spec is named ``attribute``, by default the attributes joined with " x ".
    """
    if len(specs) < 2:
        raise FairpathInputError(f"an intersection (combine_specs) needs at least two specifications, got {len(specs)}")
    components = tuple(c for spec in specs for c in (spec.components or (spec.attribute,)))
    repeated = sorted(c for c, count in Counter(components).items() if count > 1)
    if repeated:
        raise FairpathInputError(f"attribute(s) {repeated} appear in more than one of the specifications {list(components)}; "
                                 "an intersection crosses different attributes: give each once")
    reserved = sorted(set(components) & set(_CELL_COLUMNS))
    if reserved:
        raise FairpathInputError(f"attribute(s) {reserved} cannot be crossed under that name: the per-cell table names a column "
                                 f"after each attribute beside {list(_CELL_COLUMNS)}; rename the attribute")
    placeholders = tuple(p for spec in specs for p in spec.placeholders)
    if len(set(placeholders)) != len(placeholders):
        raise FairpathInputError(f"specifications share placeholders {placeholders}; rename one so each is distinct")
    used = {slot for template in templates for slot in _SLOT.findall(template)}
    values = []
    for combination in itertools.product(*(spec.values for spec in specs)):
        slots: dict[str, str] = {}
        for value in combination:
            for key, word in value.slots.items():
                if key in slots and slots[key] != word and key in used:
                    raise FairpathInputError(
                        f"slot {{{key}}} has different words in the combined attributes "
                        f"({slots[key]!r} vs {word!r}); use the attribute-specific slot such as {{{placeholders[0]}_article}}"
                    )
                slots.setdefault(key, word)
        values.append(SensitiveValue("/".join(v.name for v in combination), "/".join(v.subgroup for v in combination), slots,
                                     tuple(part for v in combination for part in (v.parts or (v.name,)))))
    missing = [f"{t!r} lacks {['{' + p + '}' for p in placeholders if p not in _SLOT.findall(t)]}"
               for t in templates if not set(placeholders) <= set(_SLOT.findall(t))]
    if missing:
        raise FairpathInputError(f"combined templates must use every placeholder {list(placeholders)}: {'; '.join(missing)}; "
                                 "put each attribute's placeholder where its word belongs")
    name = attribute or " x ".join(spec.attribute for spec in specs)
    return FairnessSpec(name, placeholders, tuple(values), tuple(templates), source="combined", components=components)


def _intersection_from_dict(data: Mapping, source: str) -> FairnessSpec:
    """The ``attributes`` layout of :meth:`FairnessSpec.from_dict`: built-in names or mappings, crossed over ``templates``."""
    where = f"specification {source!r}"
    if "templates" not in data:
        raise FairpathInputError(f"{where} lacks the key 'templates' (sentences using every attribute's placeholder)")
    entries = data["attributes"]
    if isinstance(entries, str) or not isinstance(entries, Iterable):
        raise FairpathInputError(f"{where}: 'attributes' must be a list of built-in names or attribute mappings, got {entries!r}")
    specs = []
    for entry in entries:
        if isinstance(entry, Mapping):
            specs.append(FairnessSpec.from_dict(entry, source=f"{source}, attribute {entry.get('attribute', '?')}"))
        elif isinstance(entry, str) and entry in BUILTIN_SPECS:
            specs.append(FairnessSpec.builtin(entry))
        else:
            raise FairpathInputError(f"{where}: attribute entry {entry!r} is neither a built-in name {list(BUILTIN_SPECS)} "
                                     "nor a mapping with attribute, values, templates")
    templates = data["templates"]
    if isinstance(templates, str) or not isinstance(templates, Iterable):
        raise FairpathInputError(f"{where}: 'templates' must be a list of sentences")
    attribute = _text(data["attribute"], "the attribute", where) if "attribute" in data else None
    combined = combine_specs(specs, templates=[_text(t, "template", where) for t in templates], attribute=attribute)
    return replace(combined, source=source)


def _mapping(raw, what: str, where: str) -> Mapping:
    """A YAML mapping (None is empty); a list or a word is an error naming the key."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise FairpathInputError(f"{where}: {what} must be a mapping (key: value lines), got a {type(raw).__name__}: {raw!r}")
    return raw


def _text(raw, what: str, where: str) -> str:
    """A word or sentence of the spec. YAML reads unquoted yes/no/on/off/true/false as booleans and 1 or
    1.5 as numbers; their written form cannot be recovered ("yes" and "on" both give True), so they are
    refused rather than turned into "True"."""
    if not isinstance(raw, str):
        raise FairpathInputError(
            f"{where}: {what} {raw!r} is not a text ({type(raw).__name__}); YAML reads unquoted yes, no, on, off, true, false "
            f"and numbers that way: put the word in quotes as written, e.g. \"yes\" or \"1\""
        )
    return raw


def _slots(raw: Mapping, where: str) -> dict[str, str]:
    return {_text(slot, "slot name", where): _text(word, f"slot {slot!r} word", where) for slot, word in raw.items()}


def _value_entries(raw, where: str) -> list[tuple[str, str, dict[str, str]]]:
    if isinstance(raw, Mapping):  # subgroup -> list of words
        return [(_text(word, "value", where), _text(subgroup, "subgroup", where), {})
                for subgroup, words in raw.items() for word in check_list_arg(f"{where}: the values of subgroup {subgroup!r}", words or [])]
    if isinstance(raw, str) or not isinstance(raw, Iterable):
        raise FairpathInputError(f"{where}: 'values' must be a list or a mapping subgroup -> list")
    entries = []
    for item in raw:
        if isinstance(item, Mapping):
            if "value" not in item:
                raise FairpathInputError(f"{where}: value entry {dict(item)} lacks the key 'value'")
            name = _text(item["value"], "value", where)
            slots = _mapping(item.get("slots"), f"'slots' of value {name!r} (slot -> word)", where)
            entries.append((name, _text(item.get("subgroup", name), "subgroup", where), _slots(slots, where)))
        else:
            name = _text(item, "value", where)
            entries.append((name, name, {}))
    return entries


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def _forms(word: str) -> tuple[str, ...]:
    """The written forms of a sensitive word that are found and replaced: as given, capitalised, upper case."""
    return tuple(dict.fromkeys((word, _capitalize(word), word.upper())))


def _same_form(form: str, word: str, target: str) -> str:
    """``target`` written the way ``form`` writes ``word``."""
    if form == word:
        return target
    return _capitalize(target) if form == _capitalize(word) else target.upper()


def _word_pattern(words: Iterable[str]) -> re.Pattern:
    """Whole-word alternation, longest first so that phrases win over their parts."""
    ordered = sorted(set(words), key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in ordered) + r")(?!\w)")
