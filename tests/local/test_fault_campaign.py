"""The fault campaign: every scenario once (69 jobs) and a few more, over the three models, good and bad
files, short and split documents, injected faults.

One local stack of its own (in this process, so the check can read its runtimes' invocation records);
``tests/local/campaign.py`` says what is injected and what is checked.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.local.campaign import MODELS, plan, run_campaign

JOBS = 70


def test_every_job_ends_as_it_must_while_faults_are_injected(tmp_path: Path) -> None:
    jobs, faults = plan(JOBS)

    report = run_campaign(tmp_path, total=JOBS)

    print("\n".join(report.lines()))
    assert report.problems == []
    assert report.jobs == JOBS and set(report.by_model) >= set(MODELS)
    assert report.by_status == Counter(job.status for job in jobs)
    assert report.by_code == Counter(job.code for job in jobs if job.code)
    assert sum(report.faults_injected.values()) >= len(faults)
    # Every job's completion event was recorded; every webhook ended delivered, or dead-lettered where it must.
    assert report.events_recorded >= JOBS
    callbacks = Counter(job.callback for job in jobs)
    assert report.webhooks == Counter(
        {"dead_lettered": callbacks["down"], "delivered": callbacks["ok"] + callbacks["slow"] + callbacks["flaky"]}
    )
    # At most one backend run per job and chunk (a COMPLETED job had at least one), and the chunks did run.
    assert report.processor_runs + report.endpoint_requests <= report.allowed_backend_runs
    assert report.allowed_backend_runs > len(jobs) + 10
