"""The models of a run, per process: the registry (read once), the check that must pass before
any item asks anything, and the one call path of each alias that every model call of every
protocol takes (ChaosBench questions and dialogue turns, dialectic responses, judges, resolution
turns and follow-ups):

    HTTP model (requests, retries) -> cassette client (record/replay) -> run-ahead (prefetch.py,
    the model under test while recording with --eval-concurrency > 1) -> StoppingModel (refused
    key, outage) -> BudgetedModel (budget.py: --eval-max-cost, the running item's call counts)

put together in that order by `compose`, the one place that knows it.

Loaded on first use only, so a pytest session that collects no eval item reads no registry.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

import pytest

from pytest_reasoning_evals.budget import Budget, BudgetedModel
from pytest_reasoning_evals.errors import NO_SERVER, OUTAGE, UsageProblem
from pytest_reasoning_evals.options import Settings
from pytest_reasoning_evals.prefetch import ItemQueue, Prefetcher
from pytest_reasoning_evals.providers.base import Completion, ErrorKind, Model, Request

_UNBUILT = object()  # an item whose ahead request is not built yet


class KeyRefused(pytest.fail.Exception):
    """A call refused because the provider refused the key (now or earlier in this process): the
    item fails with this one line (pytest's Failed, no traceback) and the session stops."""


def complete_after(model: Model, request: Request) -> Completion:
    """A call of an item that has already made one: a refused key is this call's failed
    completion, so the item's record keeps what its earlier calls answered and paid (the
    session stops all the same)."""
    try:
        return model.complete(request)
    except KeyRefused as refused:
        return Completion(provider=None, model="", text="", error=str(refused))


OUTAGE_AFTER = 3  # items in a row whose calls failed after all retries: the provider is down


class StoppingModel:
    """The rules that stop a session, once per process and alias for every caller (ChaosBench
    items, the dialectic runner, judges):

    - a refused key: the first 401/403 stops the session (under xdist the worker's shouldstop
      reaches the controller) and later calls fail at once without a request;
    - no server: a refused connection stops the session at once with its one line (the URL, and
      how to start the local model's server): nothing listens there, asking again cannot help;
    - an outage: a connection that cannot be made, or OUTAGE_AFTER calls in a row failing after
      their retries, stops the session with a line naming the outage (the run is incomplete, so
      its gates fail) instead of every item retrying for hours (a malformed response or a
      cassette miss is the item's own failure, not an outage)."""

    def __init__(self, model: Model, session: Callable[[], pytest.Session | None]):
        self.model = model
        self.session = session
        self.refused: str | None = None
        self.failed_in_a_row = 0

    def conversation(self, folder: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return self.model.conversation(folder, item_id)

    def _stop(self, reason: str) -> None:
        session = self.session()
        if session is not None and not session.shouldstop:
            session.shouldstop = " ".join(reason.split())  # one line: a provider's error body may span many

    def complete(self, request: Request) -> Completion:
        from pytest_reasoning_evals.providers.http import AuthError

        if self.refused is None:
            try:
                completion = self.model.complete(request)
            except AuthError as exc:
                self.refused = str(exc)
                self._stop(f"model key refused: {exc}")
            else:
                self._watch(completion)
                return completion
        raise KeyRefused(self.refused, pytrace=False)

    def _watch(self, completion: Completion) -> None:
        """Count calls that failed after their retries; stop the session on an outage."""
        if completion.outcome.unsaved:  # more answers would be paid for and lost
            self._stop(completion.outcome.unsaved)
        error = completion.error
        if not completion.provider_failed():
            self.failed_in_a_row = 0
            return
        self.failed_in_a_row += 1
        if completion.outcome.error_kind is ErrorKind.NOT_LISTENING:
            self._stop(f"{NO_SERVER}: {error}")
        elif completion.outcome.error_kind is ErrorKind.CONNECTION or self.failed_in_a_row >= OUTAGE_AFTER:
            self._stop(
                f"{OUTAGE}: {self.failed_in_a_row} call(s) in a row failed after their retries "
                f"(last: {error}); the run stopped, incomplete"
            )


@dataclass(frozen=True)
class RunAhead:
    """How the calls of the next items run ahead (prefetch.Prefetcher)."""

    window: int  # calls in flight at most (--eval-concurrency)
    upcoming: Callable[[], Iterable[Request | None]]  # the next items' first requests
    may_start: Callable[[float], bool]  # the budget, given what calls made ahead cost that no item claimed


def compose(
    model: Model,
    *,
    session: Callable[[], pytest.Session | None],
    budget: Budget,
    running: Callable[[], pytest.Item | None],
    cassettes: Callable[[Model], Model] | None = None,
    run_ahead: RunAhead | None = None,
) -> tuple[BudgetedModel, Prefetcher | None]:
    """One alias's call path, innermost first: `model` (an HTTP model, or a baseline), its
    `cassettes` client (HTTP models), the run-ahead (an HTTP model's, when given), StoppingModel,
    BudgetedModel. Each layer is handed here what it needs of another (the HTTP limiter, the
    refused key), so none reaches through the one it wraps. -> (the path, its Prefetcher or None)."""
    path = model if cassettes is None else cassettes(model)
    prefetcher = None
    if run_ahead is not None:
        model.allow_concurrency(run_ahead.window)  # before its limiter is handed over: this replaces it
        path = prefetcher = Prefetcher(
            path, run_ahead.window, run_ahead.upcoming, run_ahead.may_start, limiter=model.limiter, cut=model.cut
        )
    stopping = StoppingModel(path, session)
    # a Prefetcher asks the budget itself, counting the calls it made ahead
    budgeted = BudgetedModel(
        stopping, budget, running, asks_budget=prefetcher is None, refused=lambda: stopping.refused
    )
    return budgeted, prefetcher


class Models:
    def __init__(
        self,
        settings: Settings,
        session: Callable[[], pytest.Session | None],
        config: pytest.Config | None = None,
        budget: Budget | None = None,
        running: Callable[[], pytest.Item | None] = lambda: None,
        ahead: Callable[[pytest.Item], Request | None] = lambda item: None,
        planned_cassettes: Callable[[], Iterable[tuple[str, str]]] | None = None,
        run_started_ns: int | None = None,
    ):
        self.settings = settings
        self.run_started_ns = run_started_ns  # a rewrite keeps the cassettes written since (cassettes.py)
        self.session = session
        self.config = config  # its cache folder holds the cassette index
        self.budget = budget or Budget(None, settings.out_dir)
        self.running = running  # the item pytest is running in this process
        self.ahead = ahead  # an item -> the request it will send first, if it can be built before any answer
        self.planned_cassettes = planned_cassettes  # the cassettes this process's items read, in run order
        self._queue: ItemQueue | None = None  # the items this process runs next (calls run ahead)
        # item -> its `ahead` request, built once: the calls running ahead look at the next items
        # each time one of them ends (building their requests again was a fifth of a worker's time at 40)
        self._ahead_requests: dict[pytest.Item, Request | None] = {}
        self._built: dict[str, BudgetedModel] = {}  # alias -> its call path
        self._prefetchers: dict[str, object] = {}  # alias -> its Prefetcher
        self._checked: dict[tuple[str, ...], str | None] = {}

    @functools.cached_property
    def registry(self) -> dict:
        from pytest_reasoning_evals.registry import load_registry

        return load_registry(self.settings.models_file)

    @functools.cached_property
    def judge_panels(self) -> dict[str, list[str]]:
        """Judge panel name -> its model aliases (the models files' `judge_panels:`)."""
        from pytest_reasoning_evals.registry import load_judge_panels

        return load_judge_panels(self.settings.models_file)

    @functools.cached_property
    def cassette_index(self):
        """The parsed cassettes kept between runs (cassette_index.py) in pytest's cache folder, shared
        by this process's models; None without the cache plugin. A cold replay's planned files are
        parsed ahead on a spare core (index_warmer.py)."""
        from pytest_reasoning_evals.cassette_index import CassetteIndex
        from pytest_reasoning_evals.index_warmer import IndexWarmer

        cache = getattr(self.config, "cache", None)
        try:
            folder = cache.mkdir("reasoning-evals") if cache is not None else None
        except OSError:
            folder = None
        if folder is None:
            return None
        return CassetteIndex(folder, planned=self.planned_cassettes, start_warmer=IndexWarmer.start)

    def spec(self, alias: str):
        """The registry entry of `alias`, with what the run's options set on it (--eval-prompt-cache)."""
        from pytest_reasoning_evals.registry import resolve

        spec = resolve(alias, self.registry)
        return replace(spec, prompt_cache=True) if self.settings.prompt_cache else spec

    def record_mode_for(self, spec) -> str:
        """--eval-record-mode, else replay when the model has cassettes and record when it has none."""
        from pytest_reasoning_evals.providers.build import default_record_mode

        return self.settings.record_mode or default_record_mode(spec, self.settings.cassette_dir)

    def base_url_for(self, alias: str) -> str | None:
        """--eval-base-url applies to the model under test only."""
        return self.settings.base_url if alias == self.settings.model else None

    def preflight(self, aliases: tuple[str, ...]) -> None:
        """Raise UsageProblem (the same message every time) unless the output folders can be
        folders and every alias is known and can replay or be called (a base URL; a key set and
        well-formed): checked once, before any item asks anything."""
        if aliases not in self._checked:
            from pytest_reasoning_evals.options import directory_problem
            from pytest_reasoning_evals.providers.build import AuthError, check_can_run
            from pytest_reasoning_evals.registry import RegistryError

            s = self.settings
            folders = (("--eval-out-dir", s.out_dir), ("--eval-cassette-dir", s.cassette_dir))  # the defaults too
            problems = [
                f"{flag} {folder}: {problem}" for flag, folder in folders if (problem := directory_problem(folder))
            ]
            try:
                for alias in aliases:
                    spec = self.spec(alias)
                    if s.estimate:
                        continue  # an estimate calls nothing: a key and a cassette folder are not needed yet
                    check_can_run(spec, s.cassette_dir, self.record_mode_for(spec), self.base_url_for(alias))
                    if spec.provider != "baseline" and self.record_mode_for(spec) != "none":
                        from pytest_reasoning_evals.cassettes import save_problem  # a recording must be saved

                        if problem := save_problem(s.cassette_dir / spec.alias):
                            problems.append(f"--eval-cassette-dir {s.cassette_dir}: {problem}")
            except (RegistryError, AuthError) as exc:
                problems.append(str(exc))
            self._checked[aliases] = problems[0] if problems else None
        if self._checked[aliases] is not None:
            raise UsageProblem(self._checked[aliases])

    def get(self, alias: str) -> BudgetedModel:
        """The call path of `alias`, built once per process and shared by every caller;
        --eval-base-url applies to the model under test. While the model under test records, up to
        --eval-concurrency calls run ahead for the items this process runs next (prefetch.py)."""
        if alias not in self._built:
            s = self.settings
            spec = self.spec(alias)
            record_mode = self.record_mode_for(spec)
            model = self.http_model(alias)
            http = spec.provider != "baseline"
            # the requests protocols build ahead are the model under test's
            ahead = alias == s.model and s.concurrency > 1 and record_mode != "none" and http
            self._built[alias], prefetcher = compose(
                model,
                session=self.session,
                budget=self.budget,
                running=self.running,
                cassettes=self._cassettes(record_mode) if http else None,
                run_ahead=RunAhead(s.concurrency, self._upcoming, self._may_start) if ahead else None,
            )
            if prefetcher is not None:
                self._prefetchers[alias] = prefetcher
        return self._built[alias]

    def http_model(self, alias: str):
        """The model of `alias` itself (an HTTP model, or a baseline's fixed answers), without its layers."""
        from pytest_reasoning_evals.providers.build import build_model
        from pytest_reasoning_evals.providers.http import RetryPolicy

        s = self.settings
        policy = RetryPolicy(max_total_wait=s.max_retry_wait)
        return build_model(self.spec(alias), seed=s.seed, base_url=self.base_url_for(alias), policy=policy)

    def cassette_client(self, model: Model, record_mode: str) -> Model:
        """The cassette client around an HTTP model, its files read through the index."""
        from pytest_reasoning_evals.cassettes import CassetteClient  # vcrpy is imported only for HTTP models

        return CassetteClient(
            model, self.settings.cassette_dir, record_mode, self.cassette_index, run_started_ns=self.run_started_ns
        )

    def _cassettes(self, record_mode: str) -> Callable[[Model], Model]:
        return lambda model: self.cassette_client(model, record_mode)

    def _may_start(self, unclaimed: float) -> bool:
        return not self.budget.exhausted(unclaimed)

    def _upcoming(self) -> Iterator[Request | None]:
        """The first requests of the items this process runs next, in order (None: an item whose
        first request needs an answer)."""
        if self._queue is None:
            self._queue = ItemQueue(self.session())
        running = self.running()
        # the running item's request is asked now: no later look ahead needs it
        self._ahead_requests.pop(running, None)
        for item in self._queue.after(running):
            request = self._ahead_requests.get(item, _UNBUILT)
            if request is _UNBUILT:
                request = self._ahead_requests[item] = self.ahead(item)
            # a request the budget left out of a batch is not asked ahead either
            yield None if request is not None and self.budget.refuses(request) else request

    def close(self, interrupted: bool = False) -> dict[str, float]:
        """The session is over: calls still waiting to run ahead are dropped (`interrupted`: the
        ones on the wire are cut), a child still warming the index stops, and the cassette index
        writes what it has not written yet. Returns, per alias, what its calls made ahead paid for
        items that never took them."""
        unclaimed = {alias: prefetcher.close(cut=interrupted) for alias, prefetcher in self._prefetchers.items()}
        if self.__dict__.get("cassette_index") is not None:
            self.cassette_index.close()
        return {alias: cost for alias, cost in unclaimed.items() if cost}
