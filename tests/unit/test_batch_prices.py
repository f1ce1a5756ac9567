"""Batch prices in the registry (plugin/registry.py): given, or half the live price where the provider halves it."""

import pytest

from pytest_reasoning_evals.registry import ModelSpec, RegistryError, batch_cost, batch_prices, load_registry

ENTRY = "models:\n  m:\n    provider: {provider}\n    model_id: x\n    price_in: 2.0\n    price_out: 8.0\n{extra}"


def spec(provider="openai", **prices):
    return ModelSpec("m", provider, "x", price_in=2.0, price_out=8.0, **prices)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_openai_anthropic_and_gemini_batches_cost_half_by_default(provider):
    assert batch_prices(spec(provider)) == (1.0, 4.0)
    assert batch_cost(spec(provider), 1_000_000, 500_000) == pytest.approx(1.0 + 2.0)
    assert batch_cost(spec(provider), 1000, 1000) == pytest.approx(spec(provider).cost(1000, 1000) / 2)


@pytest.mark.parametrize("provider", ["openai_compatible", "baseline"])
def test_a_provider_without_a_known_discount_costs_its_live_price(provider):
    assert batch_prices(spec(provider)) == (2.0, 8.0)


def test_prices_given_win_each_on_its_own():
    assert batch_prices(spec(price_batch_in=0.3)) == (0.3, 4.0)
    assert batch_prices(spec(price_batch_out=0.0)) == (1.0, 0.0)  # 0 is a price, not "not given"
    assert batch_cost(spec(price_batch_in=0.3, price_batch_out=1.2), 2_000_000, 1_000_000) == pytest.approx(1.8)


def test_a_models_file_gives_batch_and_cached_prices(tmp_path):
    own = tmp_path / "models.yaml"
    own.write_text(ENTRY.format(provider="anthropic", extra="    price_batch_in: 1.5\n    price_cached_in: 0.3\n"))
    read = load_registry(own)["m"]
    assert (read.price_batch_in, read.price_batch_out, read.price_cached_in) == (1.5, None, 0.3)
    assert batch_prices(read) == (1.5, 4.0)
    assert read.to_dict()["price_cached_in"] == 0.3


def test_prices_not_given_leave_the_recorded_entry_as_it_was():
    # a run's configuration hashes to_dict(): fields nobody set must not change it
    assert set(spec().to_dict()) == {
        "alias", "provider", "model_id", "api_key_env", "base_url", "price_in", "price_out", "reasoning", "thinking_budget",
    }  # fmt: skip
    assert all(not name.startswith("price_batch") for s in load_registry().values() for name in s.to_dict())


@pytest.mark.parametrize("field", ["price_batch_in", "price_batch_out", "price_cached_in"])
@pytest.mark.parametrize("value", ["-1", ".nan", ".inf", "'cheap'", "true"])
def test_a_bad_batch_price_is_an_error_naming_the_field(tmp_path, field, value):
    own = tmp_path / "models.yaml"
    own.write_text(ENTRY.format(provider="openai", extra=f"    {field}: {value}\n"))
    with pytest.raises(RegistryError, match=f"model 'm': {field} must be a finite number >= 0"):
        load_registry(own)


def test_a_null_batch_price_is_not_given(tmp_path):
    own = tmp_path / "models.yaml"
    own.write_text(ENTRY.format(provider="openai", extra="    price_batch_in: null\n"))
    assert batch_prices(load_registry(own)["m"]) == (1.0, 4.0)


# --- a batch's cached input tokens: at their cache price times the batch's input share ---


def test_cached_tokens_in_a_batch_cost_their_cache_price_times_the_batch_share():
    openai = spec(price_cached_in=0.5)  # batch: $1 / $4, half the list price
    # 1,000 input tokens of which 800 read from the cache, 10 output tokens
    assert batch_cost(openai, 1000, 10, cached_tokens=800) == pytest.approx((200 * 1.0 + 800 * 0.25 + 10 * 4.0) / 1e6)
    assert batch_cost(openai, 1000, 10, cached_tokens=800) == pytest.approx(openai.cost(1000, 10, 800) / 2)
    # Anthropic: reads at price_cached_in, writes at 1.25x price_in (no price_cache_write_in), both halved
    anthropic = spec("anthropic", price_cached_in=0.2)
    priced = (100 * 1.0 + 800 * 0.2 / 2 + 200 * 2.5 / 2 + 10 * 4.0) / 1e6
    assert batch_cost(anthropic, 1100, 10, cached_tokens=800, cache_write_tokens=200) == pytest.approx(priced)
    # a batch input price given: its share of price_in (0.5 / 2.0) applies to the cache prices too
    given = spec(price_batch_in=0.5, price_cached_in=0.4)
    assert batch_cost(given, 1000, 0, cached_tokens=800) == pytest.approx((200 * 0.5 + 800 * 0.4 * 0.25) / 1e6)
    # no input price: the provider's share; a provider without a batch discount: the cache price itself
    free_in = ModelSpec("m", "openai", "x", price_in=0.0, price_out=8.0, price_cached_in=0.4)
    assert batch_cost(free_in, 1000, 10, cached_tokens=800) == pytest.approx((800 * 0.2 + 10 * 4.0) / 1e6)
    local = spec("openai_compatible", price_cached_in=0.5)
    assert batch_cost(local, 1000, 10, cached_tokens=800) == pytest.approx(local.cost(1000, 10, 800))
    # no cached tokens: the very float of before
    assert batch_cost(openai, 1000, 10) == (1000 * 1.0 + 10 * 4.0) / 1e6


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_reply_and_its_replay_are_priced_by_the_same_function(provider):
    """What a batch pays (BatchAnswers, batch/run.py) and what its replay costs (the cassette's
    marker read by completion_from) are registry.batch_cost of the reply's tokens, cached ones too."""
    from pytest_reasoning_evals.batch import entry_for
    from pytest_reasoning_evals.batch.run import BatchAnswers
    from pytest_reasoning_evals.providers.base import Request
    from pytest_reasoning_evals.providers.http import BATCH_HEADER, HttpModel

    own = ModelSpec(
        "m", provider, "x", base_url="http://127.0.0.1:9/v1", price_in=2.0, price_out=8.0, price_cached_in=0.5
    )
    if provider == "openai":  # 1,000 prompt tokens, 800 of them read from the cache
        reply = {
            "choices": [{"message": {"content": "TRUE"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}},
        }
        tokens = (1000, 10, 800, 0)
    else:  # 100 tokens neither read nor written, 800 read, 200 written
        reply = {
            "content": [{"type": "text", "text": "TRUE"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 100,
                "output_tokens": 10,
                "cache_read_input_tokens": 800,
                "cache_creation_input_tokens": 200,
            },
        }
        tokens = (1100, 10, 800, 200)
    model = HttpModel(own)
    request = Request(item_id="q1", cassette_folder="chaosbench", messages=({"role": "user", "content": "Is it?"},))
    paid, response = BatchAnswers(model, {entry_for(own, request).custom_id: reply}).exchange(request)
    assert response.raw.headers[BATCH_HEADER] == provider  # the cassette's marker: the provider, nothing more
    replayed = model.completion_from(response.content, None, 0.0, batch=True)
    listed = model.completion_from(response.content, None, 0.0)  # a cassette without the marker
    assert paid.cost_usd == replayed.cost_usd == batch_cost(own, *tokens)
    assert (paid.batch, replayed.batch, listed.batch) == (True, True, False)
    assert listed.cost_usd == own.cost(*tokens) and listed.batch_saved_usd == 0.0
    saved = own.cost(*tokens) - batch_cost(own, *tokens)
    assert paid.batch_saved_usd == replayed.batch_saved_usd == pytest.approx(saved) and saved > 0
    assert paid.cache_saved_usd == replayed.cache_saved_usd == listed.cache_saved_usd > 0  # the cache part as live
