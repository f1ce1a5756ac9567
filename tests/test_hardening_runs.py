"""Hardening of whole runs: one run at a time per run directory, a resume that trusts nothing it
reads back, and case files and merges that fail with one line naming the file (and line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest
from fakeprovider import FakeProvider
from helpers import PROJECT_ROOT, add_eval_module, answer_by_text, oracle_shards, question, run_dir, write_jsonl
from test_runs import small_bank as bank  # 12 questions and 2 dialogues of 3 turns

from pytest_reasoning_evals import results
from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.questions import load_questions
from pytest_reasoning_evals.completions import REPLAYED_BATCH, CompletionsLog
from pytest_reasoning_evals.dialectic.cases import load_cases, load_variants
from pytest_reasoning_evals.results import write_csv, write_json

KEY_VAR = "FAKE_PROVIDER_KEY"
FAKE_MODELS = (
    "models:\n  fake:\n    provider: openai\n    model_id: fake-model\n    api_key_env: "
    + KEY_VAR
    + "\n    base_url: {url}\n    price_in: 0.0\n    price_out: 0.0\n"
)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, "fake-key-for-tests")


def error_lines(result) -> list[str]:
    """The `ERROR: ...` lines of a usage error (under xdist pytest also shows the collection error
    of the worker that found it in its errors section)."""
    return [line for line in result.stderr.lines if line.startswith("ERROR")]


# --- 5. two runs on one out dir ---


def fake_args(pytester, url: str, tag: str, out) -> list[str]:
    models = pytester.path / f"models-{tag}.yaml"
    models.write_text(FAKE_MODELS.format(url=url))
    return [
        "test_chaosbench.py",
        "--eval-models-file",
        str(models),
        "--model",
        "fake",
        "--eval-cases",
        str(bank(pytester.path / "bank.jsonl")),
        "--eval-cassette-dir",
        str(pytester.path / f"cassettes-{tag}"),
        "--eval-out-dir",
        str(out),
        "--eval-record-mode",
        "once",
        "-p",
        "no:cacheprovider",
    ]


class HoldOne:
    """A fake model that parks the n-th request it gets until released, answering the rest."""

    def __init__(self, at: int):
        self.at = at
        self.seen = 0
        self.lock = threading.Lock()
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict) -> str:
        with self.lock:
            self.seen += 1
            mine = self.seen
        if mine == self.at:
            self.reached.set()
            self.release.wait(120)
        return answer_by_text(body)


@pytest.mark.parametrize(("first", "second"), [("0", "2"), ("2", "0")], ids=["serial-then-xdist", "xdist-then-serial"])
def test_a_second_run_on_the_same_run_directory_is_refused_naming_the_first(pytester, key, first, second) -> None:
    add_eval_module(pytester)
    out = pytester.path / "results-shared"
    holder = HoldOne(at=3)
    with FakeProvider() as server, FakeProvider() as other:
        server.responder = holder
        args = fake_args(pytester, server.openai_base, "first", out)
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args, "-n", first],
            cwd=pytester.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert holder.reached.wait(120), "the first run never reached the held request"
            second_run = pytester.runpytest_subprocess(
                *fake_args(pytester, other.openai_base, "second", out)[1:], "-n", second
            )
            lock_file = (
                (out / "fake_zeroshot" / ".lock").read_text() if (out / "fake_zeroshot" / ".lock").exists() else None
            )
        finally:
            holder.release.set()
            output = process.communicate(timeout=180)[0]
        assert other.requests == [], "the second run is refused before any paid call"
        assert lock_file is not None and json.loads(lock_file)["pid"] == process.pid
        paid = [json.dumps(r["body"], sort_keys=True) for r in server.requests]
        # released at the end: the directory takes the next run (nothing left to ask)
        again = pytester.runpytest_subprocess(*args[1:], "--eval-resume")
        assert again.ret == 0, again.stdout.str() + again.stderr.str()
        assert len(server.requests) == len(paid)

    assert second_run.ret == pytest.ExitCode.USAGE_ERROR, second_run.stdout.str()
    refusal = error_lines(second_run)
    assert len(refusal) == 1, second_run.stdout.str() + second_run.stderr.str()
    assert f"{out / 'fake_zeroshot'} is in use by another run (pid {process.pid} on " in refusal[0]
    assert "started " in refusal[0] and "--eval-out-dir" in refusal[0]
    assert "Traceback" not in second_run.stdout.str() + second_run.stderr.str()

    assert process.returncode == 0, output  # the first run is untouched and completes normally
    summary = json.loads((out / "fake_zeroshot" / "summary.json").read_text())
    assert (
        summary["complete"] and summary["total_questions"] == 12 and summary["dialogue_details"]["total_dialogues"] == 2
    )
    assert len(paid) == len(set(paid)) == 12 + 2 * 3, "every call paid once"


def test_a_lock_left_by_a_killed_run_does_not_refuse_the_next(pytester, key) -> None:
    add_eval_module(pytester)
    out = pytester.path / "results-killed"
    holder = HoldOne(at=2)
    with FakeProvider() as server:
        server.responder = holder
        args = fake_args(pytester, server.openai_base, "k", out)
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args],
            cwd=pytester.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert holder.reached.wait(120)
        process.kill()
        process.wait()
        holder.release.set()
        assert json.loads((out / "fake_zeroshot" / ".lock").read_text())["pid"] == process.pid  # left behind
        result = pytester.runpytest_subprocess(*args[1:], "--eval-resume")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()


def test_concurrent_writers_of_one_output_file_never_share_a_temp_file(tmp_path) -> None:
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(150):
                write_json(tmp_path / "summary.json", {"writer": k, "i": i})
                write_csv(tmp_path / "table.csv", ["writer", "i"], [[k, i]])
                CompletionsLog(tmp_path / "completions.jsonl").finalize([{"id": f"{k}-{i}"}])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert set(json.loads((tmp_path / "summary.json").read_text())) == {"writer", "i"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["completions.jsonl", "summary.json", "table.csv"], (
        "no temp file left"
    )


def test_a_jsonl_output_cut_short_by_an_error_leaves_the_previous_file(tmp_path) -> None:
    # the dialectic per_response.jsonl and spotcheck_queue.jsonl are written this way
    target = tmp_path / "per_response.jsonl"
    results.write_lines(target, ['{"query_id": "old"}'])

    def rows():
        yield '{"query_id": "new-1"}'
        raise TypeError("a row that cannot be serialised")

    with pytest.raises(TypeError):
        results.write_lines(target, rows())
    assert target.read_text() == '{"query_id": "old"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["per_response.jsonl"], "no temp file left"


# --- 6. resume trusts nothing it reads back ---


def full_run(pytester, *extra: str):
    """A finished run of the random baseline over a small bank: (its directory, summary text, completions lines)."""
    add_eval_module(pytester)
    cases = bank(pytester.path / "bank.jsonl", questions=10, dialogues=1)
    args = ["--model", "random", "--eval-cases", str(cases), "-p", "no:cacheprovider", *extra]
    assert pytester.runpytest(*args).ret == 0
    directory = run_dir(pytester, "random")
    return (
        args,
        directory,
        (directory / "summary.json").read_text(),
        (directory / "completions.jsonl").read_bytes().splitlines(),
    )


def asked(result) -> int:
    outcomes = result.parseoutcomes()
    return outcomes.get("passed", 0) + outcomes.get("wrong", 0) + outcomes.get("failed", 0)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resume_skips_unreadable_lines_reports_them_and_asks_their_items_again(pytester, workers) -> None:
    args, directory, full_summary, lines = full_run(pytester)
    dialogue = next(i for i, line in enumerate(lines) if b'"kind": "dialogue"' in line)
    assert dialogue not in (2, 4, 6)
    wrong_type = json.loads(lines[4])
    wrong_type["input_tokens"] = "12"
    broken_dialogue = json.loads(lines[dialogue])
    broken_dialogue["turns"] = "three turns"
    lines[dialogue] = json.dumps(broken_dialogue).encode()
    lines[2] = b'{"id": "caf\xe9", "not": "utf-8"}'
    lines[4] = json.dumps(wrong_type).encode()
    lines[6] = b'["a list", "not a record"]'
    first = min(dialogue, 2) + 1
    (directory / "completions.jsonl").write_bytes(b"\n".join(lines) + b"\n")

    result = pytester.runpytest(*args, "--eval-resume", "-n", workers)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"WARNING {directory / 'completions.jsonl'}: 4 unreadable lines skipped (first at line {first}); "
            "their items are asked again"
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str()
    assert asked(result) == 4
    assert (directory / "summary.json").read_text() == full_summary
    assert len((directory / "completions.jsonl").read_text().splitlines()) == len(lines)


def test_resume_ignores_records_of_items_outside_the_selection(pytester) -> None:
    args, directory, full_summary, lines = full_run(pytester)
    foreign = json.loads(lines[0])
    foreign["id"] = "zz-not-in-the-bank"
    dialogue = next(i for i, line in enumerate(lines) if b'"kind": "dialogue"' in line)
    gone = json.loads(lines[dialogue])
    gone["id"] = "zz-dialogue-not-in-the-bank"
    kind_mismatch = json.loads(lines[dialogue + 1])
    kind_mismatch["id"] = gone["turns"][0]["dialogue_id"]  # a question record under the dialogue's id
    del lines[dialogue]  # so the dialogue is asked again
    extra = [json.dumps(r).encode() for r in (foreign, gone, kind_mismatch)]
    (directory / "completions.jsonl").write_bytes(b"\n".join(lines + extra) + b"\n")

    result = pytester.runpytest(*args, "--eval-resume")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"WARNING {directory / 'completions.jsonl'}: 3 record(s) of items outside this run's "
            "selection ignored (first: 'd0'); not counted, and dropped when the file is rewritten"
        ]
    )
    assert asked(result) == 1
    assert (directory / "summary.json").read_text() == full_summary, "the foreign records are not counted"
    ids = {json.loads(line)["id"] for line in (directory / "completions.jsonl").read_text().splitlines()}
    assert not {"zz-not-in-the-bank", "zz-dialogue-not-in-the-bank"} & ids


@pytest.mark.parametrize(
    ("planted", "why"),
    [
        (lambda text: text[: len(text) // 2].encode(), "is not valid JSON (*)"),
        (lambda text: text.replace('"mode"', '"m\xe9de"').encode("latin-1"), "is unreadable (UnicodeDecodeError)"),
        (lambda text: b'["not", "an", "object"]', "is not a JSON object"),
        (lambda text: b"[" * 100_000, "is unreadable (RecursionError)"),
    ],
    ids=["truncated", "latin-1", "not-an-object", "nested"],
)
def test_resume_with_an_unreadable_config_is_one_usage_error(pytester, planted, why) -> None:
    args, directory, full_summary, lines = full_run(pytester)
    config = directory / "checkpoints" / "config.json"
    config.write_bytes(planted(config.read_text()))
    before = (directory / "completions.jsonl").read_bytes()

    result = pytester.runpytest(*args, "--eval-resume")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(
        [
            f"*--eval-resume: {config} {why}, so the answers in {directory} cannot be matched to a "
            "configuration; run without --eval-resume (or with another --eval-out-dir)"
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert (directory / "completions.jsonl").read_bytes() == before, "nothing asked, nothing rewritten"


# --- 8. quiet failures: case files ---


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "{bank}: no questions (the case file is empty)"),
        (b"\n  \n\n", "{bank}: no questions (the case file is empty)"),
        (
            json.dumps(question("q-1")).encode() + b'\n{"id": "q-2", "question": "Caf\xe9 chaos?"}\n',
            "{bank}:2: not UTF-8 text (byte 0xe9 at column 31); save the file as UTF-8",
        ),
        (b"[" * 100_000 + b"\n", "{bank}:1: invalid JSON: nested too deeply to read"),
    ],
    ids=["empty", "blank-lines", "latin-1", "nested"],
)
def test_a_case_file_that_cannot_be_read_is_one_collection_error_naming_it(
    pytester, content: bytes, message: str
) -> None:
    add_eval_module(pytester)
    cases = pytester.path / "bank.jsonl"
    cases.write_bytes(content)
    result = pytester.runpytest("--model", "oracle", "--eval-cases", str(cases))
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    output = result.stdout.str() + result.stderr.str()
    assert message.format(bank=cases) in output
    assert "Traceback" not in output and "UnicodeDecodeError" not in output and "RecursionError" not in output
    assert not (pytester.path / "results").exists()


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (question("a..b"), "id 'a..b' is not filesystem-safe"),
        (question("q-1\n"), "id 'q-1\\n' is not filesystem-safe"),
        (question("x" * 129), "is 129 characters long; at most 128"),
        (question("d-t1", dialogue_id="../up", turn=1), "dialogue_id '../up' is not filesystem-safe"),
    ],
    ids=["dots", "newline", "long", "dialogue-id"],
)
def test_ids_are_checked_once_when_the_bank_is_loaded(tmp_path, record, message) -> None:
    cases = write_jsonl(tmp_path / "bank.jsonl", [question("q-0"), record])
    with pytest.raises(CaseFileError) as error:
        load_questions(cases)
    assert str(error.value).startswith(f"{cases}:2: ") and message in str(error.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"bad\.yaml: no dialectic cases \(the case file is empty\)"),
        (b"cases: []\n", r"bad\.yaml:1: no dialectic cases \(the `cases:` list is empty\)"),
        (b"cases:\n  - id: a\n    category: caf\xe9\n", r"bad\.yaml:3: not UTF-8 text \(byte 0xe9 at column 18\)"),
        (b"cases: " + b"[" * 100_000 + b"\n", r"bad\.yaml:1: invalid YAML \(nested too deeply to read\)"),
        (
            b"cases:\n  - {id: a..b, category: c, query: q, expected_mode: bypass}\n",
            r"bad\.yaml:2: id 'a\.\.b' is not filesystem-safe",
        ),
    ],
    ids=["empty", "no-cases", "latin-1", "nested", "id"],
)
def test_a_dialectic_case_file_that_cannot_be_read_names_file_and_line(tmp_path, content: bytes, message: str) -> None:
    (tmp_path / "bad.yaml").write_bytes(content)
    with pytest.raises(CaseFileError, match=message):
        load_cases(tmp_path / "bad.yaml")


def test_a_variant_name_that_is_not_a_safe_file_name_is_refused(tmp_path) -> None:
    (tmp_path / "my variant.txt").write_text("Think first.")
    with pytest.raises(CaseFileError, match=r"my variant\.txt: variant name .*'my variant' is not filesystem-safe"):
        load_variants(tmp_path)


def test_a_case_id_too_long_for_its_cassette_names_is_one_collection_error(pytester, key) -> None:
    pytester.makepyfile(
        test_long_dialectic_ids=(PROJECT_ROOT / "evals" / "test_dialectic.py").read_text(encoding="utf-8")
    )
    models = pytester.path / "models.yaml"
    models.write_text(FAKE_MODELS.format(url="http://127.0.0.1:9/v1"))
    prompts = pytester.path / "prompts"
    prompts.mkdir()
    (prompts / ("v" * 120 + ".txt")).write_text("Think first.")
    cases = pytester.path / "cases.yaml"
    cases.write_text(f"cases:\n  - {{id: {'c' * 120}, category: c, query: q, expected_mode: bypass}}\n")
    result = pytester.runpytest(
        "--eval-models-file",
        str(models),
        "--model",
        "fake",
        "--eval-dialectic-cases",
        str(cases),
        "--eval-variant-prompts",
        str(prompts),
        "-p",
        "no:randomly",
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"*{cases}:2: case id 'ccc*' with variant 'vvv*' makes cassette file names of * bytes "
            "(at most 255); shorten the id or the variant's name*"
        ]
    )


# --- 8. quiet failures: merge ---


def merge_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "merge", *map(str, args)], capture_output=True, text=True
    )


@pytest.fixture
def shards(pytester):
    """Two finished shards of the oracle over a small bank, and an unsharded run beside them."""
    add_eval_module(pytester)
    cases = str(bank(pytester.path / "bank.jsonl"))
    made = oracle_shards(pytester, cases)
    assert pytester.runpytest("--model", "oracle", "--eval-cases", cases).ret == 0
    return made


def assert_one_line_refusal(result: subprocess.CompletedProcess, *parts: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("merge: "), result.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


@pytest.mark.parametrize(
    ("file", "path"),
    [
        ("run_manifest.json", ("execution", "config_hash")),
        ("run_manifest.json", ("execution",)),
        ("run_meta.json", ("timestamp",)),
        ("summary.json", ("not_asked",)),
    ],
)
def test_merge_of_a_shard_missing_a_key_is_one_line_naming_shard_and_key(shards, file, path) -> None:
    target = shards[1] / file
    data = json.loads(target.read_text())
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    del parent[path[-1]]
    target.write_text(json.dumps(data))
    result = merge_cli(*shards, "--out", shards[0].parent / "merged")
    assert_one_line_refusal(result, str(shards[1]), file, repr(".".join(path)))


def test_merge_refuses_an_out_dir_it_would_overwrite(shards) -> None:
    results = shards[0].parent
    unsharded = results / "oracle_zeroshot"
    kept = {f: f.read_bytes() for d in [*shards, unsharded] for f in d.iterdir() if f.is_file()}
    assert_one_line_refusal(merge_cli(*shards, "--out", shards[1]), f"{shards[1]} is one of the shard directories")
    assert_one_line_refusal(merge_cli(*shards, "--out", unsharded), f"{unsharded} holds a run directory")
    assert_one_line_refusal(merge_cli(*shards), f"{unsharded} holds a run directory", "--out")  # the default out dir
    (results / "notes").mkdir()
    (results / "notes" / "todo.txt").write_text("mine")
    assert_one_line_refusal(merge_cli(*shards, "--out", results / "notes"), "holds files that are not a merge's")
    assert {p: p.read_bytes() for p in kept} == kept, "nothing was overwritten"

    assert merge_cli(*shards, "--out", results / "merged").returncode == 0  # a new directory
    again = merge_cli(*shards, "--out", results / "merged")  # an earlier merge is merged again
    assert again.returncode == 0, again.stderr
    (results / "empty").mkdir()
    assert merge_cli(*shards, "--out", results / "empty").returncode == 0


def test_merge_refuses_a_shard_with_unreadable_completions(shards) -> None:
    completions = shards[0] / "completions.jsonl"
    lines = completions.read_bytes().splitlines()
    lines[1] = b'{"id": "cut short'
    completions.write_bytes(b"\n".join(lines) + b"\n")
    result = merge_cli(*shards, "--out", shards[0].parent / "merged")
    assert_one_line_refusal(result, f"{completions}: 1 unreadable line skipped (first at line 2)", "--eval-resume")
    assert not (shards[0].parent / "merged").exists()


def test_merge_refuses_while_a_run_holds_a_shard_or_the_out_dir(shards) -> None:
    out = shards[0].parent / "merged"
    for busy in (shards[1], out):
        lock = results.RunDirLock(busy, os.getpid(), "pytest evals --model oracle")
        assert lock.try_hold()
        try:
            result = merge_cli(*shards, "--out", out)
        finally:
            lock.release()
        assert_one_line_refusal(
            result, f"{busy} is in use by another run (pid {os.getpid()} on ", "pytest evals --model oracle"
        )
    assert not (out / "summary.json").exists()
    assert merge_cli(*shards, "--out", out).returncode == 0


def test_the_lock_file_names_the_run_without_url_credentials(tmp_path) -> None:
    argv = ["/venv/bin/pytest", "evals", "--eval-base-url", "https://bob:sk-secret@api.example.com/v1"]
    lock = results.RunDirLock(tmp_path / "run", 4242, results.command_line(argv))
    assert lock.try_hold()
    try:
        held = json.loads((tmp_path / "run" / ".lock").read_text())
        busy = results.busy_holder(tmp_path / "run")
        (tmp_path / "run" / "summary.json").write_text("{}")  # a run that wrote something keeps its folder
    finally:
        lock.release()
    assert held["pid"] == 4242 and held["command"] == "pytest evals --eval-base-url https://***@api.example.com/v1"
    assert "sk-secret" not in busy and "pid 4242 on " in busy
    assert results.busy_holder(tmp_path / "run") is None and (tmp_path / "run" / ".lock").read_text() == ""


def test_the_completions_log_ends_sorted_by_id_with_the_resumed_and_the_appended_lines_whole(tmp_path) -> None:
    path = tmp_path / "run" / "completions.jsonl"
    log = CompletionsLog(path)
    log.start([{"id": "q-3", "text": "é resumed"}, {"id": "q-1", "text": "resumed"}])
    for record in ({"id": "q-4", "text": "a\nb"}, {"id": "q-0", "text": "first"}, {"id": "q-2", "text": "x" * 5000}):
        log.append(record)
    assert len(path.read_bytes().splitlines()) == 5  # every line on disk as it arrives
    log.finalize()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in lines] == ["q-0", "q-1", "q-2", "q-3", "q-4"]
    assert lines[2]["text"] == "x" * 5000 and lines[3]["text"] == "é resumed" and lines[4]["text"] == "a\nb"


def test_a_live_answer_reaches_the_file_at_once_and_replayed_ones_in_batches(tmp_path) -> None:
    """A kill must not lose a record whose call was paid for; one answered from a cassette costs
    nothing to answer again, so those are written in batches."""
    path = tmp_path / "completions.jsonl"
    log = CompletionsLog(path)
    on_disk = lambda: len(path.read_bytes().splitlines())  # noqa: E731 - what a SIGKILL now would leave
    log.append({"id": "r-0", "provider": "openai", "cassette_hit": True})
    assert on_disk() == 0
    log.append({"id": "l-0", "provider": "openai", "cassette_hit": False})  # paid for: written with what came before
    assert on_disk() == 2
    log.append({"id": "n-0", "provider": "local", "cassette_hit": None})  # no cassette at all: live
    assert on_disk() == 3
    log.append(
        {
            "id": "d-0",
            "kind": "dialogue",
            "turns": [{"provider": "openai", "cassette_hit": True}, {"provider": "openai", "cassette_hit": False}],
        }
    )
    assert on_disk() == 4
    for i in range(1, REPLAYED_BATCH + 2):  # a full batch and one more
        log.append({"id": f"r-{i}", "provider": "openai", "cassette_hit": True})
    assert on_disk() == 4 + REPLAYED_BATCH
    log.sync()
    assert on_disk() == 5 + REPLAYED_BATCH
