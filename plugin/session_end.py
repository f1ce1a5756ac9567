"""The end of an eval session on the controller (docs/design.md, "Gates"): each active protocol's
outputs and gates, the gates of protocols none of whose items ran, the exit status, the CI job
summary and the terminal's closing lines."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

import pytest

from pytest_reasoning_evals.declarations import ProtocolInfo
from pytest_reasoning_evals.gates import GateResult, gate_line
from pytest_reasoning_evals.options import Reader, is_set
from pytest_reasoning_evals.protocol import EvalProtocol
from pytest_reasoning_evals.stash import UNKNOWN, WRONG, payload_of

SHOWN_WRONG = 30  # wrong answers and UNKNOWNs listed in the terminal without -v, one line each


class SessionEnd:
    """What the controller's `session` (session.EvalSession) decides and says at its end."""

    def __init__(self, session):
        self.session = session
        self.harness_failures = 0  # items that raised inside the harness, and failures outside eval items
        self.gates: list[GateResult] = []
        self.unrun: dict[str, list[GateResult]] = {}  # the gates of protocols none of whose items ran
        # protocol -> its ini gates left unjudged (none of its items selected)
        self.not_judged: dict[str, list[str]] = {}
        self.estimate: list[str] | None = None  # --eval-estimate: the block to print instead of running

    def price(self, pytest_session: pytest.Session) -> None:
        """--eval-estimate: the block that prices the selected items (estimate.py), none of which runs."""
        if pytest_session.testsfailed:
            raise pytest_session.Interrupted(f"{pytest_session.testsfailed} error(s) during collection: no estimate")
        from pytest_reasoning_evals.estimate import block

        s = self.session
        selected = {
            name: [item for item in pytest_session.items if protocol.parameter(item) is not None]
            for name, protocol in sorted(s.protocols.items())
            if name in s.collected
        }
        estimates = {name: s.protocols[name].estimate(items) for name, items in selected.items()}
        aliases = dict.fromkeys(c.alias for calls in estimates.values() for c in calls or ())
        specs = {a: s.models.spec(a) for a in aliases}
        self.estimate = block(estimates, specs, s.settings.cassette_dir) if estimates else []
        for name, items in selected.items():
            self.estimate += s.protocols[name].estimate_notes(items)

    def record_command(self, misses: Iterable[str] = ()) -> str:
        """This run's own command line in the record mode that records these cassette misses (their
        errors; cassettes.rerecord_mode): `once` when none has a file, else `refresh` (the key
        variables of the models it used, if they have one, in front)."""
        from pytest_reasoning_evals.cassettes import rerecord_mode
        from pytest_reasoning_evals.providers.base import mask_url

        s = self.session
        args, skip = [], False
        for arg in s.config.invocation_params.args:
            if skip:
                skip = False
            elif arg == "--eval-record-mode":
                skip = True
            elif not arg.startswith("--eval-record-mode="):
                args.append(mask_url(arg))  # a base URL's credentials stay out of the printed command
        aliases = {alias for protocol in s.protocols.values() for alias in protocol.aliases()}
        keys = sorted({spec.api_key_env for spec in map(s.models.spec, aliases) if spec.api_key_env})
        return " ".join(
            [
                *(f"{k}=..." for k in keys),
                "pytest",
                *map(shlex.quote, args),
                f"--eval-record-mode={rerecord_mode(misses)}",
            ]
        )

    def finish(self, pytest_session: pytest.Session) -> None:
        """Every active protocol's outputs and gates, the unrun protocols' gates, the exit status."""
        s = self.session
        active = [p for p in s.protocols.values() if p.active]
        if s.settings.estimate or not (active or s.collected):
            return  # an estimate, or a session without eval items: nothing is judged or written
        from pytest_reasoning_evals.results import NOTHING_RUNS

        if any(getattr(s.config.option, name, False) for name in NOTHING_RUNS):
            return  # --collect-only and the like run nothing: pytest's verdict, and no run directory is touched
        self._judge_unrun({p.name for p in active})
        for gates in self.unrun.values():
            self.gates += gates
        for protocol in active:
            self.gates += protocol.finish(pytest_session)
        if active or self.unrun:
            self._decide_exit_status(pytest_session)
            self._write_job_summary(active)

    def _judge_unrun(self, active: set[str]) -> None:
        """An eval session: a gate set for a protocol none of whose items ran judges nothing, and fails,
        without touching its run directory (the last full run's files stay as they are); unless the
        session selected another protocol's items and none of its own, and the gate is the ini file's:
        a project's floors of one protocol do not fail a run of the other (one line says so)."""
        s = self.session
        for info in s.infos.values():
            if info.name in active:
                continue
            flags, keys = self._gates_given(info)
            if not flags and keys and s.selected | active and info.name not in s.selected:
                self.not_judged[info.name] = keys
            elif flags or keys:
                gates = s.protocol(info.name).judge_unrun()
                if gates:
                    self.unrun[info.name] = gates

    def _gates_given(self, info: ProtocolInfo) -> tuple[list[str], list[str]]:
        """(the flags, the ini keys) that set a gate of the protocol (ProtocolInfo.gate_options). A
        declared name that is not one of its options counts as a flag: its gate is always judged."""
        config = self.session.config
        get = Reader(config, info.options)
        own = self.session.settings.own.get(info.name)
        flags, keys = [], []
        for name in info.gate_options:
            option = get.by_name.get(name.replace("_", "-"))
            if option is None:
                flags += [name] if own is not None and is_set(getattr(own, name, None)) else []
            elif config.getoption(option.dest) is not None:
                flags.append(option.flag)
            elif is_set(get(option.name)):
                keys.append(option.dest)
        return flags, sorted(keys)

    def _write_job_summary(self, active: list[EvalProtocol]) -> None:
        """In GitHub Actions, append each protocol's block to the job summary page; a summary that
        cannot be written is one warning line: the run's results and exit status stand."""
        import sys

        from pytest_reasoning_evals.markdown import append_step_summary

        message = append_step_summary("".join(protocol.markdown() for protocol in active))
        if message is None:
            return
        if self.session.terminalreporter is not None:
            from pytest_reasoning_evals.progress import write_own_line

            write_own_line(self.session.terminalreporter, message)
        else:
            print(message, file=sys.stderr)

    def _decide_exit_status(self, session: pytest.Session) -> None:
        """Wrong answers fail their items but not the session: gates and harness errors decide.
        A resumed run with nothing left to ask (every item deselected) is judged the same way, and
        so is a run stopped by a provider outage or a missing server: a failed measurement (exit 1),
        not an interrupt (Ctrl-C, a refused key: exit 2)."""
        from pytest_reasoning_evals.errors import NO_SERVER, OUTAGE

        settled = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)
        dsession = self.session.config.pluginmanager.get_plugin(
            "dsession"
        )  # xdist's controller holds a worker's reason
        reason = session.shouldstop or getattr(dsession, "shouldstop", None)
        stopped = (
            session.exitstatus == pytest.ExitCode.INTERRUPTED
            and isinstance(reason, str)
            and reason.startswith((OUTAGE, NO_SERVER))
        )
        if session.exitstatus not in settled and not stopped:
            return  # interrupted, internal or usage error: leave pytest's verdict
        failed = self.harness_failures > 0 or not all(g.passed for g in self.gates)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    def terminal_summary(self, terminalreporter) -> None:
        """Wrong answers, UNKNOWNs and unmet checks one line each (all of them with -v), then each
        protocol's summary block: the last thing printed before pytest's own closing line."""
        self._list_wrong(terminalreporter)
        s = self.session
        for name in s.infos:  # in a fixed order, whichever protocol's items ran first
            protocol = s.protocols.get(name)
            if protocol is not None and protocol.active:
                title, lines = protocol.terminal()
                terminalreporter.write_sep("=", title)
                for line in lines:
                    terminalreporter.write_line(line)
        if self.estimate is not None:
            terminalreporter.write_sep("=", "eval estimate: no request sent, nothing written")
            for line in self.estimate or ["no eval item selected"]:
                terminalreporter.write_line(line)
        for name, keys in self.not_judged.items():
            terminalreporter.write_line(
                f"{name}: none of its items selected: its ini gates are not judged ({', '.join(keys)})"
            )
        for name, gates in self.unrun.items():
            terminalreporter.write_sep("=", f"{name}: no item ran, no run directory written")
            for gate in gates:
                terminalreporter.write_line(gate_line(gate))

    def _list_wrong(self, terminalreporter) -> None:
        """The eval items' wrong answers, UNKNOWNs and unmet checks, one line each (the first
        SHOWN_WRONG without -v)."""
        stats = terminalreporter.stats
        listed = sorted(
            (
                r
                for category in (WRONG, "failed", UNKNOWN)
                for r in stats.get(category, [])
                if r.when == "call" and payload_of(r) is not None
            ),
            key=lambda r: r.nodeid,
        )
        if not listed:
            return
        verbose = self.session.config.option.verbose > 0
        shown = listed if verbose or len(listed) <= SHOWN_WRONG else listed[:SHOWN_WRONG]
        terminalreporter.write_sep(
            "_",
            f"wrong answers, UNKNOWNs and unmet checks: {len(listed)} (one line each"
            + ("" if shown is listed else f", the first {len(shown)}; -v lists all")
            + ")",
        )
        for report in shown:
            reason = str(report.longrepr).strip().splitlines()[0] if report.longrepr else ""
            terminalreporter.write_line(f"{report.nodeid} - {reason}")
        if len(listed) > len(shown):
            terminalreporter.write_line(
                f"... and {len(listed) - len(shown)} more: every item is in report.html and the run's files"
            )
