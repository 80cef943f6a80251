#!/usr/bin/env bash
# Usage: tools/uv_install.sh VENV PIP-INSTALL-ARGS...
# Creates VENV ($PYTHON -m venv, python3 by default, when absent) and installs into it with
# uv, which pip puts into the venv first: the packages pip would choose, in a fraction of
# its time (vLLM's CPU venv, its packages in neither tool's cache: 16 s with uv, 132 s with
# pip on this machine; uv downloads and unpacks in parallel).
#
# uv reads no pip configuration, so pip's package sources are handed to it: the machine's
# find-links (this one's CPU torch wheel lies in /opt/wheels), extra indexes and constraint
# files, from `pip config list` (its files and the PIP_* environment). `unsafe-best-match`
# is pip's rule (the newest version across every index), not uv's default (the first index
# that has the package). UV_COMPILE_BYTECODE=1 compiles the bytecode at install, as pip
# does; without it each module compiles at its first import.
set -euo pipefail
VENV=$1
shift
[ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "uv==0.13.9" 2> >(grep -v "^WARNING: Location" >&2)

sources=()
while IFS= read -r line; do
  key=${line%%=*}
  value=${line#*=}
  value=${value#\'}
  value=${value%\'}
  for item in $value; do
    case $key in
      *.find-links) sources+=(--find-links "$item") ;;
      *.extra-index-url) sources+=(--extra-index-url "$item") ;;
      *.index-url) sources+=(--default-index "$item") ;;
      *.constraint) sources+=(--constraint "$item") ;;
    esac
  done
done < <("$VENV/bin/pip" config list 2>/dev/null)

exec "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" \
  --index-strategy unsafe-best-match "${sources[@]}" "$@"
