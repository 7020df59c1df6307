#!/usr/bin/env bash
# On the H200 box, from the repository root: asv's and github3.py's wheels into /tmp/site, and
# Triton 3.9 checked and unpacked to /tmp/t39, unless it already is. Triton comes in parts
# (docs/results/2026-12-03d-clusters/pack_triton.sh): the calls before this one each carry one
# part, .t39/pN, and copy it to /tmp/t39parts (`mkdir -p /tmp/t39parts && cp -r .t39/pN
# /tmp/t39parts/`); this call carries the last part with .t39/SHA256. Sourced by the call scripts
# beside it, which then put /tmp/t39 first on PYTHONPATH.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/t39
if [ ! -f /tmp/t39/triton/__init__.py ]; then
  for part in /tmp/t39parts/p*; do  # the parts carried by the calls before (none: all carried now)
    [ -d "$part" ] && [ ! -d ".t39/${part##*/}" ] && cp -r "$part" .t39/
  done
  (cd .t39 && cat p*/part* | sha256sum -c <(sed 's/triton.tar.xz/-/' SHA256)) || exit 1
  cat .t39/p*/part* | xz -d | tar -x -C /tmp/t39 || exit 1
fi
