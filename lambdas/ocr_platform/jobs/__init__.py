"""A job's life and its state: the job message, the job item and its conditional transitions, and admission.

``messages`` parses and validates the SQS job message; ``store`` is the DynamoDB job item (``JobStore``: the
lifecycle QUEUED -> PROCESSING -> COMPLETED | FAILED, claims and leases, chunk state, delivery state, listings,
each in its own module over one conditional-update core); ``admission`` is the processor semaphore. Every way in
creates jobs here, both routes move them here, and the ways out record their deliveries here.

Exports: ``JobStore``, ``JobItem``, ``JobStatus``, ``NewJob``, ``JobAlreadyExistsError``.
"""
