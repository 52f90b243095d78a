# provision as one file, and as a container entrypoint.
#
# The build stage compiles provision (with its CUDA validation kernels) on
# Debian 12; the `onefile` stage holds nothing but /provision, a binary that
# needs only glibc >= 2.34 (Ubuntu 22.04+, Debian 12+, RHEL 9+) and, when
# present, the NVIDIA driver's libraries; the last stage is a ready-made
# entrypoint image.
#
#   docker build --target onefile -t provision-onefile .     # the binary alone
#   docker build -t provision .                              # the entrypoint image
#   docker run --rm --gpus all provision                     # detect, select, validate, print the summary
#   docker run --rm --gpus all provision python train.py     # ... then exec the workload
#
# Into any other image (with glibc >= 2.34), in two lines:
#   COPY --from=provision-onefile /provision /usr/local/bin/provision
#   ENTRYPOINT ["provision", "--"]
#
# Build arguments:
#   BASE_IMAGE          build stage: Debian 12 (glibc 2.36). The binary's glibc
#                       symbol versions come from here, and the build stops
#                       when they ask for more than 2.34 (a newer release's
#                       headers do, e.g. Ubuntu 24.04's).
#   CUDA_VERSION        the CUDA toolkit the kernels are compiled with, from
#                       NVIDIA's Debian 12 packages (default 12.8: machine code
#                       for every GPU up to Blackwell, sm_100 and sm_120, and
#                       it still runs on drivers of the 12.x line). Empty: no
#                       kernels, validation then reports itself unavailable.
#   CUDA_ARCHITECTURES  optional override of the kernels' architecture list
#                       (PROVISION_CUDA_ARCHITECTURES), e.g. "90a-real;120".
#   WARNINGS_AS_ERRORS  ON: any compiler warning fails the build (the project's
#                       own image test builds so); default OFF, since another
#                       toolkit than the project's may warn where its does not.
#   RUNTIME_IMAGE       the entrypoint image's base: any distribution with
#                       glibc >= 2.34 and apt-get (libcurl and CA certificates
#                       are installed for recipe URLs and report posts).
ARG BASE_IMAGE=debian:bookworm
ARG RUNTIME_IMAGE=ubuntu:24.04

FROM ${BASE_IMAGE} AS build
ARG CUDA_VERSION=12.8
ARG CUDA_REPOSITORY=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64
RUN set -eu; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake g++ make binutils libtomlplusplus-dev libfmt-dev libcurl4-openssl-dev libcli11-dev nlohmann-json3-dev libsodium-dev; \
    if [ -n "${CUDA_VERSION}" ]; then \
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates curl; \
        curl -fsSL -o /tmp/cuda-keyring.deb "${CUDA_REPOSITORY}/cuda-keyring_1.1-1_all.deb"; \
        dpkg -i /tmp/cuda-keyring.deb; \
        apt-get update; \
        v=$(echo "${CUDA_VERSION}" | tr . -); \
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
          "cuda-nvcc-$v" "cuda-cudart-dev-$v"; \
    fi; \
    apt-get clean; rm -rf /var/lib/apt/lists/* /tmp/cuda-keyring.deb

# Only the sources, kernels, recipes and the linkage check reach the context
# (.dockerignore).
ARG CUDA_ARCHITECTURES=
ARG WARNINGS_AS_ERRORS=OFF
COPY . /src
RUN set -eu; \
    cd /src; \
    nvcc=$(ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null | head -n 1); \
    if [ -n "$nvcc" ]; then export CUDACXX="$nvcc"; fi; \
    cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DPROVISION_BUILD_TESTS=OFF \
          -DPROVISION_WARNINGS_AS_ERRORS="${WARNINGS_AS_ERRORS}" \
          ${CUDA_ARCHITECTURES:+"-DPROVISION_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}"}; \
    cmake --build /build -j"$(nproc)" --target provision; \
    strip -o /provision /build/provision; \
    tests/onefile/check-linkage /provision; \
    /provision --version

# The binary alone: `COPY --from=<this image> /provision /usr/local/bin/provision`.
FROM scratch AS onefile
COPY --from=build /provision /provision

# The entrypoint image.
FROM ${RUNTIME_IMAGE}
COPY --from=onefile /provision /usr/local/bin/provision
# provision opens libcurl with dlopen only for recipe URLs and report posts;
# the curl package brings the distribution's libcurl.so.4.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates curl \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && provision --version
# The NVIDIA container runtime mounts the driver's libcuda and NVML (which
# provision loads with dlopen) only when asked to.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
WORKDIR /workspace
# Without "--": `docker run IMAGE` runs provision alone (a "--" with nothing
# after it is a usage error), `docker run IMAGE python train.py` hands off to
# the command, which starts at provision's first word that is not its own.
ENTRYPOINT ["provision"]
