"""The extra-column candidates (`GemmConfig.extra_n`) of the LLM M = 128 cells: `dtype shape config`
per line, for xn_probe.py."""

from targets import detect
from targets.configs import candidate_configs

SHAPES = ["128x4608x3584", "128x6144x4096", "128x10240x8192", "128x28672x4096", "128x57344x8192", "128x37888x3584"]
spec = detect()
for dtype in ("fp16", "bf16", "fp8_e4m3"):
    for shape in SHAPES if dtype != "fp8_e4m3" else SHAPES[:2]:
        M, N, K = (int(x) for x in shape.split("x"))
        for cfg in candidate_configs(spec, dtype, M, N, K, limit=None):
            if cfg.extra_n:
                print(dtype, shape, cfg)
