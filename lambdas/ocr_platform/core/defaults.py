"""Every default of the platform, written once: the CDK app, the local stack and the handlers read it here.

The same number used to be written in several places (the deployment config, the handlers' fallbacks for
an unset environment variable, each construct's props), and the copies drifted apart: a handler started
without the stack's environment swept QUEUED jobs after 3,600 s while the deployed sweeper waited 1,680 s.
This module and the two it gathers are plain Python without AWS or CDK imports, because the zip Lambdas
import them as well as the CDK app:

- ``ocr_platform.core.default_values``: the plain values, each the home of its number and its reason.
- ``ocr_platform.core.limits``: the limits derived from them, each a function whose docstring shows the
  arithmetic.

Read both through this module (``defaults.JOB_TTL_DAYS``, ``defaults.queued_deadline_seconds()``).

Who reads what:

- ``ocr_infra.config.PlatformConfig``: the default of each field is the constant of the same name in upper
  case (``job_ttl_days`` -> ``JOB_TTL_DAYS``). Its docstring says why each value is what it is.
- ``ocr_platform.core.settings.RuntimeSettings``: a setting whose environment variable is unset falls back to
  what the stack deploys with these defaults, a constant or one of the derived functions.
- the construct props in ``ocr_infra`` and the local stack's functions: the same constants.

Derived values are small functions of the settings they depend on. Each argument defaults to its
default, and ``PlatformConfig`` calls them with its own fields, so a stage that changes one input gets
consistent outputs:

>>> queue_visibility_timeout_seconds()  # 6 x the invoker's 60 s
360
>>> queue_visibility_timeout_seconds(invoker_timeout_seconds=30)
180
"""

from __future__ import annotations

from ocr_platform.core.default_values import *  # noqa: F403
from ocr_platform.core.limits import *  # noqa: F403
