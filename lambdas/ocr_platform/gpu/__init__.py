"""The GPU route: PaddleOCR-VL on a SageMaker asynchronous endpoint that scales to zero.

``sagemaker_async`` (requests and capacity), ``endpoint_payloads`` (the request's parameters and the container's
ZIP answer), ``model_server`` (the network-isolated container's HTTP server), ``completion`` (SageMaker's
notifications finish jobs and send a split job's chunk requests) and ``scaling`` (scale-in when idle).
Independent of the CPU route: neither imports the other.
"""
