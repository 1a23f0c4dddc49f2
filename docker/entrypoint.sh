#!/bin/sh
# Adds the image's built plugins to the plugins folder the service hot-loads, which may be a
# volume or an operator's mounted folder: the operator's own files stay, and a built-in plugin
# is replaced only by a newer build (cp -u). Then runs the command (by default `spotbot serve`).
set -eu
plugins=/var/lib/spotbot/plugins
if ! cp -u /usr/local/lib/spotbot/plugins/*.wasm "$plugins"/ 2>/dev/null; then
    echo "spotbot-entrypoint: cannot write the built plugins into $plugins" \
         "(a mounted folder must belong to uid 10001); serving only what it holds" >&2
fi
exec "$@"
