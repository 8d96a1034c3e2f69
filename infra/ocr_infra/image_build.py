"""How ``cdk deploy`` builds the two images: single-platform images with Docker's media types and no attestations.

SageMaker refuses an image pushed as an OCI manifest or index ("Unsupported manifest media type
application/vnd.oci.image.manifest.v1+json", aws/amazon-sagemaker-feedback#180), and Lambda refuses it too
("The image manifest, config or layer media type for the source image ... is not supported", aws/aws-cdk#31548;
AWS's Lambda guide builds with ``--provenance=false``: https://docs.aws.amazon.com/lambda/latest/dg/python-image.html).
Docker Engine 29+ and Docker Desktop 4.34+ store images in containerd by default, and a build there is pushed with
OCI media types and a provenance attestation.

Both image assets therefore pass ``--output type=image,oci-mediatypes=false`` to ``docker build`` (the asset's
``outputs``): BuildKit's image exporter writes Docker media types whatever the image store. An attestation makes
BuildKit turn OCI media types back on, and the CDK has no option for ``--provenance=false``; Buildx's
``BUILDX_NO_DEFAULT_ATTESTATIONS=1`` turns the default attestation off, and ``ocr-platform doctor`` fails on a
containerd image store without it (docs/deploying/images.md).
"""

from __future__ import annotations

import re

from ocr_infra.paths import REPO_ROOT, VL_ENDPOINT_DOCKERFILE

#: ``outputs`` of both Docker image assets (each becomes one ``--output`` of ``docker build``).
DOCKER_MEDIA_TYPES_OUTPUTS = ("type=image,oci-mediatypes=false",)
#: The Buildx variable that turns off the default provenance attestation, and the value that does.
NO_ATTESTATIONS_VARIABLE, NO_ATTESTATIONS_VALUE = "BUILDX_NO_DEFAULT_ATTESTATIONS", "1"


#: Where the endpoint image's Dockerfile finds the sha256 of PaddlePaddle's GPU wheel (not on PyPI, so not in the lock).
PADDLE_GPU_WHEEL_HASHES = "containers/vl-endpoint/paddlepaddle-gpu.sha256"


def unrecorded_paddle_gpu_wheel(cuda: str) -> str | None:
    """The ``cu<major><minor>/<wheel>`` line the endpoint image's build needs and ``PADDLE_GPU_WHEEL_HASHES`` lacks;
    ``None`` when it is recorded. The Dockerfile stops at that step without it, and ``cdk deploy --all`` builds every
    image before it deploys any stack, so the core would not deploy either."""
    dockerfile = (REPO_ROOT / VL_ENDPOINT_DOCKERFILE).read_text(encoding="utf-8")
    match = re.search(r"^ARG PADDLE_GPU_WHEEL=(\S+)$", dockerfile, re.MULTILINE)
    if match is None:
        return None  # a Dockerfile without the recorded-hash step
    entry = f"cu{cuda.replace('.', '')}/{match.group(1)}"
    recorded = (REPO_ROOT / PADDLE_GPU_WHEEL_HASHES).read_text(encoding="utf-8").splitlines()
    return None if any(line.endswith(f"  {entry}") for line in recorded if not line.startswith("#")) else entry
