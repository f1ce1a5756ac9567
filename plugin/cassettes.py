"""Cache-first model client: every HTTP model call is recorded to / replayed from one vcrpy
cassette per item, at cassettes/<model>/<suite>/<item-id>.yaml (SPEC 4).

- Matching: method, scheme, host, path, query and the parsed JSON body; never the port, so a
  local server may move.
- Scrubbing: key headers and the `key` query parameter on requests; cookies, request ids,
  organisation ids and rate-limit headers on responses; non-2xx responses are never recorded.
- A replay miss is a failed call of that item (counted as an error, not a crash) whose error is
  one line naming the item, what differs and the file.

Recording goes through vcrpy's HTTP patching. Replay (record mode "none") does not need it:
the item's cassette is loaded with vcrpy and served to `requests` by a transport adapter, with
vcrpy's own matchers and filters. Same files, same matching, none of the per-call patching
and connection set-up that made vcrpy's replay cost ~4 ms per item (benchmarks/).
"""

from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Iterator
from pathlib import Path

import requests
import urllib3
import vcr
from vcr.cassette import Cassette
from vcr.errors import CannotOverwriteExistingCassetteException, UnhandledHTTPRequestError
from vcr.request import Request as VcrRequest

from pytest_reasoning_evals.providers.base import MISS, Completion, Request
from pytest_reasoning_evals.providers.http import LATENCY_HEADER, HttpModel

MATCH_ON = ("method", "scheme", "host", "path", "query", "body")
SECRET_REQUEST_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie")
SECRET_QUERY_PARAMETERS = ("key", "api_key")
# Response headers that identify an account or a request, or change on every call.
DROPPED_RESPONSE_HEADER_PREFIXES = ("set-cookie", "x-request-id", "request-id", "openai-organization",
                                    "anthropic-organization", "x-ratelimit", "anthropic-ratelimit",
                                    "openai-project", "cf-ray", "x-goog", "date", "server-timing",
                                    "openai-processing-ms", "alt-svc")


def _scrub_response(response: dict) -> dict | None:
    if not 200 <= response["status"]["code"] < 300:
        return None  # a failure must be retried live next time, never replayed
    response["headers"] = {
        name: value
        for name, value in response["headers"].items()
        if not name.lower().startswith(DROPPED_RESPONSE_HEADER_PREFIXES)
    }
    return response


# Every cassette entry makes vcrpy (re)build patches for each HTTP library it knows; for the
# ones not installed that means a failed import per cassette (about 3 ms here). We only speak
# `requests`, so vcrpy versions that can skip patchers (>= 9.4) skip the rest.
UNUSED_PATCHERS = ("boto3", "httplib2", "tornado", "aiohttp", "httpx", "httpx2")
_SKIP = (
    {"skip_patchers": UNUSED_PATCHERS} if "skip_patchers" in inspect.signature(vcr.VCR).parameters else {}
)


def make_vcr(record_mode: str) -> vcr.VCR:
    return vcr.VCR(
        **_SKIP,
        # "rewrite" (as pytest-recording has it): the old file is deleted, then recorded anew
        record_mode="new_episodes" if record_mode == "rewrite" else record_mode,
        match_on=MATCH_ON,
        filter_headers=SECRET_REQUEST_HEADERS,
        filter_query_parameters=SECRET_QUERY_PARAMETERS,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
        serializer="yaml",
        record_on_exception=False,
    )


class ReplayAdapter(requests.adapters.HTTPAdapter):
    """A requests transport that answers from one loaded cassette and never opens a socket."""

    def __init__(self) -> None:
        super().__init__()
        self.cassette: Cassette | None = None  # set before each call

    def send(self, request: requests.PreparedRequest, **kwargs) -> requests.Response:
        wanted = VcrRequest(request.method, request.url, request.body, dict(request.headers))
        try:
            recorded = self.cassette.play_response(wanted)  # one matching pass, not two
        except UnhandledHTTPRequestError:
            raise CannotOverwriteExistingCassetteException(cassette=self.cassette, failed_request=wanted) from None
        body = recorded["body"]["string"]
        headers = {name: ", ".join(v) if isinstance(v, list) else v for name, v in recorded["headers"].items()}
        raw = urllib3.HTTPResponse(
            body=io.BytesIO(body.encode("utf-8") if isinstance(body, str) else body),
            headers=headers,
            status=recorded["status"]["code"],
            reason=recorded["status"]["message"],
            preload_content=False,
            decode_content=False,
        )
        return self.build_response(request, raw)


def cassette_path(root: Path, model_alias: str, suite: str, item_id: str) -> Path:
    return root / model_alias / suite / f"{item_id}.yaml"


class CassetteClient:
    """Wraps an HttpModel: each `complete` runs inside the item's cassette; inside
    `conversation(suite, item_id)` every call shares that item's one cassette."""

    def __init__(self, model: HttpModel, root: Path, record_mode: str):
        self.model = model
        self.root = root
        self.record_mode = record_mode
        self._vcr = make_vcr(record_mode)
        self._rewritten: set[Path] = set()  # rewrite deletes a cassette once per run, not per call
        self._replay = ReplayAdapter() if record_mode == "none" else None
        self._cassette_config: dict | None = None
        self._open: tuple[Path, Cassette] | None = None  # the conversation's cassette
        if self._replay is not None:
            for prefix in ("http://", "https://"):
                model.http.mount(prefix, self._replay)
            model.http.trust_env = False  # nothing leaves the process: skip proxy/netrc lookups

    def path_for(self, request: Request) -> Path:
        return cassette_path(self.root, self.model.spec.alias, request.suite, request.item_id)

    @contextlib.contextmanager
    def conversation(self, suite: str, item_id: str) -> Iterator[None]:
        path = cassette_path(self.root, self.model.spec.alias, suite, item_id)
        stopped: BaseException | None = None
        # A dialogue's cassette grows turn by turn and is saved after each one; "once" would
        # refuse the turns after a crash, so a conversation records missing turns into it.
        grow = {"record_mode": "new_episodes"} if self.record_mode == "once" else {}
        with self._cassette(path, **grow) as cassette:
            self._open = (path, cassette)
            try:
                yield
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                # A stop mid-dialogue (budget, refused key, crash of a later turn) still saves
                # the turns already answered: a resumed run replays them instead of paying again.
                stopped = exc
            finally:
                self._open = None
        if stopped is not None:
            raise stopped

    def complete(self, request: Request) -> Completion:
        path = self.path_for(request)
        try:
            if self._open is not None and self._open[0] == path:
                completion = self._call(self._open[1], request)
            else:
                with self._cassette(path) as cassette:
                    completion = self._call(cassette, request)
        except CannotOverwriteExistingCassetteException as exc:
            # a failed call of this item (one line, counted as an error), not a harness crash
            return self.model.failed(self._miss_message(request, path, exc))
        completion.extra["cassette"] = path.relative_to(self.root).as_posix()
        return completion

    @contextlib.contextmanager
    def _cassette(self, path: Path, **overrides) -> Iterator[Cassette]:
        """Replay: the loaded file. Recording: vcrpy's patched context, saved on exit."""
        if self.record_mode == "rewrite" and path not in self._rewritten:
            path.unlink(missing_ok=True)
            self._rewritten.add(path)
        if self._replay is not None:
            yield self._load(path)
        else:
            # vcrpy creates a missing folder without exist_ok: two xdist workers saving their first
            # cassettes of a suite at once would race, so the folder exists before vcrpy looks.
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._vcr.use_cassette(str(path), **overrides) as cassette:
                yield cassette

    def _call(self, cassette: Cassette, request: Request) -> Completion:
        if self._replay is not None:
            self._replay.cassette = cassette
            # Replays need no key: nothing is sent, and keys are not matched on.
            completion = self.model.complete(request, key="replay")
            completion.extra["cassette_hit"] = True
            return completion
        recorded_before, played_before = len(cassette.data), cassette.play_count
        completion = self.model.complete(request)
        if len(cassette.data) > recorded_before:
            # Keep the live latency so replays report what was measured.
            cassette.data[-1][1]["headers"][LATENCY_HEADER] = [str(completion.latency_ms)]
            if self._open is not None:
                # Within a conversation, save every paid turn at once: a killed run must not
                # lose (and pay again for) the turns before the kill. vcrpy has no public
                # save-now call; _save is what its own context exit calls.
                cassette._save(force=True)
        completion.extra["cassette_hit"] = cassette.play_count > played_before
        return completion

    def _load(self, path: Path) -> Cassette:
        if self._cassette_config is None:  # the same matchers and filters for every item
            accepted = inspect.signature(Cassette).parameters
            config = self._vcr.get_merged_config()
            self._cassette_config = {k: v for k, v in config.items() if k in accepted and k != "path"}
        return Cassette.load(path=str(path), **self._cassette_config)

    def _miss_message(self, request: Request, path: Path, exc: Exception) -> str:
        """One line: the item, what differs from the recording, the file. How to record the
        misses is said once, in the run's summary block (see chaosbench/report.py)."""
        if not path.exists():
            what = "no cassette file"
        else:
            what = "the cassette has no matching request"
            cassette, wanted = getattr(exc, "cassette", None), getattr(exc, "failed_request", None)
            closest = cassette.find_requests_with_most_matches(wanted) if cassette is not None and wanted is not None else []
            if closest:
                what += f" (differs in: {', '.join(name for name, _ in closest[0][2])})"
        return f"{MISS} for item {request.item_id!r}: {what}: {path}"
