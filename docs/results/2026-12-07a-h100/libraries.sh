#!/usr/bin/env bash
# Sourced on the GPU box after box.sh, from the repository root: the file names (under
# targets/tuned) of this card's tuned library for the running Triton, `card_library`, and of its die
# sibling's (the H200's on an H100 SXM and the other way round), `sibling_library`, as the launcher
# and the tune name them (targets.detect, targets.catalogue.siblings, targets.library.library_path).
read -r card_library sibling_library < <(python3 -c '
import triton
from targets import detect
from targets.catalogue import siblings
from targets.library import library_path
spec = detect()
print(*(library_path(s.name, triton.__version__).name for s in (spec, *siblings(spec))))
')
if [ -z "${sibling_library:-}" ]; then
  echo "libraries.sh: no die sibling's library for this card (its library: ${card_library:-none})" >&2
  exit 1
fi
echo "libraries: this card's $card_library, its sibling's $sibling_library"
