"""ocr_platform: the domain code shared by every Lambda, container and the client.

Plain Python with no AWS event shapes: the handlers in ``ocr_platform.handlers`` turn events into calls
on these modules, and the CPU processor image and the SageMaker endpoint image import the same package.
"""

__version__ = "0.1.0"
