"""Calls in flight independent of processes (--eval-concurrency N): the running item's call and
the calls of the items queued next run in a pool of N threads, each through the cassette client
(docs/design.md, "One call pipeline")."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals.providers.base import Completion, NotAdmitted, Request

if TYPE_CHECKING:
    from pytest_reasoning_evals.providers.http import Limiter

CUT_AFTER = 10.0  # seconds an interrupted run waits for its calls on the wire before it cuts them


class ItemQueue:
    """The items this process will run after a given one, in order (as far as it knows them)."""

    def __init__(self, session: pytest.Session):
        self.session = session
        self._position: dict[int, int] | None = None  # -n 0: id(item) -> its index in session.items
        self._worker = None  # under xdist: the worker's WorkerInteractor, found on first use

    def after(self, current: pytest.Item | None) -> Iterator[pytest.Item]:
        items = self.session.items
        config = self.session.config
        if hasattr(config, "workerinput"):  # an xdist worker: only what the controller gave this worker
            interactor = self._worker = self._worker or self._interactor()
            if interactor is None:
                return  # an xdist this code does not know: nothing runs ahead (never another worker's item)
            queue = interactor.torun
            lock = getattr(queue, "lock", None)  # xdist >= 3.6: a queue with a lock; before: a deque
            with lock() if lock is not None else contextlib.nullcontext(queue) as indexes:
                indexes = [getattr(interactor, "nextitem_index", None), *indexes]
            yield from (items[i] for i in indexes if isinstance(i, int))
            return
        if self._position is None:
            self._position = {id(item): index for index, item in enumerate(items)}
        start = self._position.get(id(current))
        if start is not None:
            yield from itertools.islice(items, start + 1, None)

    def _interactor(self):
        """xdist's WorkerInteractor: it registers itself without a name, so it is found by kind."""
        return next(
            (
                plugin
                for plugin in self.session.config.pluginmanager.get_plugins()
                if type(plugin).__name__ == "WorkerInteractor" and hasattr(plugin, "torun")
            ),
            None,
        )


class Prefetcher:
    """The model as items see it when calls may run ahead: same `complete` and `conversation`.

    Every call runs in a pool of `window` threads (the HTTP limiter lets as many requests be
    out), the asking item's own included: a call is paid for once its request is answered and
    safe once its cassette is saved, and no more than `window` calls are in between. A call
    made ahead sends nothing once `may_start` says no: the budget, counting what this process's
    requests have cost that no item has claimed yet (the limiter counts a reply's cost before
    its slot is free). So a run overshoots its budget by at most the `window` requests out in
    each process."""

    HORIZON = 4  # items looked at ahead of the asking one: at most this many windows

    def __init__(
        self,
        model,
        window: int,
        upcoming: Callable[[], Iterable[Request | None]],
        may_start: Callable[[float], bool] = lambda unclaimed: True,
        *,
        limiter: Limiter,
        cut: Callable[[], None],
    ):
        self.model = model  # the cache-first client; each call opens its own item's cassette
        self._cut = cut  # the HTTP model's: ends its calls on the wire
        self.window = window
        self.upcoming = upcoming  # the next items' requests in order (None: an item that cannot run ahead)
        self.may_start = may_start
        self._pool = ThreadPoolExecutor(max_workers=window, thread_name_prefix="eval-call")
        self._ahead: dict[tuple[str, str], tuple[Request, Future]] = {}
        # the futures of _ahead still running, kept by their own ends: scanning _ahead (up to
        # HORIZON windows of finished calls) at every end cost a worker a tenth of its time at 40 in flight
        self._live: set[Future] = set()
        self._limiter = limiter  # the HTTP model's: its requests out, and what they cost
        self._claimed = 0.0  # live cost handed to items whose budget has charged it
        self._handed = 0.0  # ... and of the last one handed out: charged once its item is over
        self._failing = False  # the latest call failed after its retries: nothing runs ahead
        # the asking item's call until it is handed over (an interrupt may come first)
        self._asking: Future | None = None
        self._unused: list[Future] = []  # calls made ahead no item took
        # (cassette folder, item id) of the requests items asked: several items may share one (a dialectic response)
        self._asked: set[tuple[str, str]] = set()
        self._limiter.admit = self._admit  # asked before each request is sent

    def conversation(self, folder: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return self.model.conversation(folder, item_id)

    def complete(self, request: Request) -> Completion:
        self._claimed, self._handed = self._claimed + self._handed, 0.0  # the caller has charged it by now
        self._asked.add((request.cassette_folder, request.item_id))
        ahead = self._ahead.pop((request.cassette_folder, request.item_id), None)
        if ahead is not None:
            self._live.discard(ahead[1])
        future = ahead[1] if ahead is not None and ahead[0] == request else None
        if ahead is not None and future is None:
            self._unused.append(ahead[1])  # made for a request the item no longer sends: paid all the same
        if future is not None:
            self._asking = future
            self._wait(future)
            if isinstance(future.exception(), NotAdmitted):  # refused when it ran ahead: asked again now
                future = None
        if future is None:
            if not self.may_start(self._unclaimed()):
                raise NotAdmitted()
            # in the pool like every call: at most `window` calls are paid for and not yet saved
            future = self._asking = self._pool.submit(self._fetch, request)
            self._wait(future)
        self._asking = None
        return self._hand(future.result())  # re-raises what the call raised (a refused key, say)

    def _wait(self, future: Future) -> None:
        self._run_ahead()
        while not future.done():  # each call that finishes meanwhile lets the next one start
            wait([future, *self._running()], return_when=FIRST_COMPLETED)
            self._run_ahead()

    def _hand(self, completion: Completion) -> Completion:
        self._handed = completion.cost_usd if completion.outcome.hit is False else 0.0
        return completion

    def _unclaimed(self) -> float:
        """What this process's requests cost that its items' budget has not charged yet
        (counted twice for a moment, never missed)."""
        return max(0.0, self._limiter.paid - self._claimed)

    def _admit(self) -> bool:
        return self.may_start(self._unclaimed())

    def _fetch(self, request: Request) -> Completion:
        completion = self.model.complete(request)
        self._failing = completion.provider_failed()
        return completion

    def _running(self) -> list[Future]:
        # a copy made holding the GIL: the pool's threads discard from the set as calls end
        return list(self._live)

    def _run_ahead(self) -> None:
        """Start the calls of the next items while fewer than `window` run."""
        running = len(self._running())
        if running >= self.window or self._failing:  # a failing provider is asked one item at a time
            return
        for request in itertools.islice(self.upcoming(), self.HORIZON * self.window):
            if running >= self.window or not self.may_start(self._unclaimed()):
                return
            key = None if request is None else (request.cassette_folder, request.item_id)
            if key is None or key in self._ahead or key in self._asked:
                continue
            future = self._pool.submit(self._fetch, request)
            self._ahead[key] = (request, future)
            self._live.add(future)
            future.add_done_callback(self._live.discard)
            running += 1

    def close(self, cut: bool = False) -> float:
        """The session is over: calls not started are dropped, running ones end at their next
        attempt (what they already got is saved in their cassettes), or, when `cut` (an interrupted
        session: Ctrl-C, or a stop such as an outage or a refused key), after at most CUT_AFTER
        seconds. Returns what the live calls that finished and reached no item cost (the run
        stopped first): paid, and in no record."""
        self._limiter.stop()
        if cut:  # what answers within the grace is paid: saved, so a resume does not pay for it again
            wait([*self._running(), *filter(None, [self._asking])], timeout=CUT_AFTER)
            self._cut()
        self._pool.shutdown(wait=True, cancel_futures=True)
        futures = [*self._unused, *(future for _, future in self._ahead.values()), *filter(None, [self._asking])]
        self._ahead.clear()
        self._live.clear()
        self._unused.clear()
        self._asking = None
        return sum(_live_cost(future) for future in futures)


def _live_cost(future: Future) -> float:
    """What a finished call cost when it was made now (a replay costs nothing; a call that raised
    or never ran, nothing)."""
    if future.cancelled() or future.exception() is not None:
        return 0.0
    completion = future.result()
    return completion.cost_usd if completion.outcome.hit is False else 0.0
