"""What every provider takes and returns: one request in, one normalised completion out; and the
small rules every caller shares: a key never shown (Secret), a base URL that is an http(s)
address shown without its credentials (url_problem, mask_url), a model alias that is a name and
never a path (alias_problem).

Only the standard library is imported here: options.py uses these rules at every pytest start.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol
from urllib.parse import urlsplit


class ErrorKind(StrEnum):
    """What kind of failure a completion's error is (CallOutcome.error_kind). A value is how the
    message of its kind starts, where one does: a record keeps the message alone (its JSON
    unchanged), and `of` reads the kind back from it."""

    MISS = "cassette miss"  # a replay found no recording (cassettes.py)
    MALFORMED = "malformed provider response"  # a reply that is no completion (http.py)
    NOT_LISTENING = "nothing is listening at"  # a refused connection (http.py)
    CONNECTION = "connection failed"  # a connection that could not be made, after the retries (http.py)
    UNSAVED = "cannot save cassettes"  # a recording that could not be saved: no more live calls (cassettes.py)
    HARNESS = "harness error"  # an item that raised inside the harness (session.py; protocol.HARNESS)
    PROVIDER = "provider error"  # the provider failed after the retries (HTTP status, timeout): no prefix of its own

    @classmethod
    def of(cls, error: str | None) -> ErrorKind | None:
        """The kind of an error message as a record keeps it; None for no error, PROVIDER for a
        message of no other kind."""
        if not error:
            return None
        return next((kind for kind in cls if error.startswith(kind)), cls.PROVIDER)


MISS = ErrorKind.MISS  # how a cassette miss's message starts (dialectic/protocol.py finds it inside a judge's error)


class Secret(str):
    """A credential (an API key, a header carrying one): the real text for whoever sends it,
    `'***'` for anyone who prints it. Tracebacks and pytest's `-l`/`--showlocals` show values by
    their repr, also inside dicts and dataclasses, so a header dict holding a Secret shows
    `'Authorization': '***'` in every frame (ours, requests', urllib3's) that holds it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'***'"


# A model alias names folders (cassettes/<alias>/, results/<alias>_<mode>/): a name, never a path.
ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ALIAS_RULE = "a letter or digit, then up to 63 letters, digits, '.', '_' or '-', with no '..'"


def alias_problem(alias: object) -> str | None:
    """Why `alias` cannot be a model alias, or None (re.fullmatch: a trailing newline fails)."""
    if not isinstance(alias, str) or not ALIAS.fullmatch(alias) or ".." in alias:
        return f"{alias!r} is not a valid model alias: an alias names folders, so it is {ALIAS_RULE}"
    return None


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s]*@")
# query parameters that carry a key (Gemini's ?key=): never shown or recorded
SECRET_QUERY_PARAMETERS = ("key", "api_key")
_KEY_PARAMETER = re.compile(rf"(?i)([?&](?:{'|'.join(SECRET_QUERY_PARAMETERS)})=)[^&#\s]*")


def mask_url(text: str) -> str:
    """`text` with the credentials of every URL in it masked: https://user:key@host -> https://***@host,
    ?key=AIza... -> ?key=***."""
    return _KEY_PARAMETER.sub(r"\1***", _USERINFO.sub(r"\1***@", text))


def url_problem(url: object) -> str | None:
    """Why `url` cannot be a base URL (an http or https address with a host), or None. The URL
    is shown without its credentials."""
    if not isinstance(url, str) or not url.strip():
        return f"must be an http:// or https:// URL, got {url!r}"
    shown = mask_url(url)
    if any(c.isspace() or not c.isprintable() for c in url):
        return f"must be an http:// or https:// URL without spaces or control characters, got {shown!r}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in 0..65535
    except ValueError:
        return f"is not a valid URL (its host or port cannot be read): {shown!r}"
    if parts.scheme.lower() not in ("http", "https"):
        return f"must start with http:// or https://, got {shown!r}"
    if not parts.hostname:
        return f"has no host: {shown!r}"
    return None


def finite_at_least_zero(value: object) -> bool:
    """A price, a budget, a wait: a real number (not a bool), finite, >= 0."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


class NotAdmitted(Exception):
    """The --eval-max-cost budget is spent, counting the calls made ahead of their items
    (prefetch.py): this call is not made."""


@dataclass(frozen=True)
class Request:
    """One model call for one item: its cassette is cassettes/<model>/<cassette_folder>/<item_id>.yaml."""

    item_id: str
    cassette_folder: str
    messages: tuple[dict, ...]
    gold: str | None = None  # read only by the oracle baseline; never sent over HTTP
    temperature: float = 0.0
    max_tokens: int = 512
    json_schema: dict | None = None  # ask for JSON of this shape where the provider can constrain it
    seed: int | None = None  # a sampling seed (a judge panel's repeats); None: the provider's default body
    seeded: bool = True  # False: an OpenAI body carries no seed at all (upstream ChaosBench-Logic's bodies have none)
    completion_cap: int | None = None  # an OpenAI reasoning model's whole max_completion_tokens; None: output_cap


@dataclass
class CallOutcome:
    """What a call produced beside its answer: set by the layer that knows it (the cassette
    client, the HTTP model), read by the budget, the run-ahead, the stops and the records."""

    hit: bool | None = (
        None  # answered from its cassette (True) or asked now (False); None: no cassette (a baseline, a miss)
    )
    cassette: str | None = None  # its cassette under the root (cassettes.cassette_name) when it is on disk
    unsaved: str | None = None  # why its cassette could not be saved: the run must stop
    error_kind: ErrorKind | None = None  # the kind of Completion.error


@dataclass
class Completion:
    """The normalised completion record (SPEC 3); plain JSON-able values only."""

    provider: str
    model: str
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0  # informational: already part of output_tokens where billed
    cached_tokens: int = 0  # input tokens read from the prompt cache: part of input_tokens, priced apart
    cache_write_tokens: int = 0  # input tokens written to the prompt cache: part of input_tokens, priced apart
    cache_saved_usd: float = 0.0  # what the prompt cache saved against price_in for every input token
    batch: bool = False  # answered by a provider's batch (its cassette's marker): priced at the batch price
    batch_saved_usd: float = 0.0  # of a batch's answer: its list price less its batch price (registry.batch_cost)
    reasoning: str = ""  # reasoning the provider returned apart from the answer text (recorded, not analysed)
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    finish_reason: str | None = None
    error: str | None = None
    outcome: CallOutcome = field(default_factory=CallOutcome)

    def provider_failed(self) -> bool:
        """The call failed after its retries (not a malformed reply or a cassette miss: those
        are the item's own): what, several times in a row, is an outage."""
        return self.error is not None and self.outcome.error_kind not in (ErrorKind.MALFORMED, ErrorKind.MISS)


def saving_fields(calls: Iterable[Completion]) -> dict:
    """What a record says of its calls' prompt cache and batch, each field only when not zero (or
    false), so a record without either reads as before: input tokens read from and written to the
    cache and what that saved; `batch`: true when a batch answered one of them, `batch_saved_usd`
    what the batch price saved against the list price."""
    calls = list(calls)
    fields = {
        "cached_tokens": sum(c.cached_tokens for c in calls),
        "cache_write_tokens": sum(c.cache_write_tokens for c in calls),
        "cache_saved_usd": sum(c.cache_saved_usd for c in calls),
        "batch": any(c.batch for c in calls),
        "batch_saved_usd": sum(c.batch_saved_usd for c in calls),
    }
    return {name: value for name, value in fields.items() if value}


def cost_saved(cache: float, batch: float) -> dict:
    """A summary's `cost_saved_usd`: what the prompt cache and a provider's batches saved against the
    list price, each part only when not zero, the whole only when a part is (so the summaries of
    runs without either read as before)."""
    saved = {name: value for name, value in (("cache", cache), ("batch", batch)) if value}
    return {"cost_saved_usd": saved} if saved else {}


def saved_text(saved: dict | None) -> str:
    """` (saved $x: batch $y, prompt cache $z)` beside the cost, when the run saved something."""
    if not saved:
        return ""
    names = {"batch": "batch", "cache": "prompt cache"}
    parts = ", ".join(f"{names.get(part, part)} ${value:.4f}" for part, value in saved.items())
    return f" (saved ${sum(saved.values()):.4f}: {parts})"


class Model(Protocol):
    def complete(self, request: Request) -> Completion: ...

    def conversation(self, folder: str, item_id: str) -> AbstractContextManager[None]:
        """The calls made inside belong to one item (a dialogue): one cassette for all of them."""
        ...
