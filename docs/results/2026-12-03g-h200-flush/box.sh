#!/usr/bin/env bash
# Sourced by the call scripts beside it, on the H200 box from the repository root: asv's and
# github3.py's wheels into /tmp/site, the environment the suites read, the card and versions into
# $out/versions.txt.
if ! compgen -G ".whl/*.whl" >/dev/null; then
  echo "box.sh: no wheels in .whl: run 'bash ci/offline_wheels.sh' where pip reaches the registry, and carry .whl" >&2
  exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 GEMMWATCH_TUNED_DIR=${GEMMWATCH_TUNED_DIR:-$PWD/targets/tuned}
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv | tee "$out/versions.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" | tee -a "$out/versions.txt"
