"""--eval-batch: before the items run, their first requests that no cassette answers go to the
provider's batch API (every model's batches of a step sent before any is waited for); each reply is
saved as that item's ordinary cassette (through the cassette client, as a live recording would be,
marked as a batch's), so the items then replay them at the batch price, their scores the same with
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
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from urllib3 import HTTPResponse

from pytest_reasoning_evals.batch import (
    BatchClient,
    BatchEntry,
    BatchError,
    BatchHandle,
    BatchLedger,
    BatchResult,
    client_for,
    entry_for,
)
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


@dataclass
class Submitted:
    """One model's requests in the batches its provider accepted, waiting for their replies."""

    alias: str
    mode: str  # the record mode its replies are saved with
    http: object  # the alias's HTTP model
    client: BatchClient
    missing: list[Request]  # the requests no cassette answers, in the run's order
    entries: list[BatchEntry]  # their batch lines
    handles: list[BatchHandle]
    results: dict[str, BatchResult] = field(default_factory=dict)  # filled as each batch ends


def submit(models, alias: str, requests_: list[Request], folder: Path, say, reserved: float = 0.0):
    """The requests no cassette answers and the budget can pay for (`reserved`: what this round's
    earlier batches will cost, estimated) sent in batches: -> (Submitted or None, their estimate)."""
    spec = models.spec(alias)
    mode = models.record_mode_for(spec)
    http = models.http_model(alias)
    replay = models.cassette_client(http, "none")
    rerecord = mode == "rewrite"  # every request is recorded anew
    missing = [r for r in requests_ if rerecord or replay.complete(r).outcome.error_kind is ErrorKind.MISS]
    missing, estimated = within_budget(models, spec, missing, say, reserved)
    if not missing:
        return None, 0.0
    # a poll, a download or a file's deletion is retried as the model's live calls are (--eval-max-retry-wait)
    client = client_for(
        spec.provider, requests.Session(), http.spec.base_url, http.api_key(), BatchLedger(folder), alias, http.policy
    )
    entries = [entry_for(spec, r) for r in missing]  # each request's batch line, built once
    handles = client.submit(entries)
    say(
        f"batch: {len(missing):,} requests in {len(handles)} batch(es) to {spec.provider} ({', '.join(h.batch_id for h in handles)})"
    )
    return Submitted(alias, mode, http, client, missing, entries, handles), estimated


def wait_for(batches: list[Submitted], poll_seconds: float, show: Callable[[str, int], None]) -> None:
    """Poll every batch still running, all of them each period (a round's batches to two providers
    take as long as the slower one, not both), until each has ended and its results are read."""
    pending = [(sub, handle) for sub in batches for handle in sub.handles]
    started = time.monotonic()
    while pending:
        running = []
        for sub, handle in pending:
            status = sub.client.poll(handle)
            if status.ended:
                sub.results |= sub.client.results(handle)
            else:
                running.append((sub, handle, status))
        if not running:
            return
        ids = ", ".join(handle.batch_id for _, handle, _ in running)
        done, total = sum(s.done for *_, s in running), sum(s.total for *_, s in running)
        waited = duration(time.monotonic() - started)
        show(f"batch {ids}: {done:,} of {total:,} done, {waited} waited", done)
        pending = [(sub, handle) for sub, handle, _ in running]
        time.sleep(poll_seconds)


def save_replies(models, sub: Submitted, say: Callable[[str], None]) -> BatchOutcome:
    """Each reply as its request's cassette, paid at the batch price; then the batches are
    forgotten in the ledger and the files they left in the account deleted."""
    replies = {cid: result.body for cid, result in sub.results.items() if result.body is not None}
    recorder = models.cassette_client(BatchAnswers(sub.http, replies), sub.mode)
    answered, cost = 0, 0.0
    for request, entry in zip(sub.missing, sub.entries):
        if entry.custom_id not in replies:
            continue  # failed or expired: its item asks it live
        completion = recorder.complete(request)
        models.budget.ledger.paid(completion, None)
        cost += completion.cost_usd
        answered += 1
    for handle in sub.handles:
        sub.client.ledger.forget(handle)  # its replies are cassettes now
        for problem in sub.client.clean_up(handle):  # the files it left in the account are no longer needed
            say(f"batch: a file of batch {handle.batch_id} is left in the account: {problem}")
    return BatchOutcome(len(sub.missing), answered, len(sub.missing) - answered, cost)


def send_in_batches(session, protocol: str, alias: str, requests_: list[Request], folder: Path) -> BatchOutcome | None:
    """`send_all_in_batches` for one model; None when `alias` replays (nothing is sent)."""
    return send_all_in_batches(session, protocol, {alias: requests_}, folder).get(alias)


def send_all_in_batches(
    session, protocol: str, by_alias: dict[str, list[Request]], folder: Path
) -> dict[str, BatchOutcome]:
    """--eval-batch, before the items run: `protocol`'s requests to each model alias in that
    provider's batches (the run's ledger in `folder`), all sent before any is waited for; what they
    paid counted as the protocol's spend, a line per model saying what came back. A model that
    replays sends nothing and has no outcome."""
    models, say = session.models, say_to(session)
    recording = {a: r for a, r in by_alias.items() if models.record_mode_for(models.spec(a)) != "none"}
    submitted: dict[str, Submitted] = {}
    try:
        reserved = 0.0
        for alias, requests_ in recording.items():
            sub, estimated = submit(models, alias, requests_, folder, say, reserved)
            reserved += estimated
            if sub is not None:
                submitted[alias] = sub
        wait_for(list(submitted.values()), session.settings.batch_poll, progress_to(session))
    except KeyboardInterrupt:
        say(f"batch: interrupted; {kept(models, folder, submitted)}")
        raise
    except BatchError as exc:  # after its retries: the run stops with one line, the batches kept
        say(f"batch: {exc}; the run stopped: {kept(models, folder, submitted)}")
        pytest.exit("a batch call failed (the line above says which and what to do)", pytest.ExitCode.INTERRUPTED)
    outcomes = {}
    for alias in recording:
        done = save_replies(models, submitted[alias], say) if alias in submitted else BatchOutcome(0, 0, 0, 0.0)
        if done.answered:  # what the run paid (run_meta.json); the items' records hold the replies, replayed
            spent = {"live": done.answered, "cassette": 0, "errors": 0, "spent": done.cost_usd}
            session.ledger.add_item(protocol, spent, answered=True)
        say(
            f"batch: {done.answered:,} of {done.sent:,} requests answered (${done.cost_usd:.4f} at the batch price)"
            + (f"; {done.left_live:,} left to their items, asked live" if done.left_live else "")
        )
        outcomes[alias] = done
    return outcomes


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


def within_budget(
    models, spec, requests_: list[Request], say: Callable[[str], None], reserved: float = 0.0
) -> tuple[list[Request], float]:
    """The first requests (in the run's order) whose estimated cost at the batch price (estimate.py)
    fits what is left of --eval-max-cost (less `reserved`, what batches sent with them will cost),
    and their estimated cost; the others the budget leaves out: their items are skipped."""
    from pytest_reasoning_evals.estimate import CallEstimate, Recorded, chars_of, cost

    budget = models.budget
    if budget.max_cost is None:
        return requests_, 0.0
    seen = Recorded.read(models.settings.cassette_dir / spec.alias, spec.provider)
    left, fits, kept = budget.share - budget.ledger.process - reserved, 0, 0.0
    for request in requests_:
        chars = chars_of(request.messages)
        one = cost(CallEstimate(spec.alias, "", request.cassette_folder, chars, request.max_tokens, True), spec, seen)
        if left - one < 0:
            break
        left, kept, fits = left - one, kept + one, fits + 1
    if fits < len(requests_):
        budget.leave_out(requests_[fits:])
        say(
            f"batch: {fits:,} of {len(requests_):,} requests fit the --eval-max-cost budget of ${budget.max_cost:g} "
            f"at the batch price (estimated); the other {len(requests_) - fits:,} are not asked"
        )
    return requests_[:fits], kept


def kept(models, folder: Path, submitted: dict[str, Submitted]) -> str:
    """What a stopped run leaves: the batches it sent keep running (one the provider accepted as the
    stop came is in the ledger too), and how to pick them up or stop them."""
    where = ", ".join(dict.fromkeys(models.spec(a).provider for a in submitted)) or "the provider"
    return (
        f"the batch keeps running on {where}: run the same command again to pick it up "
        f"({BatchLedger(folder).path} holds it), nothing is sent twice; or stop it: {cancel_command(models, folder)}"
    )


def cancel_command(models, folder: Path) -> str:
    """The command that cancels this run's batches (the models file and base URL the run used)."""
    s = models.settings
    more = [f"--models-file {shlex.quote(str(s.models_file))}"] if s.models_file else []
    if s.base_url:
        more.append(f"--base-url {shlex.quote(mask_url(s.base_url))}")
    return " ".join(["reasoning-evals batch cancel", shlex.quote(str(folder)), *more])


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
