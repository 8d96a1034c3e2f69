"""The ways out: what a job produces and whom it tells.

``result_store`` publishes result.json and chunk results; ``fan_in`` merges a split job's chunks into one result;
``page_images``, ``searchable_pdf`` and ``requested_pdf`` make the files a job may ask for; ``notifications``
publishes the completion event of every terminal job; ``webhook_delivery`` and ``webhook_signing`` POST the signed
webhook. Both routes hand their results here; it stands above the job state, whose delivery fields it updates.
"""
