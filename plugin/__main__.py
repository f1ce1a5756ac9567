"""Command line: python -m plugin <command> ..."""

from __future__ import annotations

import argparse
import signal
import sys


def serve_local(args: argparse.Namespace) -> int:
    from plugin.local_server import LocalServer, LocalServerError

    server = LocalServer(port=args.port, ready_timeout=args.ready_timeout)
    try:
        server.start()
    except LocalServerError as exc:
        print(f"serve-local: {exc}", file=sys.stderr)
        return 1
    print(f"serve-local: SmolLM2-135M-Instruct ready on {server.base_url} (Ctrl-C stops it)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        return server.process.wait()
    except (KeyboardInterrupt, SystemExit):
        return 0
    finally:
        server.stop()


def scan_secrets(args: argparse.Namespace) -> int:
    from plugin.secrets import main

    return main(args.paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plugin", description="evaluation harness commands")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve-local", help="run the local SmolLM2 model behind llama.cpp's OpenAI-compatible server")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--ready-timeout", type=float, default=120.0, help="seconds to wait for the server (default 120)")
    serve.set_defaults(run=serve_local)
    scan = commands.add_parser("scan-secrets", help="fail on API-key shapes in cassettes, snapshots and results")
    scan.add_argument("paths", nargs="*", help="files or directories (default: cassettes snapshots results)")
    scan.set_defaults(run=scan_secrets)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
