"""The CPU route: the processor Lambda's work for PP-OCRv5, PP-OCRv6 and PP-StructureV3.

``job_runner`` takes a job (or a chunk of one) from its message to COMPLETED or FAILED: it downloads the document,
runs the engine, fans a long document out into chunks run by invocations of its own, and fans them back in through
``ocr_platform.outputs``. Independent of the GPU route: neither imports the other.
"""
