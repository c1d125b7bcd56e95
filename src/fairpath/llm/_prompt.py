"""Decision prompts: a table row rendered as a question to a language model, with the answers it may give.

Public contract
---------------
``DecisionPrompt(name, template, mention, question, options, words={}, roles={}, source="")``
    ``template`` writes a row: ``{column}`` is replaced by the row's value of a Z or W column, ``{mention}``
    by the sentence that mentions X. ``mention`` writes that sentence with ``{<X column>}``; with X withheld
    it is left out, so the same row is asked about without X. ``question`` follows the row on a line of its
    own. ``options`` are the answers, each an :class:`AnswerOption` (its ``answer``, a numeric ``value`` and
    the ``spellings`` the model may write it with); a row's score is the mean value of the options under the
    model's probabilities normalised over them (P(yes) for yes = 1, no = 0). ``words`` maps a column's values
    to words (``sex: {Male: man}``); other values are written as they are (whole numbers without ".0").
    ``roles`` (x, x0, x1, z, w, y) names the causal model the prompt was written for: the command line's
    defaults. Build one with :meth:`DecisionPrompt.builtin` (``compas``, ``census``, ``synthetic``),
    :meth:`from_yaml` or :meth:`from_dict`.
``check(sfm)``
    Refuses a template that names a column outside the SFM's Z and W, shows X outside the mention or shows Y,
    or omits a column the SFM gives the model, naming the column.
``render(data, sfm, x_values=None) -> list[str]``
    The prompt of every row, X mentioned as ``x_values`` (a value per row, or one for all; the rows' own X by
    default: ``sfm.x``'s column) or withheld (``x_values=WITHHELD``). A missing value, or a value with a line
    break or another control character (it would start a new line of the prompt: a forged answer), is refused
    naming the column, the row and the value.

Placeholders are plain names: ``{{`` and ``}}`` write braces, and nothing else in a template is interpreted
(no attribute access, no format codes), so a template cannot reach into Python objects.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import parse_yaml, read_yaml

BUILTIN_PROMPTS = ("compas", "census", "synthetic")
MENTION = "mention"
WITHHELD = object()  # x_values of a render without X's mention
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_KEYS = {"name", "description", "template", "mention", "question", "options", "words", "roles"}
_ROLE_KEYS = {"x", "x0", "x1", "z", "w", "y"}
_MAX_TEXT = 10_000  # characters of any one text of a spec: a prompt, not a document


@dataclass(frozen=True)
class AnswerOption:
    """One answer: what it is, the number it counts as, and the ways the model may spell it."""

    answer: str
    value: float
    spellings: tuple[str, ...]


def _fields(text: str, where: str) -> list[str]:
    """The placeholder names of ``text`` in order; a lone brace is refused."""
    names = []
    for match in _PLACEHOLDER.finditer(text):
        if match.group(0) in ("{{", "}}"):
            continue
        if match.group(1) is None:
            raise FairpathInputError(f"{where} has a lone {match.group(0)!r} at character {match.start()}; write {{{{ or }}}} "
                                     "for a literal brace, or {column} for a column's value")
        names.append(match.group(1))
    return names


def _fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``{name}`` replaced by ``values[name]`` in one pass (a value is never read as a template)."""
    return _PLACEHOLDER.sub(lambda m: {"{{": "{", "}}": "}"}.get(m.group(0)) or values[m.group(1)], text)


def _text(spec: dict, key: str, where: str, required: bool = True) -> str:
    value = spec.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise FairpathInputError(f"{where}: '{key}' must be a non-empty text, got {value!r}")
    if len(value) > _MAX_TEXT:
        raise FairpathInputError(f"{where}: '{key}' has {len(value):,} characters; a prompt's texts are at most {_MAX_TEXT:,}")
    return value


def _options(raw, where: str) -> tuple[AnswerOption, ...]:
    example = "options: [{answer: 'yes', value: 1, spellings: ['yes', 'Yes']}, {answer: 'no', value: 0, spellings: ['no', 'No']}]"
    if not isinstance(raw, list) or len(raw) < 2:
        raise FairpathInputError(f"{where}: 'options' must list at least two answers, e.g. {example}")
    options, seen = [], {}
    for number, entry in enumerate(raw, 1):
        if not isinstance(entry, dict) or set(entry) - {"answer", "value", "spellings"} or "answer" not in entry or "value" not in entry:
            raise FairpathInputError(f"{where}: option {number} must be a mapping with 'answer', 'value' and optional 'spellings', "
                                     f"got {entry!r}; e.g. {example}")
        answer, value = entry["answer"], entry["value"]
        spellings = entry.get("spellings", [answer])
        if not isinstance(answer, str) or not answer.strip():
            raise FairpathInputError(f"{where}: option {number}'s answer must be a text, got {answer!r} (in YAML quote yes and no: "
                                     "unquoted they read as true and false)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise FairpathInputError(f"{where}: option {answer!r} needs a finite number as its value, got {value!r}")
        if (not isinstance(spellings, list) or not spellings
                or not all(isinstance(s, str) and s.strip() and s == s.strip() for s in spellings)):
            raise FairpathInputError(f"{where}: option {answer!r}'s spellings must be a list of texts without surrounding spaces, "
                                     f"got {spellings!r} (quote yes and no in YAML)")
        for spelling in spellings:
            if spelling in seen:
                raise FairpathInputError(f"{where}: the spelling {spelling!r} belongs to both {seen[spelling]!r} and {answer!r}; "
                                         "each spelling must name one answer")
            seen[spelling] = answer
        options.append(AnswerOption(answer, float(value), tuple(spellings)))
    if len({o.value for o in options}) < 2:
        raise FairpathInputError(f"{where}: every option has the value {options[0].value:g}; the score would not depend on the "
                                 "answer: give the options different values (e.g. yes 1, no 0)")
    return tuple(options)


def _words(raw, where: str) -> dict[str, dict[str, str]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise FairpathInputError(f"{where}: 'words' must map columns to {{value: word}} mappings, e.g. words: {{sex: {{Male: man}}}}")
    words = {}
    for column, mapping in raw.items():
        for value, word in mapping.items():
            if not isinstance(word, (str, int, float)) or isinstance(word, bool):
                raise FairpathInputError(f"{where}: words of {column!r}: the word for {value!r} must be a text, got {word!r}")
        words[str(column)] = {_key(value): str(word) for value, word in mapping.items()}
    return words


def _roles(raw, where: str) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or set(raw) - _ROLE_KEYS:
        raise FairpathInputError(f"{where}: 'roles' takes the keys {sorted(_ROLE_KEYS)}, got {raw!r}")
    return {k: (list(v) if isinstance(v, list) else v) for k, v in raw.items()}


def _key(value) -> str:
    """How a value is looked up in ``words`` and written: whole numbers without ".0", booleans as YAML writes them."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    return str(value)


@dataclass(frozen=True)
class DecisionPrompt:
    """A table row as a question to a language model (see the module docstring)."""

    name: str
    template: str
    mention: str
    question: str
    options: tuple[AnswerOption, ...]
    words: dict = field(default_factory=dict)
    roles: dict = field(default_factory=dict)
    description: str = ""
    source: str = ""

    def __post_init__(self):
        where = f"decision prompt {self.source or self.name!r}"
        fields = _fields(self.template, f"{where}: template")
        if fields.count(MENTION) != 1:
            raise FairpathInputError(f"{where}: the template must hold {{mention}} exactly once (where X's mention goes), "
                                     f"found it {fields.count(MENTION)} times")
        mention_fields = _fields(self.mention, f"{where}: mention")
        if len(mention_fields) != 1:
            raise FairpathInputError(f"{where}: the mention must name X's column once, e.g. 'The defendant is {{race}}.', "
                                     f"got {self.mention!r}")
        _fields(self.question, f"{where}: question")

    @property
    def x_column(self) -> str:
        """The column the mention writes (X's)."""
        return _fields(self.mention, "mention")[0]

    @property
    def columns(self) -> list[str]:
        """The columns the template writes (Z and W), in order."""
        return [name for name in _fields(self.template, "template") if name != MENTION]

    @property
    def spellings(self) -> list[tuple[str, ...]]:
        return [option.spellings for option in self.options]

    @property
    def values(self) -> np.ndarray:
        return np.array([option.value for option in self.options])

    @classmethod
    def builtin(cls, name: str) -> "DecisionPrompt":
        """A prompt that ships with fairpath: ``compas`` (re-offending, faircause's compas.csv), ``census`` (salary
        above the median, gov_census.csv) or ``synthetic`` (the synthetic SFMs' columns x, z1, z2, w1, w2)."""
        if name not in BUILTIN_PROMPTS:
            raise FairpathInputError(f"unknown built-in decision prompt {name!r}; choose one of {list(BUILTIN_PROMPTS)} or give a YAML file")
        text = resources.files("fairpath.llm").joinpath("prompts", f"{name}.yaml").read_text(encoding="utf-8")
        return cls.from_dict(parse_yaml(text, f"built-in decision prompt {name!r}"), source=f"builtin:{name}")

    @classmethod
    def from_yaml(cls, path: str | Path) -> "DecisionPrompt":
        """A prompt from a YAML file (the keys of :meth:`from_dict`)."""
        if not Path(path).is_file():
            raise FairpathInputError(f"decision prompt file {str(path)!r} does not exist; give a YAML file or one of {list(BUILTIN_PROMPTS)}")
        return cls.from_dict(read_yaml(path, "decision prompt file"), source=str(path))

    @classmethod
    def resolve(cls, prompt) -> "DecisionPrompt":
        """A built-in name, a YAML path, or a prompt (returned as is)."""
        if isinstance(prompt, DecisionPrompt):
            return prompt
        if not isinstance(prompt, (str, Path)):
            raise FairpathInputError(f"prompt must be a built-in name {list(BUILTIN_PROMPTS)}, a YAML path or a DecisionPrompt, got {prompt!r}")
        return cls.builtin(prompt) if str(prompt) in BUILTIN_PROMPTS else cls.from_yaml(prompt)

    @classmethod
    def from_dict(cls, spec, source: str = "") -> "DecisionPrompt":
        """From a mapping with ``template``, ``mention``, ``question``, ``options`` and optional ``name``, ``description``,
        ``words`` and ``roles`` (the layout of the built-in YAML files)."""
        where = f"decision prompt {source!r}" if source else "decision prompt"
        if not isinstance(spec, dict):
            raise FairpathInputError(f"{where} must be a mapping with template, mention, question and options, got {type(spec).__name__}")
        unknown = sorted(set(map(str, spec)) - _KEYS)
        if unknown:
            raise FairpathInputError(f"{where} has unknown key(s) {unknown}; the keys are {sorted(_KEYS)}")
        return cls(name=str(spec.get("name") or Path(source).stem or "prompt"), template=_text(spec, "template", where),
                   mention=_text(spec, "mention", where), question=_text(spec, "question", where),
                   options=_options(spec.get("options"), where), words=_words(spec.get("words"), where),
                   roles=_roles(spec.get("roles"), where), description=_text(spec, "description", where, required=False),
                   source=source)

    def to_dict(self) -> dict:
        """The prompt in :meth:`from_dict`'s layout (what a result records)."""
        return {"name": self.name, "description": self.description, "template": self.template, "mention": self.mention,
                "question": self.question, "words": self.words, "roles": self.roles,
                "options": [{"answer": o.answer, "value": o.value, "spellings": list(o.spellings)} for o in self.options]}

    def check(self, sfm) -> None:
        """Refuse a prompt that does not fit ``sfm`` (see the module docstring), naming the column."""
        where = f"decision prompt {self.source or self.name!r}"
        given = [*sfm.z, *sfm.w]
        if self.x_column != sfm.x:
            raise FairpathInputError(f"{where}: the mention writes {{{self.x_column}}}, but X is {sfm.x!r}; write {{{sfm.x}}} in the mention")
        for column in self.columns:
            if column == sfm.x:
                raise FairpathInputError(f"{where}: the template writes X's column {column!r} outside the mention; X goes only "
                                         "in the mention, so that it can be withheld")
            if column == sfm.y:
                raise FairpathInputError(f"{where}: the template shows the outcome {column!r} to the model; remove {{{column}}}: "
                                         "the model must decide without it")
            if column not in given:
                raise FairpathInputError(f"{where}: the template names the column {column!r}, which is not among the SFM's "
                                         f"Z and W {given}; remove it or add it to --z or --w")
        missing = [column for column in given if column not in self.columns]
        if missing:
            raise FairpathInputError(f"{where}: the template omits {missing}, which the SFM gives the model (Z and W); add "
                                     + ", ".join(f"{{{c}}}" for c in missing) + " to the template")
        unused = sorted(set(self.words) - {sfm.x, *given})
        if unused:
            raise FairpathInputError(f"{where}: 'words' maps {unused}, which the prompt does not write; remove them or fix the name")

    def render(self, data: pd.DataFrame, sfm, x_values=None) -> list[str]:
        """The prompt of every row of ``data`` (see the module docstring)."""
        names = self.columns  # parsed from the template once, not per row
        columns = {column: self._written(data[column], column) for column in names}
        if x_values is WITHHELD:
            mentions = [""] * len(data)
        else:
            x = data[sfm.x] if x_values is None else pd.Series(x_values if np.ndim(x_values) else [x_values] * len(data), index=data.index)
            written = self._written(x, sfm.x)
            mentions = [_fill(self.mention, {sfm.x: value}) for value in written]
        question = _fill(self.question, {})
        return [_fill(self.template, {MENTION: mention, **{c: columns[c][i] for c in names}}).rstrip() + "\n" + question
                for i, mention in enumerate(mentions)]

    def _written(self, values: pd.Series, column: str) -> list[str]:
        """A column's values as the prompt writes them, refusing a missing value or one that would break the prompt."""
        missing = values.isna().to_numpy()
        if missing.any():
            rows = list(values.index[missing][:5])
            raise FairpathInputError(f"column {column!r} has {int(missing.sum())} missing value(s) (rows {rows}); a prompt cannot "
                                     "write them: fill or drop those rows first")
        mapping = self.words.get(column, {})
        written = {value: mapping.get(_key(value), _key(value)) for value in pd.unique(values)}
        for value, text in written.items():
            if any(unicodedata.category(ch) == "Cc" for ch in text):
                row = values.index[values.to_numpy() == value][0]
                raise FairpathInputError(f"column {column!r}, row {row!r}: the value {text!r} holds a line break or another control "
                                         "character, which would break the prompt (a new line can forge an answer); clean the "
                                         "column or map the value to a word under 'words'")
        return [written[value] for value in values]

    def example(self, data: pd.DataFrame, sfm) -> str:
        """The first row's prompt, X mentioned: what the report shows."""
        return self.render(data.iloc[:1], sfm)[0]
