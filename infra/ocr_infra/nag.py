"""cdk-nag: the AwsSolutions rule pack, run by CDK's validation framework at every synth.

cdk-nag 3 is a policy-validation plugin: ``Validations.of(app).add_plugins(pack)`` makes ``app.synth()``
(and so ``cdk synth`` / ``cdk deploy``) fail with a report when a finding is not acknowledged.
Acknowledgements live next to the resource they concern (``secure_defaults.acknowledge``), each with
its reason.
"""

from __future__ import annotations

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks


def apply_nag_checks(app: App, *, verbose: bool = True) -> AwsSolutionsChecks:
    """Register the AwsSolutions pack on ``app``; returns it so callers can ``validate_scope(app)`` too."""
    pack = AwsSolutionsChecks(app, verbose=verbose)
    Validations.of(app).add_plugins(pack)
    return pack
