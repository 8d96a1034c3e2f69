"""The stage's optional VPC (``PlatformConfig.vpc``): the functions' network without a route to the internet.

Off by default: the functions call only AWS APIs, over TLS with signed requests, and hold nothing a network could
reach, so a VPC adds control only at a price (below). With it, every function that calls nothing but AWS runs in
private isolated subnets of two Availability Zones, and reaches exactly the services it calls through VPC endpoints:

- gateway endpoints (free) for S3 and DynamoDB, which every function uses;
- interface endpoints for SQS and EventBridge (every function that finishes jobs sends its completion event and
  queues its webhook; the jobs API and the drop folder send job messages), Lambda (the CPU processor invokes itself
  for the chunks of a long document), and, with the GPU backend, the SageMaker runtime (the completion function and
  the sweeper send a split job's chunk requests), the SageMaker API and CloudWatch (the scale-in function describes
  the endpoint and its idle alarm and sets the instance count).

Nothing else is needed: a function's credentials come from its environment (no STS call), Lambda itself carries
its logs, embedded metrics and X-Ray segments (not the function's network interface), and Lambda, SQS, S3 and
DynamoDB use the KMS key themselves. Two functions stay outside, each with its reason recorded on it: the invoker
fetches documents submitted by URL and the webhook deliverer POSTs to receivers, both from and to arbitrary public
``https://`` hosts (``ocr_platform.core.safe_http`` admits only public addresses, after DNS and at every redirect). A
NAT gateway would let them in, but it costs $0.045 an hour per AZ (about $66 a month for two, us-east-1) plus
$0.045 per GB, and it would open the same internet to every function of the VPC.

Cost (us-east-1): each interface endpoint costs $0.01 per AZ-hour, so $14.60 a month in two AZs, plus $0.01 per GB
it carries. Three with the CPU backend alone (SQS, EventBridge, Lambda: $43.80 a month), five with the GPU backend
alone (SQS, EventBridge, SageMaker runtime and API, CloudWatch: $73.00), six with both, the default models
($87.60). Gateway endpoints, subnets and security groups cost nothing; flow logs cost CloudWatch Logs' ingestion
($0.50 per GB) and storage, a few cents a month for traffic that is all AWS API calls.

The SageMaker endpoint is not placed in the VPC: SageMaker pulls its image and writes its logs outside it, and its
container reads documents from S3 and, without baked weights, models from the hub (``gpu_backend``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from ocr_infra.secure_defaults import allow
from ocr_platform.core.routing import Backend

#: The VPC's addresses: two /20 subnets (4,091 addresses each) leave room for every function's network interfaces.
VPC_CIDR = "10.0.0.0/16"
#: The AZs the isolated subnets span: two, so an AZ outage leaves Lambda a subnet to run in.
AVAILABILITY_ZONES = 2
#: What one interface endpoint costs a month in us-east-1 in those AZs: $0.01 per AZ-hour x 730 hours.
INTERFACE_ENDPOINT_MONTHLY_USD = 0.01 * 730 * AVAILABILITY_ZONES


def interface_endpoint_services(backends: frozenset[Backend]) -> dict[str, ec2.InterfaceVpcEndpointAwsService]:
    """The interface endpoints the functions in the VPC need with these backends, by construct id."""
    services = {"Sqs": ec2.InterfaceVpcEndpointAwsService.SQS, "EventBridge": ec2.InterfaceVpcEndpointAwsService.EVENTBRIDGE}
    if "lambda" in backends:
        services["Lambda"] = ec2.InterfaceVpcEndpointAwsService.LAMBDA_
    if "sagemaker" in backends:
        services["SageMakerRuntime"] = ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_RUNTIME
        services["SageMakerApi"] = ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_API
        services["CloudWatch"] = ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING
    return services


def monthly_cost_usd(backends: frozenset[Backend]) -> float:
    """The VPC's fixed monthly cost in us-east-1 with these backends: its interface endpoints."""
    return round(len(interface_endpoint_services(backends)) * INTERFACE_ENDPOINT_MONTHLY_USD, 2)


@dataclass(frozen=True)
class FunctionNetwork:
    """Where a function in the VPC runs: the isolated subnets, with the functions' security group.

    Attributes:
        vpc: the stage's VPC.
        subnets: its private isolated subnets (one per AZ).
        security_group: every function's: no inbound rule, outbound HTTPS only (the endpoints are all it can reach).
    """

    vpc: ec2.IVpc
    subnets: ec2.SubnetSelection
    security_group: ec2.ISecurityGroup

    def allow_network_interfaces(self, role: iam.IRole) -> None:
        """Let Lambda attach a function with ``role`` to the VPC: it creates, uses and deletes the function's network
        interfaces with the function's execution role (and checks at deployment that the role may). These are the
        actions of AWS's AWSLambdaVPCAccessExecutionRole, which grants them on '*'; here creating one is limited to
        the platform's subnets and security group."""
        stack = Stack.of(self.vpc)

        def arn(resource: str, name: str) -> str:
            return stack.format_arn(service="ec2", resource=resource, resource_name=name)

        interfaces = arn("network-interface", "*")
        subnets = [arn("subnet", subnet.subnet_id) for subnet in self.vpc.select_subnets(subnet_type=self.subnets.subnet_type).subnets]
        interface_ids = "Lambda names the function's network interfaces at run time; the grant covers the stage's account and region."
        allow(
            role,
            ["ec2:CreateNetworkInterface"],
            [interfaces, *subnets, arn("security-group", self.security_group.security_group_id)],
            reason=interface_ids,
        )
        allow(
            role,
            ["ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"],
            [interfaces],
            reason=interface_ids,
        )
        allow(
            role,
            ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"],
            ["*"],
            reason="ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets support no resource-level permissions (AWS "
            "requires Resource '*'); Lambda reads the function's network interfaces and subnets with them.",
        )


@dataclass(frozen=True)
class PlatformVpcProps:
    """Props of :class:`PlatformVpc`.

    Attributes:
        backends: the deployed backends, which decide the interface endpoints (:func:`interface_endpoint_services`).
        flow_log_retention: how long the flow logs are kept (the stage's log retention).
        encryption_key: the stage's KMS key for the flow logs (``PlatformConfig.customer_managed_key``), or none.
    """

    backends: frozenset[Backend]
    flow_log_retention: logs.RetentionDays
    encryption_key: kms.IKey | None = None


class PlatformVpc(Construct):
    """Private isolated subnets in two AZs, the VPC endpoints the functions call, flow logs, and the security groups.

    The VPC's default security group keeps its AWS defaults (``restrict_default_security_group=False``): nothing is
    attached to it, and CDK would strip it with a custom-resource Lambda function of its own (a Node.js runtime and an
    AWS-managed policy, outside the platform's rules for functions).
    """

    def __init__(self, scope: Construct, construct_id: str, props: PlatformVpcProps) -> None:
        super().__init__(scope, construct_id)
        # 1. VPC: isolated subnets only (no internet or NAT gateway), gateway endpoints for S3 and DynamoDB.
        isolated = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        self._vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(VPC_CIDR),
            max_azs=AVAILABILITY_ZONES,
            nat_gateways=0,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="Functions", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=20)
            ],
            gateway_endpoints={
                "S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3, subnets=[isolated]),
                "DynamoDb": ec2.GatewayVpcEndpointOptions(
                    service=ec2.GatewayVpcEndpointAwsService.DYNAMODB, subnets=[isolated]
                ),
            },
            restrict_default_security_group=False,
        )
        # 2. Flow logs: every accepted and rejected flow, kept as long as the functions' logs.
        self._flow_logs = logs.LogGroup(
            self,
            "FlowLogs",
            retention=props.flow_log_retention,
            encryption_key=props.encryption_key,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self._vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(self._flow_logs),
            traffic_type=ec2.FlowLogTrafficType.ALL,
        )
        # 3. Security groups: the functions' may only open HTTPS connections; the endpoints' admit only those.
        self._functions = ec2.SecurityGroup(
            self,
            "FunctionsSecurityGroup",
            vpc=self._vpc,
            description="OCR platform functions: no inbound, HTTPS out to the VPC endpoints only",
            allow_all_outbound=False,
        )
        self._functions.add_egress_rule(
            ec2.Peer.any_ipv4(),
            ec2.Port.tcp(443),
            "HTTPS to the VPC endpoints; the isolated subnets route nowhere else (S3 and DynamoDB via gateway endpoints)",
        )
        self._endpoints = ec2.SecurityGroup(
            self,
            "EndpointsSecurityGroup",
            vpc=self._vpc,
            description="OCR platform interface endpoints: HTTPS from the platform functions only",
            allow_all_outbound=False,
        )
        self._endpoints.add_ingress_rule(self._functions, ec2.Port.tcp(443), "HTTPS from the platform functions")
        # 4. Interface endpoints with private DNS: the SDKs' default endpoints resolve to them inside the VPC.
        self._interface_endpoints = {
            name: self._vpc.add_interface_endpoint(
                name, service=service, subnets=isolated, security_groups=[self._endpoints], open=False, private_dns_enabled=True
            )
            for name, service in interface_endpoint_services(props.backends).items()
        }
        self._network = FunctionNetwork(vpc=self._vpc, subnets=isolated, security_group=self._functions)

    @property
    def vpc(self) -> ec2.Vpc:
        return self._vpc

    @property
    def network(self) -> FunctionNetwork:
        """What a function needs to run in the VPC (``CommonFunctionProps.network``)."""
        return self._network

    @property
    def interface_endpoints(self) -> Sequence[ec2.InterfaceVpcEndpoint]:
        return list(self._interface_endpoints.values())

    @property
    def flow_log_group(self) -> logs.LogGroup:
        return self._flow_logs
