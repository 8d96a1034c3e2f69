"""The model container of the local SageMaker runtime: the real ``serve`` process, run as a network-isolated one.

On AWS the GPU endpoint's container runs with network isolation
(https://docs.aws.amazon.com/sagemaker/latest/dg/mkt-algo-model-internet-free.html): it has no outbound network
and SageMaker gives it no AWS credentials, so it can make no AWS call; SageMaker itself reads the request's input
from S3 and writes the answer. Locally the container is a process on this machine, so :func:`isolated_environment`
takes from it what an AWS call needs: every ``AWS_*`` variable (credentials, region, ``AWS_ENDPOINT_URL*``) is
dropped, the credential and config files point at ``os.devnull``, instance metadata is disabled, and the HTTP(S)
proxies lead to a closed port on loopback. A call through boto3's default resolution therefore finds no
credentials, and one with credentials of its own reaches no endpoint.

Difference from AWS: loopback stays reachable (the container's own helper servers, a vLLM server, listen there),
and so would the local stack's moto server to a process that was told its URL some other way; nothing the platform
passes the container names it.

:class:`ModelContainer` starts the process on a free port (``SAGEMAKER_BIND_TO_PORT``), waits for ``GET /ping``
200, forwards requests to it and stops it (its whole process group).
"""

from __future__ import annotations

import http.client
import logging
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path

logger = logging.getLogger(__name__)

LAMBDAS_DIR = Path(__file__).resolve().parents[2]
#: Where the isolated container's HTTP(S) proxies point: the discard port, closed on loopback.
NOWHERE = "http://127.0.0.1:9"


def isolated_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` as a network-isolated container would have it: no AWS credentials, region or endpoints, no
    credential files or instance metadata to fall back on, and proxies that lead nowhere (loopback excepted, where
    the container's own helper servers listen).

    >>> env = isolated_environment({"AWS_ACCESS_KEY_ID": "AKIA", "AWS_ENDPOINT_URL": "http://moto", "PATH": "/bin"})
    >>> sorted(k for k in env if k.startswith("AWS_")), env["PATH"], env["HTTPS_PROXY"]
    (['AWS_CONFIG_FILE', 'AWS_EC2_METADATA_DISABLED', 'AWS_SHARED_CREDENTIALS_FILE'], '/bin', 'http://127.0.0.1:9')
    """
    env = {key: value for key, value in environ.items() if not key.upper().startswith("AWS_")}
    env.update(AWS_SHARED_CREDENTIALS_FILE=os.devnull, AWS_CONFIG_FILE=os.devnull, AWS_EC2_METADATA_DISABLED="true")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = NOWHERE
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


class ModelContainer:
    """One ``serve`` process with an isolated environment (``environment`` merged over ``os.environ`` first)."""

    def __init__(self, command: list[str], environment: Mapping[str, str], *, host: str, max_concurrent_invocations: int) -> None:
        self.command, self.environment, self.host = command, dict(environment), host
        self.max_concurrent_invocations = max_concurrent_invocations
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        process = self.process
        return process.pid if process is not None and process.poll() is None else None

    def exited(self) -> int | None:
        """The exit code of a process that was started and has ended; ``None`` otherwise."""
        return None if self.process is None else self.process.poll()

    def start(self, stopping: threading.Event, timeout_seconds: float) -> str | None:
        """Start the process and wait until ``/ping`` says 200: ``None`` then, else what went wrong (the process is
        stopped). Returns ``None`` at once as well when ``stopping`` is set meanwhile."""
        with socket.socket() as sock:
            sock.bind((self.host, 0))
            self.port = sock.getsockname()[1]
        env = isolated_environment({**os.environ, **self.environment, "SAGEMAKER_BIND_TO_PORT": str(self.port)})
        env.setdefault("OCR_MAX_CONCURRENT_INVOCATIONS", str(self.max_concurrent_invocations))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(LAMBDAS_DIR), env.get("PYTHONPATH", "")) if p)
        logger.info("SageMaker runtime: starting %s on port %d", " ".join(self.command), self.port)
        self.process = process = subprocess.Popen(self.command, env=env, start_new_session=True)
        deadline = time.monotonic() + timeout_seconds
        while not stopping.wait(0.1):
            if process.poll() is not None:
                problem = f"the serve process exited with code {process.returncode} before it was healthy"
                break
            try:
                status, body, _ = self.call("GET", "/ping", timeout=2)
            except (OSError, http.client.HTTPException):
                status, body = 0, b""  # not listening yet
            if status == 200:
                return None
            if status >= 500 and status != 503:
                problem = f"GET /ping answered {status}: {body.decode(errors='replace')[:500]}"
                break
            if time.monotonic() > deadline:
                problem = f"GET /ping did not answer 200 within {timeout_seconds:g} seconds"
                break
        else:
            problem = None
        self.stop("failed its health check" if problem else "runtime stopped")
        return problem

    def stop(self, why: str) -> None:
        """Stop the process; :attr:`pid` turns ``None`` once it has exited."""
        process = self.process
        if process is not None and process.poll() is None:
            logger.info("SageMaker runtime: stopping serve process %d (%s)", process.pid, why)
            try:
                os.killpg(process.pid, signal.SIGTERM)  # its own session: a wrapper script's children go too
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            except ProcessLookupError:
                pass
        self.process = None

    def call(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None,
             timeout: float = 10) -> tuple[int, bytes, str | None]:
        """One HTTP request to the container: its status, body and content type."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read(), response.getheader("Content-Type")
        finally:
            conn.close()
