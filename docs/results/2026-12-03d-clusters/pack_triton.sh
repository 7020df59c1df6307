#!/usr/bin/env bash
# A Triton 3.9+ wheel for CPython 3.12 on x86-64, made small enough to carry to a GPU box that
# cannot install from an index, in parts of at most PART_MB megabytes each (what one call can take
# beside the working tree):
#
#   bash docs/results/2026-12-03d-clusters/pack_triton.sh 3.9.0 .t39 [PART_MB]
#
# writes .t39/p0/, .t39/p1/, ... (one part file each) and .t39/SHA256. Left out of the wheel: the
# AMD backend's device libraries, CUPTI (the profiler's), the instrumentation and plugin
# libraries; debug symbols stripped from the shared libraries (libtriton.so 477 -> 192 MB); the
# pre-sm_90 `ptxas` replaced by a link to `ptxas-blackwell`, the one Triton 3.9 runs for sm_90.
# On the box, with every part there:
#
#   mkdir -p /tmp/t39 && cat .t39/p*/part* | xz -d | tar -x -C /tmp/t39 && export PYTHONPATH=/tmp/t39:$PYTHONPATH
set -euo pipefail
version=${1:?usage: pack_triton.sh VERSION OUT_DIR [PART_MB]}
out=${2:?usage: pack_triton.sh VERSION OUT_DIR [PART_MB]}
part_mb=${3:-28}
[[ ! -e $out ]] || { echo "pack_triton: $out exists; remove it or choose another" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d "$work" "triton==$version"
python3 -m zipfile -e "$work"/triton-"$version"-*.whl "$work/x"
cd "$work/x"
rm -rf triton/backends/amd/lib triton/backends/nvidia/lib/cupti* triton/instrumentation triton/plugins
strip --strip-unneeded triton/_C/*.so
chmod +x triton/backends/nvidia/bin/* triton/FileCheck 2>/dev/null || true
[[ -f triton/backends/nvidia/bin/ptxas-blackwell ]] && ln -sf ptxas-blackwell triton/backends/nvidia/bin/ptxas
tar -cf - triton triton-"$version".dist-info | xz -9 -T2 > "$work/triton.tar.xz"
cd - > /dev/null
mkdir -p "$out"
split -b "${part_mb}M" -d "$work/triton.tar.xz" "$work/part"
i=0
for p in "$work"/part*; do
  mkdir -p "$out/p$i" && mv "$p" "$out/p$i/part$i"
  i=$((i + 1))
done
(cd "$work" && sha256sum triton.tar.xz) > "$out/SHA256"
du -sh "$out"/p*
