#!/usr/bin/env bash
# Runs the Ray suite (python/tests_ray) with PYTHON, a venv holding the reliora wheel and the
# pinned Ray extra, inside a network namespace with only the loopback interface: Ray's servers
# bind every interface of their namespace, so there they can reach nothing but loopback.
set -euo pipefail
python=$1
cd "$(dirname "$0")/../.."
exec unshare --user --map-root-user --net sh -c \
    'ip link set lo up && exec "$0" -m pytest -q -p no:cacheprovider python/tests_ray' "$python"
