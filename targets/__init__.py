"""Chip descriptions and the autotune spaces derived from them.

>>> from targets import detect, candidate_configs
>>> spec = detect()                       # the current device, or cpu-interpreter
>>> candidate_configs(spec, "fp16", 4096, 4096, 4096)[0]
"""

from targets.catalogue import CATALOGUE, get
from targets.configs import MAX_CONFIGS, GemmConfig, candidate_configs, shape_bucket
from targets.detect import UnknownTargetWarning, detect, spec_from_properties
from targets.spec import PeakRates, TargetSpec

__all__ = [
    "CATALOGUE",
    "MAX_CONFIGS",
    "GemmConfig",
    "PeakRates",
    "TargetSpec",
    "UnknownTargetWarning",
    "candidate_configs",
    "detect",
    "get",
    "shape_bucket",
    "spec_from_properties",
]
