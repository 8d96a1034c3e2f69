"""What a SageMaker GPU host runs: the inference AMI versions, their NVIDIA drivers and CUDA versions.

A container's CUDA must be one the host's driver runs: with a driver too old for the image, the container
cannot start (``CannotStartContainerError``), ``/ping`` never answers 200, the endpoint never reaches
InService, and its stack rolls back. SageMaker real-time and asynchronous inference run NVIDIA driver 470
(CUDA 11.4) on ``ml.g4dn``, ``ml.g5``, ``ml.p3`` and ``ml.p4d`` unless the production variant names an
``InferenceAmiVersion``. Source, both read on 2026-11-26:

- "Best practices to minimize interruptions during GPU driver upgrades",
  https://docs.aws.amazon.com/sagemaker/latest/dg/inference-gpu-drivers.html (default driver and CUDA per
  instance family, the AMI versions that override them, ``CannotStartContainerError`` on a mismatch);
- ``ProductionVariant.InferenceAmiVersion`` in the SageMaker API reference,
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html (each AMI version's
  driver, CUDA version and instance families).

The table holds every GPU version of botocore's ``ProductionVariantInferenceAmiVersion`` enum
(``al2-ami-sagemaker-inference-neuron-2`` is Inferentia/Trainium, not a GPU host). For
``al2023-ami-sagemaker-inference-gpu-4-1`` (driver 580 / CUDA 13.0, CUDA-compat mounting disabled) the API
reference gives the driver and CUDA but, as read on 2026-11-28, no instance families; its families here are
those the AL2 GPU versions serve plus the newer ``ml.g6e``, ``ml.p5e`` and ``ml.p5en`` (whose default host is
already driver 550). A family it turns out not to serve fails at ``CreateEndpointConfig``, not silently.

The rule :func:`cuda_problem` applies is the conservative one: the image's CUDA (major.minor) is at most
the host's.
"""

from __future__ import annotations

from dataclasses import dataclass

#: ``InferenceAmiVersion`` unset: the family's default host.
DEFAULT_AMI = ""


@dataclass(frozen=True)
class GpuHost:
    """One SageMaker inference host: its NVIDIA driver, the newest CUDA that driver runs, and the
    instance families it serves.

    Attributes:
        driver: NVIDIA driver major version.
        cuda: the CUDA version the driver supports, ``major.minor``.
        families: instance families (``ml.g5``) this host serves.
        cuda_compat_mounting: whether the NVIDIA Container Toolkit mounts CUDA's forward-compatibility
            libraries into the container (the ``-1`` AMI versions disable it).
    """

    driver: int
    cuda: str
    families: tuple[str, ...]
    cuda_compat_mounting: bool = True


#: The GPU inference AMI versions of ``ProductionVariant.InferenceAmiVersion`` (API reference above).
INFERENCE_AMI_VERSIONS: dict[str, GpuHost] = {
    "al2-ami-sagemaker-inference-gpu-2": GpuHost(
        535, "12.2", ("ml.g4dn", "ml.g5", "ml.g6", "ml.p3", "ml.p4d", "ml.p4de", "ml.p5")
    ),
    "al2-ami-sagemaker-inference-gpu-2-1": GpuHost(
        535, "12.2", ("ml.g4dn", "ml.g5", "ml.g6", "ml.p3", "ml.p4d", "ml.p4de", "ml.p5"), cuda_compat_mounting=False
    ),
    "al2-ami-sagemaker-inference-gpu-3-1": GpuHost(
        550, "12.4", ("ml.g4dn", "ml.g5", "ml.g6", "ml.p3", "ml.p4d", "ml.p4de", "ml.p5"), cuda_compat_mounting=False
    ),
    "al2023-ami-sagemaker-inference-gpu-4-1": GpuHost(
        580, "13.0", ("ml.g4dn", "ml.g5", "ml.g6", "ml.g6e", "ml.p4d", "ml.p4de", "ml.p5", "ml.p5e", "ml.p5en"),
        cuda_compat_mounting=False,
    ),
}

#: The host a variant gets without ``InferenceAmiVersion``, by instance family (asynchronous inference rows of
#: "Best practices to minimize interruptions during GPU driver upgrades").
DEFAULT_HOSTS: tuple[GpuHost, ...] = (
    GpuHost(470, "11.4", ("ml.p2", "ml.p3", "ml.p4d", "ml.p4de", "ml.g4dn", "ml.g5")),
    GpuHost(535, "12.2", ("ml.p5", "ml.g6")),
    GpuHost(550, "12.4", ("ml.p5e", "ml.p5en")),
)


def instance_family(instance_type: str) -> str:
    """``ml.g5.xlarge`` -> ``ml.g5``.

    >>> instance_family("ml.g5.xlarge")
    'ml.g5'
    """
    return instance_type.rsplit(".", 1)[0]


def host_for(ami_version: str, instance_type: str) -> GpuHost | None:
    """The host a variant of ``instance_type`` runs on with ``ami_version`` (``""``: the family's default);
    ``None`` when that AMI version does not serve the family, or the family has no GPU host here.

    >>> host_for("", "ml.g5.xlarge").driver
    470
    >>> host_for("al2-ami-sagemaker-inference-gpu-3-1", "ml.g5.xlarge").cuda
    '12.4'
    """
    family = instance_family(instance_type)
    if ami_version:
        host = INFERENCE_AMI_VERSIONS.get(ami_version)
        return host if host is not None and family in host.families else None
    return next((host for host in DEFAULT_HOSTS if family in host.families), None)


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def cuda_problem(ami_version: str, instance_type: str, image_cuda: str) -> str | None:
    """Why a container built for CUDA ``image_cuda`` cannot start on that host, or ``None`` when it can.

    >>> cuda_problem("al2023-ami-sagemaker-inference-gpu-4-1", "ml.g5.xlarge", "12.9") is None
    True
    >>> cuda_problem("", "ml.g5.xlarge", "12.6")[:60]
    'the endpoint image is built for CUDA 12.6, but ml.g5.xlarge '
    """
    if ami_version and ami_version not in INFERENCE_AMI_VERSIONS:
        return f"endpoint_ami_version={ami_version!r} is not a GPU inference AMI version; valid: {', '.join(INFERENCE_AMI_VERSIONS)}"
    host = host_for(ami_version, instance_type)
    where = f"{instance_type} on {ami_version or 'the default host'}"
    if host is None:
        return f"{where}: that AMI version does not serve the {instance_family(instance_type)} family (or it has no GPU host)"
    if _version(image_cuda) > _version(host.cuda):
        return (
            f"the endpoint image is built for CUDA {image_cuda}, but {where} runs NVIDIA driver {host.driver} "
            f"(CUDA {host.cuda}): the container would not start and the GPU stack would roll back. Choose an "
            f"endpoint_ami_version whose CUDA is at least {image_cuda} ({_newer_hosts(instance_type, image_cuda)}) "
            "or build the image for an older CUDA (endpoint_image_cuda)"
        )
    return None


def _newer_hosts(instance_type: str, image_cuda: str) -> str:
    family = instance_family(instance_type)
    names = [
        name for name, host in INFERENCE_AMI_VERSIONS.items() if family in host.families and _version(host.cuda) >= _version(image_cuda)
    ]
    return ", ".join(names) or "none serves this family"
