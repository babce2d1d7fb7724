"""report.html without a browser: the attack's edits as marks, the examples browser's choice of
examples, escaping of text from data, and the comparison page's dots per seed."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.reports.compare import RunResult, compare_html, mean_interval
from robust_mrc.reports.examples import browser_sets
from robust_mrc.reports.html import SCRIPT, markdown_html, page
from robust_mrc.reports.marks import DELETED, INSERTED, diff_segments, overlay, shown_text
from robust_mrc.reports.robustness import html_report

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'"> & "quotes"'


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def parsed(html: str) -> Elements:
    p = Elements()
    p.feed(html)
    return p


def test_diff_marks_an_inserted_sentence_and_a_swapped_word():
    clean = "Tom lives in Paris. He has a dog."
    attacked = "Tom lives in Paris. Mary lives in Rome. He has a dgo."
    segments = diff_segments(clean, attacked)
    assert shown_text(segments) == attacked
    inserted = [t for t, c in segments if INSERTED in c]
    assert "".join(inserted).strip().startswith("Mary lives in Rome.") and "dgo" in inserted
    assert [t for t, c in segments if DELETED in c] == ["dog"]
    assert diff_segments("same text", "same text") == [("same text", ())]


def test_overlay_puts_gold_and_prediction_on_their_characters():
    text = "The capital is Paris, not Lyon."
    segments = overlay([(text, ())], [(15, 20, "gold"), (26, 30, "pred")])
    by_class = {c: t for t, cs in segments for c in cs}
    assert by_class == {"gold": "Paris", "pred": "Lyon"} and shown_text(segments) == text


def mc(i, passage, options=("red", "blue", "green"), label=0, question="What colour is it?"):
    return MCExample(f"q{i}", passage, question, options, label)


def records(preds, labels):
    probs = lambda p: [0.7 if k == p else 0.15 for k in range(3)]  # noqa: E731
    return {f"q{i}": {"pred": p, "label": y, "probs": probs(p)} for i, (p, y) in enumerate(zip(preds, labels))}


def test_browser_shows_flipped_first_and_says_what_it_left_out():
    clean = [mc(i, f"Passage {i} says red.") for i in range(6)]
    attacked = [ex.replace(passage=ex.passage + " It is blue.", attack="addsent", detail="It is blue.") for ex in clean]
    labels = [0] * 6
    predictions = {"m": {"clean": records([0, 0, 0, 1, 1, 0], labels), "addsent": records([1, 0, 1, 0, 1, 0], labels)}}
    browser = browser_sets({"clean": clean, "addsent": attacked}, predictions, "m", per_set=3)
    b = browser["addsent"]
    assert b["counts"] == {"flipped": 3, "held": 2, "wrong": 1}  # q0 q2 right->wrong, q3 wrong->right
    assert [r["id"] for r in b["rows"]] == ["q0", "q2", "q3"] and b["shown"] == {"flipped": 3, "held": 0, "wrong": 0}
    assert [r["direction"] for r in b["rows"]] == ["right → wrong", "right → wrong", "wrong → right"]
    row = b["rows"][0]
    assert "".join(t for t, c in row["passage"] if INSERTED in c).strip() == "It is blue."
    assert row["edits"] == ["addsent: It is blue."] and row["options"][0]["gold"]
    (choice,) = row["models"]
    assert choice["clean"] == {"correct": True, "answer": "A. red", "prob": 0.7}
    assert choice["attacked"]["answer"] == "B. blue" and not choice["attacked"]["correct"]


def test_span_rows_mark_gold_and_predicted_spans_with_f1():
    ctx = "Paris is the capital. Lyon is big."
    clean = [SpanExample("s0", ctx, "What is the capital?", (Answer("Paris", 0),))]
    attacked = [clean[0].replace(context=ctx + " Rome is the capital of Spain.", attack="addsent")]
    predictions = {
        "m": {
            "clean": {"s0": {"pred": "Paris", "golds": ["Paris"], "confidence": 0.9}},
            "addsent": {"s0": {"pred": "Rome", "golds": ["Paris"], "confidence": 0.6}},
        }
    }
    (row,) = browser_sets({"clean": clean, "addsent": attacked}, predictions, "m")["addsent"]["rows"]
    marked = {c: t for t, cs in row["passage"] for c in cs if c != INSERTED}
    assert marked["gold"] == "Paris" and marked["pred-clean"] == "Paris" and marked["pred"] == "Rome"
    assert row["models"][0]["clean"]["f1"] == 100.0 and row["models"][0]["attacked"]["f1"] == 0.0
    assert row["status"] == "flipped" and row["golds"] == ["Paris"]


def tiny_report(passage_note: str = ""):
    """A report of one model on clean and addsent, and its browser, with text from data in every field."""
    clean = [mc(i, f"Passage {i} says red. {passage_note}", options=("red", HOSTILE, "green")) for i in range(4)]
    attacked = [ex.replace(passage=ex.passage + f" {HOSTILE} It is blue.", attack="addsent", detail=HOSTILE) for ex in clean]
    predictions = {"<b>model</b>": {"clean": records([0, 0, 1, 0], [0] * 4), "addsent": records([1, 0, 1, 1], [0] * 4)}}
    report = {
        "task": "mc",
        "suite": "advrace<script>",
        "split": "test",
        "primary": "acc",
        "models": {
            "<b>model</b>": {
                "sets": {
                    "clean": {"n": 4, "acc": 0.75, "ci95": [0.25, 1.0]},
                    "addsent": {"n": 4, "acc": 0.25, "ci95": [0.0, 0.75], "drop": 2 / 3, "abs_drop": 0.5, "flip": 0.5}
                    | {"abs_drop_ci95": [0.0, 1.0]},
                },
                "attack_avg": 0.25,
                "attack_avg_drop": 2 / 3,
                "attack_avg_abs_drop": 0.5,
            }
        },
        "sets": {"addsent": {"n": 4, "source": "addsent"}},
        "notes": [HOSTILE],
    }
    browser = browser_sets({"clean": clean, "addsent": attacked}, predictions, "<b>model</b>")
    return report, browser


def test_text_from_data_stays_text():
    report, browser = tiny_report()
    html = html_report(report, browser)
    p = parsed(html)
    assert p.scripts == [SCRIPT]  # the page's own script, nothing from data
    assert not [(t, a) for t, a in p.tags if any(k.startswith("on") for k in a)]  # no event handler attribute
    assert not [a for t, a in p.tags if t == "img"]  # no image (the figures are data: URIs; none here)
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in html
    assert "&lt;b&gt;model&lt;/b&gt;" in html and "<b>model</b>" not in html
    csp = next(a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "unsafe-inline" not in csp.split("script-src")[1]


def test_the_page_shows_the_markdown_numbers_and_the_drop_interval():
    report, browser = tiny_report()
    html = html_report(report, browser)
    row = re.search(r"<tr><td>&lt;b&gt;model&lt;/b&gt;</td><td>addsent</td>(.*?)</tr>", html).group(1)
    cells = re.findall(r"<td>(.*?)</td>", row)
    assert cells[:4] == ["4", "0.2500", "0.0000-0.7500", "0.6667"]
    bar = re.search(r'<rect class="bar" [^>]*data-label="addsent" data-value="([-0-9.]+)"', html)
    assert float(bar.group(1)) == pytest.approx(0.5)
    assert 'data-lo="0.0000" data-hi="1.0000"' in html
    assert html.count('<article class="ex"') == 4 and 'data-status="flipped"' in html


def test_markdown_pipes_code_and_lists_render_escaped():
    html = markdown_html("# T <x>\n\n| a | b |\n|---|---|\n| `x\\|y` | <i> |\n\n- one **two**\n")
    assert "<h1>T &lt;x&gt;</h1>" in html and "<td><code>x|y</code></td><td>&lt;i&gt;</td>" in html
    assert "<li>one <strong>two</strong></li>" in html


def test_page_allows_only_its_own_script():
    html = page("t", "<p>x</p>")
    assert html.count("<script>") == 1 and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_compare_page_draws_each_seed_and_the_mean_interval():
    runs = []
    for name, values in (("none s1", (0.50, 0.30)), ("none s2", (0.54, 0.36)), ("mix s1", (0.52, 0.44)), ("mix s2", (0.50, 0.46))):
        run = RunResult(name, "mc", name)
        run.set("test", "clean").metrics["acc"] = values[0]
        run.set("test", "addsent").metrics["acc"] = values[1]
        runs.append((name, run))
    html = compare_html(runs, "acc", None, "| training | clean |\n|---|---|\n| none s1 | 0.500 |\n")
    dots = [float(v) for v in re.findall(r'<circle class="dot" [^>]*data-value="([0-9.]+)"', html)]
    assert sorted(dots) == sorted([0.50, 0.54, 0.52, 0.50, 0.30, 0.36, 0.44, 0.46])
    means = [float(v) for v in re.findall(r'<rect class="mean" [^>]*data-value="([0-9.]+)"', html)]
    assert sorted(means) == pytest.approx(sorted([0.52, 0.51, 0.33, 0.45]))
    lo, hi = mean_interval([0.30, 0.36])
    assert f'data-lo="{lo:.4f}" data-hi="{hi:.4f}"' in html and lo < 0.33 < hi
    assert "<td>none s1</td><td>0.500</td>" in html


def test_a_set_of_long_passages_stays_within_the_page_budget():
    clean = [mc(i, "word " * 2000) for i in range(10)]
    attacked = [ex.replace(passage=ex.passage + "It is blue.", attack="addsent") for ex in clean]
    predictions = {"m": {"clean": records([0] * 10, [0] * 10), "addsent": records([1] * 10, [0] * 10)}}
    b = browser_sets({"clean": clean, "addsent": attacked}, predictions, "m", budget=35_000)["addsent"]
    assert b["counts"]["flipped"] == 10 and len(b["rows"]) == 3  # 10,011+ characters each
    html = html_report({"task": "mc", "suite": "s", "split": "test", "primary": "acc", "models": {}}, {"addsent": b})
    assert "<td>addsent</td><td>10</td><td>0</td><td>0</td><td>3</td><td>7</td>" in html  # flipped, held, wrong, shown, left out
