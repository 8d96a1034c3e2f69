"""What the local Lambda runtime needs to know about one function (mirrors the CDK function settings)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FunctionSpec:
    """One Lambda function of the local stack.

    Attributes:
        name: the function name (``Invoke`` also accepts its ARN).
        handler: ``module.attribute`` of the handler, as in the Lambda configuration.
        environment: the function's environment variables (on top of the runtime's AWS endpoint settings).
        timeout_seconds: the invocation is stopped and reported as ``Sandbox.Timedout`` after this.
        memory_mb: reported to the handler through its context.
        retry_attempts: retries of a failed asynchronous (``Event``) invocation (Lambda's default is 2).
        on_failure: name of the function that receives the invocation record when an async invocation
            still fails after its retries (Lambda's on-failure destination), or ``None``.
    """

    name: str
    handler: str
    environment: dict[str, str] = field(default_factory=dict)
    timeout_seconds: int = 60
    memory_mb: int = 256
    retry_attempts: int = 2
    on_failure: str | None = None
