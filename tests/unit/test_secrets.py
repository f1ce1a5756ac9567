"""The secret-shape scanner: what it finds, what it must leave alone, and its command.

No realistic key is written literally here: every planted key is assembled at run time,
so that this file passes the scanner itself and any other secrets scanner run in CI.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from pytest_reasoning_evals.secrets import (
    DEFAULT_PATHS,
    SECRET_PATTERNS,
    Finding,
    _scan_files,
    iter_files,
    main,
    scan_text,
)

# kind -> the planted value; the whole value is what the scanner is expected to match.
PLANTED = {
    "openai": "sk-" + "A1b2" * 8,
    "openai-project": "sk-" + "proj-" + "Zz9_" * 10,
    "anthropic": "sk-" + "ant-api03-" + "Q7w-" * 6 + "xY3z" * 3,
    "google": "AIza" + "B2c3" * 8 + "D4e",
    "bearer": "Bear" + "er " + "x9Y8" * 5,
    "base64": "Zm9v" * 11 + "==",
}
KINDS = {"openai-project": "openai"}  # parameter id -> reported kind, where they differ

CASSETTE = """\
interactions:
- request:
    body: '{{"model": "local-model", "messages": [{{"role": "user", "content": "Answer the following question with TRUE or FALSE. Is the logistic map at r=4 chaotic?"}}], "temperature": 0}}'
    headers:
      Accept:
      - application/json
      Content-Type:
      - application/json
      {header}:
      - {value}
    method: POST
    uri: http://127.0.0.1:8080/v1/chat/completions
  response:
    body:
      string: '{{"id": "chatcmpl-0001", "object": "chat.completion", "choices": [{{"index": 0, "message": {{"role": "assistant", "content": "TRUE"}}, "finish_reason": "stop"}}]}}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
"""
CASSETTE_VALUE_LINE = CASSETTE.splitlines().index("      - {value}") + 1


def cassette(value: str, header: str = "Authorization") -> str:
    return CASSETTE.format(header=header, value=value)


def result_row(item_id: str, raw: str) -> str:
    return json.dumps(
        {
            "item_id": item_id,
            "model": "local-model",
            "mode": "direct",
            "raw_response": raw,
            "parsed": "TRUE",
            "correct": True,
        }
    )


def results_jsonl(value: str) -> str:
    rows = [
        result_row("cb-atomic-001", "TRUE"),
        result_row("cb-perturbation_robustness-008", f"The answer is TRUE. (debug: {value})"),
        result_row("cb-multi_hop-014", "FALSE"),
    ]
    return "\n".join(rows) + "\n"


def assert_masked(finding: Finding, value: str) -> None:
    assert finding.excerpt == value[:4] + "…"
    assert value not in finding.excerpt
    assert value not in str(finding)


# --- false positives ---


SHA256 = hashlib.sha256(b"cases/chaosbench/atomic.jsonl").hexdigest()

NOT_SECRETS = {
    "placeholder sk-...": "Set OPENAI_API_KEY to your key (it looks like `sk-...`) before recording.",
    "placeholder sk-proj-...": "Project keys start with sk-proj-... and are longer.",
    "Bearer token in prose": "The provider sends the key as a Bearer token in the Authorization header.",
    "bearer placeholder": "Authorization: Bearer <YOUR_API_KEY>",
    "bearer env var": 'curl -H "Authorization: Bearer $OPENAI_API_KEY" http://127.0.0.1:8080/v1/models',
    "bearer all-caps placeholder": "Authorization: Bearer REDACTED_BY_VCRPY_FILTER",
    "bearer lowercase words": "the bearer authentication_scheme_is_used_here",
    "vcrpy redacted header": "      - REDACTED",
    "vcrpy redacted bearer": "      - Bearer REDACTED",
    "sha256 digest": f'"manifest_hash": "{SHA256}",',
    "sha256 digest uppercase": f"sha256={SHA256.upper()}",
    "sha256 in csv": f"cb-atomic-001,{SHA256},{SHA256[:12]}",
    "git sha": "commit " + hashlib.sha1(b"x").hexdigest(),
    "long english words": "pneumonoultramicroscopicsilicovolcanoconiosis and antidisestablishmentarianism"
    " and Supercalifragilisticexpialidocious",
    "glued words": "internationalizationcharacterizationsincomprehensibilities",
    "snake_case id": '"item_id": "cb-perturbation_robustness-008"',
    "long snake_case id": "chaosbench_perturbation_robustness_family_item_00008_variant_B",
    "word ending in sk-": "risk-assessment_for_long_identifier_names_0001",
    "cassette uri": "    uri: http://127.0.0.1:8080/v1/chat/completions",
    "cassette body": '    body: \'{"messages": [{"role": "user", "content": "Answer the following question'
    " with TRUE or FALSE: a system with a positive Lyapunov exponent is chaotic.\"}]}'",
    "absolute path": '"path": "/home/Runner/work/ReasoningEvals2024/main/evals"',
    "url": "https://github.com/SomeOrganization/pytest-reasoning-evals2024/actions/runs",
    "chat completion id": '"id": "chatcmpl-0001", "system_fingerprint": "fp_44709d6fcb"',
}


# --- paths ---


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def scan_paths(paths: list[Path]) -> list[Finding]:
    """What scan-secrets finds under the paths (main() without the printing)."""
    findings, _ = _scan_files(iter_files(paths))
    return findings


def test_every_pattern_has_a_short_name() -> None:
    names = [name for name, _ in SECRET_PATTERNS]
    assert {"openai", "anthropic", "google", "bearer", "base64"} <= set(names)
    assert len(names) == len(set(names))


# --- each kind is found ---


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_key_in_a_cassette_is_found(case: str) -> None:
    value = PLANTED[case]
    findings = scan_text(cassette(value, header="X-Api-Key"), "cassettes/test_item.yaml")
    assert [(f.path, f.line, f.kind) for f in findings] == [
        ("cassettes/test_item.yaml", CASSETTE_VALUE_LINE, KINDS.get(case, case))
    ]
    assert_masked(findings[0], value)


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_key_in_a_results_line_is_found(case: str) -> None:
    value = PLANTED[case]
    findings = scan_text(results_jsonl(value), "results/run/items.jsonl")
    assert [(f.line, f.kind) for f in findings] == [(2, KINDS.get(case, case))]
    assert_masked(findings[0], value)


def test_a_key_after_bearer_is_reported_once_under_its_own_kind() -> None:
    key = PLANTED["openai"]
    findings = scan_text(cassette("Bearer " + key), "c.yaml")
    assert [(f.line, f.kind) for f in findings] == [(CASSETTE_VALUE_LINE, "openai")]


def test_bearer_is_case_insensitive() -> None:
    line = "authorization: BEARER " + "k3Y_" * 6
    assert [f.kind for f in scan_text(line, "x.txt")] == ["bearer"]


def test_base64_with_slash_plus_and_padding_is_found() -> None:
    value = "Ab3+" * 6 + "cD9/" * 5 + "x="
    findings = scan_text(f'secret_access_key,"{value}"', "r.csv")
    assert [f.kind for f in findings] == ["base64"]
    assert_masked(findings[0], value)


def test_several_findings_on_one_line_come_left_to_right() -> None:
    line = f'{{"a": "{PLANTED["google"]}", "b": "{PLANTED["anthropic"]}"}}'
    assert [f.kind for f in scan_text(line, "s.json")] == ["google", "anthropic"]


def test_a_line_can_opt_out() -> None:
    text = f"Example: {PLANTED['openai']}  <!-- scan-secrets: allow -->\nReal: {PLANTED['openai']}\n"
    assert [(f.line, f.kind) for f in scan_text(text, "README.md")] == [(2, "openai")]


def test_line_numbers_count_newlines_only() -> None:
    text = "a\x0cb\u2028c\r\nnext\r\n" + PLANTED["google"] + "\r\n"
    assert [f.line for f in scan_text(text, "x.txt")] == [3]


@pytest.mark.parametrize("line", NOT_SECRETS.values(), ids=NOT_SECRETS.keys())
def test_not_a_secret(line: str) -> None:
    assert scan_text(line, "x.txt") == []


def test_a_clean_cassette_with_redacted_headers_is_clean() -> None:
    assert scan_text(cassette("REDACTED"), "cassettes/test_item.yaml") == []
    assert scan_text(cassette("Bearer REDACTED"), "cassettes/test_item.yaml") == []


def test_a_clean_results_file_is_clean() -> None:
    assert scan_text(results_jsonl("none"), "results/items.jsonl") == []


def test_a_directory_is_walked_for_every_file_binary_ones_included(tmp_path: Path) -> None:
    key = PLANTED["anthropic"]
    nested = write(tmp_path / "results" / "run-1" / "items" / "items.jsonl", results_jsonl(key))
    write(tmp_path / "results" / "run-1" / "summary.json", '{"overall_accuracy": 0.5}\n')
    blob = write(tmp_path / "results" / "blob.json", b"\x00\x01" + key.encode() + b"\n")
    notes = write(tmp_path / "results" / "notes.py", f"KEY = '{key}'\n")
    findings = scan_paths([tmp_path / "results"])
    assert sorted((f.path, f.line, f.kind) for f in findings) == sorted(
        [(str(nested), 2, "anthropic"), (str(blob), 1, "anthropic"), (str(notes), 1, "anthropic")]
    )


def test_temporary_files_logs_and_files_without_a_suffix_are_scanned(tmp_path: Path) -> None:
    # the review found a key in completions.jsonl.tmp, run.log and a suffix-less file unreported
    run = tmp_path / "results" / "m_zeroshot"
    planted = [
        write(run / name, f"reply: {PLANTED['openai']}\n")
        for name in ("completions.jsonl.1234.tmp", "run.log", "NOTES")
    ]
    assert sorted(f.path for f in scan_paths([tmp_path / "results"])) == sorted(str(p) for p in planted)


def test_the_allow_marker_in_recorded_data_does_not_hide_a_key(tmp_path: Path) -> None:
    # a model can write the marker into its reply; only the project's own files may opt out
    line = f"Here is a key {PLANTED['openai']} scan-secrets: allow\n"
    for name in ("cassette.yaml", "completions.jsonl", "summary.json", "rows.csv", "out.txt"):
        assert [f.kind for f in scan_text(line, name)] == ["openai"], name
    assert scan_text(line, "README.md") == [] and scan_text(line, "tests/test_x.py") == []


def test_a_binary_yaml_body_is_decoded_before_scanning() -> None:
    # vcrpy stores a reply that is not UTF-8 as !!binary base64: its lines are not keys
    body = "Réponse: vrai ".encode("latin-1") * 20
    encoded = base64.b64encode(body).decode()
    block = "\n".join("        " + encoded[i : i + 60] for i in range(0, len(encoded), 60))
    cassette = f"interactions:\n- response:\n    body:\n      string: !!binary |\n{block}\n    status: {{code: 200}}\n"
    assert scan_text(cassette, "c.yaml") == []
    leaked = base64.b64encode(f"token {PLANTED['openai']} ".encode() + b"\xff").decode()
    cassette = f"interactions:\n- response:\n    body:\n      string: !!binary |\n        {leaked}\n"
    assert [(f.line, f.kind) for f in scan_text(cassette, "c.yaml")] == [(4, "openai")]
    inline = f"string: !!binary '{leaked}'\n"
    assert [(f.line, f.kind) for f in scan_text(inline, "c.yaml")] == [(1, "openai")]


def test_an_explicit_file_is_scanned_whatever_its_suffix(tmp_path: Path) -> None:
    path = write(tmp_path / "notes.py", f"KEY = '{PLANTED['google']}'\n")
    assert [f.kind for f in scan_paths([path])] == ["google"]


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match="nope"):
        scan_paths([tmp_path, missing])


# --- main ---


def test_main_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "snapshots" / "a.yaml", cassette("REDACTED"))
    write(tmp_path / "snapshots" / "b.json", f'{{"sha256": "{SHA256}"}}\n')
    assert main([str(tmp_path / "snapshots")]) == 0
    assert capsys.readouterr().out == "scan-secrets: 2 files scanned, no secret shapes found\n"


def test_main_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = PLANTED["openai"]
    bad = write(tmp_path / "cassettes" / "bad.yaml", cassette(key, header="X-Api-Key"))
    write(tmp_path / "cassettes" / "good.yaml", cassette("REDACTED"))
    assert main([str(tmp_path / "cassettes")]) == 1
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"{bad}:{CASSETTE_VALUE_LINE}: openai: sk-A…",
        "scan-secrets: 1 finding in 2 files scanned",
    ]
    assert key not in out


def test_main_counts_several_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "r.jsonl", results_jsonl(PLANTED["google"]) + results_jsonl(PLANTED["base64"]))
    assert main([str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "scan-secrets: 2 findings in 1 file scanned"


def test_main_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-dir"
    assert main([str(tmp_path), str(missing)]) == 2
    captured = capsys.readouterr()
    assert str(missing) in captured.err
    assert captured.out == ""


def test_main_skips_default_paths_that_do_not_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0
    assert capsys.readouterr().out == "scan-secrets: 0 files scanned, no secret shapes found\n"


def test_main_scans_the_default_paths_that_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert DEFAULT_PATHS == ("cassettes", "snapshots", "results")
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "results" / "run" / "items.jsonl", results_jsonl(PLANTED["bearer"]))
    write(tmp_path / "elsewhere" / "items.jsonl", results_jsonl(PLANTED["openai"]))  # not a default
    assert main([]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{Path('results', 'run', 'items.jsonl')}:2: bearer: Bear…",
        "scan-secrets: 1 finding in 1 file scanned",
    ]


def test_command_line_fails_on_a_planted_key(tmp_path) -> None:
    """`python -m plugin scan-secrets` as CI runs it: exit 1 and a masked finding."""
    import subprocess
    import sys

    key = "sk-ant-" + "Zq9x" * 8
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "item.yaml").write_text(f"headers:\n  x-api-key:\n  - {key}\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "scan-secrets", "cassettes"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "cassettes/item.yaml:3: anthropic: sk-a…" in result.stdout
    assert key not in result.stdout
    clean = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "scan-secrets", "cassettes"],
        cwd=tmp_path / "cassettes",
        capture_output=True,
        text=True,
    )
    assert clean.returncode == 2, "an explicit path that does not exist is an error"
