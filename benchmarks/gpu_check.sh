#!/usr/bin/env bash
# GPU readiness on a GPU node, in one command (about 5 minutes, well under 8):
#   benchmarks/gpu_check.sh [--files 120] [--device cuda]
# Installs fdbu into .venv when missing (make install), then runs benchmarks/gpu_check.py:
# calibration on the GPU, speech-detection throughput against the CPU reference, and
# unified.json from the GPU against the CPU reference, byte for byte. Prints one table.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || make install
exec timeout 480 .venv/bin/python -m benchmarks.gpu_check --device cuda "$@"
