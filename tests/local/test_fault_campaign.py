"""The fault campaign of issue 5: 54 jobs over the three models, good and bad files, injected faults.

One local stack of its own (in this process, so the check can read its runtimes' invocation records);
``tests/local/campaign.py`` says what is injected and what is checked.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.local.campaign import MODELS, plan, run_campaign


def test_every_job_ends_as_it_must_while_faults_are_injected(tmp_path: Path) -> None:
    jobs, faults = plan(54)

    report = run_campaign(tmp_path, total=54)

    print("\n".join(report.lines()))
    assert report.problems == []
    assert report.jobs == 54 and set(report.by_model) >= set(MODELS)
    assert report.by_status == Counter(job.status for job in jobs)
    assert report.by_code == Counter(job.code for job in jobs if job.code)
    assert sum(report.faults_injected.values()) >= len(faults)
    # At most one backend run per job (a COMPLETED job had at least one).
    assert report.processor_runs + report.endpoint_requests <= len(jobs)
