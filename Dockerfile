# provision as a container entrypoint.
#
# The build stage compiles provision (and, where the base has nvcc, its CUDA
# validation kernels); the runtime stage holds only the stripped binary, the
# built-in recipes and the shared libraries the binary links.
#
#   docker build -t provision .
#   docker run --rm --gpus all provision                   # detect, select, validate, print the summary
#   docker run --rm --gpus all provision python train.py   # ... then exec the workload
#
# Build arguments:
#   BASE_IMAGE          build stage. CUDA 12.8 compiles the kernels for every
#                       GPU up to Blackwell (sm_100, sm_120) and the result
#                       still runs on drivers of the 12.x line. A base without
#                       CUDA builds too: validation then reports itself
#                       unavailable.
#   RUNTIME_IMAGE       runtime stage: the same distribution release as
#                       BASE_IMAGE, since the binary links that release's
#                       shared libraries (libfmt, libstdc++, ...).
#   CUDA_ARCHITECTURES  optional override of the kernels' architecture list
#                       (PROVISION_CUDA_ARCHITECTURES), e.g. "90a-real;120".
ARG BASE_IMAGE=nvidia/cuda:12.8.1-devel-ubuntu24.04
ARG RUNTIME_IMAGE=ubuntu:24.04

FROM ${BASE_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake g++ make libtomlplusplus-dev libfmt-dev catch2 libcurl4-openssl-dev libcli11-dev nlohmann-json3-dev \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

# Only the sources, kernels and recipes reach the context (.dockerignore).
ARG CUDA_ARCHITECTURES=
COPY . /src
# After the build, runtime-packages records the Debian packages that own the
# libraries the binary links, so that the runtime stage (and any image that
# copies the binary) installs exactly those.  libcurl is among them though
# ldd does not list it: provision opens it with dlopen when a URL is used.
RUN set -eu; \
    cd /src; \
    if [ -x /usr/local/cuda/bin/nvcc ]; then export CUDACXX=/usr/local/cuda/bin/nvcc; fi; \
    cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DPROVISION_BUILD_TESTS=OFF \
          ${CUDA_ARCHITECTURES:+"-DPROVISION_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}"}; \
    cmake --build /build -j"$(nproc)"; \
    cmake --install /build --prefix /opt/provision --strip; \
    ldd /opt/provision/bin/provision > /build/linked; \
    ldconfig -p | awk '$1 == "libcurl.so.4" { print "\t" $1 " => " $NF; exit }' >> /build/linked; \
    : > /build/packages; \
    for lib in $(awk '$2 == "=>" && $3 ~ /^\// { print $3 }' /build/linked); do \
        owner=$(dpkg -S "*/${lib##*/}" 2>/dev/null | awk -F': ' 'NR == 1 { print $1 }'); \
        if [ -z "$owner" ]; then echo "no package owns ${lib}, which provision links" >&2; exit 1; fi; \
        echo "${owner%%:*}" >> /build/packages; \
    done; \
    sort -u /build/packages > /opt/provision/share/provision/runtime-packages; \
    echo "runtime packages: $(tr '\n' ' ' < /opt/provision/share/provision/runtime-packages)"; \
    /opt/provision/bin/provision --version

FROM ${RUNTIME_IMAGE}
COPY --from=build /opt/provision/ /usr/local/
RUN apt-get update \
 && xargs -a /usr/local/share/provision/runtime-packages \
      env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && provision --version
# The NVIDIA container runtime mounts the driver's libcuda and NVML (which
# provision loads with dlopen) only when asked to.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
WORKDIR /workspace
ENTRYPOINT ["provision", "--"]
