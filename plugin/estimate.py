"""--eval-estimate: what the selected items would cost, before a paid run asks anything.

Each protocol lists the calls its selected items would make (`EvalProtocol.estimate`, one
CallEstimate per call, worst case where the number depends on the answers); this module turns
them into tokens and dollars from the registry's prices and prints one block. Input tokens are the
prompts' characters / 4, or, when the model has cassettes, times its recorded ratio of prompt
tokens to prompt characters; output tokens are each call's max_tokens (and a reasoning model's
thinking budget: the most it may bill), or, when the model has cassettes in that call's folder,
their mean completion tokens (at most the call's cap). No request is sent and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import yaml

from pytest_reasoning_evals.cassette_index import NotACassetteFile, read_bytes

CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text
SAMPLE = 200  # cassette files read per model and folder for its recorded means
BATCH_PRICE = "at the batch price"
MESSAGE_KEYS = ("messages", "system", "contents", "systemInstruction")  # where each wire format puts the prompt


class CallEstimate(NamedTuple):
    """One model call a selected item would make."""

    alias: str  # the model called
    kind: str  # what the call is, as the table names it: "question", "judge", ...
    cassette_folder: str  # where its recordings are (cassettes/<alias>/<folder>/)
    prompt_chars: int  # characters of the messages it sends
    max_tokens: int  # the answer's max_tokens (a reasoning model's thinking budget is added to it)
    batch: bool = False  # sent in a provider batch (--eval-batch): billed at the batch price

    @property
    def label(self) -> str:
        """The call's kind as the table names it."""
        return f"{self.kind} {BATCH_PRICE}" if self.batch else self.kind


# stands, in a request an estimate builds, for a reply as long as max_tokens allows: counted, never built
# (a string of 4 characters a token took 4 GB at max_tokens 1e9)
LONGEST_REPLY = "\x00longest reply\x00"


def text_chars(text: str, reply_chars: int = 0) -> int:
    """The characters of a text, each LONGEST_REPLY in it counted as `reply_chars`."""
    return len(text) + text.count(LONGEST_REPLY) * (reply_chars - len(LONGEST_REPLY))


def chars_of(messages: Iterable[dict], reply_chars: int = 0) -> int:
    """The characters of a request's messages (their contents), each LONGEST_REPLY counted as `reply_chars`."""
    return sum(text_chars(m["content"], reply_chars) for m in messages)


def _texts(value: object) -> int:
    """Characters of the texts in a recorded request body's messages, in any wire format."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(map(_texts, value))
    if isinstance(value, dict):
        return sum(_texts(v) for k, v in value.items() if k in ("content", "text", "parts"))
    return 0


def _recorded_calls(path: Path, usage) -> list[tuple[int, int, int]]:
    """(prompt characters, prompt tokens, completion tokens) of each successful call in a cassette,
    read through the replay's guard (cassette_index.read_bytes: a regular file, at most MAX_BYTES)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    calls = []
    for interaction in yaml.load(read_bytes(path), Loader=loader)["interactions"]:
        if not 200 <= interaction["response"]["status"]["code"] < 300:
            continue
        body = json.loads(interaction["request"]["body"])
        prompt, completion = usage(json.loads(interaction["response"]["body"]["string"]))[:2]
        calls.append((sum(_texts(body.get(k)) for k in MESSAGE_KEYS), prompt, completion))
    return calls


class Recorded:
    """What a model's cassettes say about its calls: prompt tokens per prompt character, and per
    cassette folder the mean completion tokens (each from at most SAMPLE files)."""

    def __init__(self) -> None:
        self.prompt_tokens = self.prompt_chars = self.calls = 0
        self.completions: dict[str, tuple[int, int]] = {}  # folder -> (completion tokens, calls)
        self.skipped: list[str] = []  # one warning line per sampled cassette that could not be read

    @classmethod
    def read(cls, folder: Path, provider: str) -> Recorded:
        from pytest_reasoning_evals.providers.wire import WIRE_FORMATS

        found = cls()
        if provider not in WIRE_FORMATS or not folder.is_dir():
            return found
        usage = WIRE_FORMATS[provider][2]
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            for path in sorted(sub.glob("*.yaml"))[:SAMPLE]:
                try:
                    for call in _recorded_calls(path, usage):
                        found.add(sub.name, *call)
                except (OSError, NotACassetteFile) as exc:
                    found.skipped.append(f"warning: cassette {path} skipped: {getattr(exc, 'strerror', None) or exc}")
                # a cassette that cannot be parsed only leaves the estimate to the rule of thumb
                except Exception as exc:  # noqa: BLE001
                    found.skipped.append(
                        f"warning: cassette {path} skipped: not a readable cassette ({type(exc).__name__})"
                    )
        return found

    def add(self, folder: str, chars: int, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls += 1
        self.prompt_chars += chars
        self.prompt_tokens += prompt_tokens
        total, n = self.completions.get(folder, (0, 0))
        self.completions[folder] = (total + completion_tokens, n + 1)

    @property
    def tokens_per_char(self) -> float | None:
        return self.prompt_tokens / self.prompt_chars if self.prompt_chars else None

    def mean_completion(self, folder: str) -> float | None:
        total, n = self.completions.get(folder, (0, 0))
        return total / n if n else None


class Row(NamedTuple):
    protocol: str
    alias: str
    kind: str
    calls: int
    input_tokens: int
    output_tokens: int
    usd: float


def tokens(call: CallEstimate, spec, seen: Recorded) -> tuple[float, float]:
    """The input and output tokens one call is estimated at (see the module's docstring)."""
    from pytest_reasoning_evals.providers.wire import output_cap

    cap, mean = output_cap(spec, call.max_tokens), seen.mean_completion(call.cassette_folder)
    # a recording made with a larger max_tokens says more than this run may bill
    return call.prompt_chars * (seen.tokens_per_char or 1 / CHARS_PER_TOKEN), cap if mean is None else min(mean, cap)


def priced(spec, batch: bool, input_tokens: float, output_tokens: float) -> float:
    """US dollars of these tokens: at the batch price when they go in a batch."""
    from pytest_reasoning_evals.registry import batch_cost

    return batch_cost(spec, input_tokens, output_tokens) if batch else spec.cost(input_tokens, output_tokens)


def cost(call: CallEstimate, spec, seen: Recorded) -> float:
    """US dollars of one call."""
    return priced(spec, call.batch, *tokens(call, spec, seen))


def rows(protocol: str, calls: list[CallEstimate], specs: dict, recorded: dict[str, Recorded]) -> list[Row]:
    """One row per (model, kind of call) of a protocol's calls, in the order they first appear."""
    groups: dict[tuple[str, str], list[CallEstimate]] = {}
    for call in calls:
        groups.setdefault((call.alias, call.label), []).append(call)
    found = []
    for (alias, label), group in groups.items():
        spec, seen = specs[alias], recorded[alias]
        counted = [tokens(c, spec, seen) for c in group]
        input_tokens, output_tokens = round(sum(i for i, _ in counted)), round(sum(o for _, o in counted))
        usd = priced(spec, group[0].batch, input_tokens, output_tokens)  # one label: all batched or none
        found.append(Row(protocol, alias, label, len(group), input_tokens, output_tokens, usd))
    return found


def dollars(usd: float) -> str:
    return "<$0.01" if 0 < usd < 0.005 else f"${usd:,.2f}"


def sources(calls: list[CallEstimate], specs: dict, recorded: dict[str, Recorded]) -> list[str]:
    """Where each model's numbers come from, one line each."""
    lines = []
    for alias in dict.fromkeys(c.alias for c in calls):
        spec, seen = specs[alias], recorded[alias]
        if seen.tokens_per_char is None:
            given = f"prompt characters / {CHARS_PER_TOKEN} (no cassettes)"
        else:
            given = f"prompt characters x {seen.tokens_per_char:.3f} (its {seen.calls} recorded calls' tokens per character)"
        folders = dict.fromkeys(c.cassette_folder for c in calls if c.alias == alias)
        means = [f"{f} {seen.mean_completion(f):.1f}" for f in folders if seen.mean_completion(f) is not None]
        taken = ["mean recorded completion tokens (" + ", ".join(means) + ")"] if means else []
        if len(means) < len(folders):
            budget = f" + thinking_budget {spec.thinking_budget}" if spec.thinking_budget else ""
            taken.append(f"max_tokens{budget} per call, the most it may bill" + (" (elsewhere)" if means else ""))
        lines.append(
            f"{alias} ({spec.model_id}, ${spec.price_in:g} / ${spec.price_out:g} per 1M tokens in / out{_batch(calls, alias, spec)}): "
            f"input = {given}; output = {'; '.join(taken)}"
        )
    return lines


def _batch(calls: list[CallEstimate], alias: str, spec) -> str:
    """The model's batch prices, when some of its calls go in a batch."""
    from pytest_reasoning_evals.registry import batch_prices

    if not any(c.batch and c.alias == alias for c in calls):
        return ""
    price_in, price_out = batch_prices(spec)
    return f", ${price_in:g} / ${price_out:g} {BATCH_PRICE}"


HEADER = ("protocol", "model", "call", "calls", "input tokens", "output tokens", "USD")


def block(estimates: dict[str, list[CallEstimate] | None], specs: dict, cassette_dir: Path) -> list[str]:
    """The lines --eval-estimate prints: per protocol, model and kind of call a row of calls, tokens
    and dollars, each protocol's total, the total, and where the numbers come from. `estimates`:
    protocol name -> its calls (None: the protocol gives no estimate)."""
    everything = [c for calls in estimates.values() for c in calls or ()]
    recorded = {alias: Recorded.read(cassette_dir / alias, specs[alias].provider) for alias in specs}
    table: list[tuple[str, ...]] = []
    totals = []
    for name, calls in estimates.items():
        if calls is None:
            table.append((name, "(its protocol gives no estimate)", "", "", "", "", ""))
            continue
        found = rows(name, calls, specs, recorded)
        table += [(name, r.alias, r.kind, *_figures(r)) for r in found]
        totals.append(Row(name, "", "", *(sum(r[i] for r in found) for i in range(3, 7))))
        table.append((name, "all", "", *_figures(totals[-1])))
    total = Row("", "", "", *(sum(r[i] for r in totals) for i in range(3, 7)))
    table.append(("TOTAL", "", "", *_figures(total)))
    widths = [max(len(line[i]) for line in (HEADER, *table)) for i in range(len(HEADER))]
    lines = [_line(line, widths) for line in (HEADER, *table)]
    batched = sum(c.batch for c in everything)
    sent = f"is sent ({batched:,} in a batch, {BATCH_PRICE};" if batched else "is live ("
    lines.append(
        f"estimated: {total.calls:,} calls, {total.input_tokens:,} input and {total.output_tokens:,} output tokens, "
        f"{dollars(total.usd)} if every call {sent} a call replayed from its cassette costs nothing)"
    )
    skipped = [line for seen in recorded.values() for line in seen.skipped]
    return lines + sources(everything, specs, recorded) + skipped


def _figures(row: Row) -> tuple[str, ...]:
    return f"{row.calls:,}", f"{row.input_tokens:,}", f"{row.output_tokens:,}", dollars(row.usd)


def _line(cells: tuple[str, ...], widths: list[int]) -> str:
    # names left, numbers right
    return "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
