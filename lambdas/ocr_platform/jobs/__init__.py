"""A job's life and its state: the job message, the job item and its conditional transitions, and admission.

``messages`` parses and validates the SQS job message; ``admission`` is the processor semaphore. The DynamoDB
job item is ``store.JobStore``, the one object callers use, put together from one part per meaning of the item,
each a small class over one conditional-update core:

- ``item``: the item's shape (``JobItem``, ``JobStatus``, ``NewJob``), its keys and indexes, claim attribute names;
- ``table``: the core, the table handle, ``get`` and the one conditional ``UpdateItem`` every write goes through;
- ``lifecycle``: the lifecycle QUEUED -> PROCESSING -> COMPLETED | FAILED, the terminal writes, progress;
- ``claims``: claims and leases on the steps that hand work on (dispatch, run, finish, each chunk);
- ``chunk_state``: a split job's chunks (plan, launches, requests, done set);
- ``delivery``: delivery state, the completion event's outbox and the webhook's record;
- ``listings``: the reads through the status and owner indexes;
- ``store``: ``JobStore`` itself, and every name callers import from it.

Each part imports ``item`` and ``table`` only. Every way in creates jobs here, both routes move them here, and the
ways out record their deliveries here.

Exports: ``JobStore``, ``JobItem``, ``JobStatus``, ``NewJob``, ``JobAlreadyExistsError``.
"""
