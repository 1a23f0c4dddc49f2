# The image's last stage with binaries this machine's cargo built, for `cargo xtask
# compose-test` on machines that reach no image registry (no Rust image to compile in). The
# build context is a folder the test fills: bin/ (spotbot, spotbot-license-server) and
# plugins/ (*.wasm). RUNTIME is the Dockerfile's `runtime` stage, built with `--target runtime`
# from the same Debian release as this machine, so the binaries find their libraries.
ARG RUNTIME
FROM ${RUNTIME}
COPY bin/ /usr/local/bin/
COPY plugins/ /usr/local/lib/spotbot/plugins/
