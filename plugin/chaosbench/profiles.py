"""--eval-profile: whose conditions a ChaosBench run asks its questions under.

`harness` (the default): the prompt files of --eval-prompts, the mode's max_tokens, the harness's
normaliser, and a reprompt in the same conversation (the reply as an assistant turn, then REPROMPT).

`upstream`: upstream ChaosBench-Logic's `chaosbench eval` (github.com/11NOel11/ChaosBench-Logic),
so a run's upstream_metrics.json lines up with its published leaderboard:
- the prompt of `build_prompt` (chaosbench/eval/prompts.py, variant v1) with the suffix its API
  providers append (`_STRICT_SUFFIX`, chaosbench/eval/providers/openai.py), as one user message;
- max_tokens 16 (its --max-tokens default) at temperature 0 (its --temperature default); a
  reasoning model gets max_completion_tokens max(max_tokens, 1024), no temperature (openai.py);
  no seed (upstream sends none);
- the reply stripped and cut to 200 characters (its providers' `text[:200]`) before its parser
  (upstream_parse.py);
- one reprompt when the reply has no label (run.py `_evaluate_item`, --retries 1): `build_reprompt`,
  one user message holding the first prompt, "Your response: " and the cut reply, then its
  forced-format line, with the same max_tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pytest_reasoning_evals.chaosbench.normalize import AnswerWords
from pytest_reasoning_evals.chaosbench.prompts import SHIPPED_DATASET, PromptTemplate, cassette_folder_name
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.chaosbench.upstream_parse import upstream_label
from pytest_reasoning_evals.providers.base import Request

UPSTREAM_SYSTEM = (
    "You are an expert in dynamical systems and chaos theory. "
    "Answer the following question about a dynamical system with EXACTLY one word: "
    "TRUE or FALSE. Do not add any explanation."
)
UPSTREAM_SUFFIX = "\n\nReturn exactly one token: TRUE or FALSE. No explanation."
UPSTREAM_REPROMPT = "Your previous answer was not clear. Reply with EXACTLY one word: TRUE or FALSE."
UPSTREAM_MAX_TOKENS = 16
UPSTREAM_REASONING_CAP = 1024  # openai.py: a reasoning model spends 16 tokens on thought alone
REPLY_CHARS = 200
UPSTREAM_SOURCE = Path("ChaosBench-Logic/chaosbench/eval/prompts.py")  # what the manifest names as the prompt's file


def cut(reply: str) -> str:
    """The reply as upstream's providers hand it on: stripped, then its first 200 characters."""
    return reply.strip()[:REPLY_CHARS]


@dataclass(frozen=True)
class UpstreamPrompt(PromptTemplate):
    """PromptTemplate's interface with upstream's prompt, body, cut, parser and reprompt."""

    profile = "upstream"  # not a field: what the manifest and request_shape name

    @classmethod
    def make(cls, max_tokens: int | None, temperature: float | None, dataset: str = SHIPPED_DATASET):
        text = f"{UPSTREAM_SYSTEM}\n\nQuestion: {{question}}{UPSTREAM_SUFFIX}"
        return cls("zeroshot", UPSTREAM_SOURCE, text, max_tokens, temperature or 0.0, dataset)

    @property
    def answer_tokens(self) -> int:
        return UPSTREAM_MAX_TOKENS if self.max_tokens is None else self.max_tokens

    @property
    def cassette_folder(self) -> str:
        # upstream's bodies are other requests than the harness's: their recordings never mix
        return cassette_folder_name("upstream", self.dataset)

    def request(
        self, question: Question, *, item_id: str | None = None, history: tuple[dict, ...] = (), seed: int | None = None
    ) -> Request:
        sent = super().request(question, item_id=item_id, history=history, seed=seed)
        return replace(sent, seeded=False, completion_cap=max(sent.max_tokens, UPSTREAM_REASONING_CAP))

    @staticmethod
    def reprompt(request: Request, reply: str) -> Request:
        """build_reprompt(prompt, reply) with the suffix its provider appends: one user message."""
        first = request.messages[-1]["content"].removesuffix(UPSTREAM_SUFFIX)
        content = f"{first}\n\nYour response: {cut(reply)}\n\n{UPSTREAM_REPROMPT}{UPSTREAM_SUFFIX}"
        return replace(request, messages=(*request.messages[:-1], {"role": "user", "content": content}))

    def label(self, text: str, words: AnswerWords) -> str | None:
        return upstream_label(cut(text))
