#!/usr/bin/env bash
# Calls 2-3: the Triton 3.9 pack's first two parts onto the box, one per call (carry .t39/p0, then
# .t39/p1), so that no call's carry passes 64 MiB beside the working tree.
set -euo pipefail
for part in "$@"; do mkdir -p /tmp/t39parts && cp -r ".t39/$part" /tmp/t39parts/; done
ls /tmp/t39parts/*
