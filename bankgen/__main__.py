"""Command line of the bank tools: python -m bankgen <command> ..."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_bank(args: argparse.Namespace) -> int:
    from bankgen.bank import CASES_DIR, BankError, write_bank

    out = (
        Path(args.out)
        if args.out
        else (CASES_DIR if args.scale == "default" else CASES_DIR.with_name("chaosbench-full"))
    )
    try:
        manifest = write_bank(out, seed=args.seed, scale=args.scale)
    except BankError as exc:
        print(f"build-bank: {exc}", file=sys.stderr)
        return 1
    print(
        f"build-bank: {manifest['total_questions']} questions and {manifest['dialogues']} dialogues "
        f"({manifest['dialogue_turns']} turns) written to {out}"
    )
    return 0


def validate_cases(args: argparse.Namespace) -> int:
    from bankgen.validate import main

    return main([args.path] if args.path else [])


def compute_indicators(args: argparse.Namespace) -> int:
    from bankgen.compute_indicators import main

    return main(args.rest)  # its own parser reads the options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bankgen", description="build and verify the ChaosBench-Logic bank")
    commands = parser.add_subparsers(dest="command", required=True)

    bank = commands.add_parser("build-bank", help="generate the ChaosBench-Logic question bank (deterministic)")
    bank.add_argument("--seed", type=int, default=42)
    bank.add_argument(
        "--scale",
        choices=("default", "full"),
        default="default",
        help="default: ~1,000 questions into cases/chaosbench; full: 40,000+ into cases/chaosbench-full",
    )
    bank.add_argument("--out", default=None, help="output folder (default by scale)")
    bank.set_defaults(run=build_bank)

    validate = commands.add_parser("validate-cases", help="check a question bank; file:line for every bad record")
    validate.add_argument("path", nargs="?", default=None, help="a .jsonl file or a folder (default cases/chaosbench)")
    validate.set_defaults(run=validate_cases)

    indicators = commands.add_parser(
        "compute-indicators",
        help="simulate the catalog systems and sweeps; --verify checks the cache and the curated labels",
    )
    indicators.add_argument(
        "rest", nargs=argparse.REMAINDER, help="options of the indicator command (--verify, --only ID ...)"
    )
    indicators.set_defaults(run=compute_indicators)

    args, unknown = parser.parse_known_args(argv)
    if args.command == "compute-indicators":
        args.rest = unknown + args.rest
    elif unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
