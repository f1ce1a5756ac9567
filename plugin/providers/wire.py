"""Wire formats: how each provider's request body is built and its response read.

Each format is three pure functions, so the HTTP client (http.py) owns all I/O, retries and
errors. `parse` raises KeyError/TypeError/IndexError/ValueError on a body that lacks what it
needs or holds what no completion holds (a text that is a number, a token count that is
negative, fractional, infinite or absurd); the client turns that into an item error. `usage`
reads the token counts alone: a reply whose answer cannot be read may still say what it cost.
Input tokens read from or written to the provider's prompt cache are counted in the input tokens
and apart (OpenAI's cached_tokens are part of prompt_tokens; Anthropic's cache_read_input_tokens
and cache_creation_input_tokens are apart from input_tokens, so they are added to it).
A header carrying the key is a Secret: it prints as '***' wherever the header dict is shown (a
traceback's locals included).

A registry entry with `reasoning: true` is sent as its API wants it (`sent_temperature`,
`output_cap`): OpenAI's reasoning models (o1, o3, o4-mini, gpt-5) refuse `temperature` and
`max_tokens` and take `max_completion_tokens`, which their hidden reasoning counts against too;
Anthropic enables extended thinking with `thinking.budget_tokens` and `max_tokens` above it, and
takes no temperature then (thinking is incompatible with a changed temperature: the API's 1
applies); Gemini 2.5 gets `thinkingConfig.thinkingBudget` and `maxOutputTokens` covering it
(its thoughts count against it), temperature kept. An entry's `thinking_budget` is added to the
answer's max_tokens everywhere, so the answer keeps its own room.

With --eval-prompt-cache (ModelSpec.prompt_cache) an Anthropic request's system prompt is a content
block marked `cache_control`; OpenAI caches a long prefix by itself, so its body does not change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from pytest_reasoning_evals.providers.base import Request, Secret
from pytest_reasoning_evals.registry import ModelSpec


@dataclass(frozen=True)
class Call:
    url: str
    headers: dict
    body: dict


MOST_TOKENS = 10**9  # more than any context window, far less than a float loses count of: above it a count is absurd


def tokens(value: object, name: str) -> int:
    """A token count of a reply: a whole number in 0..MOST_TOKENS (absent or null: 0)."""
    if value is None:
        return 0
    whole = isinstance(value, int) or isinstance(value, float) and value.is_integer()
    if isinstance(value, bool) or not whole or not 0 <= value <= MOST_TOKENS:
        raise ValueError(f"{name} is not a token count: {str(value)[:20]}")
    return int(value)


def text_of(parts: object, name: str, keep: Callable[[dict], bool] = lambda part: True) -> str:
    """The text of a reply given as a string, or as a list of parts ({"text": ...}) of which
    those `keep` accepts are joined; None is no text."""
    if parts is None or isinstance(parts, str):
        return parts or ""
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise TypeError(f"{name} is neither a text nor a list of parts")
    texts = [p.get("text", "") for p in parts if keep(p)]
    if not all(isinstance(t, str) for t in texts):
        raise TypeError(f"a part of {name} has a text that is not a string")
    return "".join(texts)


def reason(value: object, name: str) -> str | None:
    """Why the reply ended, as the provider says it: a string, or None."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} is not a string")
    return value


class Tokens(NamedTuple):
    """The token counts of a reply (a wire format's `usage`)."""

    input: int
    output: int
    thinking: int
    cached: int = 0  # input tokens read from the prompt cache (part of `input`)
    cache_write: int = 0  # input tokens written to the prompt cache (part of `input`)


@dataclass(frozen=True)
class Parsed:
    text: str
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    finish_reason: str | None
    reasoning: str = ""  # provider-side reasoning returned apart from the answer text
    cached_tokens: int = 0  # input tokens read from the prompt cache (part of input_tokens)
    cache_write_tokens: int = 0  # input tokens written to the prompt cache (part of input_tokens)

    @classmethod
    def of(cls, text: str, used: Tokens, finish_reason: str | None, reasoning: str) -> Parsed:
        return cls(text, *used[:3], finish_reason, reasoning, used.cached, used.cache_write)


def thinks(spec: ModelSpec) -> bool:
    """The entry is a reasoning model whose wire format sends reasoning parameters."""
    return spec.reasoning and spec.provider in ("openai", "anthropic", "gemini")


def output_cap(spec: ModelSpec, max_tokens: int) -> int:
    """The most output tokens one call may bill: the answer's max_tokens, and a reasoning model's
    thinking budget (thinking is billed as output)."""
    return max_tokens + (spec.thinking_budget or 0) if thinks(spec) else max_tokens


def sent_temperature(spec: ModelSpec, temperature: float) -> float | None:
    """The temperature a request sends; None: none is sent (OpenAI reasoning models refuse one;
    Anthropic thinking takes only its default)."""
    if thinks(spec) and (spec.provider == "openai" or spec.provider == "anthropic" and spec.thinking_budget):
        return None
    return temperature


# --- OpenAI chat completions (also Ollama, vLLM, llama.cpp: openai_compatible) ---


def openai_call(spec: ModelSpec, request: Request, key: str | None) -> Call:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = Secret(f"Bearer {key}")
    body = {"model": spec.model_id, "messages": list(request.messages)}
    if sent_temperature(spec, request.temperature) is None:
        # o1/o3/o4-mini/gpt-5 refuse temperature and max_tokens; their reasoning counts against this cap
        cap = request.completion_cap
        body["max_completion_tokens"] = output_cap(spec, request.max_tokens) if cap is None else cap
    elif request.seeded:
        body.update(temperature=request.temperature, max_tokens=request.max_tokens)
    else:  # upstream ChaosBench-Logic's key order too, so its bodies are the same bytes
        body.update(max_tokens=request.max_tokens, temperature=request.temperature)
    if request.seeded:
        body["seed"] = 0 if request.seed is None else request.seed
    elif request.seed is not None:  # a body that must carry no seed tells its repeats apart by a tag
        body["user"] = f"seed-{request.seed}"
    if request.json_schema is not None:
        if spec.provider == "openai":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request.json_schema, "strict": True},
            }
        else:  # llama.cpp (and vLLM) turn a schema in json_object mode into a grammar
            body["response_format"] = {"type": "json_object", "schema": request.json_schema}
    return Call(f"{spec.base_url.rstrip('/')}/chat/completions", headers, body)


def openai_usage(data: dict) -> Tokens:
    usage = data.get("usage") or {}
    details = usage.get("completion_tokens_details") or {}
    prompt = tokens(usage.get("prompt_tokens"), "prompt_tokens")
    cached = tokens((usage.get("prompt_tokens_details") or {}).get("cached_tokens"), "cached_tokens")
    if cached > prompt:
        raise ValueError(f"cached_tokens ({cached}) exceed prompt_tokens ({prompt})")
    return Tokens(
        prompt,
        tokens(usage.get("completion_tokens"), "completion_tokens"),  # already includes reasoning tokens
        tokens(details.get("reasoning_tokens"), "reasoning_tokens"),
        cached,
    )


def openai_parse(data: dict) -> Parsed:
    choice = data["choices"][0]
    # OpenAI-compatible servers may send the content as a list of parts ({"type": "text", "text": ...})
    message = choice["message"]
    text = text_of(message.get("content"), "message content", lambda part: part.get("type", "text") == "text")
    # llama.cpp, vLLM and DeepSeek return a reasoning model's thinking beside the content
    thought = text_of(message.get("reasoning_content") or message.get("reasoning"), "message reasoning")
    return Parsed.of(text, openai_usage(data), reason(choice.get("finish_reason"), "finish_reason"), thought)


# --- Anthropic messages ---


def anthropic_call(spec: ModelSpec, request: Request, key: str | None) -> Call:
    system = [m["content"] for m in request.messages if m["role"] == "system"]
    body = {
        "model": spec.model_id,
        "messages": [m for m in request.messages if m["role"] != "system"],
        "max_tokens": output_cap(spec, request.max_tokens),
    }
    if sent_temperature(spec, request.temperature) is None:
        # max_tokens must exceed budget_tokens: output_cap adds the answer's own tokens to it
        body["thinking"] = {"type": "enabled", "budget_tokens": spec.thinking_budget}
    else:
        body["temperature"] = request.temperature
    if system:
        body["system"] = cached_prefix("\n\n".join(system)) if spec.prompt_cache else "\n\n".join(system)
    if request.seed is not None:
        # the Messages API has no seed: the repeat's seed tags the request so no two are identical
        body["metadata"] = {"user_id": f"seed-{request.seed}"}
    headers = {"Content-Type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": Secret(key or "")}
    return Call(f"{spec.base_url.rstrip('/')}/messages", headers, body)


def cached_prefix(system: str) -> list[dict]:
    """The system prompt as content blocks, the last marked for Anthropic's prompt cache: the
    prefix every question repeats is read from the cache at a tenth of the input price."""
    return [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]


def anthropic_usage(data: dict) -> Tokens:
    usage = data["usage"]
    read = tokens(usage.get("cache_read_input_tokens"), "cache_read_input_tokens")
    written = tokens(usage.get("cache_creation_input_tokens"), "cache_creation_input_tokens")
    return Tokens(
        tokens(usage.get("input_tokens"), "input_tokens") + read + written,  # input_tokens counts neither
        tokens(usage.get("output_tokens"), "output_tokens"),  # billed output, thinking included
        0,
        read,
        written,
    )


def anthropic_parse(data: dict) -> Parsed:
    blocks = data["content"]
    if not isinstance(blocks, list) or not blocks:
        raise IndexError("empty content list")  # like openai's empty choices and gemini's empty candidates
    text = text_of(blocks, "content", lambda block: block.get("type") == "text")
    thought = "".join(b.get("thinking") or "" for b in blocks if b.get("type") == "thinking")
    return Parsed.of(text, anthropic_usage(data), reason(data.get("stop_reason"), "stop_reason"), thought)


# --- Gemini generateContent ---


def gemini_call(spec: ModelSpec, request: Request, key: str | None) -> Call:
    system = [m["content"] for m in request.messages if m["role"] == "system"]
    contents = [
        {"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": m["content"]}]}
        for m in request.messages
        if m["role"] != "system"
    ]
    body = {
        "contents": contents,
        "generationConfig": {
            "temperature": request.temperature,
            "maxOutputTokens": output_cap(spec, request.max_tokens),
        },
    }
    if thinks(spec) and spec.thinking_budget:
        # Gemini 2.5's thoughts count against maxOutputTokens, which output_cap raised by the budget
        body["generationConfig"]["thinkingConfig"] = {"thinkingBudget": spec.thinking_budget}
    if request.seed is not None:
        body["generationConfig"]["seed"] = request.seed
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    if request.json_schema is not None:
        body["generationConfig"].update(responseMimeType="application/json", responseSchema=request.json_schema)
    headers = {"Content-Type": "application/json", "x-goog-api-key": Secret(key or "")}
    return Call(f"{spec.base_url.rstrip('/')}/models/{spec.model_id}:generateContent", headers, body)


def gemini_usage(data: dict) -> Tokens:
    usage = data.get("usageMetadata") or {}
    thoughts = tokens(usage.get("thoughtsTokenCount"), "thoughtsTokenCount")
    # candidatesTokenCount excludes thoughts, which are billed as output: add them once.
    return Tokens(
        tokens(usage.get("promptTokenCount"), "promptTokenCount"),
        tokens(usage.get("candidatesTokenCount"), "candidatesTokenCount") + thoughts,
        thoughts,
    )


def gemini_parse(data: dict) -> Parsed:
    candidate = data["candidates"][0]
    parts = (candidate.get("content") or {}).get("parts", [])
    text = text_of(parts, "content parts", lambda part: not part.get("thought"))
    thought = text_of(parts, "content parts", lambda part: bool(part.get("thought")))
    return Parsed.of(text, gemini_usage(data), reason(candidate.get("finishReason"), "finishReason"), thought)


Usage = Callable[[dict], Tokens]  # the token counts of a reply
WIRE_FORMATS: dict[str, tuple[Callable[..., Call], Callable[[dict], Parsed], Usage]] = {
    "openai": (openai_call, openai_parse, openai_usage),
    "openai_compatible": (openai_call, openai_parse, openai_usage),
    "anthropic": (anthropic_call, anthropic_parse, anthropic_usage),
    "gemini": (gemini_call, gemini_parse, gemini_usage),
}
