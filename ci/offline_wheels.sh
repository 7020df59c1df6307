#!/usr/bin/env bash
# The wheels an offline GPU box needs beside its own torch and Triton to run the asv suites and post
# the comment (asv, asv_runner, github3.py and what they import that such a box lacks), downloaded
# here for the box's Python into DIR, to be carried there and installed with
#   python3 -m pip install --no-index --no-deps --target /tmp/site DIR/*.whl && export PYTHONPATH=/tmp/site
#
#   bash ci/offline_wheels.sh [DIR, default .whl] [PYTHON_VERSION, default 3.12]
#
# The set was checked on a box with torch 2.11 / Triton 3.6 under Python 3.12, which has packaging,
# pyyaml, tabulate, build, requests and python-dateutil already. importlib_metadata stays below 9 (its
# 10.x imports a package such boxes lack). One version of each: two stop the whole install.
set -euo pipefail
dir=${1:-.whl}
python_version=${2:-3.12}
wheels=(
  asv==0.6.6 asv_runner==0.3.2 json5==0.17.3 virtualenv==21.15.14 distlib==0.4.4 platformdirs==4.14.9
  python-discovery==1.9.9 pympler==1.1 importlib_metadata==8.7.0 zipp==4.1.2
  github3.py==4.0.1 uritemplate==4.2.0 pyjwt==2.15.1
)
case "$python_version" in
  3.[0-9]*) ;;
  *) echo "offline_wheels.sh: PYTHON_VERSION must look like 3.12, got '$python_version'" >&2; exit 2 ;;
esac
if [ -d "$dir" ] && compgen -G "$dir/*.whl" >/dev/null; then
  echo "offline_wheels.sh: $dir already holds wheels; remove them first (two versions of one stop the install)" >&2
  exit 2
fi
platforms=()
for tag in manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64; do platforms+=(--platform "$tag"); done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$python_version" --implementation cp \
  "${platforms[@]}" -d "$dir" "${wheels[@]}"
count=$(compgen -G "$dir/*.whl" | wc -l)
if [ "$count" -ne "${#wheels[@]}" ]; then
  echo "offline_wheels.sh: $count wheels in $dir, expected ${#wheels[@]}" >&2
  exit 1
fi
# A folder of this git checkout's root: keep it out of commits.
case "$dir" in
  /* | */*) ;;
  *) if exclude=$(git rev-parse --git-path info/exclude 2>/dev/null) && ! grep -qxE "/?$dir/?" "$exclude" 2>/dev/null; then
       echo "/$dir/" >> "$exclude"
     fi ;;
esac
echo "offline_wheels.sh: ${#wheels[@]} wheels for Python $python_version in $dir ($(du -sh "$dir" | cut -f1))"
