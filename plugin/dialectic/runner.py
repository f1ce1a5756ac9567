"""The dialectic protocol inside one process: generate each (case, variant, model) response
once, judge it once, and run the multi-turn and cross-provider protocols on top.

Every check item of a case reads the same cached response; the plugin keeps a case's items on
one xdist worker (grouping.py) so the cache is shared. Each call has its own cassette:
  cassettes/<model>/dialectic/<case>__<variant>.yaml                 the response
  cassettes/<model>/dialectic/<case>__<variant>__followup<k>.yaml    resolution follow-ups
  cassettes/<judge>/dialectic-judge/<case>__<variant>__<model>__judge<k>.yaml
  cassettes/<judge>/dialectic-resolution/<case>__<variant>__<model>__turn<k>.yaml
Under --eval-epochs K > 1 each case is asked once per epoch (plugin/epochs.py): <case> is the case's
id for epoch 1 and <case>-e0<e> for epoch e >= 2, whose response and follow-ups send seed e - 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from pytest_reasoning_evals.dialectic import cross_provider, judge, multiturn
from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.dialectic.extract import extract
from pytest_reasoning_evals.dialectic.panel import Seat, self_judged
from pytest_reasoning_evals.dialectic.pcc import pcc_valid
from pytest_reasoning_evals.dialectic.records import (
    CompletionRecord,
    ConversationRecord,
    CrossProviderRecord,
    EpochFields,
    ResponseRecord,
    saved_parts,
)
from pytest_reasoning_evals.epochs import cassette_id, question_of, seed_of
from pytest_reasoning_evals.estimate import CHARS_PER_TOKEN, LONGEST_REPLY, CallEstimate, chars_of, text_chars
from pytest_reasoning_evals.providers.base import Completion, Model, Request, saving_fields

SUITE, JUDGE_SUITE, RESOLUTION_SUITE = "dialectic", "dialectic-judge", "dialectic-resolution"
MAX_TOKENS = 512  # per reply; part of every recorded request, so changing it means re-recording


def completion_record(c: Completion) -> CompletionRecord:
    return {
        "provider": c.provider,
        "model": c.model,
        "text": c.text,
        "input_tokens": c.input_tokens,
        "output_tokens": c.output_tokens,
        "latency_ms": c.latency_ms,
        "cost_usd": c.cost_usd,
        "finish_reason": c.finish_reason,
        "error": c.error,
        "cassette": c.outcome.cassette,
        "cassette_hit": c.outcome.hit,
        "reasoning": c.reasoning,
        **saving_fields([c]),
    }


def epoch_fields(case: Case) -> EpochFields:
    """What a response and a conversation add under epochs: the case asked again and its epoch ({} without)."""
    return {"case_id": question_of(case), "epoch": case.epoch} if case.epoch else {}


def not_answered(completion: CompletionRecord) -> str | None:
    """Why a reply is not there to judge: its call's error (a cassette miss too), or an empty
    reply; None when it was answered."""
    if completion["error"]:
        return completion["error"]
    return None if completion["text"].strip() else "an empty reply"


def judge_request(case: Case, variant: Variant, alias: str, text: str, seat: Seat) -> Request:
    """The request of `seat`'s judge on `alias`'s response `text` to (case, variant): asked live by
    the judge item, or in a batch before the items run (batching.py)."""
    return Request(
        item_id=f"{cassette_id(case)}__{variant.name}__{alias}__judge{seat.number}",
        cassette_folder=JUDGE_SUITE,
        messages=judge.prompt(case.query, text),
        max_tokens=judge.MAX_TOKENS,
        json_schema=judge.SCHEMA,
        temperature=seat.temperature,
        seed=seat.seed,
    )


class DialecticRunner:
    def __init__(
        self,
        models: Callable[[str], Model],
        model_alias: str,
        judges: tuple[Seat, ...],
        max_tokens: int | None = None,
        temperature: float | None = None,
    ):
        self.models = models  # alias -> model (built once per process by the session)
        self.model_alias = model_alias
        self.judges = judges  # the panel: one seat per judge
        # of responses and follow-ups (--eval-max-tokens, --eval-temperature); judges keep their own
        self.max_tokens = MAX_TOKENS if max_tokens is None else max_tokens
        self.temperature = temperature or 0.0
        self._responses: dict[tuple, ResponseRecord] = {}
        self._verdicts: dict[tuple, judge.Verdict] = {}

    # --- one response, once ---

    def response_request(self, case: Case, variant: Variant) -> Request:
        """The request of (case, variant)'s response: it needs no answer, so it may run ahead."""
        return Request(
            item_id=f"{cassette_id(case)}__{variant.name}",
            seed=seed_of(case),
            cassette_folder=SUITE,
            messages=variant.messages(case.query),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )

    def has_response(self, case: Case, variant: Variant) -> bool:
        """The model under test's response to (case, variant) was made in this process."""
        return (case.id, variant.name, self.model_alias) in self._responses

    def response(self, case: Case, variant: Variant, alias: str | None = None) -> ResponseRecord:
        """The response record of (case, variant, model): text, usage, extraction, PCC, mode."""
        alias = alias or self.model_alias
        key = (case.id, variant.name, alias)
        if key not in self._responses:
            completion = completion_record(self.models(alias).complete(self.response_request(case, variant)))
            extraction = extract(completion["text"])
            valid = pcc_valid(extraction, case.expected_mode)
            self._responses[key] = {
                "query_id": case.id,
                "variant": variant.name,
                "model": alias,
                "category": case.category,
                "query": case.query,
                "expected_mode": case.expected_mode,
                "text": completion["text"],
                "extraction": extraction,
                "metrics": {
                    "h_count": extraction["h_count"],
                    "oscillation": extraction["oscillation_table"],
                    "cruxes": len(extraction["cruxes"]),
                    "confidence": extraction["confidence"],
                    "pcc_valid": valid,
                    "mode_correct": extraction["mode"] == case.expected_mode,
                },
                "hard_fail": valid is False,
                "completion": completion,
                **epoch_fields(case),
            }
        return self._responses[key]

    def cached(self, key: tuple[str, str, str]) -> ResponseRecord:
        """A response made earlier in this process, by (case id, variant name, model alias)."""
        return self._responses[key]

    # --- judging, once per response ---

    def verdict(self, case: Case, variant: Variant, alias: str | None = None) -> judge.Verdict:
        """The panel's verdict on (case, variant, model)'s response; a response that was not
        answered is sent to no judge (nothing to grade, nothing to pay for)."""
        alias = alias or self.model_alias
        key = (case.id, variant.name, alias)
        if key not in self._verdicts:
            response = self.response(case, variant, alias)
            cause = not_answered(response["completion"])
            if cause is None:
                self._verdicts[key] = self._judged(case, variant, alias, response["text"])
            else:
                self._verdicts[key] = judge.Verdict(
                    (), (), self_judged(self.judges, alias), not_judged=f"the response was not answered ({cause})"
                )
        return self._verdicts[key]

    def _judged(self, case: Case, variant: Variant, alias: str, text: str) -> judge.Verdict:
        judgements, errors, cost, calls = [], [], 0.0, []
        for seat in self.judges:
            completion = self.models(seat.alias).complete(judge_request(case, variant, alias, text, seat))
            cost += completion.cost_usd
            calls.append(completion)
            try:
                if completion.error:
                    raise judge.JudgeError(f"judge call failed: {completion.error}")
                judgements.append({"judge": seat.alias, "seat": seat.number, **judge.parse(completion.text)})
            except judge.JudgeError as exc:
                errors.append(f"judge {seat.number} ({seat.alias}): {exc}")
        return judge.Verdict(
            tuple(judgements), tuple(errors), self_judged(self.judges, alias), cost_usd=cost, saved=saving_fields(calls)
        )

    # --- multi-turn resolution ---

    def resolution(self, case: Case, variant: Variant) -> ConversationRecord:
        """The resolution conversation on the cached response (Conversation), each call asked in turn."""
        conversation = Conversation(self, case, variant, self.response(case, variant)["completion"])
        conversation.walk(lambda call: self.models(call.alias).complete(call.request))
        return conversation.record()

    # --- what it would ask (--eval-estimate), worst case: every reply as long as max_tokens allows ---

    def _longest_reply(self) -> tuple[dict, int]:
        """A stand-in for the longest reply, and the characters it counts for."""
        return {"role": "assistant", "content": LONGEST_REPLY}, CHARS_PER_TOKEN * self.max_tokens

    def response_estimate(self, case: Case, variant: Variant, alias: str) -> CallEstimate:
        messages = self.response_request(case, variant).messages
        return CallEstimate(alias, "response", SUITE, chars_of(messages), self.max_tokens)

    def verdict_estimate(self, case: Case) -> list[CallEstimate]:
        """A judge call per seat of the panel."""
        reply, longest = self._longest_reply()
        chars = chars_of(judge.prompt(case.query, reply["content"]), longest)
        return [CallEstimate(seat.alias, "judge", JUDGE_SUITE, chars, judge.MAX_TOKENS) for seat in self.judges]

    def resolution_estimate(self, case: Case, variant: Variant) -> list[CallEstimate]:
        """Never resolved: MAX_TURNS resolution judge turns and a follow-up between each two."""
        reply, longest = self._longest_reply()
        messages = [*variant.messages(case.query), reply]
        calls = []
        for turn in range(1, multiturn.MAX_TURNS + 1):
            history = multiturn.history_text(messages[:-1])
            prompt = multiturn.TEMPLATE.format(
                query=case.query, conversation_history=history, response=reply["content"]
            )
            chars = len(judge.SYSTEM) + text_chars(prompt, longest)
            calls.append(
                CallEstimate(self.judges[0].alias, "resolution turn", RESOLUTION_SUITE, chars, judge.MAX_TOKENS)
            )
            if turn < multiturn.MAX_TURNS:
                messages.append({"role": "user", "content": multiturn.FOLLOW_UP})
                chars = chars_of(messages, longest)
                calls.append(CallEstimate(self.model_alias, "follow-up", SUITE, chars, self.max_tokens))
                messages.append(reply)
        return calls

    # --- cross-provider comparison ---

    def cross_provider(self, case: Case, variant: Variant, aliases: list[str]) -> CrossProviderRecord:
        providers = {}
        for alias in aliases:
            response = self.response(case, variant, alias)
            verdict = self.verdict(case, variant, alias)
            score = verdict.score(response["hard_fail"])
            providers[alias] = cross_provider.provider_entry(alias, response["completion"], score, verdict.cost_usd)
        return cross_provider.comparison(case.id, providers)


class Call(NamedTuple):
    """A call a conversation asks: its request, to model `alias`."""

    alias: str
    request: Request


class Conversation:
    """One multi-turn resolution conversation (SPEC 6.5), a call at a time: `next_call` is the call
    it asks next (None once it has ended), `take(completion)` gives it that call's reply. Turn 1 is
    the response `first`; then the resolution judge (the first seat's judge model, at temperature
    0) on the latest reply and, while it does not say resolved, the methodology's follow-up with the
    real history and the model's reply, at most MAX_TURNS turns. A reply that was not answered goes
    to no judge: the conversation ends there. The runner asks each call (DialecticRunner.resolution);
    --eval-batch replays the calls the cassettes hold and sends the first they lack
    (batch_rounds.py): both walk this one conversation, so both build the same requests."""

    def __init__(self, runner: DialecticRunner, case: Case, variant: Variant, first: CompletionRecord):
        self.runner, self.case, self.variant = runner, case, variant
        self.cause = not_answered(first)
        self.messages = [*variant.messages(case.query), {"role": "assistant", "content": first["text"]}]
        self.replies: list[CompletionRecord] = [first]
        self.verdicts: list[dict] = []
        self.judge_errors: list[str] = []
        self.reply_errors: list[str] = []
        self.turns_to_resolution: int | None = None
        self.turn = 1  # the resolution judge's turn: it reads the reply of this turn
        self._judging = True  # next_call is the resolution judge's (else a follow-up)
        self.next_call: Call | None = None if self.cause is not None else self._judge_call()

    def walk(self, answer: Callable[[Call], Completion | None]) -> Call | None:
        """Take the reply `answer` gives to each call in turn, until the conversation ends (-> None)
        or `answer` has none for a call (None: -> that call, the first the conversation lacks)."""
        while (call := self.next_call) is not None:
            completion = answer(call)
            if completion is None:
                return call
            self.take(completion)
        return None

    def take(self, completion: Completion) -> None:
        """The reply to `next_call`; `next_call` becomes the call after it, or None."""
        if self._judging:
            self.verdicts.append(self._verdict(completion))
            if self.verdicts[-1]["resolved"]:
                self.turns_to_resolution, self.next_call = self.turn, None
            elif self.turn == multiturn.MAX_TURNS:
                self.next_call = None
            else:
                self.turn += 1
                self.messages.append({"role": "user", "content": multiturn.FOLLOW_UP})
                self.next_call, self._judging = self._follow_up_call(), False
            return
        reply = completion_record(completion)
        self.replies.append(reply)
        self.messages.append({"role": "assistant", "content": reply["text"]})
        if (why := not_answered(reply)) is not None:
            self.reply_errors.append(f"follow-up {self.turn}: the reply was not answered ({why})")
            self.next_call = None
        else:
            self.next_call, self._judging = self._judge_call(), True

    def _judge_call(self) -> Call:
        """The resolution judge on the latest reply of the conversation so far."""
        case, runner = self.case, self.runner
        prompt = multiturn.TEMPLATE.format(
            query=case.query,
            conversation_history=multiturn.history_text(self.messages[:-1]),
            response=self.messages[-1]["content"],
        )
        request = Request(
            item_id=f"{cassette_id(case)}__{self.variant.name}__{runner.model_alias}__turn{self.turn}",
            cassette_folder=RESOLUTION_SUITE,
            messages=({"role": "system", "content": judge.SYSTEM}, {"role": "user", "content": prompt}),
            max_tokens=judge.MAX_TOKENS,
            json_schema=multiturn.SCHEMA,
        )
        return Call(runner.judges[0].alias, request)

    def _follow_up_call(self) -> Call:
        """The model's reply to the follow-up, the conversation so far as its history."""
        case, runner = self.case, self.runner
        request = Request(
            item_id=f"{cassette_id(case)}__{self.variant.name}__followup{self.turn}",
            seed=seed_of(case),
            cassette_folder=SUITE,
            messages=tuple(self.messages),
            max_tokens=runner.max_tokens,
            temperature=runner.temperature,
        )
        return Call(runner.model_alias, request)

    def _verdict(self, completion: Completion) -> dict:
        """The resolution judge's verdict; an unusable one is a judge error and counts as not resolved."""
        try:
            if completion.error:
                raise ValueError(f"judge call failed: {completion.error}")
            verdict = multiturn.parse(judge.json_object(completion.text))
        except ValueError as exc:  # JudgeError is a ValueError
            self.judge_errors.append(f"turn {self.turn}: {exc}")
            verdict = {"resolved": False, "confidence": None, "reasoning": ""}
        return {
            "turn": self.turn,
            **verdict,
            "input_tokens": completion.input_tokens,
            "output_tokens": completion.output_tokens,
            "cost_usd": completion.cost_usd,
            **saving_fields([completion]),
        }

    def record(self) -> ConversationRecord:
        calls = self.replies + self.verdicts
        return {
            "query_id": self.case.id,
            "variant": self.variant.name,
            "model": self.runner.model_alias,
            "turns": len(self.replies),
            "turns_to_resolution": self.turns_to_resolution,
            "verdicts": self.verdicts,
            "judge_errors": self.judge_errors,
            "reply_errors": self.reply_errors,
            "not_judged": None if self.cause is None else f"the response was not answered ({self.cause})",
            "replies": [r["text"] for r in self.replies[1:]],
            "total_tokens": sum(c["input_tokens"] + c["output_tokens"] for c in calls),
            "cost_usd": sum(c["cost_usd"] for c in calls),
            # only when not zero, as the saving fields: a free model's conversations read as before
            **({"response_cost_usd": first} if (first := self.replies[0]["cost_usd"]) else {}),
            **saved_parts(calls),
            **epoch_fields(self.case),
        }


def estimate_calls(
    runner: DialecticRunner,
    items: list[tuple[object, list[str]]],
    model: str,
    compare: tuple[str, ...],
    resolution,
    batchable: Callable[[str], bool] = lambda alias: False,
    turns_in_batch: bool = False,
) -> list[CallEstimate]:
    """Each (case, variant, model) response once, its judge panel once where a judge or
    cross-provider item asks for it, and per resolution item its worst case; `items`: each
    item's parameter and fixture names, `resolution()`: the resolution items' variant. With
    --eval-batch (`batchable(alias)`: that model's calls can go in a batch) the responses and their
    judges' calls are at the batch price, and the resolution turns and follow-ups too with
    `turns_in_batch` (not under a rewrite), as dialectic/batching.py sends them."""
    responses: dict[tuple, CallEstimate] = {}
    calls: dict[tuple, list[CallEstimate]] = {}
    for value, used in items:
        if isinstance(value, tuple):
            asked = [(*value, model)] if "dialectic_item" in used else []
            judged = asked if "dialectic_runner" in used else []
        elif isinstance(value, Case):
            variant = resolution()
            cross = "dialectic_compare_models" in used
            asked = [(value, variant, alias) for alias in (compare if cross else [model])]
            judged = asked if cross else []
            if not cross and "dialectic_runner" in used:
                turns = runner.resolution_estimate(value, variant)
                calls.setdefault(("resolution", value.id), [_priced(c, turns_in_batch, batchable) for c in turns])
        else:
            continue  # pytest's placeholder for an empty parameter set
        for case, variant, alias in asked:
            key = (case.id, variant.name, alias)
            if key not in responses:
                responses[key] = _priced(runner.response_estimate(case, variant, alias), True, batchable)
            if (case, variant, alias) in judged and ("judge", *key) not in calls:
                calls[("judge", *key)] = [_priced(c, True, batchable) for c in runner.verdict_estimate(case)]
    return [*responses.values(), *(c for group in calls.values() for c in group)]


def _priced(call: CallEstimate, in_batch: bool, batchable: Callable[[str], bool]) -> CallEstimate:
    return call._replace(batch=True) if in_batch and batchable(call.alias) else call
