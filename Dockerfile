# The spotbot image: the service, the reference license server and the built strategy plugins
# (docs/operations.md). The base images are build arguments: operators build from the public
# images; a machine without registry access passes locally built ones
# (`docker build --build-arg BUILD_IMAGE=... --build-arg RUNTIME_IMAGE=...`).
ARG BUILD_IMAGE=rust:1.95-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# The runtime without the binaries. It is the first stage so that `--target runtime` builds it
# alone, even with Docker's legacy builder (which builds every stage before the target): the
# compose test (`cargo xtask compose-test`) adds binaries this machine built to it
# (docker/host-built.Dockerfile) instead of compiling everything again in a container.
FROM ${RUNTIME_IMAGE} AS runtime
# ca-certificates: the exchange, the messenger and the news feeds are HTTPS, and the HTTP client
# cannot start without root certificates. curl: the healthchecks, and the operator's calls to
# the API from inside the stack (`docker compose exec spotbot curl ...`), which is published
# nowhere. A fixed uid, so that a mounted host folder can be given to the service user.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 spotbot \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/spotbot \
      --shell /usr/sbin/nologin spotbot \
 && mkdir -p /var/lib/spotbot/data /var/lib/spotbot/plugins /var/lib/spotbot-license /etc/spotbot \
 && chown -R spotbot:spotbot /var/lib/spotbot /var/lib/spotbot-license
COPY examples/config.toml /etc/spotbot/config.toml
# Starts as root to read the mounted secrets, then runs the command as spotbot (setpriv).
COPY docker/entrypoint.sh /usr/local/bin/spotbot-entrypoint
WORKDIR /var/lib/spotbot
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8000/api/health"]
ENTRYPOINT ["spotbot-entrypoint"]
CMD ["spotbot", "serve", "--config", "/etc/spotbot/config.toml", "--addr", "0.0.0.0:8000", "--data-dir", "/var/lib/spotbot/data", "--log-format", "json"]

FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY . .
RUN rustup target add wasm32-wasip2 \
 && cargo xtask plugins \
 && cargo build --release --locked -p spotbot -p spotbot-license-server

FROM runtime
COPY --from=build /src/target/release/spotbot /src/target/release/spotbot-license-server /usr/local/bin/
# The built plugins live outside the plugins folder, which may be a volume or a mounted folder:
# the entrypoint adds them to it instead of a mount hiding them.
COPY --from=build /src/plugins/ /usr/local/lib/spotbot/plugins/
