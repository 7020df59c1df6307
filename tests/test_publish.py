"""`gemmwatch publish`: real `asv publish`, gemmwatch's pages, both rendered in a real headless Chromium.

Everything is served over loopback (http.server on 127.0.0.1) and Chromium is
told to resolve no other host. asv 0.6.6's index.html loads jQuery, flot,
bootstrap, stupidtable and md5 from public CDNs, which a loopback-only browser
cannot reach (it then shows asv's error.html). The dashboard is checked through
a copy of asv's index.html whose CDN tags are replaced by Debian's jQuery
(libjs-jquery) and small stand-ins for the rest: asv's own code (asv.js,
graphdisplay.js, summarygrid.js, ...) runs unmodified on the published
index.json and graphs/, and the `$.plot` stand-in records what asv asks flot to
draw, so a heatmap link is checked to open the graph of exactly its cell.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import struct
import subprocess
import threading
import zlib
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urljoin

import numpy as np
import pytest
from asv_fixtures import MACHINE, write_results
from project_repo import GIT_ID, gemmwatch, snapshot

from ci import publish as pub

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
JQUERY = Path("/usr/share/javascript/jquery/jquery.min.js")  # Debian's libjs-jquery
INSTALL_HINT = "apt-get install -y chromium libjs-jquery"

# Stand-ins for asv's CDN libraries other than jQuery (test only). `$.plot` writes
# what it was asked to draw into <pre id="plot-log">.
CDN_STUBS = """
(function () {
  var any = new Proxy(function () {}, {
    get: function (t, key) { return key === Symbol.toPrimitive ? function () { return 0; } : any; },
    apply: function () { return any; }
  });
  var calls = [];
  $.plot = function (placeholder, series, options) {
    calls.push({target: $(placeholder).attr('id') || '', series: $.map(series, function (s) {
      return [{label: s.label || '', data: s.data}];
    })});
    var log = document.getElementById('plot-log');
    if (!log) { log = document.createElement('pre'); log.id = 'plot-log'; document.body.appendChild(log); }
    log.textContent = JSON.stringify(calls);
    return any;
  };
  $.plot.plugins = [];
  $.fn.tooltip = $.fn.popover = $.fn.modal = $.fn.stupidtable = function () { return this; };
  window.md5 = function (s) { return String(s).length.toString(16); };
})();
"""

SUITE_PARAMS = {
    "Matmul": (["shape", "dtype"], [["4096x4096x4096", "1x4096x4096", "127x4097x1023"], ["fp16", "bf16", "fp32-tf32"]]),
    "ScaledMatmul": (["shape", "dtype"], [["4096x4096x4096", "127x4097x1023"], ["fp8_e4m3"]]),
    "FusedEpilogue": (
        ["shape", "dtype", "epilogue"],
        [["4096x4096x4096"], ["fp16", "bf16"], ["bias+gelu", "bias+silu"]],
    ),
}
DAY_MS = 86_400_000
T0 = 1_796_083_200_000  # 2026-12-01 00:00 UTC


# --------------------------------------------------------------------------- browser and server


def need_browser() -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"headless Chromium is needed for these tests: {INSTALL_HINT}")
    if not JQUERY.is_file():
        pytest.fail(f"Debian's jQuery ({JQUERY}) is needed to run asv's dashboard offline: {INSTALL_HINT}")


class Site:
    """html_dir on 127.0.0.1 (random port), plus /asv-offline.html and /_shim/ for asv's dashboard offline."""

    def __init__(self, root: Path):
        self.root = root
        self.requests: list[str] = []
        site = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self):
                path = self.path.split("?", 1)[0]
                site.requests.append(unquote(path))
                extra = site.extra(path)
                if extra is None:
                    return super().do_GET()
                body, ctype = extra
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return None

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def extra(self, path: str) -> tuple[bytes, str] | None:
        if path == "/asv-offline.html":
            return offline_asv_index(self.root / "index.html").encode(), "text/html; charset=utf-8"
        if path == "/_shim/jquery.js":
            return JQUERY.read_bytes(), "application/javascript"
        if path == "/_shim/cdn-stubs.js":
            return CDN_STUBS.encode(), "application/javascript"
        return None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def offline_asv_index(index: Path) -> str:
    """asv's index.html with its CDN <script>/<link> tags replaced by local jQuery and the stand-ins."""
    text = index.read_text()
    cdn_script = re.compile(r"<script\b[^>]*\bsrc=\"https?://[^\"]+\"[^>]*>\s*</script>\s*")
    cdn_link = re.compile(r"<link\b[^>]*\bhref=\"https?://[^\"]+\"[^>]*>\s*")
    assert cdn_script.search(text), "asv's index.html no longer loads scripts from a CDN: test the real page"
    text = cdn_link.sub("", text)
    first = cdn_script.search(text).start()
    text = cdn_script.sub("", text)
    shim = '<script src="_shim/jquery.js"></script>\n<script src="_shim/cdn-stubs.js"></script>\n'
    text = text[:first] + shim + text[first:]
    assert not re.search(r"<(script|link|img)\b[^>]*\b(src|href)=\"https?://", text), "a remote resource is left"
    return text


_runs = iter(range(10**6))


def chromium(url: str, tmp: Path, *, dom: bool = True, screenshot: Path | None = None, wait_ms: int = 0) -> str:
    """Load `url` in headless Chromium (loopback only); return the rendered DOM (or write a screenshot)."""
    profile = tmp / f"chromium-profile-{next(_runs)}"
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        f"--user-data-dir={profile}", "--window-size=1280,900", "--hide-scrollbars",
    ]  # fmt: skip
    if wait_ms:
        cmd.append(f"--virtual-time-budget={wait_ms}")
    cmd.append(f"--screenshot={screenshot}" if screenshot else "--dump-dom")
    env = {**os.environ, "HOME": str(profile)}
    proc = subprocess.run([*cmd, url], capture_output=True, text=True, timeout=60, env=env)
    shutil.rmtree(profile, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    if screenshot:
        assert screenshot.is_file(), proc.stderr[-2000:]
        return ""
    return proc.stdout


# --------------------------------------------------------------------------- PNG reader


def read_png(path: Path) -> np.ndarray:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG into an (h, w, channels) uint8 array."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    bpp = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prev = np.zeros(width * bpp, dtype=np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: a running sum per channel
            row = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) & 0xFF
        elif kind == 2:  # Up
            row = (line + prev) & 0xFF
        else:  # Average / Paeth depend on the reconstructed left neighbour: per byte
            row = np.zeros_like(line)
            for i in range(line.size):
                left = row[i - bpp] if i >= bpp else 0
                up = prev[i]
                if kind == 3:
                    row[i] = (line[i] + ((left + up) >> 1)) & 0xFF
                else:
                    upleft = prev[i - bpp] if i >= bpp else 0
                    p = left + up - upleft
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                    pred = left if pa <= pb and pa <= pc else (up if pb <= pc else upleft)
                    row[i] = (line[i] + pred) & 0xFF
        out[y] = row
        prev = row
    return out.reshape(height, width, bpp)


# --------------------------------------------------------------------------- synthetic results


def git_commit(repo: Path, message: str, when_ms: int) -> str:
    stamp = f"@{when_ms // 1000} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(
        ["git", "-C", str(repo), *GIT_ID, "commit", "-q", "--allow-empty", "-m", message], check=True, env=env
    )
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def benchmarks_json() -> dict:
    out = {"version": 2}
    for suite, (names, values) in SUITE_PARAMS.items():
        for metric, unit in (("track_ratio", "triton/native"), ("track_triton_time", "seconds")):
            name = f"bench_gemm.{suite}.{metric}"
            out[name] = {
                "code": f"class {suite}:\n    def {metric}(self, cache, *params): ...",
                "name": name,
                "param_names": names,
                "params": [[repr(v) for v in vals] for vals in values],
                "timeout": 3600,
                "type": "track",
                "unit": unit,
                "version": "v1",  # what asv_fixtures.write_results records
            }
    return out


def speedup_for(commit_index: int, suite: str, params: tuple[str, ...]) -> float:
    """A deterministic speedup per cell, spread over green, amber and red, drifting up with the commit."""
    base = {"fp16": 1.25, "bf16": 0.95, "fp32-tf32": 0.8, "fp8_e4m3": 1.6}[params[1]]
    if params[0].startswith("127x"):
        base *= 0.9
    if suite == "FusedEpilogue":
        base = 1.1 if params[2] == "bias+gelu" else 0.85
    return base * (1 + 0.02 * commit_index)


def write_run(results: Path, commit: str, index: int, date: int, triton: str, *, special: bool) -> Path:
    rng = np.random.default_rng(index)
    cells = {}
    for suite in ("Matmul", "ScaledMatmul"):
        shapes, dtypes = SUITE_PARAMS[suite][1]
        for shape in shapes:
            for dtype in dtypes:
                s = speedup_for(index, suite, (shape, dtype))
                ratio = [1 / s * x for x in np.exp(rng.normal(0, 0.003, 10))]
                cells[(suite, shape, dtype)] = {"ratio": ratio, "triton": [1e-3 * r for r in ratio]}
    cells[("Matmul", "1x4096x4096", "fp32-tf32")] = {"ratio": "absent", "triton": "absent"}  # outside the matrix
    no_native = cells[("ScaledMatmul", "127x4097x1023", "fp8_e4m3")]
    no_native["ratio"] = None  # n/a: no native baseline, Triton time measured
    if special:
        cells[("Matmul", "1x4096x4096", "bf16")] = {"ratio": "failed", "triton": "failed"}
    path = results / "h200" / f"{commit[:8]}-existing-py_triton-{triton}.json"
    write_results(path, commit, cells, machine={"triton": triton})
    data = json.loads(path.read_text())
    data["date"] = date
    data["env_name"] = f"existing-py_triton-{triton}"
    # FusedEpilogue has a third param, which asv_fixtures does not write: added here in asv's layout.
    values = SUITE_PARAMS["FusedEpilogue"][1]
    combos = [(sh, dt, ep) for sh in values[0] for dt in values[1] for ep in values[2]]
    for metric, scale in (("track_ratio", 1.0), ("track_triton_time", 1e-3)):
        samples = [[scale / speedup_for(index, "FusedEpilogue", c)] * 10 for c in combos]
        medians = [float(np.median(s)) for s in samples]
        data["results"][f"bench_gemm.FusedEpilogue.{metric}"] = [
            medians, [[repr(v) for v in vals] for vals in values], "v1", 0, 1.0, medians, medians, medians,
            medians, [1] * len(combos), [10] * len(combos), samples, None,
        ]  # fmt: skip
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A scratch repo (4 commits on main, 1 on a side branch) and results for two Triton versions."""
    root = tmp_path_factory.mktemp("synthetic")
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "-q", "-b", "main"], check=True)
    main = [git_commit(repo, f"c{i}", T0 + i * DAY_MS) for i in range(4)]
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "feature"], check=True)
    side = git_commit(repo, "side", T0 + 10 * DAY_MS)  # newest by date, not on main
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)

    results = root / "results"
    for i, commit in enumerate(main):
        write_run(results, commit, i, T0 + i * DAY_MS, "3.6.0", special=(i == 3))
        if i < 2:
            write_run(results, commit, i, T0 + i * DAY_MS, "3.5.1", special=False)
    write_run(results, side, 9, T0 + 10 * DAY_MS, "3.6.0", special=False)
    (results / "benchmarks.json").write_text(json.dumps(benchmarks_json()))
    machine = {k: v for k, v in MACHINE.items() if k != "triton"}  # what asv run writes: the machine's own info
    (results / "h200" / "machine.json").write_text(json.dumps({**machine, "version": 1}))

    html = root / "html"
    landing = pub.publish(results, html, repo=repo, branches=("main",), dashboard_title="gemmwatch test")
    site = Site(html)
    yield {"root": root, "repo": repo, "main": main, "side": side, "results": results, "html": html,
           "landing": landing, "site": site}  # fmt: skip
    site.close()


# --------------------------------------------------------------------------- DOM helpers


def cells_in(dom: str) -> list[str]:
    heatmap = re.search(r'<table class="heatmap" id="heatmap">(.*?)</table>', dom, re.S)
    assert heatmap, "no heatmap in the page"
    return re.findall(r"<td\b[^>]*>.*?</td>", heatmap.group(1), re.S)


def attr(tag: str, name: str) -> str | None:
    m = re.search(rf'\b{name}="([^"]*)"', tag)
    return None if m is None else m.group(1).replace("&amp;", "&").replace("&#x27;", "'").replace("&quot;", '"')


def polyline_points(dom: str) -> list[tuple[float, float]]:
    m = re.search(r'<svg id="history".*?<polyline points="([^"]*)"', dom, re.S)
    assert m, "no history chart"
    return [tuple(map(float, p.split(","))) for p in m.group(1).split()]


def plotted(dom: str) -> list[dict]:
    m = re.search(r'<pre id="plot-log">(.*?)</pre>', dom, re.S)
    assert m, "asv drew nothing"
    log = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    return [call for call in log if call["target"] == "main-graph"]


def active_buttons(dom: str, heading: str) -> list[str]:
    m = re.search(rf'<div class="panel-heading">{re.escape(heading)}</div>\s*<div class="panel-body">(.*?)</div>\s*</div>',
                  dom, re.S)  # fmt: skip
    assert m, f"no {heading!r} selector in asv's graph page"
    return re.findall(r'<a class="btn btn-default btn-xs active"[^>]*>([^<]*)</a>', m.group(1))


# --------------------------------------------------------------------------- tests: synthetic results


def test_publish_writes_asv_dashboard_and_gemmwatch_pages(synthetic):
    html = synthetic["html"]
    assert synthetic["landing"] == html / "gemmwatch" / "index.html"
    index = json.loads((html / "index.json").read_text())
    assert "bench_gemm.FusedEpilogue.track_ratio" in index["benchmarks"]
    assert sorted(index["params"]["triton"]) == ["3.5.1", "3.6.0"]
    assert index["project"] == "gemmwatch test"
    pages = sorted(p.name for p in (html / "gemmwatch").iterdir())
    assert pages == ["h200-triton-3.5.1.html", "h200-triton-3.6.0.html", "index.html"]


def test_landing_page_lists_every_machine_and_triton_version(synthetic, tmp_path):
    need_browser()
    dom = chromium(synthetic["site"].base + "gemmwatch/index.html", tmp_path)
    rows = re.findall(
        r'<tr><td><a href="([^"]+)">h200</a></td><td>NVIDIA H200</td><td><a href="[^"]+">([^<]+)</a>', dom
    )
    assert rows == [("h200-triton-3.5.1.html", "3.5.1"), ("h200-triton-3.6.0.html", "3.6.0")]
    assert synthetic["main"][3][:10] in dom and synthetic["side"][:10] not in dom


def test_heatmap_shows_the_newest_commit_on_main(synthetic, tmp_path):
    need_browser()
    site = synthetic["site"]
    url = site.base + "gemmwatch/h200-triton-3.6.0.html"
    dom = chromium(url, tmp_path)
    newest = synthetic["main"][3]
    assert f"at {newest[:10]} (newest on main)" in dom, "the side branch's newer commit is not shown"
    assert "GPU NVIDIA H200 · driver 580.159.04 · CUDA 13.0 · cuBLAS 13.1.0 · torch 2.11.0+cu130 · Triton 3.6.0" in dom

    # rows: 3 shapes + 2 fused rows; columns: fp16, bf16, fp8_e4m3, fp32-tf32
    header = re.search(r"<thead>(.*?)</thead>", dom, re.S).group(1)
    assert re.findall(r'<th scope="col">([^<]+)</th>', header) == ["shape", "fp16", "bf16", "fp8_e4m3", "fp32-tf32"]
    rows = re.findall(r'<th scope="row">([^<]+)</th>', dom)
    assert rows == ["4096x4096x4096", "1x4096x4096", "127x4097x1023", "4096x4096x4096 bias+gelu",
                    "4096x4096x4096 bias+silu"]  # fmt: skip
    tds = cells_in(dom)
    assert len(tds) == 5 * 4
    by_class = {}
    for td in tds:
        by_class.setdefault(attr(td, "class"), []).append(td)
    assert len(by_class["cell ok"]) == 12 and len(by_class["cell failed"]) == 1 and len(by_class["cell na"]) == 1
    assert len(by_class["empty"]) == 6

    # values: 1 / median ratio, printed, coloured by band
    for td in by_class["cell ok"]:
        suite = attr(td, "data-suite")
        params = tuple(attr(td, "data-params").split(" "))
        expected = speedup_for(3, suite, params)
        assert float(attr(td, "data-speedup")) == pytest.approx(expected, rel=0.01)
        assert re.search(rf">{expected:.2f}</a>", td) or re.search(rf">{float(attr(td, 'data-speedup')):.2f}</a>", td)
        bg = attr(td, "style").split("background:")[1].split(";")[0]
        r, g, _ = (int(bg[i : i + 2], 16) for i in (1, 3, 5))
        if expected >= 1.0:
            assert g > r, (params, bg)  # green
        elif expected < 0.9:
            assert r > g, (params, bg)  # red
        else:
            assert r > 200 and g > 150, (params, bg)  # amber
    assert ">failed</a>" in by_class["cell failed"][0] and ">n/a</a>" in by_class["cell na"][0]

    # every cell links into asv's dashboard
    links = [attr(td, "href") for td in tds if "cell" in attr(td, "class")]
    assert all(link and link.startswith("../index.html#bench_gemm.") for link in links)
    na_link = attr(by_class["cell na"][0], "href")
    assert na_link.startswith("../index.html#bench_gemm.ScaledMatmul.track_triton_time?")


def test_history_chart_has_one_point_per_commit_on_main(synthetic, tmp_path):
    need_browser()
    dom = chromium(synthetic["site"].base + "gemmwatch/h200-triton-3.6.0.html", tmp_path)
    points = polyline_points(dom)
    assert len(points) == 4  # c0..c3; the side branch's commit is not on main
    xs = [x for x, _ in points]
    assert xs == sorted(xs) and len(set(xs)) == 4
    # the geomean drifts up 2% per commit: higher on screen = smaller y
    ys = [y for _, y in points]
    assert ys == sorted(ys, reverse=True)
    assert "commit date (UTC)" in dom and "geomean speedup over native" in dom and "native = 1.00" in dom
    assert dom.count("<circle") == 4
    other = chromium(synthetic["site"].base + "gemmwatch/h200-triton-3.5.1.html", tmp_path)
    assert len(polyline_points(other)) == 2


def test_page_screenshot_is_not_blank(synthetic, tmp_path):
    need_browser()
    png = tmp_path / "page.png"
    chromium(synthetic["site"].base + "gemmwatch/h200-triton-3.6.0.html", tmp_path, screenshot=png)
    pixels = read_png(png)
    assert pixels.shape[:2] == (900, 1280)
    rgb = pixels[..., :3].reshape(-1, 3).astype(int)
    assert rgb.std() > 10, "the screenshot is blank"
    # the heatmap's colours are on screen: some green, amber and red cell backgrounds
    for speedup in (1.3, 0.95, 0.8):
        bg = pub.cell_colour(speedup)[0]
        target = np.array([int(bg[i : i + 2], 16) for i in (1, 3, 5)])
        band = np.abs(rgb - target).max(axis=1) <= 40
        assert band.sum() > 200, f"no cell near {bg} for speedup {speedup}"


def test_heatmap_link_opens_that_cells_graph_in_asv(synthetic, tmp_path):
    need_browser()
    site = synthetic["site"]
    page = site.base + "gemmwatch/h200-triton-3.6.0.html"
    dom = chromium(page, tmp_path)
    tds = cells_in(dom)
    fused = next(td for td in tds if attr(td, "data-params") == "4096x4096x4096 fp16 bias+silu")
    link = attr(fused, "href")
    assert link == (
        "../index.html#bench_gemm.FusedEpilogue.track_ratio?machine=h200&triton=3.6.0"
        "&p-shape='4096x4096x4096'&p-dtype='fp16'&p-epilogue='bias%2Bsilu'"
    )
    url = urljoin(page, link)
    assert url.startswith(site.base + "index.html#")
    site.requests.clear()
    graph = chromium(url.replace("/index.html#", "/asv-offline.html#"), tmp_path, wait_ms=5000)

    assert "bench_gemm.FusedEpilogue.track_ratio" in graph
    assert active_buttons(graph, "triton") == ["3.6.0"]
    assert active_buttons(graph, "shape") == ["4096x4096x4096"]
    assert active_buttons(graph, "dtype") == ["fp16"]
    assert active_buttons(graph, "epilogue") == ["bias+silu"]
    graphs = [r for r in site.requests if r.startswith("/graphs/") and "summary" not in r]
    assert graphs and all(
        "triton-3.6.0" in r and r.endswith("bench_gemm.FusedEpilogue.track_ratio.json") for r in graphs
    )
    # asv drew exactly one series: this cell's ratio at the 4 commits of main
    (call, *_) = plotted(graph)[-1:]
    (series,) = call["series"]
    values = [y for _, y in series["data"] if y is not None]
    expected = [1 / speedup_for(i, "FusedEpilogue", ("4096x4096x4096", "fp16", "bias+silu")) for i in range(4)]
    assert values == pytest.approx(expected, rel=1e-9)


def test_asv_dashboard_renders_the_benchmark_list(synthetic, tmp_path):
    need_browser()
    site = synthetic["site"]
    dom = chromium(site.base + "asv-offline.html", tmp_path, wait_ms=5000)
    assert "Can not determine continental origin of swallow" not in dom  # asv's error.html
    names = re.findall(r'<a class="btn benchmark-container" href="#([^"]+)"', dom)
    assert set(names) == set(benchmarks_json()) - {"version"}
    assert 'id="group-bench_gemm"' in dom
    # the project name links to gemmwatch's pages
    assert re.search(
        r'id="project-name"[^>]*href="gemmwatch/index.html"|href="gemmwatch/index.html"[^>]*id="project-name"', dom
    )


def test_asv_graph_link_quotes_like_asv():
    benchmarks = {
        "b.S.track_ratio": {"params": [["'1x2x3'"], ["'fp16'"], ['"it\'s+"']], "param_names": ["shape", "dtype", "e"]}
    }
    link = pub.asv_graph_link(benchmarks, "b.S.track_ratio", ("1x2x3", "fp16", "it's+"), {"machine": "a b"})
    assert link == "../index.html#b.S.track_ratio?machine=a%20b&p-shape='1x2x3'&p-dtype='fp16'&p-e=%22it's%2B%22"
    assert pub.asv_graph_link(benchmarks, "b.S.track_ratio", ("9x9x9", "fp16", "it's+"), {}) is None
    assert pub.asv_graph_link(benchmarks, "b.S.other", ("1x2x3", "fp16", "it's+"), {}) is None


def test_cell_colour_bands():
    def rgb(s):
        bg = pub.cell_colour(s)[0]
        return tuple(int(bg[i : i + 2], 16) for i in (1, 3, 5))

    assert rgb(1.0)[1] > rgb(1.0)[0] and rgb(2.5) == rgb(3.0)  # green, saturating at 2x
    assert rgb(1.5)[1] < rgb(1.1)[1]  # deeper green further above 1
    assert rgb(0.95)[0] > 200 and rgb(0.95)[2] < 120  # amber
    assert rgb(0.89)[0] > rgb(0.89)[1] and rgb(0.6)[1] < rgb(0.85)[1]  # red, deeper further below 0.9
    assert math.isclose(pub.geomean([2.0, 0.5]), 1.0)


# --------------------------------------------------------------------------- tests: a real `gemmwatch run`


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    repo = snapshot(root / "repo")
    proc = gemmwatch(
        repo, "run", "--rounds", "2", "--results-dir", str(root / "results"), "--work-dir", str(root / "w")
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root, repo


def test_publish_of_a_real_run(real_run, tmp_path, capsys):
    need_browser()
    root, repo = real_run
    html = root / "html"
    args = argparse.Namespace(results_dir=str(root / "results"), html_dir=str(html), checkout=str(repo), branch=None)
    assert pub.main(args) == 0
    out = capsys.readouterr().out.strip()
    assert out == str(html / "gemmwatch" / "index.html")
    (page,) = [p for p in (html / "gemmwatch").glob("cpu-interpreter-triton-*.html")]
    site = Site(html)
    try:
        dom = chromium(site.base + f"gemmwatch/{page.name}", tmp_path)
        assert "pipeline check, not performance" in dom
        tds = [td for td in cells_in(dom) if "cell" in (attr(td, "class") or "")]
        assert len(tds) == 12  # the smoke set: Matmul 6, ScaledMatmul 2 (n/a on the CPU), FusedEpilogue 4
        assert sum("cell na" in td for td in tds) == 2
        assert len(polyline_points(dom)) == 1
        link = attr(next(td for td in tds if attr(td, "data-params") == "33x65x127 bf16 bias+gelu"), "href")
        site.requests.clear()
        graph = chromium(urljoin(site.base + "gemmwatch/", link).replace("/index.html#", "/asv-offline.html#"),
                         tmp_path, wait_ms=5000)  # fmt: skip
        assert active_buttons(graph, "epilogue") == ["bias+gelu"]
        (call, *_) = plotted(graph)[-1:]
        (series,) = call["series"]
        assert len([y for _, y in series["data"] if y is not None]) == 1
    finally:
        site.close()


# --------------------------------------------------------------------------- tests: bad input


def _args(**kw) -> argparse.Namespace:
    return argparse.Namespace(**{"results_dir": None, "html_dir": None, "checkout": None, "branch": None, **kw})


def test_missing_results_dir_exits_2(synthetic, tmp_path, capsys):
    missing = tmp_path / "nope" / "results"
    assert pub.main(_args(results_dir=str(missing), html_dir=str(tmp_path / "h"), checkout=str(synthetic["repo"]))) == 2
    err = capsys.readouterr().err
    assert f"results directory {missing.resolve()} does not exist" in err
    assert not (tmp_path / "h").exists()


def test_empty_results_dir_exits_2(synthetic, tmp_path, capsys):
    empty = tmp_path / "results"
    empty.mkdir()
    assert pub.main(_args(results_dir=str(empty), html_dir=str(tmp_path / "h"), checkout=str(synthetic["repo"]))) == 2
    assert f"results directory {empty.resolve()} holds no asv result files" in capsys.readouterr().err


def test_no_git_repository_exits_2(synthetic, tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    args = _args(results_dir=str(synthetic["results"]), html_dir=str(tmp_path / "h"), checkout=str(plain))
    assert pub.main(args) == 2
    assert f"{plain} is not inside a git repository" in capsys.readouterr().err


def test_unknown_branch_exits_2(synthetic, tmp_path, capsys):
    args = _args(
        results_dir=str(synthetic["results"]), html_dir=str(tmp_path / "h"), checkout=str(synthetic["repo"]),
        branch="nosuch",
    )  # fmt: skip
    assert pub.main(args) == 2
    assert "branch 'nosuch' does not exist" in capsys.readouterr().err
