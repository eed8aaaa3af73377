# syntax=docker/dockerfile:1
# SecurePush's container image, in the style of the Hummingbird project template: a Swift build stage
# that links the Swift standard library statically, and a slim Ubuntu runtime with only what the
# binary needs at run time (CA certificates for APNs/FCM/WNS/Web Push over TLS, time zones, curl for
# the health check), run as an unprivileged user. The entrypoint is `securepush`, so the command picks
# the subcommand: `migrate`, `serve --role api`, `serve --role dispatcher` (see deploy/compose.yaml).
#
#   docker build -t securepush .
#   docker run --rm securepush --help

# ================================
# Build image
# ================================
ARG SWIFT_VERSION=6.3
FROM swift:${SWIFT_VERSION}-noble AS build

WORKDIR /build

# Resolve the dependencies first, so this layer is cached while only the sources change.
COPY ./Package.* ./
RUN swift package resolve

# The whole tree: sql/, docs/openapi.json and clients/web/ are embedded into the binary at build time.
COPY . .

# Optimized, with the Swift standard library (and Foundation) linked statically; then stage the
# executable and the static backtracer (the crash reporter the runtime image points to).
WORKDIR /staging
RUN swift build --package-path /build -c release --static-swift-stdlib --product securepush \
    && cp "$(swift build --package-path /build -c release --show-bin-path)/securepush" ./ \
    && cp /usr/libexec/swift/linux/swift-backtrace-static ./

# ================================
# Run image
# ================================
FROM ubuntu:noble

# Only the run-time essentials. Versions are not pinned: the image takes the distribution's security
# updates at each build (rebuild regularly).
# hadolint ignore=DL3008
RUN export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
    && apt-get -q update \
    && apt-get -q dist-upgrade -y \
    && apt-get -q install -y --no-install-recommends ca-certificates tzdata curl \
    && rm -rf /var/lib/apt/lists/*

# A fixed numeric user, so Kubernetes' runAsNonRoot can check it (deploy/kubernetes uses 10001).
RUN groupadd --system --gid 10001 securepush \
    && useradd --system --uid 10001 --gid securepush --no-create-home --home-dir /app --shell /usr/sbin/nologin securepush

WORKDIR /app
COPY --from=build --chown=root:root --chmod=0755 /staging /app

# The crash reporter, as in the Hummingbird template; a container must listen on every interface
# (the binary's own default is 127.0.0.1). The operations routes (/healthz, /readyz, /status,
# /status.html, /metrics) have a listener of their own, SECUREPUSH_OPS_HOST:SECUREPUSH_OPS_PORT
# (9090), and the API's port 8080 answers 404 for them; a `--role dispatcher` process opens 9090 only.
# Publish 8080 alone; 9090 is for probes and Prometheus on the private network (it is not EXPOSEd, so
# `docker run -P` does not publish it).
ENV PATH="/app:${PATH}" \
    SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/app/swift-backtrace-static \
    SECUREPUSH_HOST=0.0.0.0 \
    SECUREPUSH_PORT=8080 \
    SECUREPUSH_OPS_HOST=0.0.0.0 \
    SECUREPUSH_OPS_PORT=9090

USER 10001:10001
EXPOSE 8080

# The HTTP server's liveness, in every role, on the operations listener (on SECUREPUSH_PORT when
# SECUREPUSH_OPS_PORT is set empty: then every process serves the operations routes there).
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["/bin/sh", "-c", "curl --fail --silent --show-error --max-time 2 \"http://127.0.0.1:${SECUREPUSH_OPS_PORT:-${SECUREPUSH_PORT}}/healthz\" || exit 1"]

ENTRYPOINT ["/app/securepush"]
CMD ["serve"]
