"""The model registry: aliases -> provider, model id, key variable, base URL and prices.

Every entry is checked when its file is read, so a bad one is one error naming the file and the
alias: an alias is a name and never a path (it names cassette and result folders), a base URL is
an http(s) address with a host, a price is a finite number >= 0, `reasoning` is true or false and
`thinking_budget` (a reasoning model's tokens of thinking, providers.wire) a whole number.

Batch prices (docs/batch.md): `price_batch_in` / `price_batch_out` when an entry gives them, else
the provider's batch share of price_in / price_out (OpenAI and Anthropic bill a batch at half);
a batch's cached input tokens at their cache price times the batch's input share (batch_cost).
Prompt cache prices (`cache_prices`): `price_cached_in` for input tokens read from the cache, else
price_in; `price_cache_write_in` for those written to it, else the provider's write share of
price_in (Anthropic bills a write at 1.25x).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from pytest_reasoning_evals.providers.base import alias_problem, finite_at_least_zero, mask_url, url_problem
from pytest_reasoning_evals.shipped import registry_file

PROVIDERS = ("openai", "anthropic", "gemini", "openai_compatible", "baseline")
BASELINES = ("always-true", "always-false", "random", "oracle", "shortcut")
THINKING_PROVIDERS = ("openai", "anthropic", "gemini")  # the wire formats that send a thinking budget
MIN_THINKING_BUDGET = {"anthropic": 1024}  # the Messages API refuses a smaller budget_tokens
BATCH_SHARE = {
    "openai": 0.5,
    "anthropic": 0.5,
    "gemini": 0.5,
}  # what a batch costs of the live price where the provider says so
CACHE_WRITE_SHARE = {
    "anthropic": 1.25
}  # what a prompt cache write costs of the input price where the provider bills one
PRICES = ("price_in", "price_out")
OPTIONAL_PRICES = (
    "price_batch_in",
    "price_batch_out",
    "price_cached_in",
    "price_cache_write_in",
)  # absent or null: not given


# what an entry says of where and at what price its model is reached, not of what it answers
NOT_ANSWERING = ("base_url", "api_key_env", "price_in", "price_out", *OPTIONAL_PRICES)
RUN_FIELDS = ("prompt_cache",)  # what a run's options set on an entry (Models.spec), never a models file


class RegistryError(Exception):
    """A registry file is malformed or an alias is unknown."""


@dataclass(frozen=True)
class ModelSpec:
    alias: str
    provider: str
    model_id: str
    api_key_env: str | None = None
    base_url: str | None = None
    price_in: float = 0.0  # $ per 1M input tokens
    price_out: float = 0.0  # $ per 1M output tokens
    reasoning: bool = False  # a reasoning model: its wire format sends its own parameters (providers.wire)
    thinking_budget: int | None = None  # tokens it may think, on top of the answer's max_tokens
    price_batch_in: float | None = None  # $ per 1M input tokens sent in a batch; None: batch_prices' default
    price_batch_out: float | None = None  # $ per 1M output tokens of a batch; None: batch_prices' default
    price_cached_in: float | None = None  # $ per 1M input tokens read from the prompt cache; None: price_in
    price_cache_write_in: float | None = None  # $ per 1M input tokens written to the prompt cache; None: cache_prices
    prompt_cache: bool = False  # --eval-prompt-cache (set by the run, never by a models file): wire.anthropic_call

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0) -> float:
        """US dollars of one call; `cached_tokens` and `cache_write_tokens` are part of `input_tokens`."""
        tokens = (input_tokens, output_tokens, cached_tokens, cache_write_tokens)
        return tokens_cost(self, tokens, (self.price_in, self.price_out), 1.0)

    def to_dict(self) -> dict:
        """The entry as JSON-able values, for outputs: a base URL's credentials masked. A price
        not given is left out, so a run's configuration (and its hash) reads as before they existed."""
        fields = asdict(self)
        if fields["base_url"]:
            fields["base_url"] = mask_url(fields["base_url"])
        return {
            k: v
            for k, v in fields.items()
            if not (k in OPTIONAL_PRICES and v is None or k in RUN_FIELDS and not v)  # prompt_cache: only when on
        }


def answering(entry: dict) -> dict:
    """An entry as ModelSpec.to_dict gives it (or a run kept it) without what decides no answer:
    a run's configuration, which a resume and a shard merge match, survives a corrected price and
    a local server come back on another port."""
    return {k: v for k, v in entry.items() if k not in NOT_ANSWERING}


def batch_prices(spec: ModelSpec) -> tuple[float, float]:
    """$ per 1M input and output tokens of a batch: the entry's own, else the provider's batch
    share of its live prices (a provider without a known batch discount: the live prices)."""
    share = BATCH_SHARE.get(spec.provider, 1.0)
    given_in, given_out = spec.price_batch_in, spec.price_batch_out
    return (
        spec.price_in * share if given_in is None else given_in,
        spec.price_out * share if given_out is None else given_out,
    )


def batch_share_in(spec: ModelSpec) -> float:
    """What a batch's input costs of the live input price: batch_prices' input price over price_in
    (a model without an input price: the provider's batch share)."""
    if not spec.price_in:
        return BATCH_SHARE.get(spec.provider, 1.0)
    return batch_prices(spec)[0] / spec.price_in


def batch_cost(
    spec: ModelSpec, input_tokens: int, output_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0
) -> float:
    """US dollars of one request answered in a batch: its fresh input and output tokens at the batch
    prices, and its input tokens read from or written to the prompt cache at their cache prices
    (cache_prices) times the batch's input share (batch_share_in): Anthropic and OpenAI apply the
    batch discount on top of the cache prices. `cached_tokens` and `cache_write_tokens` are part of
    `input_tokens`, as for ModelSpec.cost. The one price of a batched call: what a batch pays
    (batch/run.py) and what its replay costs (providers/http.py)."""
    tokens = (input_tokens, output_tokens, cached_tokens, cache_write_tokens)
    return tokens_cost(spec, tokens, batch_prices(spec), batch_share_in(spec))


def tokens_cost(
    spec: ModelSpec, tokens: tuple[int, int, int, int], prices: tuple[float, float], cache_share: float
) -> float:
    """US dollars of (input, output, cached, cache-write) tokens: the fresh input and the output at
    `prices` (per 1M), the cached and cache-written input at their cache prices times `cache_share`."""
    input_tokens, output_tokens, cached_tokens, cache_write_tokens = tokens
    price_in, price_out = prices
    if not (cached_tokens or cache_write_tokens):
        return (input_tokens * price_in + output_tokens * price_out) / 1e6
    read, write = cache_prices(spec)
    fresh = input_tokens - cached_tokens - cache_write_tokens
    cached = (cached_tokens * read + cache_write_tokens * write) * cache_share
    return (fresh * price_in + cached + output_tokens * price_out) / 1e6


def cache_prices(spec: ModelSpec) -> tuple[float, float]:
    """$ per 1M input tokens read from and written to the prompt cache: the entry's own, else
    price_in for a read and the provider's write share of it for a write."""
    read, write = spec.price_cached_in, spec.price_cache_write_in
    return (
        spec.price_in if read is None else read,
        spec.price_in * CACHE_WRITE_SHARE.get(spec.provider, 1.0) if write is None else write,
    )


def cache_saving(spec: ModelSpec, cached_tokens: int, cache_write_tokens: int) -> float:
    """US dollars the prompt cache saved on one call against price_in for every input token
    (negative when writing the cache cost more than reading it saved)."""
    read, write = cache_prices(spec)
    return (cached_tokens * (spec.price_in - read) + cache_write_tokens * (spec.price_in - write)) / 1e6


def _parse_entry(alias: str, entry: object, source: Path) -> ModelSpec:
    where = f"{source}: model {alias!r}"
    problem = alias_problem(alias)
    if problem:
        raise RegistryError(f"{source}: {problem}")
    if not isinstance(entry, dict):
        raise RegistryError(f"{where}: expected a mapping of fields, got {type(entry).__name__}")
    unknown = set(entry) - {f for f in ModelSpec.__dataclass_fields__ if f not in ("alias", *RUN_FIELDS)}
    if unknown:
        raise RegistryError(f"{where}: unknown field(s) {sorted(unknown)}")
    for field in ("provider", "model_id"):
        if not entry.get(field):
            raise RegistryError(f"{where}: missing field {field!r}")
    if entry["provider"] not in PROVIDERS:
        raise RegistryError(f"{where}: provider {entry['provider']!r} is not one of {', '.join(PROVIDERS)}")
    if entry["provider"] == "baseline" and entry["model_id"] not in BASELINES:
        raise RegistryError(f"{where}: baseline model_id must be one of {', '.join(BASELINES)}")
    for field in (*PRICES, *OPTIONAL_PRICES):
        value = entry.get(field, 0.0 if field in PRICES else None)
        if not (finite_at_least_zero(value) or value is None and field in OPTIONAL_PRICES):
            raise RegistryError(
                f"{where}: {field} must be a finite number >= 0 (US dollars per 1M tokens), got {value!r}"
            )
    _check_reasoning(entry, where)
    if entry.get("base_url") is not None:
        problem = url_problem(entry["base_url"])
        if problem:
            raise RegistryError(f"{where}: base_url {problem}")
    return ModelSpec(alias=alias, **entry)


def _check_reasoning(entry: dict, where: str) -> None:
    """`reasoning` is a bool; `thinking_budget` a whole number of tokens, of a reasoning model of a
    provider that takes one, at least the provider's minimum."""
    if not isinstance(entry.get("reasoning", False), bool):
        raise RegistryError(f"{where}: reasoning must be true or false, got {entry['reasoning']!r}")
    budget = entry.get("thinking_budget")
    if budget is None:
        if entry.get("reasoning") and entry["provider"] == "anthropic":
            # Claude thinks only when asked to, with a budget
            raise RegistryError(f"{where}: reasoning: true needs thinking_budget (tokens, >= 1024) for anthropic")
        return
    least = MIN_THINKING_BUDGET.get(entry["provider"], 1)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < least:
        raise RegistryError(f"{where}: thinking_budget must be a whole number of tokens >= {least}, got {budget!r}")
    if not entry.get("reasoning") or entry["provider"] not in THINKING_PROVIDERS:
        raise RegistryError(
            f"{where}: thinking_budget needs reasoning: true and a provider of {', '.join(THINKING_PROVIDERS)}"
        )


def _data(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RegistryError(f"cannot read models file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise RegistryError(f"{path}: invalid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise RegistryError(f"{path}: expected a top-level 'models:' mapping of alias -> fields")
    return data


def _panels(data: dict, path: Path) -> dict[str, list[str]]:
    """The file's `judge_panels:` (name -> model aliases), each a name like an alias."""
    panels = data.get("judge_panels") or {}
    if not isinstance(panels, dict):
        raise RegistryError(f"{path}: 'judge_panels:' must map a panel name to a list of model aliases")
    for name, members in panels.items():
        if problem := alias_problem(name):
            raise RegistryError(f"{path}: judge panel {problem}")
        if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members):
            raise RegistryError(f"{path}: judge panel {name!r} must be a non-empty list of model aliases")
    return {str(name): list(members) for name, members in panels.items()}


def load_registry(override: Path | None = None) -> dict[str, ModelSpec]:
    """The shipped registry, with the aliases of `override` (if given) added or replacing."""
    models = {}
    for path in (registry_file(), *([override] if override is not None else [])):
        data = _data(path)
        models.update({str(alias): _parse_entry(str(alias), entry, path) for alias, entry in data["models"].items()})
    return models


def load_judge_panels(override: Path | None = None) -> dict[str, list[str]]:
    """The judge panels of the shipped registry and `override` (its panels added or replacing): a
    name that --eval-judge-model takes for its list of judge models."""
    panels = {}
    for path in (registry_file(), *([override] if override is not None else [])):
        panels.update(_panels(_data(path), path))
    return panels


def resolve(alias: str, registry: dict[str, ModelSpec]) -> ModelSpec:
    try:
        return registry[alias]
    except KeyError:
        raise RegistryError(
            f"unknown model {alias!r}; known models: {', '.join(sorted(registry))} "
            "(add your own with --eval-models-file FILE)"
        ) from None
