"""--eval-batch: before the items run, their first requests that no cassette answers go to the
provider's batch API; each reply is saved as that item's ordinary cassette (through the cassette
client, as a live recording would be), so the items then replay them, and a replay is the same with
or without batching (docs/batch.md, "A run with --eval-batch").

The batches are in the run directory's batch.json from the moment the provider accepts them: a run
started again finds them there and polls them instead of sending the requests again. A request the
batch did not answer (failed, expired) is left to its item, which asks it live. What a batch paid
(at the batch price) is the run's spend: counted live, in no item's record.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests
from urllib3 import HTTPResponse

from pytest_reasoning_evals.batch import BatchLedger, BatchResult, client_for, entry_for
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.progress import duration, write_own_line
from pytest_reasoning_evals.providers.base import Completion, ErrorKind, Request, mask_url
from pytest_reasoning_evals.providers.http import BATCH_HEADER

PROVIDERS = ("openai", "anthropic", "gemini")  # the wire formats whose batch API is wired in
QUIET = 300.0  # seconds between two waiting lines of the same count in a log


@dataclass
class BatchOutcome:
    sent: int  # requests the batches carried (or already carried, for a run started again)
    answered: int  # replies saved as cassettes
    left_live: int  # requests the batch did not answer: their items ask them live
    cost_usd: float  # what the replies cost at the batch price


class BatchAnswers:
    """The HTTP model under a cassette client whose `exchange` answers from the batch's replies
    (at the batch price) instead of sending the request; everything else is the model's own. Each
    reply's response carries BATCH_HEADER (the provider), which its cassette keeps: a replay prices
    it at the batch price too, with the same function (registry.batch_cost, through the model's
    completion_from), so what the run paid and its summary agree."""

    def __init__(self, model, replies: dict[str, dict]):
        self.model = model
        self.spec = model.spec
        self.replies = replies  # custom_id -> the provider's ordinary reply body

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def exchange(self, request: Request) -> tuple[Completion, requests.Response | None]:
        body = self.replies[entry_for(self.spec, request).custom_id]
        call = self.model.call_for(request, None)  # a batch line carries no key; the cassette keeps none
        sent = requests.Request("POST", call.url, headers=dict(call.headers), data=json.dumps(call.body).encode())
        raw = json.dumps(body).encode()
        response = requests.Response()
        response.status_code, response.reason, response._content = 200, "OK", raw
        headers = {"Content-Type": "application/json", BATCH_HEADER: self.spec.provider}
        response.raw = HTTPResponse(body=b"", headers=headers, status=200)
        response.request = sent.prepare()
        return self.model.completion_from(raw, None, 0.0, batch=True), response


def answer_by_batch(
    models,
    alias: str,
    requests_: list[Request],
    folder: Path,
    poll_seconds: float,
    say: Callable[[str], None],
    show: Callable[[str, int], None],
) -> BatchOutcome:
    """Send the requests no cassette answers in batches, wait for them, save each reply as its item's cassette."""
    spec = models.spec(alias)
    mode = models.record_mode_for(spec)
    http = models.http_model(alias)
    replay = models.cassette_client(http, "none")
    rerecord = mode == "rewrite"  # every request is recorded anew
    missing = [r for r in requests_ if rerecord or replay.complete(r).outcome.error_kind is ErrorKind.MISS]
    missing = within_budget(models, spec, missing, say)
    if not missing:
        return BatchOutcome(0, 0, 0, 0.0)
    client = client_for(
        spec.provider, requests.Session(), http.spec.base_url, http.api_key(), BatchLedger(folder), alias
    )
    entries = [entry_for(spec, r) for r in missing]  # each request's batch line, built once
    handles = client.submit(entries)
    say(
        f"batch: {len(missing):,} requests in {len(handles)} batch(es) to {spec.provider} ({', '.join(h.batch_id for h in handles)})"
    )
    results: dict[str, BatchResult] = {}
    try:
        for handle in handles:
            results |= _wait(client, handle, poll_seconds, show)
    except KeyboardInterrupt:
        say(
            f"batch: interrupted; the batch keeps running on {spec.provider}: run the same command again to pick "
            f"it up ({client.ledger.path} holds it), nothing is sent twice; or stop it: {cancel_command(models, folder)}"
        )
        raise
    replies = {cid: result.body for cid, result in results.items() if result.body is not None}
    recorder = models.cassette_client(BatchAnswers(http, replies), mode)
    answered, cost = 0, 0.0
    for request, entry in zip(missing, entries):
        if entry.custom_id not in replies:
            continue  # failed or expired: its item asks it live
        completion = recorder.complete(request)
        models.budget.ledger.paid(completion, None)
        cost += completion.cost_usd
        answered += 1
    for handle in handles:
        client.ledger.forget(handle)  # its replies are cassettes now
        for problem in client.clean_up(handle):  # the files it left in the account are no longer needed
            say(f"batch: a file of batch {handle.batch_id} is left in the account: {problem}")
    return BatchOutcome(len(missing), answered, len(missing) - answered, cost)


def send_in_batches(session, protocol: str, alias: str, requests_: list[Request], folder: Path) -> BatchOutcome | None:
    """--eval-batch, before the items run: `protocol`'s `requests_` to `alias` by answer_by_batch (the
    run's ledger in `folder`), what the batch paid counted as the protocol's spend, a line saying what
    came back; None when `alias` replays (nothing is sent)."""
    models = session.models
    if models.record_mode_for(models.spec(alias)) == "none":
        return None
    say = say_to(session)
    done = answer_by_batch(models, alias, requests_, folder, session.settings.batch_poll, say, progress_to(session))
    if done.answered:  # what the run paid (run_meta.json); the items' records hold the replies, replayed
        spent = {"live": done.answered, "cassette": 0, "errors": 0, "spent": done.cost_usd}
        session.ledger.add_item(protocol, spent, answered=True)
    say(
        f"batch: {done.answered:,} of {done.sent:,} requests answered (${done.cost_usd:.4f} at the batch price)"
        + (f"; {done.left_live:,} left to their items, asked live" if done.left_live else "")
    )
    return done


def say_to(session) -> Callable[[str], None]:
    """A line of its own on the terminal (after a waiting line rewritten in place, on a line below it)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    return lambda text: write_own_line(reporter, text)


def check_provider(models, alias: str) -> None:
    """--eval-batch needs a model whose provider's batch API is wired in: a usage error otherwise."""
    provider = models.spec(alias).provider
    if provider not in PROVIDERS:
        raise UsageProblem(
            f"--eval-batch: model {alias!r} is of provider {provider!r}, "
            f"whose batch API is not wired in (only {', '.join(PROVIDERS)})"
        )


def within_budget(models, spec, requests_: list[Request], say: Callable[[str], None]) -> list[Request]:
    """The first requests (in the run's order) whose estimated cost at the batch price (estimate.py)
    fits what is left of --eval-max-cost; the others the budget leaves out: their items are skipped."""
    from pytest_reasoning_evals.estimate import CallEstimate, Recorded, chars_of, cost

    budget = models.budget
    if budget.max_cost is None:
        return requests_
    seen = Recorded.read(models.settings.cassette_dir / spec.alias, spec.provider)
    left, fits = budget.share - budget.ledger.process, 0
    for request in requests_:
        chars = chars_of(request.messages)
        left -= cost(CallEstimate(spec.alias, "", request.cassette_folder, chars, request.max_tokens, True), spec, seen)
        if left < 0:
            break
        fits += 1
    if fits < len(requests_):
        budget.leave_out(requests_[fits:])
        say(
            f"batch: {fits:,} of {len(requests_):,} requests fit the --eval-max-cost budget of ${budget.max_cost:g} "
            f"at the batch price (estimated); the other {len(requests_) - fits:,} are not asked"
        )
    return requests_[:fits]


def cancel_command(models, folder: Path) -> str:
    """The command that cancels this run's batches (the models file and base URL the run used)."""
    s = models.settings
    more = [f"--models-file {shlex.quote(str(s.models_file))}"] if s.models_file else []
    if s.base_url:
        more.append(f"--base-url {shlex.quote(mask_url(s.base_url))}")
    return " ".join(["reasoning-evals batch cancel", shlex.quote(str(folder)), *more])


def _wait(client, handle, poll_seconds: float, show: Callable[[str, int], None]) -> dict[str, BatchResult]:
    started = time.monotonic()
    while True:
        status = client.poll(handle)
        if status.ended:
            return client.results(handle)
        elapsed = time.monotonic() - started
        show(
            f"batch {handle.batch_id}: {status.done:,} of {status.total:,} done, {duration(elapsed)} waited",
            status.done,
        )
        time.sleep(poll_seconds)


def progress_to(session) -> Callable[[str, int], None]:
    """The waiting line of a batch, given its text and its count done: on a terminal rewritten in place
    at each poll; in a log printed when the count moved, else every QUIET seconds (a 24-hour batch
    polled every 30 s would print 2,880 lines)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter.isatty:
        return lambda text, done: reporter.rewrite(text, erase=True)
    last: dict[str, float] = {}

    def show(text: str, done: int) -> None:
        now = time.monotonic()
        if last.get("done") != done or now - last.get("at", now) >= QUIET:
            last.update(done=done, at=now)
            reporter.write_line(text)

    return show
