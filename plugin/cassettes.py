"""Cache-first model client: every HTTP model call is recorded to / replayed from one vcrpy
cassette per item, at cassettes/<model>/<folder>/<item-id>.yaml, with no HTTP patching
(matching, scrubbing, atomic saves, misses, refresh: docs/design.md, "Cassettes")."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
import yaml
from vcr import matchers as vcr_matchers
from vcr.filters import decode_response, remove_headers, remove_query_parameters
from vcr.matchers import get_matchers_results, requests_match
from vcr.request import Request as VcrRequest
from vcr.serialize import serialize
from vcr.serializers import compat
from vcr.serializers import yamlserializer as YAML

from pytest_reasoning_evals.cassette_index import CassetteIndex, NotACassetteFile, read_bytes
from pytest_reasoning_evals.providers.base import SECRET_QUERY_PARAMETERS, Completion, ErrorKind, Request
from pytest_reasoning_evals.providers.http import BATCH_HEADER, LATENCY_HEADER, Recordable
from pytest_reasoning_evals.providers.wire import Call, Parsed
from pytest_reasoning_evals.results import replacing

SECRET_REQUEST_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie")
# Response headers that identify an account or a request, or change on every call.
DROPPED_RESPONSE_HEADER_PREFIXES = (
    "set-cookie",
    "x-request-id",
    "request-id",
    "openai-organization",
    "anthropic-organization",
    "x-ratelimit",
    "anthropic-ratelimit",
    "openai-project",
    "cf-ray",
    "x-goog",
    "date",
    "server-timing",
    "openai-processing-ms",
    "alt-svc",
)


REFRESH = "refresh"  # the record mode that adds what an item's cassette does not answer (vcrpy's new_episodes)
NO_FILE = "no cassette file"  # a miss with no file at all: the printed command says `once`, any other REFRESH
RERECORD = f"--eval-record-mode={REFRESH} records it anew"  # ends the miss of an unreadable cassette
USAGE_ENV = "REASONING_EVALS_CASSETTE_USAGE"  # a file each played interaction is noted in (cassettes prune)
STALE_TEMP = re.compile(r".+\.yaml\.(\d+)\.[0-9a-f]+\.tmp")  # results.temp_path of a cassette: <name>.<pid>.<hex>.tmp


@dataclass(frozen=True)
class MatchRule:
    """One thing a recorded request must share with the one sent: a vcrpy matcher (it raises
    AssertionError when the two differ), and whether equal bytes imply it (`by_bytes`): two POSTs
    with the same URL without a query and the same body bytes pass it without its being asked."""

    matcher: Callable
    by_bytes: bool = False

    @property
    def name(self) -> str:
        return self.matcher.__name__


@dataclass(frozen=True)
class MatchOn:
    """The one match definition of every replay path: the index's first replay (a byte
    comparison alone, so only when every rule is by_bytes), the byte comparison inside a call
    (then the rules bytes do not imply), and vcrpy's matchers (every rule)."""

    rules: tuple[MatchRule, ...]

    @functools.cached_property
    def matchers(self) -> list[Callable]:
        return [rule.matcher for rule in self.rules]

    @functools.cached_property
    def beyond_bytes(self) -> list[Callable]:
        """The matchers that equal bytes do not imply: a byte-equal request must still pass them."""
        return [rule.matcher for rule in self.rules if not rule.by_bytes]

    def adding(self, *rules: MatchRule) -> MatchOn:
        return MatchOn((*self.rules, *rules))


# vcrpy's matchers on method, scheme, host, path, query and the parsed body; never the port, so a
# local server may move
MATCH = MatchOn(
    tuple(
        MatchRule(getattr(vcr_matchers, name), by_bytes=True)
        for name in ("method", "scheme", "host", "path", "query", "body")
    )
)


def request_key(method: str, uri: str, body: bytes | str | None) -> str:
    """A recorded request as `cassettes prune` recognises it: its method, URL and body bytes."""
    data = body.encode("utf-8") if isinstance(body, str) else body or b""
    return hashlib.sha256(b"%s %s\n%s" % (method.encode(), uri.encode(), data)).hexdigest()


def rerecord_mode(errors: Iterable[str]) -> str:
    """The record mode the printed command gives for the cassette misses among these item errors:
    `once` when none has a cassette file, else REFRESH (the word for a file that does not match,
    cannot be read or holds no usable answer; both record what the file does not answer)."""
    return "once" if all(NO_FILE in error for error in errors if ErrorKind.of(error) is ErrorKind.MISS) else REFRESH


def save_problem(folder: Path) -> str | None:
    """Why cassettes cannot be saved in `folder`, or None: checked before a recording run asks
    anything, on the nearest folder that exists (nothing is created). A full disk shows only
    at a save (CassetteClient.unsaved)."""
    for part in (folder, *folder.parents):
        if not os.path.lexists(part):
            continue
        if not os.path.isdir(part):
            return f"{part} is not a folder"
        if os.access(part, os.W_OK | os.X_OK):
            return None
        readonly = hasattr(os, "statvfs") and os.statvfs(part).f_flag & os.ST_RDONLY
        return f"cannot save cassettes in {part}: {os.strerror(errno.EROFS if readonly else errno.EACCES)}"
    return None


def remove_stale_temp_files(folder: str) -> None:
    """Delete the temp files that killed processes left beside the cassettes of `folder` (a save
    is a temp file then a rename): `git add` must not commit them. Only those of pids that no
    longer run; on POSIX only (os.kill(pid, 0) would end the process on Windows)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            found = STALE_TEMP.fullmatch(entry.name)
            if found is None or int(found[1]) == os.getpid():
                continue
            try:
                os.kill(int(found[1]), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
            except (OSError, OverflowError):
                pass  # alive under another user, or not a pid: left alone


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
    except (ValueError, TypeError, RecursionError) as exc:  # RecursionError: JSON nested deeper than Python's stack
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


def read_cassette(
    path: Path | str, serializer, parse: Callable[[dict], object], data: bytes | None = None
) -> tuple[list, list]:
    """(requests, responses) of a cassette file after checking everything the replay reads: the
    requests as vcrpy's own dicts (Request._to_dict: the body bytes, each header a list), the
    responses as vcrpy's loader returns them. `data`: the file's bytes when the caller has read
    them already (the cassette index, for their digest). FileNotFoundError when there is no file;
    UnreadableCassette (a short reason) when there is one that cannot be replayed."""
    try:
        if data is None:
            data = read_bytes(path)  # a regular file of at most MAX_BYTES: a FIFO or /dev/zero is refused unread
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise
    except UnicodeDecodeError:
        raise UnreadableCassette("not UTF-8 text") from None
    except NotACassetteFile as exc:
        raise UnreadableCassette(str(exc)) from None
    except OSError as exc:
        raise UnreadableCassette(exc.strerror or exc.__class__.__name__) from None
    if "\r" in text:  # line ends as a text-mode read has them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
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
        requests_.append(VcrRequest._from_dict(interaction["request"])._to_dict())  # vcrpy's own normal form
        responses.append(compat.convert_to_bytes(interaction["response"]))
    return requests_, responses


def recorded_latency(response: dict) -> str | None:
    """The latency a (decoded) recorded response was answered in, as its header holds it."""
    latency = response["headers"].get(LATENCY_HEADER)
    return latency[0] if isinstance(latency, list) else latency


def recorded_batch(response: dict) -> str | None:
    """The provider whose batch gave a recorded response (its BATCH_HEADER), or None: a live
    answer, or one recorded before batches were marked (priced at the list price)."""
    batch = response["headers"].get(BATCH_HEADER)
    batch = batch[0] if isinstance(batch, list) and batch else batch
    return batch if isinstance(batch, str) and batch else None


def indexed_cassette(path: Path | str, parse: Callable[[dict], object], data: bytes | None = None) -> tuple:
    """What the cassette index keeps of a file: read_cassette's (requests, responses), and the
    first_replay of them (or None) that a plain replay answers from without opening the cassette."""
    requests_, responses = read_cassette(path, YAML, parse, data)
    return requests_, responses, first_replay(requests_, responses, parse)


def first_replay(requests_: list, responses: list, parse: Callable[[dict], object]) -> tuple | None:
    """(uri, body bytes, latency ms, the Parsed fields of the answer, the batch's provider or None)
    of the file's first 2xx interaction: what a fresh replay plays when the request sent is that
    one byte for byte (CassetteClient._call). None when it is not a plain one: not a POST, a query
    in its URL, a latency that is not a number; those are played the long way."""
    for recorded, response in zip(requests_, responses):
        if not 200 <= response["status"]["code"] < 300:
            continue
        if recorded["method"] != "POST" or "?" in recorded["uri"] or not isinstance(recorded["body"], bytes):
            return None
        response = _decoded(response)
        latency = recorded_latency(response)
        try:
            latency_ms = 0.0 if latency is None else float(latency)
            parsed = parse(json.loads(response["body"]["string"]))
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
            return None
        fields = (
            parsed.text,
            parsed.input_tokens,
            parsed.output_tokens,
            parsed.thinking_tokens,
            parsed.finish_reason,
            parsed.reasoning,
            parsed.cached_tokens,
            parsed.cache_write_tokens,
        )
        if not all(type(value) in (str, int, type(None)) for value in fields):
            return None  # marshal keeps plain values only
        return recorded["uri"], recorded["body"], latency_ms, fields, recorded_batch(response)
    return None


def write_atomically(path: Path, text: str) -> None:
    """Write via the result writers' temp file and rename (results.replacing), synced to disk
    before the rename: a kill mid-write leaves the old file whole, and a reader never sees half
    a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


class ReplayMiss(Exception):
    """No recorded interaction matches; `differences` names what differs from the closest one."""

    def __init__(self, differences: list[str]):
        super().__init__(", ".join(differences))
        self.differences = differences


def recorded_request(sent: requests.PreparedRequest) -> VcrRequest:
    """The request a cassette keeps of what was sent: vcrpy's request without the URL's
    credentials, its key headers and key query parameters removed by vcrpy's own filters."""
    parts = urlsplit(sent.url)
    url = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))  # a base URL's user:pass@ is not kept
    return _without_keys(VcrRequest(sent.method, url, sent.body, dict(sent.headers)))


def _without_keys(request: VcrRequest) -> VcrRequest:
    """vcrpy's filters: the key headers and key query parameters removed."""
    return remove_query_parameters(remove_headers(request, SECRET_REQUEST_HEADERS), SECRET_QUERY_PARAMETERS)


def recorded_response(response: requests.Response) -> dict:
    """A 2xx response as a cassette keeps it (vcrpy's dict): headers as lists in the case they
    came in, the body decoded. requests has decompressed it already, so a Content-Encoding is
    dropped and the length corrected, as vcrpy's decode_response does."""
    headers: dict[str, list[str]] = {}
    for name, value in response.raw.headers.items():  # urllib3 yields each value of a repeated header
        headers.setdefault(name, []).append(value)
    body = response.content
    encoding = next((name for name in headers if name.lower() == "content-encoding"), None)
    if encoding is not None:
        del headers[encoding]
        length = next((name for name in headers if name.lower() == "content-length"), "Content-Length")
        headers[length] = [str(len(body))]
    return {
        "status": {"code": response.status_code, "message": response.reason or ""},
        "headers": headers,
        "body": {"string": body},
    }


def cassette_name(model_alias: str, folder: str, item_id: str) -> str:
    """An item's cassette under the cassette root (what a record's `cassette` field says)."""
    return f"{model_alias}/{folder}/{item_id}.yaml"


# A recorded request as the opened cassette holds it: vcrpy's dict of it (Request._to_dict). The
# usual replay compares its URL and body bytes; a vcrpy Request (which parses the URL and the
# headers) is made only for the matchers, a save, or a recording's filters.
Recorded = dict


def _vcr(recorded: Recorded) -> VcrRequest:
    return VcrRequest._from_dict(recorded)


@dataclass
class _Opened:
    """One open cassette of an item: a single call's, or a conversation's (all its turns)."""

    path: str  # the file (a string: pathlib's objects cost a replay more than its file lookup)
    interactions: list  # (Recorded request, response) pairs: the file's, then the ones recorded now
    protected: bool  # replay only ("none"): a miss is not asked live
    fresh: bool = False  # "rewrite": the file's old content is not read, and the save replaces it
    recorded: bool = False  # an answer was recorded in this opening
    unsaved: bool = False  # a save of this opening failed
    keeps_old: bool = False  # "rewrite" over an existing file: save only a complete recording
    incomplete: bool = False  # a call failed or a stop came: the recording is not the item's whole
    dirty: bool = False  # holds interactions not saved yet
    played: set = field(default_factory=set)  # indexes already answered (each plays once, as in vcrpy)


class CassetteClient:
    """Wraps an HTTP model (what it uses of one: http.Recordable): each `complete` answers from the
    item's cassette or, when the record mode lets it, asks the model and records the answer;
    inside `conversation(folder, item_id)` every call shares that item's one cassette.

    No HTTP patching: matching uses vcrpy's matchers and filters, files are vcrpy's format, and a
    live call is made with requests directly, so calls of different items may run in threads at
    once (--eval-concurrency) without one item's recording catching another's request."""

    def __init__(
        self,
        model: Recordable,
        root: Path,
        record_mode: str,
        index: CassetteIndex | None = None,
        match: MatchOn = MATCH,
        run_started_ns: int | None = None,
    ):
        self.model = model
        self._root = str(root)  # cassette files are path strings (_file)
        self.record_mode = record_mode
        self.index = index  # parsed files kept between runs (cassette_index.py); None: parse every time
        # rewrite reads no file: nothing to parse ahead
        self._warm = index is not None and record_mode != "rewrite"
        # replay-only openings of a single call: answered from the index's first_replay (URL and
        # body bytes) when it fits and those bytes imply every rule
        self._plain_replay = index is not None and record_mode in ("none", "once") and not match.beyond_bytes
        self._parse = model.parse  # the wire format's reader: what a recorded answer must pass
        self._match = match
        self.unreadable: dict[str, str] = {}  # path -> why its file could not be read, from its latest load
        self._replaced: set[str] = set()  # rewrite replaces a cassette once per run, not per call
        # ... and not one written since the run started (its batch, before the items; another worker)
        self._run_started_ns = run_started_ns
        self._swept: set[str] = set()  # folders whose stale temp files are removed (once per run)
        self.unsaved: str | None = None  # why a save failed: no more live calls in this run
        self._open: _Opened | None = None  # the conversation's cassette (the main thread's)
        self._usage = os.environ.get(USAGE_ENV)  # cassettes prune: where to note what is played

    def _file(self, folder: str, item_id: str) -> str:
        """The item's cassette file under the root, as a string."""
        return os.path.join(self._root, cassette_name(self.model.spec.alias, folder, item_id))

    @contextlib.contextmanager
    def conversation(self, folder: str, item_id: str) -> Iterator[None]:
        path = self._file(folder, item_id)
        stopped: BaseException | None = None
        # A dialogue's cassette grows turn by turn and is saved after each one; a recording mode
        # records the turns a crash left missing into it (as "once" does any request it lacks).
        with self._cassette(path, self.record_mode) as opened:
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
        path = self._file(request.cassette_folder, request.item_id)
        indexed = None  # the file as the index keeps it, when a plain replay read it
        if self._plain_replay and self._open is None:
            try:
                indexed = self._indexed(path)
            except (FileNotFoundError, UnreadableCassette):
                pass  # opened below, which says why
            else:
                completion = self._replay_first(path, indexed, request)
                if completion is not None:
                    return completion
        try:
            opened = self._open
            if opened is not None and opened.path == path:
                completion = self._call(opened, request)
            else:
                with self._cassette(path, self.record_mode, indexed) as opened:
                    completion = self._call(opened, request)
        except ReplayMiss as miss:
            return self.model.failed(self._miss_message(request, path, miss.differences), ErrorKind.MISS)
        if opened.unsaved or completion.outcome.error_kind is ErrorKind.UNSAVED:
            completion.outcome.unsaved = self.unsaved  # the answer is the run's; its cassette is not on disk
        else:
            completion.outcome.cassette = cassette_name(self.model.spec.alias, request.cassette_folder, request.item_id)
        return completion

    def _replay_first(self, path: str, indexed: tuple, request: Request) -> Completion | None:
        """A replay's usual call, answered from the file's first_replay (`indexed`) without opening
        the cassette: the same completion `_call` gives for a fresh opening whose first
        interaction is the request sent, byte for byte. None otherwise."""
        replay = indexed[2]
        call = self.model.call_for(request, key="replay")
        if replay is None or call.url != replay[0] or json.dumps(call.body).encode() != replay[1]:
            return None
        self.unreadable.pop(path, None)
        if self._usage:
            self._note(path, "POST", replay[0], replay[1])
        completion = self.model.completion_of(Parsed(*replay[3]), replay[2], batch=replay[4] is not None)
        completion.outcome.hit = True
        completion.outcome.cassette = cassette_name(self.model.spec.alias, request.cassette_folder, request.item_id)
        return completion

    def _indexed(self, path: str) -> tuple:
        """indexed_cassette of the file, from the index when it holds this version of it."""
        if self._warm:
            # the first read: the files this process's items read next are parsed ahead (index_warmer.py)
            self._warm = False
            self.index.warm(self.model.spec.alias, self.model.spec.provider, self._file)
        return self.index.read(path, self.model.spec.provider, self._parse_indexed)

    def _parse_indexed(self, path: str, data: bytes | None) -> tuple:
        return indexed_cassette(path, self._parse, data)

    # --- one opening of a cassette ---

    def _load(self, path: str, recording: bool, indexed: tuple | None = None) -> tuple[list, bool]:
        """The file's interactions, and whether it was read (`indexed`: already read, from the
        index). A file that cannot be read loads as none (a recording run records the item anew
        and replaces it); why is kept for the miss."""
        self.unreadable.pop(path, None)
        try:
            if indexed is not None:
                requests_, responses, _ = indexed
            elif self.index is None:
                requests_, responses = read_cassette(path, YAML, self._parse)
            else:
                requests_, responses, _ = self._indexed(path)
        except FileNotFoundError:
            return [], False
        except UnreadableCassette as exc:
            self.unreadable[path] = str(exc)
            return [], False
        # never replay a failure
        pairs = [(q, r) for q, r in zip(requests_, responses) if 200 <= r["status"]["code"] < 300]
        if recording:  # what a save writes back is filtered as a recording would be
            pairs = [(_without_keys(_vcr(q))._to_dict(), _scrub_headers(_decoded(r))) for q, r in pairs]
        return pairs, True

    @contextlib.contextmanager
    def _cassette(self, path: str, mode: str, indexed: tuple | None = None) -> Iterator[_Opened]:
        """The opened cassette; on a normal exit, what was recorded is saved (atomically), unless
        a rewrite over an existing file did not complete: then the old file stays. An exception
        leaving the block saves nothing (vcrpy's record_on_exception=False)."""
        if mode == "rewrite" and path not in self._replaced and not self._written_in_this_run(path):
            opened = _Opened(path, [], protected=False, fresh=True, keeps_old=os.path.isfile(path))
        else:
            interactions, _ = self._load(path, recording=mode != "none", indexed=indexed)
            # "once" records what the file does not answer beside it: one file holds every prompt's requests
            opened = _Opened(path, interactions, protected=mode == "none")
        yield opened
        if opened.dirty and not (opened.incomplete and opened.keeps_old):
            self._save(opened)
        if opened.fresh and opened.recorded and not opened.dirty:
            self._replaced.add(path)  # saved: later calls of this run add to the new file

    def _written_in_this_run(self, path: str) -> bool:
        if self._run_started_ns is None:
            return False
        try:
            return os.stat(path).st_mtime_ns >= self._run_started_ns
        except OSError:
            return False

    def _save(self, opened: _Opened) -> None:
        """Write the opened cassette: every interaction it holds, so each prompt's or option's
        recording stays (`cassettes prune` drops those no configuration uses). A failure is not
        raised: the answer stays the run's, and `unsaved` stops the live calls (see complete)."""
        requests_, responses = zip(*opened.interactions)
        folder = os.path.dirname(opened.path)
        if folder not in self._swept:
            self._swept.add(folder)
            remove_stale_temp_files(folder)
        try:
            write_atomically(
                Path(opened.path), serialize({"requests": list(map(_vcr, requests_)), "responses": responses}, YAML)
            )
        except OSError as exc:
            opened.unsaved = True
            self.unsaved = (
                self.unsaved
                or f"{ErrorKind.UNSAVED} in {folder}: {exc.strerror or _one_line(exc)}; the run stopped, incomplete"
            )
            return
        opened.dirty = False

    def _wanted(self, call: Call) -> VcrRequest:
        """The request as a recording matches it: the key's query parameters filtered out."""
        wanted = VcrRequest("POST", call.url, json.dumps(call.body), dict(call.headers))
        return remove_query_parameters(wanted, SECRET_QUERY_PARAMETERS) if "?" in call.url else wanted

    def _call(self, opened: _Opened, request: Request) -> Completion:
        call = self.model.call_for(request, key="replay")  # nothing is sent, and keys are not matched on
        # The usual replay: the recorded request is this one byte for byte (URL without a query,
        # method, body), which passes every by_bytes rule; the others are asked all the same.
        same = (call.url, json.dumps(call.body).encode()) if "?" not in call.url else None
        wanted: VcrRequest | None = None
        for index, (recorded, response) in enumerate(opened.interactions):
            if index in opened.played:
                continue
            byte_equal = (
                same is not None and recorded["method"] == "POST" and (recorded["uri"], recorded["body"]) == same
            )
            matchers = self._match.beyond_bytes if byte_equal else self._match.matchers
            if matchers:
                wanted = wanted or self._wanted(call)
                if not requests_match(wanted, _vcr(recorded), matchers):
                    continue
            opened.played.add(index)
            if self._usage:
                self._note(opened.path, recorded["method"], recorded["uri"], recorded["body"])
            return self._replayed(response)
        if opened.protected:
            raise ReplayMiss(self._differences(opened, wanted or self._wanted(call)))
        if self.unsaved is not None:  # a recording that cannot be saved is not paid for
            return self.model.failed(self.unsaved, ErrorKind.UNSAVED)
        completion, response = self.model.exchange(request)
        if completion.error is not None:
            opened.incomplete = True
        else:
            kept = self._before_record_response(recorded_response(response))
            if kept is not None:
                kept["headers"][LATENCY_HEADER] = [str(completion.latency_ms)]  # replays report what was measured
                opened.interactions.append((recorded_request(response.request)._to_dict(), kept))
                opened.played.add(len(opened.interactions) - 1)
                opened.recorded = True
                self._changed(opened)
        completion.outcome.hit = False
        return completion

    def _note(self, path: str, method: str, uri: str, body) -> None:
        """One played interaction, a line appended to the usage file (atomic for a short line, so
        xdist workers may share it)."""
        line = f"{os.path.abspath(path)}\t{request_key(method, uri, body)}\n".encode()
        fd = os.open(self._usage, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def _changed(self, opened: _Opened) -> None:
        """The opened cassette has something to save. Within a conversation, every paid turn is
        saved at once (atomically): a killed run must not lose (and pay again for) the turns
        before the kill. A rewrite over an existing cassette waits for the end instead, so a
        kill leaves the old one whole."""
        opened.dirty = True
        if opened is self._open and not opened.keeps_old:
            self._save(opened)

    def _replayed(self, response: dict) -> Completion:
        response = _decoded(response)
        completion = self.model.completion_from(
            response["body"]["string"], recorded_latency(response), 0.0, batch=recorded_batch(response) is not None
        )
        completion.outcome.hit = True
        return completion

    def _differences(self, opened: _Opened, wanted: VcrRequest) -> list[str]:
        """The matchers that failed for the closest recorded request (most matchers passing)."""
        best: list[str] | None = None
        most = 0
        for recorded, _ in opened.interactions:
            passed, failed = get_matchers_results(wanted, _vcr(recorded), self._match.matchers)
            if len(passed) > most:
                most, best = len(passed), [name for name, _ in failed]
        return best or []

    def _before_record_response(self, response: dict) -> dict | None:
        """Each response about to enter a cassette: only a 2xx whose decoded body parses into a
        completion; identifying headers dropped."""
        try:
            if not 200 <= response["status"]["code"] < 300:
                return None  # a failure must be retried live next time, never replayed
            if completion_problem(response, self._parse) is not None:
                return None  # a malformed answer must be asked again next time, never replayed
            return _scrub_headers(_decoded(response))
        except Exception:  # noqa: BLE001 - whatever it trips over, the response is not recorded
            return None

    def _miss_message(self, request: Request, path: str, differences: list[str]) -> str:
        """One line: the item, what differs from the recording, the file. How to record the
        misses is said once, in the run's summary block (see chaosbench/report.py)."""
        unreadable = self.unreadable.get(path)
        if unreadable is not None:
            return (
                f"{ErrorKind.MISS} for item {request.item_id!r}: unreadable cassette ({unreadable}): {path}; {RERECORD}"
            )
        if not os.path.exists(path):
            what = NO_FILE
        else:
            what = "the cassette has no matching request"
            if differences:
                what += f" (differs in: {', '.join(differences)})"
        return f"{ErrorKind.MISS} for item {request.item_id!r}: {what}: {path}"
