"""Calls in flight independent of processes (--eval-concurrency N).

pytest runs one item at a time per process. A Prefetcher lets the running item's call and the
calls of the items queued next in this process run together in a thread pool, up to N at once:
when an item asks, its call has usually been made already and it reads the finished result.

- What runs ahead is the cache-first client's own `complete` (cassettes.CassetteClient): each
  call reads, records and saves its own item's cassette, exactly as it would when its item asks.
  So items, cassettes, records and summaries are those of a sequential run; a killed run has
  saved every finished call, and `--eval-resume` replays them instead of paying again.
- Which items come next: with `-n 0`, the items after the running one in `session.items`; under
  xdist, the indexes the worker has been given (its WorkerInteractor's queue). Nothing else is
  guessed: an item only runs ahead when its request can be built without its answer (a
  ChaosBench question, not a dialogue's later turn).
- The HTTP limiter (providers/http.Limiter) is what bounds the attempts in flight: a 429 lowers
  it, successes raise it back to N; a refused key closes it, so nothing more is sent.
- `may_start` is asked before a call runs ahead: a spent --eval-max-cost budget starts no more,
  so a run overshoots its budget by at most the N calls already started in each process.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from pytest_reasoning_evals.providers.base import Completion, Request


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
        return next((plugin for plugin in self.session.config.pluginmanager.get_plugins()
                     if type(plugin).__name__ == "WorkerInteractor" and hasattr(plugin, "torun")), None)


class Prefetcher:
    """The model as items see it when calls may run ahead: same `complete` and `conversation`."""

    def __init__(self, model, window: int, upcoming: Callable[[], Iterable[Request | None]],
                 may_start: Callable[[], bool] = lambda: True):
        self.model = model  # the cache-first client; each call opens its own item's cassette
        self.window = window  # calls in flight at most, the asking item's included
        self.upcoming = upcoming  # the next items' requests in order (None: an item that cannot run ahead)
        self.may_start = may_start
        self._pool = ThreadPoolExecutor(max_workers=window, thread_name_prefix="eval-call")
        self._ahead: dict[tuple[str, str], tuple[Request, Future]] = {}

    def conversation(self, suite: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return self.model.conversation(suite, item_id)

    def complete(self, request: Request) -> Completion:
        ahead = self._ahead.pop((request.suite, request.item_id), None)
        self._run_ahead()
        if ahead is not None and ahead[0] == request:
            return ahead[1].result()  # re-raises what the call raised (a refused key, say)
        return self.model.complete(request)

    def _run_ahead(self) -> None:
        """Start the calls of the next items, up to `window` - 1 beside the asking item's."""
        if len(self._ahead) >= self.window - 1:
            return
        for request in itertools.islice(self.upcoming(), self.window - 1):
            if request is None or (request.suite, request.item_id) in self._ahead:
                continue
            if len(self._ahead) >= self.window - 1 or not self.may_start():
                return
            self._ahead[(request.suite, request.item_id)] = (request, self._pool.submit(self.model.complete, request))

    def close(self) -> None:
        """The session is over: calls not started are dropped, running ones end at their next
        attempt (what they already got is saved in their cassettes)."""
        self.model.model.limiter.stop()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._ahead.clear()
