"""The command line (``ocr-platform``) and the client it drives.

``commands`` (the argument parser and ``main``, the console script's entry point), the commands themselves
(``local_commands``: ``ocr``, ``local``, ``run``; ``platform_commands``: ``submit``, ``status``, ``result``,
``models``, ``console``, ``doctor``; ``command_support``: what they share), ``client`` (submit, status and result against a deployed
stack, any endpoint set with the standard AWS variables, or the local stack), ``progress`` (the progress line of
``run``), ``doctor`` and ``doctor_quotas`` (the preflight before ``cdk deploy``). The top floor: it may use
everything below, the local stack included, and nothing imports it.
"""
