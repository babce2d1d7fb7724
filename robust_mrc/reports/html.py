"""``report.html``: the robustness report as one self-contained page that opens offline.

The page holds what ``report.md`` holds, rendered from the same Markdown (the same numbers as
``report.json``, no second computation), plus the drop per set as a chart with its interval, the
diagnostics' figures (embedded PNGs) and the examples browser (:mod:`robust_mrc.reports.examples`)
with the attack's edits marked. Styles and the one script are inline; the tables and the examples
read without JavaScript (the script only filters).

Text from data (passages, questions, options, ids, model and set names) is escaped wherever it
goes, and the page's Content-Security-Policy lets nothing load or run but its own script (by its
hash) and embedded images: a passage holding ``<script>`` or ``<img onerror=...>`` shows as
characters, and no request leaves the page.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from robust_mrc.reports.marks import DELETED, Segment

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:0 16px 40px;color:#1c1c1c}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2}code{background:#f4f4f4;padding:0 3px}pre{background:#f6f6f6;padding:8px;overflow:auto}
.chart text{font-size:11px}.chart .title{font-weight:600}.chart .bar{fill:#d9534f}.chart .bar.neg{fill:#5cb85c}
.chart .whisker{stroke:#222;fill:none}.chart .zero{stroke:#888}.chart .dot{fill:#337ab7;fill-opacity:.75}.chart .mean{fill:#222}
.chart .tick{fill:#666}.charts{display:flex;flex-wrap:wrap;gap:12px}
.ins{background:#c9f2c9;text-decoration:underline #2a7d2a}del{background:#f8d0d0;color:#7a1f1f}
.gold{border-bottom:3px solid #e0a800}.pred{outline:2px solid #337ab7}.pred-clean{outline:2px dashed #777}
article.ex{border:1px solid #ccc;border-radius:6px;padding:8px 12px;margin:12px 0}
article.ex header{font-size:12px;color:#444}.badge{font-weight:600;padding:1px 6px;border-radius:4px}
.badge.flipped{background:#f8d0d0}.badge.held{background:#c9f2c9}.badge.wrong{background:#eee}
.passage{white-space:pre-wrap;max-height:18em;overflow:auto;background:#fafafa;border:1px solid #eee;padding:6px}
.options{list-style:none;padding-left:12px}.options li.goldopt{font-weight:600}
.right{color:#1d6b1d}.wrongans{color:#a32020}.legend span{margin-right:10px}
form#filters{position:sticky;top:0;background:#fff;padding:6px 0;border-bottom:1px solid #ddd}
"""

SCRIPT = """(function(){
var form=document.getElementById("filters");if(!form){return;}
form.hidden=false;
var items=Array.prototype.slice.call(document.querySelectorAll("article.ex"));
var fields=["set","status","qtype"];
function apply(){
var want={},shown=0;
fields.forEach(function(f){want[f]=form.elements[f].value;});
items.forEach(function(el){
var ok=fields.every(function(f){return !want[f]||el.getAttribute("data-"+f)===want[f];});
el.hidden=!ok;if(ok){shown++;}});
document.getElementById("shown-count").textContent=shown+" of "+items.length+" examples shown";
var parts=fields.filter(function(f){return want[f];}).map(function(f){return f+"="+encodeURIComponent(want[f]);});
try{history.replaceState(null,"",parts.length?"#"+parts.join("&"):location.pathname);}catch(e){}
}
(location.hash.slice(1)||"").split("&").forEach(function(kv){
var i=kv.indexOf("=");if(i<0){return;}
var k=kv.slice(0,i);if(fields.indexOf(k)<0){return;}
try{form.elements[k].value=decodeURIComponent(kv.slice(i+1));}catch(e){}});
form.addEventListener("change",apply);
apply();
})();"""

SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
# nothing loads from anywhere; styles inline, images embedded, the one script by its hash
CSP = (
    f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{SCRIPT_HASH}'; form-action 'none'; base-uri 'none'"
)


GENERATOR = '<meta name="generator" content="robust-mrc">'  # marks the pages robust-mrc wrote


def page(title: str, body: str) -> str:
    """A complete HTML document: ``title`` (escaped here), ``body`` (HTML, escaped by its maker)."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{GENERATOR}'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
        f"<script>{SCRIPT}</script>\n</body></html>\n"
    )


# ------------------------------------------------------------------------------------ Markdown
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_CODE = re.compile(r"`([^`]*)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def inline(text: str) -> str:
    """One line of the reports' Markdown (```code```, ``**bold**``) as HTML, the text escaped."""
    out, pos = [], 0
    for m in _CODE.finditer(text):
        out.append(_BOLD.sub(r"<strong>\1</strong>", escape(text[pos : m.start()])))
        out.append(f"<code>{escape(m.group(1))}</code>")
        pos = m.end()
    out.append(_BOLD.sub(r"<strong>\1</strong>", escape(text[pos:])))
    return "".join(out)


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner[1:]
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(inner)]


def slug(title: str) -> str:
    """An anchor for a heading: its words, lower case, joined by ``-``."""
    return "-".join(re.findall(r"[a-z0-9]+", title.lower())) or "section"


def contents(html: str) -> str:
    """A line of links to the page's ``<h2 id=...>`` sections."""
    links = [f'<a href="#{a}">{t}</a>' for a, t in re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', html)]
    return f"<nav>{' · '.join(links)}</nav>" if links else ""


def markdown_html(text: str) -> str:
    """The Markdown the reports write (headings, pipe tables, bullet lists, code fences,
    paragraphs) as HTML; every piece of text is escaped."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
        elif stripped.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            out.append(f"<pre>{escape(chr(10).join(lines[i + 1 : j]))}</pre>")
            i = j + 1
        elif m := re.match(r"(#{1,4}) (.*)", stripped):
            level, title = len(m.group(1)), m.group(2)
            anchor = f' id="{slug(title)}"' if level == 2 else ""
            out.append(f"<h{level}{anchor}>{inline(title)}</h{level}>")
            i += 1
        elif stripped.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-| :]+\|$", lines[i + 1].strip()):
            head = _cells(stripped)
            j = i + 2
            body = []
            while j < len(lines) and lines[j].strip().startswith("|"):
                body.append(_cells(lines[j]))
                j += 1
            rows = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body)
            header = "".join(f"<th>{inline(c)}</th>" for c in head)
            out.append(f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>")
            i = j
        elif stripped.startswith("- "):
            j = i
            items = []
            while j < len(lines) and lines[j].strip().startswith("- "):
                items.append(f"<li>{inline(lines[j].strip()[2:])}</li>")
                j += 1
            out.append(f"<ul>{''.join(items)}</ul>")
            i = j
        else:
            j = i
            para = []
            while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith(("|", "#", "- ", "```")):
                para.append(lines[j].strip())
                j += 1
            out.append(f"<p>{inline(' '.join(para))}</p>")
            i = max(j, i + 1)
    return "\n".join(out)


# ------------------------------------------------------------------------------------ examples
def segments_html(segments: Iterable[Segment]) -> str:
    """Marked text: inserted or changed runs in ``<span class="ins">``, removed runs in ``<del>``,
    other classes (gold, pred, pred-clean) as the span's classes; the text escaped."""
    out = []
    for text, classes in segments:
        body = escape(text)
        if DELETED in classes:
            out.append(f"<del>{body}</del>")
        elif classes:
            out.append(f'<span class="{" ".join(escape(c) for c in classes)}">{body}</span>')
        else:
            out.append(body)
    return "".join(out)


def _choice_html(choice: Mapping[str, Any]) -> str:
    right = "right" if choice.get("correct") else "wrongans"
    bits = []
    if choice.get("prob") is not None:
        bits.append(f"p={choice['prob']:.3f}")
    if choice.get("f1") is not None:
        bits.append(f"F1 {choice['f1']:.1f}")
    extra = f" ({', '.join(bits)})" if bits else ""
    members = f"<br><small>members: {escape(' | '.join(choice['members']))}</small>" if choice.get("members") else ""
    return f'<td class="{right}">{escape(str(choice.get("answer", "")))}{extra}{members}</td>'


GOLD = " (gold)"


def answers_html(row: Mapping[str, Any]) -> str:
    """The options with the gold marked (multiple choice), or the gold answers (span QA)."""
    if "options" in row:
        items = "".join(
            f'<li class="{"goldopt" if o["gold"] else ""}">{escape(o["letter"])}. {segments_html(o["text"])}{o["gold"] and GOLD or ""}</li>'
            for o in row["options"]
        )
        return f'<ul class="options">{items}</ul>'
    return f"<p><b>Gold:</b> {escape(' | '.join(row.get('golds', [])))}</p>"


def choices_html(row: Mapping[str, Any]) -> str:
    """Every model's answer on the clean and on the attacked version, right or wrong."""
    choices = "".join(
        f"<tr><td>{escape(m['model'])}</td>{_choice_html(m['clean'])}{_choice_html(m['attacked'])}</tr>" for m in row["models"]
    )
    return f'<table class="choices"><thead><tr><th>model</th><th>clean</th><th>attacked</th></tr></thead><tbody>{choices}</tbody></table>'


def html_cell(body: str) -> str:
    """An HTML fragment standing alone (a W&B HTML cell): the page's styles and a policy that
    loads and runs nothing."""
    return (
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<style>{STYLE}</style>{body}"
    )


def example_html(row: Mapping[str, Any]) -> str:
    """One example of the browser as an ``<article>`` (its set, status and question type as data attributes)."""
    status = row["status"]
    label = status + (f" ({row['direction']})" if row.get("direction") else "")
    parts = [
        f'<article class="ex" data-set="{escape(row["set"])}" data-status="{escape(status)}" data-qtype="{escape(row["qtype"])}">',
        f'<header><span class="badge {escape(status)}">{escape(label)}</span> set <b>{escape(row["set"])}</b> · '
        f"id <code>{escape(row['id'])}</code> · question type {escape(row['qtype'])}</header>",
        f'<p class="q"><b>Question:</b> {segments_html(row["question"])}</p>',
        f'<div class="passage">{segments_html(row["passage"])}</div>',
    ]
    parts.append(answers_html(row))
    if row.get("edits"):
        parts.append(f'<p class="edits"><b>Edits:</b> {escape("; ".join(row["edits"]))}</p>')
    parts += [choices_html(row), "</article>"]
    return "\n".join(parts)


def _select(name: str, label: str, values: Sequence[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return f'<label>{escape(label)} <select name="{escape(name)}"><option value="">all</option>{options}</select></label> '


def browser_html(browser: Mapping[str, Mapping[str, Any]], per_set: int) -> str:
    """The examples browser: a summary per set (how many flipped, held, wrong; how many shown),
    the filters (hidden until the script runs) and the examples."""
    if not browser:
        return ""
    rows = [r for b in browser.values() for r in b["rows"]]
    summary = "".join(
        f"<tr><td>{escape(name)}</td>"
        + "".join(f"<td>{b['counts'][s]}</td>" for s in ("flipped", "held", "wrong"))
        + f"<td>{len(b['rows'])}</td><td>{sum(b['counts'].values()) - len(b['rows'])}</td></tr>"
        for name, b in browser.items()
    )
    headline = rows[0]["headline"] if rows else ""
    parts = [
        '<h2 id="examples">Examples</h2>',
        f"<p>Status by <code>{escape(headline)}</code>: <b>flipped</b> = right on one version and wrong on the other, "
        "<b>held</b> = right on both, <b>wrong</b> = wrong on both. Each set shows the flipped questions first "
        f"(right → wrong before wrong → right), then a sample of the others, at most {per_set} per set "
        "(<code>report_examples</code>); every prediction is in <code>predictions/</code>.</p>",
        "<table><thead><tr><th>set</th><th>flipped</th><th>held</th><th>wrong</th><th>shown</th><th>left out</th></tr></thead>"
        f"<tbody>{summary}</tbody></table>",
        '<p class="legend"><span class="ins">inserted or changed by the attack</span><del>removed by the attack</del> '
        '<span class="gold">gold answer</span> <span class="pred">predicted (attacked)</span> '
        '<span class="pred-clean">predicted (clean)</span></p>',
        '<form id="filters" hidden>'
        + _select("set", "set", list(browser))
        + _select("status", "status", ["flipped", "held", "wrong"])
        + _select("qtype", "question type", sorted({r["qtype"] for r in rows}))
        + f'<span id="shown-count">{len(rows)} examples</span></form>',
        *(example_html(r) for r in rows),
    ]
    return "\n".join(parts)


def embedded_image(path: Path, alt: str) -> str:
    """A PNG as an ``<img>`` with its bytes inline (data URI); empty when the file is missing."""
    if not path.is_file():
        return ""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<figure><img alt="{escape(alt)}" src="data:image/png;base64,{data}"><figcaption>{escape(alt)}</figcaption></figure>'
