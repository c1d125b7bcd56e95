"""Language models as decision-makers, audited under the causal lens.

A language model asked about a row of a table is a predictor whose function can be queried. This package
renders rows as questions (:class:`DecisionPrompt`: built-in ``compas``, ``census``, ``synthetic``, or YAML),
reads the model's answer as a score from its next-token probabilities of the answer options
(:func:`score_prompts`, resumable with a :class:`ScoreStore`; an endpoint without log probabilities is
sampled and parsed by :func:`parse_answer`), and audits the scores with the causal decomposition, predictive
parity and the Business Necessity Cookbook (:func:`llm_audit`, returning an :class:`LLMAuditResult`): per
pathway whether the model amplifies, dampens or reverses the world's disparity, and the exact effect of
changing X's mention in the prompt, beside the estimated Ctf-DE.
"""

from fairpath.llm._audit import X_MODES, LLMAuditResult, llm_audit
from fairpath.llm._prompt import BUILTIN_PROMPTS, WITHHELD, AnswerOption, DecisionPrompt
from fairpath.llm._scoring import ScoreStore, parse_answer, score_prompts

__all__ = [
    "AnswerOption", "BUILTIN_PROMPTS", "DecisionPrompt", "LLMAuditResult", "ScoreStore", "WITHHELD", "X_MODES", "llm_audit",
    "parse_answer", "score_prompts",
]
