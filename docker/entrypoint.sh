#!/bin/sh
# The image's entrypoint. It starts as root only to prepare, then runs the command (by default
# `spotbot serve`) as the service user spotbot (uid 10001):
# 1. Secrets: the NAME=value lines of /run/secrets/spotbot_env (compose mounts spotbot.env
#    there read-only) go into the command's environment only, so they never show in
#    `docker inspect`, which lists a container's configured environment.
# 2. Plugins: the image's built plugins are added to the plugins folder the service hot-loads,
#    which may be a volume or an operator's mounted folder: the operator's own files stay, and a
#    built-in plugin is replaced only by a newer build (cp -u).
set -eu

secrets=/run/secrets/spotbot_env
if [ -r "$secrets" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
        name=${line%%=*}
        case "$line" in
            '' | '#'*) continue ;;
        esac
        case "$name" in
            "$line" | '' | [0-9]* | *[!A-Za-z0-9_]*)
                echo "spotbot-entrypoint: $secrets: skipped a line that is not NAME=value" >&2 ;;
            *) export "$line" ;;
        esac
    done < "$secrets"
fi

plugins=/var/lib/spotbot/plugins
if ! cp -u /usr/local/lib/spotbot/plugins/*.wasm "$plugins"/ 2>/dev/null; then
    echo "spotbot-entrypoint: cannot add the built plugins to $plugins; serving what it holds" >&2
fi

if [ "$(id -u)" = 0 ]; then
    exec setpriv --reuid=spotbot --regid=spotbot --init-groups "$@"
fi
exec "$@"
