"""--eval-batch for ChaosBench (docs/batch.md, "A run with --eval-batch"): before the items run,
the questions' first requests and each dialogue's first turn no cassette answers go to the
provider's batch API together; then, round by round, each dialogue's next turn, sent with the
replies before it as its history (as run_dialogue sends it), until no dialogue lacks a turn. Each
reply is saved into its item's ordinary cassette (a dialogue's grows turn by turn), so the items
replay them. A turn a batch did not answer is left to its item, which asks it live."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_reasoning_evals.chaosbench.questions import Dialogue, Question
from pytest_reasoning_evals.epochs import cassette_id, seed_of
from pytest_reasoning_evals.providers.base import ErrorKind, Request

if TYPE_CHECKING:
    from pytest_reasoning_evals.chaosbench.protocol import Protocol


def send_batches(protocol: Protocol, questions: list[Question], dialogues: list[Dialogue]) -> None:
    """The questions with the dialogues' first turns in one round, then a round per later turn."""
    from pytest_reasoning_evals.batch.run import send_in_batches

    s, models = protocol.settings, protocol.session.models
    mode = models.record_mode_for(models.spec(s.model))
    if mode == "none":
        return
    turns = mode != "rewrite"  # a rewrite records every turn anew: its dialogues are asked live, turn after turn
    first = [protocol.prompt.request(q) for q in questions]
    sent: set[tuple[str, int]] = set()  # (dialogue cassette, turn): a turn a batch did not answer is not sent again
    for _ in range(1 + max((len(d.turns) for d in dialogues), default=0)):
        asked = [r for r in (next_turns(protocol, dialogues) if turns else []) if _turn(r) not in sent]
        sent |= {_turn(r) for r in asked}
        if not first and not asked:
            return
        send_in_batches(protocol.session, protocol.name, s.model, first + asked, protocol.run_dir)
        first = []


def _turn(request: Request) -> tuple[str, int]:
    return request.item_id, len(request.messages)


def next_turns(protocol: Protocol, dialogues: list[Dialogue]) -> list[Request]:
    """Each dialogue's first turn its cassette lacks, its earlier turns replayed for the history."""
    models, prompt = protocol.session.models, protocol.prompt
    replay = models.cassette_client(models.http_model(protocol.settings.model), "none")
    wanted = []
    for dialogue in dialogues:
        history: tuple[dict, ...] = ()
        with replay.conversation(prompt.cassette_folder, cassette_id(dialogue)):
            for question in dialogue.turns:
                request = prompt.request(
                    question, item_id=cassette_id(dialogue), history=history, seed=seed_of(dialogue)
                )
                completion = replay.complete(request)
                if completion.outcome.error_kind is ErrorKind.MISS:
                    wanted.append(request)
                if completion.error:  # missing, or a recorded failure its item will meet
                    break
                history = request.messages + ({"role": "assistant", "content": completion.text},)
    return wanted
