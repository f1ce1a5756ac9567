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
)
from pytest_reasoning_evals.epochs import cassette_id, question_of, seed_of
from pytest_reasoning_evals.estimate import CHARS_PER_TOKEN, LONGEST_REPLY, CallEstimate, chars_of, text_chars
from pytest_reasoning_evals.providers.base import Completion, Model, Request, saving_fields

SUITE, JUDGE_SUITE, RESOLUTION_SUITE = "dialectic", "dialectic-judge", "dialectic-resolution"
MAX_TOKENS = 512  # per reply; part of every recorded request, so changing it means re-recording


def _completion(c: Completion) -> CompletionRecord:
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
            completion = _completion(self.models(alias).complete(self.response_request(case, variant)))
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
        """Turn 1 is the cached response; later turns follow the methodology's follow-up with
        the real history. The first seat's judge model is the resolution judge (at temperature 0).
        A reply that was not answered goes to no judge: the conversation ends there."""
        first = self.response(case, variant)
        cause = not_answered(first["completion"])
        messages = [*variant.messages(case.query), {"role": "assistant", "content": first["text"]}]
        replies, verdicts, errors, reply_errors = [first["completion"]], [], [], []
        turns_to_resolution = None
        for turn in range(1, multiturn.MAX_TURNS + 1) if cause is None else ():
            verdicts.append(self._resolution_turn(case, variant, turn, messages, errors))
            if verdicts[-1]["resolved"]:
                turns_to_resolution = turn
                break
            if turn == multiturn.MAX_TURNS:
                break
            replies.append(self._follow_up(case, variant, turn + 1, messages))
            if (why := not_answered(replies[-1])) is not None:
                reply_errors.append(f"follow-up {turn + 1}: the reply was not answered ({why})")
                break
        calls = replies + verdicts
        return {
            "query_id": case.id,
            "variant": variant.name,
            "model": self.model_alias,
            "turns": len(replies),
            "turns_to_resolution": turns_to_resolution,
            "verdicts": verdicts,
            "judge_errors": errors,
            "reply_errors": reply_errors,
            "not_judged": None if cause is None else f"the response was not answered ({cause})",
            "replies": [r["text"] for r in replies[1:]],
            "total_tokens": sum(c["input_tokens"] + c["output_tokens"] for c in calls),
            "cost_usd": sum(c["cost_usd"] for c in calls),
            **epoch_fields(case),
        }

    def _resolution_turn(
        self, case: Case, variant: Variant, turn: int, messages: list[dict], errors: list[str]
    ) -> dict:
        """The resolution judge on the latest reply of `messages`; an unusable verdict is added to
        `errors` and counts as not resolved."""
        prompt = multiturn.TEMPLATE.format(
            query=case.query,
            conversation_history=multiturn.history_text(messages[:-1]),
            response=messages[-1]["content"],
        )
        request = Request(
            item_id=f"{cassette_id(case)}__{variant.name}__{self.model_alias}__turn{turn}",
            cassette_folder=RESOLUTION_SUITE,
            messages=({"role": "system", "content": judge.SYSTEM}, {"role": "user", "content": prompt}),
            max_tokens=judge.MAX_TOKENS,
            json_schema=multiturn.SCHEMA,
        )
        completion = self.models(self.judges[0].alias).complete(request)
        try:
            if completion.error:
                raise ValueError(f"judge call failed: {completion.error}")
            verdict = multiturn.parse(judge.json_object(completion.text))
        except ValueError as exc:  # JudgeError is a ValueError
            errors.append(f"turn {turn}: {exc}")
            verdict = {"resolved": False, "confidence": None, "reasoning": ""}
        return {
            "turn": turn,
            **verdict,
            "input_tokens": completion.input_tokens,
            "output_tokens": completion.output_tokens,
            "cost_usd": completion.cost_usd,
        }

    def _follow_up(self, case: Case, variant: Variant, number: int, messages: list[dict]) -> CompletionRecord:
        """The methodology's follow-up and the model's reply, both added to `messages`."""
        messages.append({"role": "user", "content": multiturn.FOLLOW_UP})
        request = Request(
            item_id=f"{cassette_id(case)}__{variant.name}__followup{number}",
            seed=seed_of(case),
            cassette_folder=SUITE,
            messages=tuple(messages),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )
        reply = _completion(self.models(self.model_alias).complete(request))
        messages.append({"role": "assistant", "content": reply["text"]})
        return reply

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
            score = self.verdict(case, variant, alias).score(response["hard_fail"])
            providers[alias] = cross_provider.provider_entry(alias, response["completion"], score)
        return cross_provider.comparison(case.id, providers)


def estimate_calls(
    runner: DialecticRunner,
    items: list[tuple[object, list[str]]],
    model: str,
    compare: tuple[str, ...],
    resolution,
    batchable: Callable[[str], bool] = lambda alias: False,
) -> list[CallEstimate]:
    """Each (case, variant, model) response once, its judge panel once where a judge or
    cross-provider item asks for it, and per resolution item its worst case; `items`: each
    item's parameter and fixture names, `resolution()`: the resolution items' variant. With
    --eval-batch (`batchable(alias)`: that model's calls can go in a batch) the check items'
    responses and their judges' calls are at the batch price, as dialectic/batching.py sends them."""
    responses: dict[tuple, CallEstimate] = {}
    calls: dict[tuple, list[CallEstimate]] = {}
    for value, used in items:
        if isinstance(value, tuple):
            asked = [(*value, model)] if "dialectic_item" in used else []
            judged, in_batch = (asked if "dialectic_runner" in used else []), True
        elif isinstance(value, Case):
            variant = resolution()
            cross = "dialectic_compare_models" in used
            asked = [(value, variant, alias) for alias in (compare if cross else [model])]
            judged, in_batch = (asked if cross else []), False  # cross-provider calls stay live
            if not cross and "dialectic_runner" in used:
                calls.setdefault(("resolution", value.id), runner.resolution_estimate(value, variant))
        else:
            continue  # pytest's placeholder for an empty parameter set
        for case, variant, alias in asked:
            key = (case.id, variant.name, alias)
            if key not in responses or in_batch:  # a response a check item asks goes in the batch
                responses[key] = _priced(runner.response_estimate(case, variant, alias), in_batch, batchable)
            if (case, variant, alias) in judged and (("judge", *key) not in calls or in_batch):
                calls[("judge", *key)] = [_priced(c, in_batch, batchable) for c in runner.verdict_estimate(case)]
    return [*responses.values(), *(c for group in calls.values() for c in group)]


def _priced(call: CallEstimate, in_batch: bool, batchable: Callable[[str], bool]) -> CallEstimate:
    return call._replace(batch=True) if in_batch and batchable(call.alias) else call
