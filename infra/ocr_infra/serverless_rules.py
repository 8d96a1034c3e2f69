"""The Serverless Rules findings the platform accepts, each with its reason (as cdk-nag acknowledgements carry).

awslabs' Serverless Rules (``cfn-lint-serverless``) run on the synthesized template in the test suite
(``tests/infra/test_serverless_rules.py``). A finding whose rule is not below fails the suite, and so does
an acknowledgement that no longer matches anything. The reliability rules that count (an asynchronous
hand-over without a destination, a subscription or rule target without a DLQ) are met, not acknowledged:
``tests/infra/test_messaging.py`` asserts them directly, which is why ES1007 can be acknowledged as the
false positive it is.
"""

from __future__ import annotations

#: rule id -> why the finding is accepted
ACKNOWLEDGED_RULES: dict[str, str] = {
    "ES1007": "False positive: every asynchronously invoked function has an EventInvokeConfig with an on-failure "
    "destination (the parked-events queue), but CDK names the function by Ref there and by Fn::GetAtt Arn in the "
    "Lambda permission, and the rule compares the two literally.",
    "ES1001": "SQS event source mappings take no on-failure destination (that is for stream sources); the queue's own "
    "redrive policy is the destination: the job queue moves a message to its DLQ after max_receive_count receives "
    "(the DLQ consumer fails the job), and the DLQ keeps what its consumer cannot handle for 14 days, alarmed; the "
    "webhook queue moves a request the deliverer keeps crashing on to the webhook DLQ (where the deliverer itself "
    "parks a webhook that ran out of retries), alarmed too.",
    "ES6000": "These queues are the last stop themselves: the job queue's DLQ, the webhook DLQ and the parked-events "
    "queue. All keep messages for 14 days with an alarm on any message; a DLQ of their own would have nothing to catch.",
    "WS1004": "False positive: each function's log group is its own AWS::Logs::LogGroup with a retention, attached "
    "through the function's LoggingConfig, not found by the /aws/lambda/<name> naming convention the rule looks for.",
    "WS1002": "The scale-in function has two asynchronous invokers by design, with different principals: the idle "
    "alarm's SNS topic and the EventBridge re-check schedule. Both park what fails.",
}
