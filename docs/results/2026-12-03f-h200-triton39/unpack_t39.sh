#!/usr/bin/env bash
# On the H200 box, from the repository root: asv's and github3.py's wheels into /tmp/site, and
# Triton 3.9 (carried in two parts: .t39/p0 by the call before, copied to /tmp/t39parts, and .t39/p1
# with .t39/SHA256 by this call) checked and unpacked to /tmp/t39, unless it already is. Sourced by
# the call scripts beside it, which then put /tmp/t39 first on PYTHONPATH.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/t39
if [ ! -f /tmp/t39/triton/__init__.py ]; then
  [ -d .t39/p0 ] || cp -r /tmp/t39parts/p0 .t39/
  (cd .t39 && cat p*/part* | sha256sum -c <(sed 's/triton.tar.xz/-/' SHA256)) || exit 1
  cat .t39/p*/part* | xz -d | tar -x -C /tmp/t39 || exit 1
fi
