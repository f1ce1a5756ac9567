"""--eval-batch, dialectic: the rounds after the responses (batching.py). Round 1 is the judge
panels' calls with each resolution conversation's first judge turn; each later round is, for each
conversation, the first call its cassettes lack: its calls so far are replayed (a replay-only
cassette client) and walked as the resolution item walks them (runner.Conversation), so the
request is the one the item would send, byte for byte. A round's calls go in a batch per model
alias; the rounds end when one has nothing new to send. A call is sent once per run: one a batch
did not answer (or the budget left out) is left to its item, and so are the calls after it.

Under --eval-record-mode=rewrite the conversations are asked live, call after call: the replay
would read the calls the rewrite replaces (a follow-up recorded by an earlier run) as the history
of the next one."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pytest_reasoning_evals.batch.run import PROVIDERS, say_to, send_all_in_batches
from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.dialectic.multiturn import MAX_TURNS
from pytest_reasoning_evals.dialectic.runner import Call, Conversation, completion_record
from pytest_reasoning_evals.providers.base import Completion, ErrorKind, Model, Request

if TYPE_CHECKING:
    from pytest_reasoning_evals.dialectic.protocol import Protocol


def send_rounds(protocol: Protocol, panel: list[Call], conversations: list[tuple[Case, Variant]]) -> None:
    """The panel's calls with the conversations' first, then a round per conversation call."""
    models, runner = protocol.session.models, protocol.runner
    if any(models.record_mode_for(models.spec(a)) == "rewrite" for a in (runner.model_alias, runner.judges[0].alias)):
        conversations = []  # asked live (see the module's docstring)
    sent: set[tuple[str, str, str]] = set()  # (alias, cassette folder, item id) of each call sent
    for _ in range(2 * MAX_TURNS):  # a conversation makes at most 2 * MAX_TURNS - 1 calls
        calls = [call for call in panel + next_calls(protocol, conversations) if _key(call) not in sent]
        if not calls:
            return
        sent |= {_key(call) for call in calls}
        send_by_alias(protocol, calls, "judge")
        panel = []


def _key(call: Call) -> tuple[str, str, str]:
    return call.alias, call.request.cassette_folder, call.request.item_id


def next_calls(protocol: Protocol, conversations: list[tuple[Case, Variant]]) -> list[Call]:
    """Each conversation's first call its cassettes lack (none for one that has ended, or whose
    response no cassette holds: its item asks it, and the conversation, live)."""
    models, runner = protocol.session.models, protocol.runner
    replay = functools.cache(lambda alias: replayer(models, alias))

    def answer(call: Call) -> Completion | None:
        completion = replay(call.alias).complete(call.request)
        return None if completion.outcome.error_kind is ErrorKind.MISS else completion

    wanted = []
    for case, variant in conversations:
        first = answer(Call(runner.model_alias, runner.response_request(case, variant)))
        if first is None:
            continue
        call = Conversation(runner, case, variant, completion_record(first)).walk(answer)
        if call is not None:
            wanted.append(call)
    return wanted


def replayer(models, alias: str) -> Model:
    """What answers `alias`'s calls from its cassettes alone (a miss for a call they lack); a
    fixed-answer model answers itself, as it does in the items."""
    model = models.http_model(alias)
    return model if models.spec(alias).provider == "baseline" else models.cassette_client(model, "none")


def send_by_alias(protocol: Protocol, calls: list[Call], role: str) -> None:
    """`calls` in batches, one per model alias (in the order the aliases first appear); the calls
    to a model whose provider has no batch API are left to the items, which ask them live (a line
    says so; a fixed-answer model's cost nothing and are not counted)."""
    session = protocol.session
    by_alias: dict[str, list[Request]] = {}
    for call in calls:
        by_alias.setdefault(call.alias, []).append(call.request)
    batched = {}
    for alias, requests in by_alias.items():
        provider = session.models.spec(alias).provider
        if provider in PROVIDERS:
            batched[alias] = requests
        elif provider != "baseline":
            say_to(session)(
                f"batch: {role} {alias!r} is of provider {provider!r}, whose batch API is not wired in: "
                f"its {len(requests):,} calls are asked live"
            )
    send_all_in_batches(session, protocol.name, batched, protocol.run_dir)  # all sent, then waited for together
