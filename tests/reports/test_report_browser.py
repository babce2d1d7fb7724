"""report.html of a real evaluation (tiny model, embedded data, two attacked sets) in headless
Chromium: the DOM after load holds the table and the marked examples, a screenshot is not blank,
the filters change what is shown, text from data runs no script and sends no request; and the
page's numbers are report.json's. The browser tests skip where Chromium is absent (CI installs
Debian's package: there its absence fails)."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest

from robust_mrc.data.sources import load_splits
from robust_mrc.data.writers import write_examples
from robust_mrc.jobs.evaluate import evaluate
from robust_mrc.jobs.train import train
from robust_mrc.reports.html import page
from tests.helpers import make_cfg

MC_DATA = ["data.n_train=64", "data.n_val=16", "data.n_test=24"]
SUITE = "suite.sets=[{name: addsent}, {name: charswap}]"
TITLE_SCRIPT = '<script>document.title="pwned"</script>'
HOSTILE = TITLE_SCRIPT + "<img src=x onerror=\"document.title='pwned'\"><svg onload=\"document.title='pwned'\"></svg>"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    (pytest.fail if os.environ.get("ROBUST_MRC_CI") == "1" else pytest.skip)("no Chromium here (Debian: apt-get install chromium)")


def headless(profile: Path) -> list[str]:
    """Headless Chromium with its own profile directory (root in a container: no sandbox)."""
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}"]


def browse(url: str, tmp_path: Path) -> str:
    """The DOM of ``url`` after load (its scripts run), from headless Chromium."""
    args = [*headless(tmp_path / "profile"), "--virtual-time-budget=3000", "--dump-dom", url]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory):
    """A tiny checkpoint evaluated on embedded data whose passages, options and one id hold HTML,
    under clean, AddSent and CharSwap."""
    root = tmp_path_factory.mktemp("browser")
    training = ("model=tiny", *MC_DATA, "trainer.max_epochs=1", "batch_size=16", "test_after_fit=false")
    ckpt = train(make_cfg(*training, f"output_dir={root / 'run'}"))
    test = load_splits(make_cfg(*MC_DATA).data, "mc")["test"]
    hostile = [
        ex.replace(
            id=ex.id + ("<i>" if i == 0 else ""),
            passage=f"{HOSTILE} {ex.passage}",
            options=tuple(o + (f" <b onmouseover=alert(1)>{i}</b>" if k == 0 else "") for k, o in enumerate(ex.options)),
        )
        for i, ex in enumerate(test)
    ]
    path = root / "hostile.jsonl"
    write_examples(hostile, path, "race_jsonl")
    out = root / "eval"
    cfg = make_cfg(
        f"ckpt_path={ckpt['ckpt_path']}",
        "data=race_local",
        f"data.train={path}",
        f"data.test={path}",
        SUITE,
        "diagnostics=[confidence]",
        f"cache_dir={root / 'cache'}",
        f"output_dir={out}",
        config_name="eval",
    )
    evaluate(cfg)
    return out


class Tables(HTMLParser):
    """The rows of every table (cell texts)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_report_json_and_html_agree(evaluation):
    report = json.loads((evaluation / "report.json").read_text())
    html = (evaluation / "report.html").read_text()
    parser = Tables()
    parser.feed(html)
    table = next(t for t in parser.tables if t[0][:3] == ["model", "set", "n"])
    header, rows = table[0], table[1:]
    (model,) = report["models"]
    entry = report["models"][model]
    assert [r[1] for r in rows] == ["clean", "addsent", "charswap", "attack avg"]
    for row in rows[:-1]:
        cells, m = dict(zip(header, row)), entry["sets"][row[1]]
        assert cells["model"] == model and int(cells["n"]) == m["n"]
        for key in ("acc", "drop", "abs_drop", "flip"):
            assert float(cells[key]) == pytest.approx(m.get(key, 0.0), abs=5e-5), (row[1], key)
        assert cells["95% CI"] == "{:.4f}-{:.4f}".format(*m["ci95"])
        if "abs_drop_ci95" in m:
            assert cells["abs_drop 95% CI"] == "{:.4f}-{:.4f}".format(*m["abs_drop_ci95"])
            bar = re.search(rf'<rect class="bar[^"]*" [^>]*data-label="{row[1]}" data-value="([-0-9.]+)"', html)
            assert float(bar.group(1)) == pytest.approx(m["abs_drop"], abs=5e-5)
    avg = dict(zip(header, rows[-1]))
    assert float(avg["acc"]) == pytest.approx(entry["attack_avg"], abs=5e-5)
    # the examples' choices are the prediction records'
    preds = {s: json.loads((evaluation / "predictions" / model.replace("/", "__") / f"{s}.json").read_text()) for s in ("clean", "addsent")}
    articles = re.findall(r'<article class="ex" data-set="addsent".*?</article>', html, re.S)
    assert articles
    for art in articles:
        ex_id = re.search(r"id <code>(.*?)</code>", art).group(1).replace("&lt;", "<").replace("&gt;", ">")
        p = re.findall(r"p=([0-9.]+)\)", art)
        clean, attacked = preds["clean"][ex_id], preds["addsent"][ex_id]
        assert [float(x) for x in p] == pytest.approx([clean["probs"][clean["pred"]], attacked["probs"][attacked["pred"]]], abs=5e-4)


def test_the_report_renders_with_its_marks_and_filters(evaluation, tmp_path):
    url = (evaluation / "report.html").as_uri()
    dom = browse(url, tmp_path)
    assert "<title>Robustness report: suite custom (test)</title>" in dom or "<title>Robustness report" in dom
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert re.search(r"<th>model</th><th>set</th><th>n</th><th>acc</th>", dom)
    articles = re.findall(r'<article class="ex"([^>]*)>(.*?)</article>', dom, re.S)
    assert {re.search(r'data-set="(\w+)"', a).group(1) for a, _ in articles} == {"addsent", "charswap"}
    assert all('class="ins"' in body for a, body in articles)  # every example shows the attack's edits
    assert not any(" hidden" in a for a, _ in articles) and '<form id="filters">' in dom  # the script ran: filters shown
    assert "&lt;script&gt;document.title=" in dom  # the passage's script is text
    assert "<b onmouseover" not in dom and '<img src="x"' not in dom
    # a filter from the address: only the held CharSwap questions stay visible
    filtered = browse(url + "#set=charswap&status=held", tmp_path)
    shown = [a for a, _ in re.findall(r'<article class="ex"([^>]*)>(.*?)</article>', filtered, re.S) if " hidden" not in a]
    hidden = [a for a, _ in re.findall(r'<article class="ex"([^>]*)>(.*?)</article>', filtered, re.S) if " hidden" in a]
    assert hidden and all('data-set="charswap"' in a and 'data-status="held"' in a for a in shown)
    assert re.search(rf'id="shown-count">{len(shown)} of {len(articles)} examples shown<', filtered)
    # without JavaScript (the file as written): every example and the tables, the filters hidden
    static = (evaluation / "report.html").read_text()
    assert '<form id="filters" hidden>' in static and " hidden" not in "".join(re.findall(r'<article class="ex"([^>]*)>', static))


def test_a_screenshot_of_the_report_is_not_blank(evaluation, tmp_path):
    from PIL import Image

    shot = tmp_path / "report.png"
    url = (evaluation / "report.html").as_uri()
    args = [*headless(tmp_path / "p"), "--hide-scrollbars", "--window-size=1280,1600", f"--screenshot={shot}", url]
    subprocess.run(args, check=True, timeout=120, capture_output=True)
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 1600)
    colours = image.getcolors(maxcolors=1 << 20)
    white = sum(n for n, c in colours if min(c) > 245)
    assert len(colours) > 50 and white < 0.95 * image.size[0] * image.size[1]  # text, table lines, the chart's bars
    assert any(c[0] > 180 and c[1] < 120 and c[2] < 120 for _, c in colours)  # the red of a drop bar (#d9534f)


class Requests(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        Requests.seen.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_the_page_runs_no_script_and_sends_no_request_it_does_not_own(tmp_path):
    """Even markup that escaped escaping (written raw into the page here) runs nothing and loads
    nothing: the page's policy allows its own script only."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Requests)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        raw = (
            f'{HOSTILE}<img src="{base}/leak.png"><link rel="stylesheet" href="{base}/leak.css">'
            f'<script src="{base}/leak.js"></script><iframe src="{base}/frame"></iframe>'
            f'<p id="ok">kept</p>'
        )
        path = tmp_path / "hostile.html"
        path.write_text(page("safe title", raw))
        dom = browse(path.as_uri(), tmp_path)
        assert re.search(r"<title>(.*?)</title>", dom).group(1) == "safe title"
        assert '<p id="ok">kept</p>' in dom
        assert Requests.seen == []
    finally:
        server.shutdown()
