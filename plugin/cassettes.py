"""Cache-first model client: every HTTP model call is recorded to / replayed from one vcrpy
cassette per item, at cassettes/<model>/<suite>/<item-id>.yaml (SPEC 4).

- Matching: method, scheme, host, path, query and the parsed JSON body; never the port, so a
  local server may move.
- Scrubbing: key headers and the `key` query parameter on requests; cookies, request ids,
  organisation ids and rate-limit headers on responses; non-2xx responses are never recorded.
- Only a response that parsed into a completion is recorded: a 2xx whose (decoded) body the
  model's wire format cannot read (HTML, truncated JSON, missing or empty answer lists, a body
  that does not decompress) is refused, and so is any response of a call that ended in an error;
  that item fails once and the next recording run asks it again.
- A replay miss is a failed call of that item (counted as an error, not a crash) whose error is
  one line naming the item, what differs and the file.
- Saves are atomic: a temp file beside the cassette, then a rename, so a kill mid-save (a
  dialogue's cassette is saved after every turn) leaves the previous cassette whole. "rewrite"
  never deletes first: the old cassette is replaced only when the item's calls all succeeded.
- A cassette that cannot be read (truncated, not YAML, missing or mistyped fields, a recorded
  body that is not a completion) is that item's one-line miss naming the file; a recording run
  (record mode once / new_episodes / rewrite) records the item anew and replaces the file.

Recording goes through vcrpy's HTTP patching. Replay (record mode "none") needs no HTTP at all
(class Replay): the item's cassette file is read and checked once, the request the model would
send is matched with vcrpy's own matchers and query filter, and the recorded body is read by the
model's own wire format. Same files, same matching, none of the per-call patching, copying and
transport set-up that made a replayed call cost ~1.3 ms (benchmarks/replay_throughput.py).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import vcr
import yaml
from vcr.cassette import Cassette
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.filters import decode_response, remove_query_parameters
from vcr.matchers import get_matchers_results, requests_match
from vcr.persisters.filesystem import CassetteNotFoundError
from vcr.request import Request as VcrRequest
from vcr.serialize import serialize
from vcr.serializers import compat
from vcr.serializers import yamlserializer as YAML

from pytest_reasoning_evals.providers.base import MISS, Completion, Request
from pytest_reasoning_evals.providers.http import LATENCY_HEADER, HttpModel
from pytest_reasoning_evals.results import replacing

MATCH_ON = ("method", "scheme", "host", "path", "query", "body")
SECRET_REQUEST_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie")
SECRET_QUERY_PARAMETERS = ("key", "api_key")
# Response headers that identify an account or a request, or change on every call.
DROPPED_RESPONSE_HEADER_PREFIXES = ("set-cookie", "x-request-id", "request-id", "openai-organization",
                                    "anthropic-organization", "x-ratelimit", "anthropic-ratelimit",
                                    "openai-project", "cf-ray", "x-goog", "date", "server-timing",
                                    "openai-processing-ms", "alt-svc")


RERECORD = "--eval-record-mode=once records it anew"  # ends the miss of an unreadable cassette


def _scrub_headers(response: dict) -> dict:
    response["headers"] = {
        name: value
        for name, value in response["headers"].items()
        if not name.lower().startswith(DROPPED_RESPONSE_HEADER_PREFIXES)
    }
    return response


def _one_line(exc: BaseException, limit: int = 120) -> str:
    text = " ".join(str(exc).split())
    text = f"{exc.__class__.__name__}: {text}" if text else exc.__class__.__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _decoded(response: dict) -> dict:
    """The response with its body decompressed (vcrpy's filter, which copies the whole response:
    only called when there is something to decompress)."""
    if any(name.lower() == "content-encoding" for name in response["headers"]):
        return decode_response(response)
    return response


def completion_problem(response: dict, parse: Callable[[dict], object]) -> str | None:
    """Why a 2xx response (as vcrpy holds it) is not a completion that `parse`, the model's wire
    format, can read; None when it is one."""
    try:
        body = _decoded(response)["body"]["string"]
    except Exception as exc:  # noqa: BLE001 - zlib/brotli errors, mistyped bodies
        return f"not a completion: its body cannot be decoded ({_one_line(exc)})"
    try:
        data = json.loads(body)
    except (ValueError, TypeError) as exc:
        return f"not a completion: not JSON ({exc.__class__.__name__})"
    try:
        parsed = parse(data)
    except Exception as exc:  # noqa: BLE001 - whatever the parser trips over, the body is unusable
        return f"not a completion ({_one_line(exc)})"
    if not isinstance(getattr(parsed, "text", None), str):
        return "not a completion: its text is not a string"
    return None


# --- reading and writing cassette files ---


class UnreadableCassette(ValueError):
    """A cassette file that exists but cannot be replayed; the message says why, in a few words."""


def _is_text_list(value) -> bool:
    return isinstance(value, str) or isinstance(value, list) and all(isinstance(v, str) for v in value)


def _request_problem(request) -> str | None:
    if not isinstance(request, dict):
        return "its request is not a mapping"
    if set(request) - {"method", "uri", "body", "headers"}:
        return f"its request has unknown fields {sorted(set(request) - {'method', 'uri', 'body', 'headers'})}"
    for key in ("method", "uri"):
        if not isinstance(request.get(key), str):
            return f"its request has no {key}"
    if not isinstance(request.get("headers"), dict) or not all(map(_is_text_list, request["headers"].values())):
        return "its request headers are not a mapping of names to text"
    if not isinstance(request.get("body"), (str, bytes, io.BytesIO, type(None))):
        return "its request body is not text"
    return None


def _response_problem(response, parse: Callable[[dict], object]) -> str | None:
    if not isinstance(response, dict):
        return "its response is not a mapping"
    status = response.get("status")
    if not (isinstance(status, dict) and type(status.get("code")) is int and isinstance(status.get("message"), str)):
        return "its response status is not a code and a message"
    headers = response.get("headers")
    if not isinstance(headers, dict) or not all(isinstance(k, str) and _is_text_list(v) for k, v in headers.items()):
        return "its response headers are not a mapping of names to text"
    body = response.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("string"), (str, bytes)):
        return "its response has no body text"
    if 200 <= status["code"] < 300:
        problem = completion_problem(response, parse)
        if problem:
            return f"its response is {problem}"
    return None


def read_cassette(path: Path, serializer, parse: Callable[[dict], object]) -> tuple[list, list]:
    """(requests, responses) of a cassette file, as vcrpy's loader returns them, after checking
    everything the replay reads. FileNotFoundError when there is no file; UnreadableCassette
    (a short reason) when there is one that cannot be replayed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except UnicodeDecodeError:
        raise UnreadableCassette("not UTF-8 text") from None
    except OSError as exc:
        raise UnreadableCassette(exc.strerror or exc.__class__.__name__) from None
    if not text.strip():
        raise UnreadableCassette("empty file")
    try:
        data = serializer.deserialize(text)
    except yaml.MarkedYAMLError as exc:
        where = f" at line {exc.problem_mark.line + 1}" if exc.problem_mark is not None else ""
        raise UnreadableCassette(f"not valid YAML: {exc.problem or exc.context}{where}") from None
    except Exception as exc:  # noqa: BLE001 - a loader refusing a tag, a recursion limit, ...
        raise UnreadableCassette(f"not valid YAML: {_one_line(exc)}") from None
    interactions = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(interactions, list):
        raise UnreadableCassette("no list of interactions")
    requests_, responses = [], []
    for n, interaction in enumerate(interactions, start=1):
        if not isinstance(interaction, dict):
            raise UnreadableCassette(f"interaction {n} is not a mapping")
        for part in ("request", "response"):
            if part not in interaction:
                raise UnreadableCassette(f"interaction {n} has no {part!r}")
        problem = _request_problem(interaction["request"]) or _response_problem(interaction["response"], parse)
        if problem:
            raise UnreadableCassette(f"interaction {n}: {problem}")
        requests_.append(VcrRequest._from_dict(interaction["request"]))
        responses.append(compat.convert_to_bytes(interaction["response"]))
    return requests_, responses


def write_atomically(path: Path, text: str) -> None:
    """Write via the result writers' temp file and rename (results.replacing), synced to disk
    before the rename: a kill mid-write leaves the old file whole, and a reader never sees half
    a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


class CassettePersister:
    """vcrpy's persister for one CassetteClient: loads check the file (see read_cassette), saves
    are atomic. A file that cannot be read loads as no cassette (so a recording run records the
    item anew and the save replaces the file); why it could not be read is kept in `unreadable`
    for the replay's miss message."""

    def __init__(self, parse: Callable[[dict], object]):
        self.parse = parse
        self.unreadable: dict[str, str] = {}  # path -> reason, from its latest load
        self.skip_load = False  # set while "rewrite" opens a cassette: the old file is not read

    def load_cassette(self, cassette_path, serializer):
        key = str(cassette_path)
        self.unreadable.pop(key, None)
        if self.skip_load:
            raise CassetteNotFoundError()
        try:
            return read_cassette(Path(cassette_path), serializer, self.parse)
        except FileNotFoundError:
            raise CassetteNotFoundError() from None
        except UnreadableCassette as exc:
            self.unreadable[key] = str(exc)
            raise CassetteNotFoundError(str(exc)) from None

    @staticmethod
    def save_cassette(cassette_path, cassette_dict, serializer):
        write_atomically(Path(cassette_path), serialize(cassette_dict, serializer))


# Every cassette entry makes vcrpy (re)build patches for each HTTP library it knows; for the
# ones not installed that means a failed import per cassette (about 3 ms here). We only speak
# `requests`, so vcrpy versions that can skip patchers (>= 9.4) skip the rest.
UNUSED_PATCHERS = ("boto3", "httplib2", "tornado", "aiohttp", "httpx", "httpx2")
_SKIP = (
    {"skip_patchers": UNUSED_PATCHERS} if "skip_patchers" in inspect.signature(vcr.VCR).parameters else {}
)


def make_vcr(record_mode: str, before_record_response: Callable[[dict], dict | None],
             persister: CassettePersister) -> vcr.VCR:
    recorder = vcr.VCR(
        **_SKIP,
        # "rewrite" (as pytest-recording has it): recorded anew; the client does not load the old
        # file, and the save replaces it (CassetteClient._cassette)
        record_mode="new_episodes" if record_mode == "rewrite" else record_mode,
        match_on=MATCH_ON,
        filter_headers=SECRET_REQUEST_HEADERS,
        filter_query_parameters=SECRET_QUERY_PARAMETERS,
        before_record_response=before_record_response,  # decodes compressed bodies itself
        serializer="yaml",
        record_on_exception=False,
    )
    recorder.register_persister(persister)
    return recorder


class Replay:
    """Replay (record mode "none") without HTTP: a cassette file is read and checked once
    (read_cassette), the request the model would send is matched against its interactions with
    vcrpy's own matchers and query filter, and the recorded body becomes the completion through
    the model's own reader. Same files and matching as vcrpy's replay, none of its per-call
    copies and none of requests' per-call machinery (benchmarks/replay_throughput.py)."""

    def __init__(self, model: HttpModel, persister: "CassettePersister", matchers: list):
        self.model = model
        self.persister = persister
        self.matchers = matchers

    def load(self, path: Path) -> list[tuple[VcrRequest, dict]]:
        """A cassette's interactions ([] when there is none, or none that can be replayed: the
        persister then knows why, for the miss message)."""
        try:
            return list(zip(*self.persister.load_cassette(str(path), YAML)))
        except CassetteNotFoundError:
            return []

    def wanted(self, request: Request) -> VcrRequest:
        """The request as vcrpy would have matched it: the key's query parameters filtered out."""
        call = self.model.call_for(request, key="replay")  # nothing is sent, and keys are not matched on
        wanted = VcrRequest("POST", call.url, json.dumps(call.body), dict(call.headers))
        return remove_query_parameters(wanted, SECRET_QUERY_PARAMETERS)

    def answer(self, opened: "_Opened", request: Request) -> Completion:
        """The first interaction not yet played in this opening that matches; a miss raises
        ReplayMiss with the closest recorded request's differences."""
        wanted = self.wanted(request)
        for index, (recorded, response) in enumerate(opened.recorded):
            if index not in opened.played and requests_match(wanted, recorded, self.matchers):
                opened.played.add(index)
                response = _decoded(response)
                latency = response["headers"].get(LATENCY_HEADER)
                completion = self.model.completion_from(
                    response["body"]["string"], latency[0] if isinstance(latency, list) else latency, 0.0)
                completion.extra["cassette_hit"] = True
                return completion
        raise ReplayMiss(self.differences(opened, wanted))

    def differences(self, opened: "_Opened", wanted: VcrRequest) -> list[str]:
        """The matchers that failed for the closest recorded request (most matchers passing)."""
        best: list[str] | None = None
        most = 0
        for recorded, _ in opened.recorded:
            passed, failed = get_matchers_results(wanted, recorded, self.matchers)
            if len(passed) > most:
                most, best = len(passed), [name for name, _ in failed]
        return best or []


class ReplayMiss(Exception):
    """No recorded interaction matches; `differences` names what differs from the closest one."""

    def __init__(self, differences: list[str]):
        super().__init__(", ".join(differences))
        self.differences = differences


def cassette_path(root: Path, model_alias: str, suite: str, item_id: str) -> Path:
    return root / model_alias / suite / f"{item_id}.yaml"


@dataclass
class _Opened:
    """One open cassette of an item: a single call's, or a conversation's (all its turns).
    Recording: vcrpy's cassette. Replay: the file's interactions and which were played."""

    path: Path
    cassette: Cassette | None = None
    keeps_old: bool = False  # "rewrite" over an existing file: save only a complete recording
    incomplete: bool = False  # a call failed or a stop came: the recording is not the item's whole
    recorded: list = field(default_factory=list)  # replay: (request, response) pairs
    played: set = field(default_factory=set)  # replay: indexes already answered (each plays once)


class CassetteClient:
    """Wraps an HttpModel: each `complete` runs inside the item's cassette; inside
    `conversation(suite, item_id)` every call shares that item's one cassette."""

    def __init__(self, model: HttpModel, root: Path, record_mode: str):
        self.model = model
        self.root = root
        self.record_mode = record_mode
        self._parse = model._parse  # the wire format's reader: what a recorded answer must pass
        self._persister = CassettePersister(self._parse)
        self._vcr = make_vcr(record_mode, self._before_record_response, self._persister)
        self._loading = False  # vcrpy runs the record hook on loaded interactions too
        self._rewritten: set[Path] = set()  # rewrite replaces a cassette once per run, not per call
        matchers = [self._vcr.matchers[name] for name in MATCH_ON]
        self._replay = Replay(model, self._persister, matchers) if record_mode == "none" else None
        self._open: _Opened | None = None  # the conversation's cassette

    def path_for(self, request: Request) -> Path:
        return cassette_path(self.root, self.model.spec.alias, request.suite, request.item_id)

    def _before_record_response(self, response: dict) -> dict | None:
        """vcrpy's hook for each response about to enter a cassette (and each one loaded): only a
        2xx whose decoded body parses into a completion; identifying headers dropped."""
        try:
            if not 200 <= response["status"]["code"] < 300:
                return None  # a failure must be retried live next time, never replayed
            # Loaded interactions were checked by the persister; recorded ones are checked here.
            if not self._loading and completion_problem(response, self._parse) is not None:
                return None  # a malformed answer must be asked again next time, never replayed
            return _scrub_headers(_decoded(response))
        except Exception:  # noqa: BLE001 - a hook that raised would crash the call inside vcrpy
            return None

    @contextlib.contextmanager
    def conversation(self, suite: str, item_id: str) -> Iterator[None]:
        path = cassette_path(self.root, self.model.spec.alias, suite, item_id)
        stopped: BaseException | None = None
        # A dialogue's cassette grows turn by turn and is saved after each one; "once" would
        # refuse the turns after a crash, so a conversation records missing turns into it.
        grow = {"record_mode": "new_episodes"} if self.record_mode == "once" else {}
        with self._cassette(path, **grow) as opened:
            self._open = opened
            try:
                yield
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                # A stop mid-dialogue (budget, refused key, crash of a later turn) still saves
                # the turns already answered: a resumed run replays them instead of paying again.
                stopped = exc
                opened.incomplete = True
            finally:
                self._open = None
        if stopped is not None:
            raise stopped

    def complete(self, request: Request) -> Completion:
        path = self.path_for(request)
        try:
            if self._open is not None and self._open.path == path:
                completion = self._call(self._open, request)
            else:
                with self._cassette(path) as opened:
                    completion = self._call(opened, request)
        except CannotOverwriteExistingCassetteException as exc:
            # a failed call of this item (one line, counted as an error), not a harness crash
            return self.model.failed(self._miss_message(request, path, self._closest_differences(exc)))
        except ReplayMiss as miss:
            return self.model.failed(self._miss_message(request, path, miss.differences))
        completion.extra["cassette"] = path.relative_to(self.root).as_posix()
        return completion

    @contextlib.contextmanager
    def _cassette(self, path: Path, **overrides) -> Iterator[_Opened]:
        """Replay: the loaded file. Recording: vcrpy's patched context, saved on exit (unless a
        rewrite over an existing file did not complete: then the old file stays)."""
        if self._replay is not None:
            yield _Opened(path, recorded=self._replay.load(path))
            return
        # vcrpy creates a missing folder without exist_ok: two xdist workers saving their first
        # cassettes of a suite at once would race, so the folder exists before vcrpy looks.
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = self.record_mode == "rewrite" and path not in self._rewritten
        with contextlib.ExitStack() as stack:
            self._loading, self._persister.skip_load = True, fresh
            try:
                cassette = stack.enter_context(self._vcr.use_cassette(str(path), **overrides))
            finally:
                self._loading, self._persister.skip_load = False, False
            opened = _Opened(path, cassette, keeps_old=fresh and path.is_file())
            yield opened
            if fresh and cassette.dirty:
                if opened.incomplete and opened.keeps_old:
                    cassette.dirty = False  # vcrpy's exit saves nothing: the old, complete cassette stays
                else:
                    self._rewritten.add(path)  # saved on exit; later calls of this run add to it

    def _call(self, opened: _Opened, request: Request) -> Completion:
        if self._replay is not None:
            return self._replay.answer(opened, request)
        cassette = opened.cassette
        recorded_before, played_before, dirty_before = len(cassette.data), cassette.play_count, cassette.dirty
        completion = self.model.complete(request)
        if completion.error is not None:
            opened.incomplete = True
            if len(cassette.data) > recorded_before:
                # The client could not use what was recorded (the record hook let through a body
                # the client still refused): it must be asked again next time, never replayed.
                del cassette.data[recorded_before:]
                cassette.dirty = dirty_before
        elif len(cassette.data) > recorded_before:
            # Keep the live latency so replays report what was measured.
            cassette.data[-1][1]["headers"][LATENCY_HEADER] = [str(completion.latency_ms)]
            if self._open is not None and not opened.keeps_old:
                # Within a conversation, save every paid turn at once (atomically): a killed run
                # must not lose (and pay again for) the turns before the kill. A rewrite over an
                # existing cassette waits for the end instead, so a kill leaves the old one whole.
                # vcrpy has no public save-now call; _save is what its own context exit calls.
                cassette._save(force=True)
        completion.extra["cassette_hit"] = cassette.play_count > played_before
        return completion

    @staticmethod
    def _closest_differences(exc: CannotOverwriteExistingCassetteException) -> list[str]:
        """vcrpy's refusal to record: what differs from its closest recorded request."""
        cassette, wanted = getattr(exc, "cassette", None), getattr(exc, "failed_request", None)
        closest = cassette.find_requests_with_most_matches(wanted) if cassette is not None and wanted is not None else []
        return [name for name, _ in closest[0][2]] if closest else []

    def _miss_message(self, request: Request, path: Path, differences: list[str]) -> str:
        """One line: the item, what differs from the recording, the file. How to record the
        misses is said once, in the run's summary block (see chaosbench/report.py)."""
        unreadable = self._persister.unreadable.get(str(path))
        if unreadable is not None:
            return f"{MISS} for item {request.item_id!r}: unreadable cassette ({unreadable}): {path}; {RERECORD}"
        if not path.exists():
            what = "no cassette file"
        else:
            what = "the cassette has no matching request"
            if differences:
                what += f" (differs in: {', '.join(differences)})"
        return f"{MISS} for item {request.item_id!r}: {what}: {path}"
