"""Run the fault campaign (issue 5) on a fresh local stack and print its counts.

    .venv/bin/python scripts/fault_campaign.py --jobs 500
    .venv/bin/python scripts/fault_campaign.py --duration 30m --rate 12/min   # a soak

The same campaign as ``tests/local/test_fault_campaign.py``, at any size: every scenario and fault
once, then good documents round-robin over the three models. ``--jobs`` submits the whole batch at
once. ``--duration`` with ``--rate`` is a soak: the same mix submitted at a steady rate for that long,
reporting throughput, job latency and the stack's memory (RSS) and open files, sampled over the run
(the first 5 minutes against the last 5). It counts backend runs per job (processor invocations and
endpoint requests); a job run more than once is a problem. Each problem says whether a fault was
injected there.
Exits 1 if any promise was broken.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.local.campaign import plan, run_campaign  # noqa: E402

DURATION_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(text: str) -> float:
    """``90s``, ``30m``, ``1.5h`` (a bare number is seconds)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 90s, 30m or 1h")
    return float(match[1]) * DURATION_UNITS[match[2] or "s"]


def rate_per_minute(text: str) -> float:
    """``12/min``, ``0.5/s``, ``600/h``."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*/\s*(s|sec|min|m|h)\s*", text)
    if match is None or float(match[1]) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate such as 12/min")
    return float(match[1]) * {"s": 60, "sec": 60, "min": 1, "m": 1, "h": 1 / 60}[match[2]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=54, help=f"jobs in the batch (at least the {len(plan(0)[0])} scenarios)")
    parser.add_argument("--duration", type=duration_seconds, help="soak: submit for this long (e.g. 30m); needs --rate")
    parser.add_argument("--rate", type=rate_per_minute, help="soak: steady submission rate (e.g. 12/min)")
    parser.add_argument("--sample", type=float, default=10.0, help="seconds between memory/open-file samples")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait, after the last submission, for every job to end")
    args = parser.parse_args()
    if (args.duration is None) != (args.rate is None):
        parser.error("--duration and --rate go together")
    total, scenarios = args.jobs, len(plan(0)[0])
    if args.duration is not None:
        total = math.ceil(args.rate * args.duration / 60)
    if total < scenarios:
        parser.error(f"the campaign has {scenarios} scenario jobs; ask for at least that many (got {total})")
    with tempfile.TemporaryDirectory(prefix="fault-campaign-") as workdir:
        report = run_campaign(Path(workdir), total=total, timeout=args.timeout, rate_per_minute=args.rate, sample_seconds=args.sample)
    print("\n".join(report.lines()), flush=True)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
