"""Run the fault campaign (issue 5) on a fresh local stack and print its counts.

    .venv/bin/python scripts/fault_campaign.py --jobs 120

The same campaign as ``tests/local/test_fault_campaign.py``, at any size: every scenario and fault
once, then good documents round-robin over the three models. Exits 1 if any promise was broken.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.local.campaign import run_campaign  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=54, help="jobs in the batch (at least the 42 scenarios)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for every job to end")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fault-campaign-") as workdir:
        report = run_campaign(Path(workdir), total=args.jobs, timeout=args.timeout)
    print("\n".join(report.lines()))
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
