"""The command line (``ocr-platform``) and the client it drives.

``commands`` (the argument parser and each command), ``client`` (submit, status and result against a deployed
stack, any endpoint set with the standard AWS variables, or the local stack), ``progress`` (the progress line of
``run``), ``doctor`` and ``doctor_quotas`` (the preflight before ``cdk deploy``). The top floor: it may use
everything below, the local stack included, and nothing imports it.

Exports: ``main`` (the console script's entry point).
"""
