"""The embedded local stack: the whole pipeline on one machine, on moto plus small runtimes of our own.

moto (as a server) emulates S3, SQS, DynamoDB, SNS, CloudWatch, the SageMaker control plane and
Application Auto Scaling. What moto does not execute is supplied here, speaking the real wire protocols
and message shapes, so the handlers run unchanged behind the standard boto3 endpoint variables:

- ``lambda_runtime``: the Lambda service (RequestResponse and Event) running the real handler
  modules, with Lambda's async retries and on-failure destination; ``invoke_api`` speaks its HTTP
  protocol and ``execution_environment`` runs each function's worker process, init phase and limits;
- ``sagemaker_runtime``: InvokeEndpointAsync, queueing while the variant has 0 instances, the real
  vl-endpoint ``serve`` process, S3 output/failure objects and SageMaker's SNS notifications;
- ``event_sources``: Lambda's SQS event source mappings and SNS -> Lambda delivery;
- ``alarms``: CloudWatch's endpoint alarms and EventBridge's schedules, evaluated every period.

``stack.LocalStack`` wires them to the resources ``provisioning`` creates on moto and the functions of
``function_specs``; ``supervisor`` runs it as the background process behind ``ocr-platform local up``.
"""
