"""Options and keys checked up front: a bad key, directory, number, price, base URL, retry-wait cap
or alias is one usage error before any item; no key reaches a traceback, a manifest or a message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakeprovider import status
from helpers import add_eval_module, model_entry, models_yaml, question, recording_args, the_run, write_jsonl

KEY_VAR = "HARDENING_KEY"
SECRET = "sk-hardening-0123456789abcdef"  # never to be printed
URL_SECRET = "url-pass-9876543210"  # the password part of a base URL


def hardening_models(url: str | None, **fields) -> str:
    """A models file whose `fake` model at `url` reads its key from KEY_VAR."""
    return models_yaml(model_entry(url, key_var=KEY_VAR, **fields))


def project(pytester: pytest.Pytester, models: str, questions: int = 2) -> list[str]:
    """The eval module, a models file and a small bank: the arguments of a recording run of `fake`."""
    add_eval_module(pytester)
    bank = write_jsonl(
        pytester.path / "bank.jsonl", [question(f"q-{i}", "TRUE" if i % 2 else "FALSE") for i in range(questions)]
    )
    return recording_args(pytester, models, bank)


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + "\n" + result.stderr.str()


def error_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stderr.lines if line.startswith("ERROR")]


def assert_one_usage_error(result: pytest.RunResult, *needles: str) -> str:
    """Exit 4 with exactly one `ERROR: ...` line holding every needle; no traceback, no INTERNALERROR."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    lines = error_lines(result)
    assert len(lines) == 1, output(result)
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "Traceback" not in output(result) and "INTERNALERROR" not in output(result)
    return lines[0]


def completions(pytester: pytest.Pytester) -> list[dict]:
    path = the_run(pytester.path / "results", "fake") / "completions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


CONFTEST_HARNESS_ERROR = """
import requests.adapters

def _send(self, request, **kwargs):
    raise RuntimeError("harness error planted below the HTTP client")

requests.adapters.HTTPAdapter.send = _send
"""


# --- 3. model aliases are names, not paths ---

BAD_ALIASES = [
    "../escape",
    "../../x",
    "/tmp/abs-alias",
    "a/b",
    "..",
    ".hidden",
    "x..y",
    "x" * 65,
    "-dash",
    "ok\n",
    "a b",
    "x:y",
]


def oracle_models_file(pytester, alias: str) -> Path:
    """The eval module, and a models file naming the oracle baseline under `alias` (quoted as JSON,
    so any string is the key as written)."""
    add_eval_module(pytester)
    models = pytester.path / "models.yaml"
    models.write_text("models:\n  " + json.dumps(alias) + ":\n    provider: baseline\n    model_id: oracle\n")
    return models


@pytest.mark.slow
@pytest.mark.parametrize(
    "raw",
    [f"{SECRET[:8]} {SECRET[8:]}", f"{SECRET[:8]}\x1b{SECRET[8:]}", f"{SECRET[:8]}\u00e9{SECRET[8:]}"],
    ids=["inner-space", "control-character", "non-ascii"],
)
def test_a_key_with_inner_whitespace_or_control_characters_is_refused_before_any_item(
    pytester, server, monkeypatch, raw
) -> None:
    monkeypatch.setenv(KEY_VAR, raw)
    result = pytester.runpytest_subprocess(*project(pytester, hardening_models(server.openai_base)))
    line = assert_one_usage_error(result, "pytest-reasoning-evals:", KEY_VAR)
    assert SECRET[:8] not in output(result) and SECRET[8:] not in output(result), line
    assert server.requests == []


@pytest.mark.slow
@pytest.mark.parametrize("verbosity", [[], ["-vv"]], ids=["truncated-locals", "full-locals"])
def test_no_key_in_a_traceback_with_showlocals(pytester, server, monkeypatch, verbosity) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET + "\n")
    args = project(pytester, hardening_models(server.openai_base))
    pytester.makeconftest(CONFTEST_HARNESS_ERROR)
    result = pytester.runpytest_subprocess(*args, "--tb=long", "-l", *verbosity)
    text = output(result)
    assert "harness error planted below the HTTP client" in text  # the traceback is shown ...
    assert "headers" in text and "sessions.py" in text  # ... with the locals of the frames inside requests
    assert SECRET not in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED


CONFTEST_RAISE_IN_SEND = """
import http.client


class Planted(Exception):
    pass


def send(self, data):
    raise {error}("planted inside HTTPConnection.send")


http.client.HTTPConnection.send = send
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("error", ["ValueError", "Planted"])
def test_no_key_in_a_traceback_raised_inside_the_connections_send(
    pytester, server, monkeypatch, error, workers
) -> None:
    """An exception that is no OSError raised where the request's bytes (the key's header among them)
    are sent: the traceback with every frame's locals shows no key (issue 38, Low 11)."""
    monkeypatch.setenv(KEY_VAR, SECRET)
    args = project(pytester, hardening_models(server.openai_base))
    pytester.makeconftest(CONFTEST_RAISE_IN_SEND.format(error=error))
    result = pytester.runpytest_subprocess(*args, "--tb=long", "-l", "-vv", "-n", workers)
    text = output(result)
    assert "planted inside HTTPConnection.send" in text and "client.py" in text  # the traceback is shown ...
    assert SECRET not in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow
def test_a_gzip_body_that_is_not_gzip_fails_the_item_in_one_line_and_shows_no_key(
    pytester, server, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    server.extra_headers["Content-Encoding"] = "gzip"  # the JSON body is sent as is
    result = pytester.runpytest_subprocess(*project(pytester, hardening_models(server.openai_base)), "--tb=long", "-l")
    text = output(result)
    assert SECRET not in text
    assert "Traceback" not in text and "DecodeError" not in text.replace("(DecodeError)", "").replace(
        "(ContentDecodingError)", ""
    )
    errors = [c["error"] for c in completions(pytester)]
    assert len(errors) == 2 and all(e.startswith("malformed provider response") for e in errors), errors
    assert len(server.requests) == 2  # a malformed reply is not retried
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the failed-calls gate


GOOGLE_KEY = "AIza" + "SyHardening0123456789abcdefghijklmno"  # a Google API key's shape (AIza + 35)


@pytest.mark.slow
@pytest.mark.parametrize("parameter", ["key", "api_key"])
def test_a_key_in_a_base_urls_query_reaches_no_file_and_no_message(pytester, server, monkeypatch, parameter) -> None:
    """A Gemini-style `?key=AIza...` in a base URL (the models file's and --eval-base-url) is masked in
    run_manifest.json and in every other file the run writes and in its output (issue 38, Low 12)."""
    monkeypatch.setenv(KEY_VAR, SECRET)
    with_key = f"{server.gemini_base}?{parameter}={GOOGLE_KEY}"
    models = hardening_models(with_key, provider="gemini")
    result = pytester.runpytest_subprocess(*project(pytester, models), f"--eval-base-url={with_key}")
    assert len(server.requests) == 2, output(result)
    run = the_run(pytester.path / "results", "fake")
    manifest = json.loads((run / "run_manifest.json").read_text())
    assert manifest["model_config"]["base_url"] == f"{server.gemini_base}?{parameter}=***"
    assert f"--eval-base-url={server.gemini_base}?{parameter}=***" in manifest["environment"]["args"]
    written = [p for folder in ("results", "cassettes") for p in (pytester.path / folder).rglob("*") if p.is_file()]
    assert {"run_meta.json", "completions.jsonl", "summary.json", "config.json"} <= {p.name for p in written}
    for path in written:
        assert GOOGLE_KEY not in path.read_text(errors="replace"), path
    assert GOOGLE_KEY not in output(result)


@pytest.mark.slow
def test_credentials_in_a_base_url_reach_no_manifest_and_no_message(pytester, server, monkeypatch) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    with_credentials = server.openai_base.replace("http://", f"http://user:{URL_SECRET}@")
    args = project(pytester, hardening_models(with_credentials))
    result = pytester.runpytest_subprocess(*args, f"--eval-base-url={with_credentials}")
    assert result.ret == 0, output(result)
    assert len(server.requests) == 2
    run = the_run(pytester.path / "results", "fake")
    for name in ("run_manifest.json", "run_meta.json", "summary.json", "checkpoints/config.json"):
        assert URL_SECRET not in (run / name).read_text(), name
    for cassette in (pytester.path / "cassettes").rglob("*.yaml"):
        assert URL_SECRET not in cassette.read_text() and SECRET not in cassette.read_text()
    manifest = json.loads((run / "run_manifest.json").read_text())
    assert f"--eval-base-url={server.openai_base.replace('http://', 'http://***@')}" in manifest["environment"]["args"]
    assert manifest["model_config"]["base_url"] == server.openai_base.replace("http://", "http://***@")

    server.script(*[status(401)] * 4)  # the refusal names the URL: masked
    refused = pytester.runpytest_subprocess(
        *args, f"--eval-base-url={with_credentials}", "--eval-record-mode", "rewrite"
    )
    assert refused.ret == pytest.ExitCode.INTERRUPTED
    refused.stdout.fnmatch_lines(["*model key refused: http://***@127.0.0.1:*refused the key in HARDENING_KEY*"])
    assert URL_SECRET not in output(refused) and SECRET not in output(refused)

    # a replay that misses prints this run's command to record the rest: masked too
    missed = pytester.runpytest_subprocess(
        *args,
        f"--eval-base-url={with_credentials}",
        "--eval-record-mode",
        "none",
        "--eval-cassette-dir",
        str(pytester.path / "empty-cassettes"),
    )
    missed.stdout.fnmatch_lines(["*CASSETTE MISSES*record them with:*--eval-base-url=http://***@127.0.0.1:*"])
    assert URL_SECRET not in output(missed)


# --- 7. bad values: one usage error, never an INTERNALERROR ---


@pytest.mark.parametrize("option", ["--eval-out-dir", "--eval-cassette-dir"])
def test_a_directory_option_that_is_an_existing_file_is_a_usage_error(pytester, server, monkeypatch, option) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    args = project(pytester, hardening_models(server.openai_base))
    (pytester.path / "a-file").write_text("not a folder")
    result = pytester.runpytest(*args, option, str(pytester.path / "a-file" / "sub"))
    assert_one_usage_error(result, option, "a-file", "not a folder")
    result = pytester.runpytest(*args, option, str(pytester.path / "a-file"))
    assert_one_usage_error(result, option, "a-file", "not a folder")
    assert server.requests == []


def test_a_directory_ini_option_that_is_an_existing_file_is_a_usage_error(pytester) -> None:
    add_eval_module(pytester)
    (pytester.path / "results-file").write_text("not a folder")
    pytester.makeini("[pytest]\neval_out_dir = results-file\n")
    result = pytester.runpytest("--model", "oracle", "--eval-max-items", "2")
    assert_one_usage_error(result, "eval_out_dir", "results-file")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--eval-max-cost", "nan"),
        ("--eval-max-cost", "inf"),
        ("--eval-max-cost", "-1"),
        ("--eval-max-fol-violation-rate", "nan"),
        ("--eval-min-accuracy", "nan"),
        ("--eval-max-retry-wait", "nan"),
        ("--eval-max-retry-wait", "-5"),
    ],
)
def test_a_number_option_that_is_not_finite_or_negative_is_a_usage_error(pytester, option, value) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest("--model", "oracle", "--eval-max-items", "2", f"{option}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    assert option in result.stderr.str() and "unrecognized" not in result.stderr.str()
    assert "INTERNALERROR" not in output(result)


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_an_ini_max_cost_that_is_not_a_finite_number_is_a_usage_error(pytester, value) -> None:
    add_eval_module(pytester)
    pytester.makeini(f"[pytest]\neval_max_cost = {value}\n")
    result = pytester.runpytest("--model", "oracle", "--eval-max-items", "2")
    assert_one_usage_error(result, "max_cost")


@pytest.mark.parametrize("price", [".nan", ".inf", "-.inf", "-1"])
def test_a_registry_price_must_be_a_finite_number_at_least_zero(pytester, server, monkeypatch, price) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    args = project(pytester, hardening_models(server.openai_base, price_in=price))
    result = pytester.runpytest(*args)
    assert_one_usage_error(result, "models.yaml", "'fake'", "price_in")
    assert server.requests == []


@pytest.mark.parametrize(
    "url",
    [None, "ftp://127.0.0.1/v1", "127.0.0.1:8080/v1", "http:///v1", "http://127.0.0.1:port/v1", "''", "[1, 2]"],
    ids=["missing", "ftp", "no-scheme", "no-host", "bad-port", "empty", "not-a-string"],
)
def test_a_missing_or_malformed_base_url_is_one_usage_error(pytester, server, monkeypatch, url) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    result = pytester.runpytest(*project(pytester, hardening_models(url)))
    assert_one_usage_error(result, "'fake'", "base_url")
    assert server.requests == []


@pytest.mark.parametrize("url", ["not a url", "ftp://host/v1", "http://", f"http://user:{URL_SECRET}@host:port/v1"])
def test_a_malformed_base_url_option_is_one_usage_error(pytester, server, monkeypatch, url) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    result = pytester.runpytest(*project(pytester, hardening_models(server.openai_base)), f"--eval-base-url={url}")
    assert_one_usage_error(result, "--eval-base-url")
    assert URL_SECRET not in output(result)
    assert server.requests == []


@pytest.mark.slow
@pytest.mark.parametrize("where", ["option", "ini"])
def test_the_retry_wait_cap_applies_to_a_whole_run(pytester, server, monkeypatch, where) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    server.script(*[status(429, retry_after="600")] * 10)
    args = project(pytester, hardening_models(server.openai_base))
    if where == "ini":
        pytester.makeini("[pytest]\neval_max_retry_wait = 1.5\n")
        result = pytester.runpytest_subprocess(*args, timeout=60)
    else:
        result = pytester.runpytest_subprocess(*args, "--eval-max-retry-wait", "1.5", timeout=60)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)  # the failed-calls gate
    assert len(server.requests) == 2  # one attempt per item: nobody waited 600 s
    for record in completions(pytester):
        assert "gave up: the server asked to wait 600 s more, over the 1.5 s cap" in record["error"], record["error"]


@pytest.mark.parametrize("alias", BAD_ALIASES, ids=lambda a: repr(a)[1:-1][:20])
def test_a_path_like_alias_in_a_models_file_is_refused_naming_file_and_alias(pytester, alias) -> None:
    models = oracle_models_file(pytester, alias)
    result = pytester.runpytest("--eval-models-file", str(models), "--model", "oracle", "--eval-max-items", "2")
    assert_one_usage_error(result, str(models), "alias", repr(alias))
    assert not (pytester.path / "escape_zeroshot-subset").exists()


def test_a_models_file_alias_never_writes_outside_the_out_dir(pytester) -> None:
    models = oracle_models_file(pytester, "../escape")
    result = pytester.runpytest("--eval-models-file", str(models), "--model", "../escape", "--eval-max-items", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    assert not (pytester.path / "escape_zeroshot-subset").exists() and not (pytester.path / "results").exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--model", "../../x"),
        ("--model", "/abs"),
        ("--eval-judge-model", "fine,../x"),
        ("--eval-compare-models", "a/b"),
        ("--model", "x" * 65),
    ],
)
def test_a_path_like_alias_on_the_command_line_is_a_usage_error(pytester, option, value) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest(f"{option}={value}", "--eval-max-items", "2")
    assert_one_usage_error(result, option, "not a valid model alias")
    assert not (pytester.path / "results").exists()


def test_valid_aliases_still_work(pytester) -> None:
    models = oracle_models_file(pytester, "My_model-1.5b")
    result = pytester.runpytest("--eval-models-file", str(models), "--model", "My_model-1.5b", "--eval-max-items", "2")
    assert result.ret == 0, output(result)
    assert (pytester.path / "results" / "My_model-1.5b_zeroshot-subset" / "summary.json").exists()


@pytest.mark.parametrize("extra", [[], ["--eval-max-cost", "5"], ["--eval-resume"]], ids=["plain", "budget", "resume"])
def test_a_default_folder_that_is_an_existing_file_is_a_usage_error(pytester, extra) -> None:
    add_eval_module(pytester)
    (pytester.path / "results").write_text("not a folder")
    result = pytester.runpytest("--model", "oracle", "--eval-max-items", "2", *extra)
    assert_one_usage_error(result, "--eval-out-dir", "results", "not a folder")
