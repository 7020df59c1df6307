#!/usr/bin/env bash
# Make a Python environment with one Triton version, on top of the runner's Python (which has
# torch): `gemmwatch run --python DIR/bin/python` then measures with that Triton.
#
#   ci/make_triton_env.sh VERSION DIR        e.g. ci/make_triton_env.sh 3.6.0 /tmp/triton-3.6.0
#
# GEMMWATCH_PYTHON: the runner's Python, with torch (default: python3).
# DIR must not exist, or be empty. The venv sees the runner Python's packages (torch, asv, ...);
# only Triton (and, for Triton < 3.7, numpy < 2.4: Triton 3.5/3.6's interpreter fails on
# numpy >= 2.4) is installed into it, shadowing the runner's copies. Nothing outside DIR changes.
#
# Exit status: 0 made (the versions are printed), 1 the environment could not be made (the
# reason is printed last; DIR is removed if this script created it), 2 bad usage.
set -euo pipefail

me=make_triton_env
die() {
  local code=$1
  shift
  echo "$me: error: $*" >&2
  exit "$code"
}

[[ $# -eq 2 ]] || die 2 "usage: ci/make_triton_env.sh VERSION DIR   (e.g. 3.6.0 /tmp/triton-3.6.0)"
version=$1
dir=$2
[[ $version =~ ^[0-9]+(\.[0-9]+)+((a|b|rc|\.post|\.dev)[0-9]+)*$ ]] ||
  die 2 "'$version' is not a Triton version number (expected e.g. 3.6.0 or 3.7.0rc1)"
py=${GEMMWATCH_PYTHON:-python3}
command -v "$py" > /dev/null || die 2 "Python '$py' not found (set GEMMWATCH_PYTHON to the runner's Python)"
if [[ -e $dir && ! -d $dir ]] || [[ -d $dir && -n $(ls -A "$dir") ]]; then
  die 2 "$dir already exists and is not an empty directory; remove it or choose another"
fi

if ! err=$("$py" -c 'import torch' 2>&1); then
  die 1 "the runner's Python ($py) cannot import torch (${err##*$'\n'}); this environment is built on top of it"
fi

created=0
[[ -d $dir ]] || created=1
cleanup() { # on failure, leave no half-made environment behind (only what this script made)
  local rc=$?
  if ((rc != 0)); then
    if ((created)); then rm -rf -- "$dir"; else find "$dir" -mindepth 1 -delete 2> /dev/null || true; fi
  fi
  return "$rc"
}
trap cleanup EXIT

export PIP_DISABLE_PIP_VERSION_CHECK=1
"$py" -m venv --system-site-packages "$dir" || die 1 "could not create a venv in $dir with $py"

# --system-site-packages only exposes the base interpreter's packages. If the runner's Python is
# itself a venv, its site-packages are added with a .pth file; they come after the new venv's
# own site-packages, so the Triton installed below wins.
"$dir/bin/python" - "$("$py" -c 'import site, sys; print("\n".join(site.getsitepackages()) if sys.prefix != sys.base_prefix else "")')" << 'EOF'
import sys, sysconfig
from pathlib import Path

parents = [p for p in sys.argv[1].splitlines() if p]
if parents:
    pth = Path(sysconfig.get_paths()["purelib"]) / "_gemmwatch_runner_env.pth"
    pth.write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in parents))
    print(f"runner's packages from: {', '.join(parents)}")
EOF

# Why it fails, most often: no such release, no wheel for this platform/Python, index unreachable.
"$dir/bin/python" -m pip install --progress-bar off "triton==$version" ||
  die 1 "could not install triton==$version (pip's output above): no such release, no wheel for this Python/platform, or the package index is unreachable"

IFS=. read -r major minor _ <<< "$version"
minor=${minor%%[!0-9]*}
if ((major < 3 || (major == 3 && minor < 7))); then
  "$dir/bin/python" -m pip install --progress-bar off "numpy<2.4" ||
    die 1 "could not install numpy<2.4 (needed by Triton $version's interpreter; pip's output above)"
fi

"$dir/bin/python" - "$version" << 'EOF' || die 1 "the environment in $dir does not import triton $version"
import sys

import torch
import triton

try:
    import numpy
except ImportError:
    numpy = None
print(f"triton {triton.__version__} ({triton.__file__})")
print(f"torch {torch.__version__}, numpy {numpy.__version__ if numpy else 'none'}, python {sys.version.split()[0]}")
if triton.__version__ != sys.argv[1]:
    sys.exit(f"expected triton {sys.argv[1]}, got {triton.__version__}")
EOF
echo "$me: $dir/bin/python has triton $version"
