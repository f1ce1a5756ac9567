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
