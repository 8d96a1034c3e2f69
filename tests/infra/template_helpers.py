"""Helpers to read IAM policies and intrinsic functions in a synthesized template."""

from __future__ import annotations

import json
import re
from typing import Any

#: CDK's name of the output a weak cross-stack reference reads: ``PublishOutput`` + ``Ref<Id>`` or ``FnGetAtt<Id><Attr>``
#: + an 8-digit hash; logical IDs end in 8 hex digits of their own.
_PUBLISHED = re.compile(r"^PublishOutput(?:Ref(?P<ref>\w+?)|FnGetAtt(?P<id>\w+?[0-9A-F]{8})(?P<attr>\w+?))[0-9A-F]{8}$")


def flatten(node: Any) -> str:
    """A CloudFormation value as one readable string: ``{"Fn::GetAtt": ["B", "Arn"]}`` -> ``<B.Arn>``.

    A reference of the GPU stack into the core (``Fn::GetStackOutput``) reads as the reference it stands for
    (``<JobsTable10C8EDF6.Arn>``), or ``<output:Name>`` for an output the stack names itself.
    """
    if isinstance(node, str):
        return node
    if isinstance(node, dict) and "Fn::GetStackOutput" in node:
        name = node["Fn::GetStackOutput"]["OutputName"]
        published = _PUBLISHED.match(name)
        if published is None:
            return f"<output:{name}>"
        return f"<{published['ref']}>" if published["ref"] else f"<{published['id']}.{published['attr']}>"
    if isinstance(node, dict):
        if "Fn::Join" in node:
            delimiter, items = node["Fn::Join"]
            return delimiter.join(flatten(item) for item in items)
        if "Fn::GetAtt" in node:
            return "<{}.{}>".format(*node["Fn::GetAtt"])
        if "Ref" in node:
            return f"<{node['Ref']}>"
        if "Fn::Sub" in node:
            return str(node["Fn::Sub"])
    return json.dumps(node, sort_keys=True)


def tracing_grants() -> dict[str, set[str]]:
    """What active X-Ray tracing adds to every function's role (CDK's grant: X-Ray has no resource-level permissions)."""
    return {"xray:PutTraceSegments": {"*"}, "xray:PutTelemetryRecords": {"*"}}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def policy_statements(resources: dict[str, dict[str, Any]], role_logical_id: str) -> list[dict[str, Any]]:
    """Every identity-policy statement attached to a role (inline policies and AWS::IAM::Policy)."""
    statements: list[dict[str, Any]] = []
    role = resources[role_logical_id]
    for policy in role["Properties"].get("Policies", []):
        statements += policy["PolicyDocument"]["Statement"]
    for resource in resources.values():
        if resource["Type"] == "AWS::IAM::Policy" and {"Ref": role_logical_id} in resource["Properties"].get(
            "Roles", []
        ):
            statements += resource["Properties"]["PolicyDocument"]["Statement"]
    return statements


def grants(resources: dict[str, dict[str, Any]], role_logical_id: str) -> dict[str, set[str]]:
    """``{action: {resource, ...}}`` a role is allowed (conditions are checked separately)."""
    result: dict[str, set[str]] = {}
    for statement in policy_statements(resources, role_logical_id):
        assert statement["Effect"] == "Allow", statement
        for action in as_list(statement["Action"]):
            result.setdefault(action, set()).update(flatten(r) for r in as_list(statement["Resource"]))
    return result
