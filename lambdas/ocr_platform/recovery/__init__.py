"""Recovery: ending the jobs nothing else will end.

``job_recovery`` fails dead-lettered jobs, settles GPU jobs whose notification was lost, fails jobs stuck past
their route's deadline and republishes completion events a crashed function left pending. Above both routes,
since it finishes jobs for either.
"""
