"""Protocol declarations: what the plugin knows of a protocol without importing its code
(`ProtocolInfo`, read from the entry points once), the installed ones left out and why, and
`load` for the "module:attribute" strings a declaration names."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import NamedTuple


class ProtocolInfo(NamedTuple):
    """A protocol's declaration: what the plugin knows of it without importing its code (an unused
    plugin stays cheap). A package declares one under the entry-point group ENTRY_POINTS."""

    name: str  # its marker, its option group, the "protocol" of its payloads
    protocol: str  # "module:Class", a subclass of EvalProtocol, imported on first use
    fixtures: tuple[str, ...]  # the parametrized fixtures whose use makes an item the protocol's
    marker: str  # the marker line registered at configure
    title: str  # its option group's heading in --help
    options: tuple = ()  # its rows of options.Option (--eval-<name>, ini eval_<name>)
    settings: Callable | None = None  # (option reader, generic Settings) -> its own settings (EvalProtocol.own)
    fixture_plugin: str | None = None  # "module:function": (session) -> a plugin object holding its fixtures
    commands: str | None = None  # "module:function": (argparse subparsers) adds its reasoning-evals commands
    report_view: str | None = None  # "module:function": (run_dir, baseline, cleanup) -> its report view, or None
    # its fixtures whose items share a worker by group (EvalProtocol.groups names the groups; grouping.py)
    grouped: tuple[str, ...] = ()
    # its fixtures whose items' calls run ahead (EvalProtocol.item_ids): under xdist, enough of them are
    # kept queued on each worker (grouping.AheadScheduling)
    runs_ahead: tuple[str, ...] = ()
    eager_options: tuple[str, ...] = ()  # fields of its settings that make the controller start it before any item
    # its options that are gates (Option.name): given on the command line, or set in the ini file of a
    # session that selected none of any protocol's items, they judge it even with no item of it
    gate_options: tuple[str, ...] = ()
    baseline_option: str | None = None  # the option naming its regression baseline (--eval-fail-on-regression)
    # "module:function": (run directories) -> its tables of `reasoning-evals runs` (runs_table.py), or []
    runs: str | None = None
    # "module:function": (config) at pytest_cmdline_main -> the exit status of a command it ran as
    # several runs of its own (ChaosBench's several --eval-prompts folders), or None: pytest goes on
    cmdline_main: str | None = None


ENTRY_POINTS = "pytest_reasoning_evals.protocols"  # the entry-point group protocols declare themselves in


def load(target: str):
    """The object a "module:attribute" string names."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class LeftOut(NamedTuple):
    """An installed protocol package the plugin leaves out, and why (one line)."""

    name: str  # its entry point's name
    why: str
    info: ProtocolInfo | None  # its declaration when it loaded (an option clash), else None

    def flags(self) -> tuple[str, ...]:
        """The flags that are its own: its declared options, or by the naming rule --eval-<name>-..."""
        return tuple(option.flag for option in self.info.options) if self.info else ()

    def owns_flag(self, flag: str) -> bool:
        return flag in self.flags() or flag.startswith(f"--eval-{self.name}-")

    def owns_fixture(self, fixture: str) -> bool:
        known = self.info.fixtures if self.info else ()
        return fixture in known or fixture == self.name or fixture.startswith(f"{self.name}_")

    def warning(self) -> str:
        return f"pytest-reasoning-evals: WARNING: protocol {self.name} is left out: {self.why}"

    def usage(self, used: str) -> str:
        return f"{used}: protocol {self.name} is left out ({self.why}); fix or uninstall its package"


@functools.cache
def _discovered() -> tuple[tuple[ProtocolInfo, ...], tuple[LeftOut, ...]]:
    """(the usable protocols by name, the installed ones left out), read from the entry points once."""
    from importlib.metadata import entry_points

    found: dict[str, ProtocolInfo] = {}
    left_out: dict[str, LeftOut] = {}
    for point in entry_points(group=ENTRY_POINTS):
        info = _declaration(point)
        if isinstance(info, str):
            left_out.setdefault(point.name, LeftOut(point.name, info, None))
        else:
            found.setdefault(info.name, info)  # a package installed twice (editable and not) declares it twice
    # the shipped protocols claim their options first: a user's package cannot push them out
    ordered = sorted(found.values(), key=lambda info: (not info.protocol.startswith(f"{__package__}."), info.name))
    for info, clash in zip(ordered, _option_clashes(ordered)):
        if clash:
            left_out[info.name] = LeftOut(info.name, clash, info)
    usable = tuple(found[name] for name in sorted(found) if name not in left_out)
    return usable, tuple(left_out[name] for name in sorted(left_out))


def _declaration(point) -> ProtocolInfo | str:
    """The ProtocolInfo an entry point names, or why it cannot be used (one line)."""
    try:
        info = point.load()
    except KeyboardInterrupt:
        raise
    # a package's crash or sys.exit at import must not end (or silence) every pytest run
    except BaseException as exc:  # noqa: BLE001
        said = str(exc).strip().splitlines()
        return f"{point.value!r} cannot be loaded: {type(exc).__name__}" + (f": {said[0][:300]}" if said else "")
    if not isinstance(info, ProtocolInfo) or info.name != point.name:
        return f"{point.value!r} must name a ProtocolInfo called {point.name!r}"
    return info


def declared_protocols() -> tuple[ProtocolInfo, ...]:
    """Every installed protocol's declaration that can be used, by name (a fixed order, whatever the install order)."""
    return _discovered()[0]


def left_out_protocols() -> tuple[LeftOut, ...]:
    """The installed protocol packages that are broken or clash: each is one warning line, not a failure."""
    return _discovered()[1]


def warn_left_out() -> None:
    """One line on stderr per protocol left out."""
    for left in left_out_protocols():
        print(left.warning(), file=sys.stderr)


def left_out_flag(args: list[str]) -> str | None:
    """The usage error of the first argument that is an option of a protocol left out, or None."""
    for arg in args:
        flag = arg.partition("=")[0]
        for left in left_out_protocols() if flag.startswith("--eval-") else ():
            if left.owns_flag(flag):
                return left.usage(f"option {flag}")
    return None


def left_out_fixture(fixtures: list[str], known: Callable[[str], bool]) -> str | None:
    """The usage error of the first fixture an item asks for, that nothing provides (`known` is
    False) and that a protocol left out would have, or None."""
    left_out = left_out_protocols()
    for fixture in fixtures if left_out else ():  # (every test function of a project is asked)
        for left in left_out if not known(fixture) else ():
            if left.owns_fixture(fixture):
                return left.usage(f"fixture {fixture!r}")
    return None


def _option_clashes(ordered: list[ProtocolInfo]) -> list[str | None]:
    """Per protocol in `ordered`: why one of its options is already another owner's, or None. Every
    --eval-<name> is one option of one owner; argparse's own error would name neither."""
    from pytest_reasoning_evals.options import OPTIONS

    owners = {option.name: "the plugin" for option in OPTIONS}
    clashes: list[str | None] = []
    for info in ordered:
        taken = [option.name for option in info.options if owners.get(option.name, info.name) != info.name]
        clashes.append(
            f"option --eval-{taken[0]} is already {_owner(owners[taken[0]])}'s; "
            f"start its options' names with its own ({info.name}-...)"
            if taken
            else None
        )
        if not taken:
            owners.update((option.name, info.name) for option in info.options)
    return clashes


def _owner(owner: str) -> str:
    return owner if owner == "the plugin" else f"protocol {owner}"
