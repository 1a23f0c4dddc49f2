# Builds the service and its plugins; runs the API on port 8000.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN rustup target add wasm32-wasip2 \
 && cargo xtask plugins \
 && cargo build --release -p spotbot -p spotbot-license-server

FROM debian:bookworm-slim
RUN useradd --system --home /var/lib/spotbot spotbot && mkdir -p /var/lib/spotbot /etc/spotbot \
 && chown spotbot /var/lib/spotbot
COPY --from=build /src/target/release/spotbot /usr/local/bin/spotbot
COPY --from=build /src/target/release/spotbot-license-server /usr/local/bin/spotbot-license-server
COPY --from=build /src/plugins /var/lib/spotbot/plugins
COPY examples/config.toml /etc/spotbot/config.toml
USER spotbot
WORKDIR /var/lib/spotbot
EXPOSE 8000
CMD ["spotbot", "serve", "--config", "/etc/spotbot/config.toml", "--addr", "0.0.0.0:8000", "--data-dir", "/var/lib/spotbot/data", "--log-format", "json"]
