"""Wire formats: how each provider's request body is built and its response read.

Each format is two pure functions, so the HTTP client (http.py) owns all I/O, retries and
errors. `parse` raises KeyError/TypeError/IndexError on a body that lacks what it needs; the
client turns that into an item error. A header carrying the key is a Secret: it prints as '***'
wherever the header dict is shown (a traceback's locals included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pytest_reasoning_evals.providers.base import Request, Secret
from pytest_reasoning_evals.registry import ModelSpec


@dataclass(frozen=True)
class Call:
    url: str
    headers: dict
    body: dict


@dataclass(frozen=True)
class Parsed:
    text: str
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    finish_reason: str | None


# --- OpenAI chat completions (also Ollama, vLLM, llama.cpp: openai_compatible) ---


def openai_call(spec: ModelSpec, request: Request, key: str | None) -> Call:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = Secret(f"Bearer {key}")
    body = {
        "model": spec.model_id,
        "messages": list(request.messages),
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": 0,
    }
    if request.json_schema is not None:
        if spec.provider == "openai":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "response", "schema": request.json_schema, "strict": True}}
        else:  # llama.cpp (and vLLM) turn a schema in json_object mode into a grammar
            body["response_format"] = {"type": "json_object", "schema": request.json_schema}
    return Call(f"{spec.base_url.rstrip('/')}/chat/completions", headers, body)


def openai_parse(data: dict) -> Parsed:
    choice = data["choices"][0]
    usage = data.get("usage") or {}
    details = usage.get("completion_tokens_details") or {}
    return Parsed(
        text=choice["message"].get("content") or "",
        input_tokens=int(usage.get("prompt_tokens", 0)),
        output_tokens=int(usage.get("completion_tokens", 0)),  # already includes reasoning tokens
        thinking_tokens=int(details.get("reasoning_tokens", 0)),
        finish_reason=choice.get("finish_reason"),
    )


# --- Anthropic messages ---


def anthropic_call(spec: ModelSpec, request: Request, key: str | None) -> Call:
    system = [m["content"] for m in request.messages if m["role"] == "system"]
    body = {
        "model": spec.model_id,
        "messages": [m for m in request.messages if m["role"] != "system"],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if system:
        body["system"] = "\n\n".join(system)
    headers = {"Content-Type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": Secret(key or "")}
    return Call(f"{spec.base_url.rstrip('/')}/messages", headers, body)


def anthropic_parse(data: dict) -> Parsed:
    usage = data["usage"]
    blocks = data["content"]
    if not isinstance(blocks, list) or not blocks:
        raise IndexError("empty content list")  # like openai's empty choices and gemini's empty candidates
    return Parsed(
        text="".join(b.get("text", "") for b in blocks if b.get("type") == "text"),
        input_tokens=int(usage.get("input_tokens", 0)),
        output_tokens=int(usage.get("output_tokens", 0)),  # billed output, thinking included
        thinking_tokens=0,
        finish_reason=data.get("stop_reason"),
    )


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
        "generationConfig": {"temperature": request.temperature, "maxOutputTokens": request.max_tokens},
    }
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    if request.json_schema is not None:
        body["generationConfig"].update(responseMimeType="application/json", responseSchema=request.json_schema)
    headers = {"Content-Type": "application/json", "x-goog-api-key": Secret(key or "")}
    return Call(f"{spec.base_url.rstrip('/')}/models/{spec.model_id}:generateContent", headers, body)


def gemini_parse(data: dict) -> Parsed:
    candidate = data["candidates"][0]
    usage = data.get("usageMetadata") or {}
    thoughts = int(usage.get("thoughtsTokenCount", 0))
    parts = candidate.get("content", {}).get("parts", [])
    return Parsed(
        text="".join(p.get("text", "") for p in parts if not p.get("thought")),
        input_tokens=int(usage.get("promptTokenCount", 0)),
        # candidatesTokenCount excludes thoughts, which are billed as output: add them once.
        output_tokens=int(usage.get("candidatesTokenCount", 0)) + thoughts,
        thinking_tokens=thoughts,
        finish_reason=candidate.get("finishReason"),
    )


WIRE_FORMATS: dict[str, tuple[Callable[..., Call], Callable[[dict], Parsed]]] = {
    "openai": (openai_call, openai_parse),
    "openai_compatible": (openai_call, openai_parse),
    "anthropic": (anthropic_call, anthropic_parse),
    "gemini": (gemini_call, gemini_parse),
}
