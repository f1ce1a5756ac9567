"""Issue 25, outputs: what a run writes survives hostile text and hostile places. A run passes under
`-W error`; a reply cannot empty report.html's item table; an unusable GITHUB_STEP_SUMMARY is one
warning line, and the text written there is inert; scan-secrets reads UTF-16 and UTF-32 files;
serve-local refuses a busy port instead of calling another server its own."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from fakeprovider import FakeProvider, status
from helpers import (
    DIALECTIC_MODULE,
    add_eval_module,
    fake_run_args,
    question,
    run_dir,
    the_run,
    use_repo_cassettes,
    write_jsonl,
)

from pytest_reasoning_evals.local_server import LocalServer, LocalServerError
from pytest_reasoning_evals.options import DEFAULT_MODEL
from pytest_reasoning_evals.protocol import EvalProtocol
from pytest_reasoning_evals.report import REPORT_FILE
from pytest_reasoning_evals.secrets import main as scan_main


def small_bank(path: Path) -> Path:
    """6 questions and one dialogue of 2 turns."""
    records = [question(f"q-{i}", "TRUE" if i % 2 else "FALSE") for i in range(6)]
    records += [question(f"d0-t{t}", "TRUE", family="multi_hop", dialogue_id="d0", turn=t) for t in (1, 2)]
    return write_jsonl(path, records)


def fake_args(pytester, url: str) -> list[str]:
    return fake_run_args(pytester, url, small_bank(pytester.path / "bank.jsonl"))


def output(result) -> str:
    return result.stdout.str() + result.stderr.str()


# --- (8) -W error ---


@pytest.mark.slow
def test_a_replay_passes_under_W_error(pytester) -> None:
    """The default replay, cut short: no warning (an unclosed temporary file) fails it."""
    add_eval_module(pytester)
    result = pytester.runpytest_subprocess("--eval-max-items", "40", "-W", "error", "-p", "no:cacheprovider")
    assert result.ret == 0, output(result)
    assert "Warning" not in output(result) and "INTERNALERROR" not in output(result)
    assert (run_dir(pytester, DEFAULT_MODEL, subset=True) / REPORT_FILE).exists()


@pytest.mark.slow
def test_runs_without_questions_pass_under_W_error(pytester) -> None:
    """A ChaosBench run of dialogues only (no question: an empty outcomes chart, no legend) and a
    dialectic-only run write their pages under -W error."""
    add_eval_module(pytester)
    result = pytester.runpytest_subprocess("-k", "test_dialogue", "-W", "error", "-p", "no:cacheprovider")
    assert result.ret == 0, output(result)
    assert "Warning" not in output(result)
    html = (run_dir(pytester, DEFAULT_MODEL, subset=True) / REPORT_FILE).read_text()
    assert 'data-chart="family-outcomes"' in html

    pytester.makepyfile(test_dialectic_items=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    result = pytester.runpytest_subprocess(
        "test_dialectic_items.py",
        "--eval-max-items",
        "2",
        "--eval-base-url",
        "http://127.0.0.1:9/v1",
        "-W",
        "error",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 0, output(result)
    assert "Warning" not in output(result)
    assert (pytester.path / "results" / f"{DEFAULT_MODEL}_dialectic-subset" / REPORT_FILE).exists()


# --- (10) a reply cannot empty the page's item table ---

# the comment is never closed: a "-->" would end the double-escaped state again
HOSTILE_REPLY = "TRUE <!--<script>alert(1)</script> </script><script>document.title='x'</script> & \u2028 \u2029 end"


def page_data(html: str) -> tuple[str, dict]:
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.DOTALL)
    assert block, "the page carries its items as a JSON block"
    return block[1], json.loads(block[1])


@pytest.fixture
def hostile_page(pytester, fake_key) -> Path:
    """report.html of a live run (fake provider) whose every reply is HOSTILE_REPLY: 6 questions, 1 dialogue."""
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.reply_text = HOSTILE_REPLY
        result = pytester.runpytest(*fake_args(pytester, server.openai_base))
    assert result.ret == 0, output(result)
    return the_run(pytester.path / "results", "fake") / REPORT_FILE


def test_a_comment_and_script_opening_in_a_reply_keeps_every_row(hostile_page: Path) -> None:
    """`<!--<script` in the JSON block would switch the HTML tokenizer into its double-escaped state:
    the block's own </script> no longer ends it, and the page's script (and table) is lost. No `<`,
    `>`, `&` or line separator is left raw in the block."""
    html = hostile_page.read_text(encoding="utf-8")
    block, data = page_data(html)
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in block, repr(raw)
    assert len(data["items"]) == 7 and all(row.get("raw") == HOSTILE_REPLY or row.get("turns") for row in data["items"])
    assert all(t["raw"] == HOSTILE_REPLY for row in data["items"] for t in row.get("turns", []))
    # the page still has exactly its three script elements (data, the protocol's table, the page's),
    # the data block ending where it should
    assert len(re.findall(r"<script\b", html)) == 3 and html.index('id="report-data"') < html.rindex("<script>")
    assert html.rstrip().endswith("</script>\n</body>\n</html>".strip())


@pytest.mark.browser
@pytest.mark.slow
def test_the_hostile_page_draws_every_row_in_chromium(hostile_page: Path) -> None:
    """The same page in headless Chromium (Debian's, as tests/integration/test_report_browser.py drives it; skipped
    the same way where Chromium or Playwright is not installed): every row drawn, the reply only text."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[dev]')"
    )
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium; .ci/run installs it)")
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.route(
                "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
            )
            page.goto(hostile_page.resolve().as_uri())
            assert page.locator("#item-count").inner_text() == "(7 of 7)"
            assert page.locator("#item-rows tr.row").count() == 7
            page.locator('[id="item-q-0"]').click()
            assert HOSTILE_REPLY.split("\u2028")[0] in page.locator("tr.detail").inner_text()
            assert page.title().endswith("eval report") and errors == []  # no script of the reply ran
        finally:
            browser.close()


# --- (L3) GITHUB_STEP_SUMMARY ---


def unusable_summary(kind: str, tmp_path: Path) -> Path:
    if kind == "directory":
        return tmp_path
    if kind == "under-a-file":
        (tmp_path / "file").write_text("")
        return tmp_path / "file" / "summary.md"
    if kind == "read-only":
        return Path("/proc/version")  # a file even root cannot append to (a chmod 444 file would not stop root)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody reads it: opening it for writing would block forever
    return fifo


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["directory", "under-a-file", "read-only", "fifo"])
def test_an_unusable_step_summary_is_one_warning_line(pytester, monkeypatch, tmp_path, kind) -> None:
    add_eval_module(pytester)
    path = unusable_summary(kind, tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    result = pytester.runpytest_subprocess(
        "--model",
        "oracle",
        f"--eval-cases={small_bank(pytester.path / 'bank.jsonl')}",
        "-q",
        "-p",
        "no:cacheprovider",
        timeout=60,
    )
    assert result.ret == 0, output(result)
    assert "INTERNALERROR" not in output(result) and "Traceback" not in output(result)
    warned = [line for line in result.stdout.lines if "GITHUB_STEP_SUMMARY" in line]
    assert len(warned) == 1 and warned[0].startswith("WARNING") and str(path) in warned[0], output(result)


HOSTILE_ERROR = "<!-- hidden `x` ``` | **bold** <img src=x onerror=alert(1)>\n# heading"


def test_provider_error_text_in_the_step_summary_is_inert(pytester, monkeypatch, fake_key) -> None:
    """A provider's error body (in the stop reason, the `complete` gate's detail) stays one table
    cell of plain text: no HTML, no comment that hides the rest of the page, no extra cell or line."""
    add_eval_module(pytester)
    page = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(page))
    with FakeProvider() as server:
        server.script(*[status(400, body=HOSTILE_ERROR)] * 12)
        result = pytester.runpytest(*fake_args(pytester, server.openai_base))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)  # the outage stopped it: a failed run
    text = page.read_text(encoding="utf-8")
    assert "<" not in text and "# heading" not in text.splitlines()
    row = next(line for line in text.splitlines() if line.startswith("| complete |"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 4, row  # gate, verdict, detail: the error's "|" is escaped
    assert "&lt;!-- hidden" in row and "HTTP 400" in row


def test_the_fenced_summary_block_cannot_be_closed_by_its_text() -> None:
    """A protocol's default block is its terminal lines in a code fence longer than any backtick run."""

    class Hostile(EvalProtocol):
        name = "hostile"

        def __init__(self) -> None:
            pass

        def terminal(self):
            return "summary <b>x</b>", ["ok", "```", "<!-- gone", "````` ` end"]

    text = Hostile().markdown()
    fence = text.splitlines()[2]
    assert set(fence) == {"`"} and len(fence) == 6 and text.rstrip().endswith(fence)
    assert "<" not in text.splitlines()[0]  # the heading is escaped too
    assert text.count(fence) == 2


# --- (L8) scan-secrets in UTF-16 and UTF-32 files ---

PLANTED = "sk-" + "A1b2" * 8  # assembled: this file holds no key shape itself
TEXT = f"first line\nAuthorization: Bearer {PLANTED}\nlast line\n"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16", "utf-16-be-bom", "utf-32", "utf-8-sig"])
def test_a_key_in_a_utf16_or_utf32_file_is_found(tmp_path, capsys, encoding) -> None:
    if encoding == "utf-16-be-bom":
        data = b"\xfe\xff" + TEXT.encode("utf-16-be")
    else:
        data = TEXT.encode(encoding)  # utf-16 and utf-32 write a BOM; -le and -be none
    path = tmp_path / "results.jsonl"
    path.write_bytes(data)
    assert scan_main([str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}:2: openai: sk-A…" and out[1].startswith("scan-secrets: 1 finding in 1 file"), out


def test_a_binary_file_is_still_read_as_latin1(tmp_path, capsys) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\x00\x01\x02" * 100 + f"\n{PLANTED}\n".encode())
    assert scan_main([str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == f"{path}:2: openai: sk-A…"


# --- (L10) serve-local on a busy port ---


class _Models(BaseHTTPRequestHandler):
    model = "some-other-model"

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": self.model}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def other_server():
    """Another OpenAI-compatible server already answering on a port of 127.0.0.1."""
    server = HTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


def test_serve_local_refuses_a_busy_port_in_one_line(other_server) -> None:
    command = [
        sys.executable,
        "-m",
        "pytest_reasoning_evals",
        "serve-local",
        "--port",
        str(other_server),
        "--n-threads",
        "1",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ready" not in done.stdout
    assert done.stderr.count("\n") == 1 and f"127.0.0.1:{other_server}" in done.stderr and "in use" in done.stderr


def test_serve_local_refuses_a_port_held_by_a_plain_socket() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(LocalServerError, match=f"127.0.0.1:{port} is in use"):
            LocalServer(port=port).start()


@pytest.mark.slow
def test_ready_means_our_server_answers_not_another(other_server) -> None:
    """Another server answering /v1/models on the port (taken after the check) is not our model."""
    server = LocalServer(port=other_server, ready_timeout=1.5)
    server.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(LocalServerError, match="not ready"):
            server._wait_ready()
    finally:
        server.stop()
    assert server.process.poll() is not None
