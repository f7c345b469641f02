"""The Gradio page in a real browser (Debian chromium driven by Playwright), at 1280 and 390 px wide, with
one English and one Chinese answer: the top of the answer is in view, no table cell wraps an identifier,
nothing scrolls sideways, the labels follow the answer's language, every download parses, an empty message
sends nothing and Clear empties the side panel. Screenshots land in the test's tmp dir; one English 1280-px
shot is copied to the README's `docs/screenshot.png` when AUTORECIPE_SCREENSHOT is set."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assistant.messages import words
from tests.conftest import free_port, wait_until_serving
from tests.test_browser import CHROMIUM, launch_chromium
from tests.test_gradio_panel import INTERNAL_WORDING
from ui.gradio_app import SCROLL_TO_ANSWER_TOP

ROOT = Path(__file__).resolve().parent.parent
README_SHOT = ROOT / "docs" / "screenshot.png"
WIDTHS = (1280, 390)
QUESTIONS = {  # one answer with overrides and a Slurm script; one in Chinese on two nodes
    "en": ("llama3 8b pretrain on 4 H100 with seq length 16384", "llama3_8b"),
    "zh": ("在16张H100上对Qwen3-30B-A3B做SFT", "qwen3_30b_a3b_sft_config"),
}
ANSWER_SECONDS = 600_000  # ms; the first answer of a fresh server on a loaded machine; not a speed assertion

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (make browser)"),
]

# The newest answer bubble, its scroll box, and what the layout checks measure, in one round trip.
MEASURE = """
() => {
  const bots = document.querySelectorAll('.ar-chat .bot-row');
  const last = bots[bots.length - 1];
  const bubble = last ? last.querySelector('.message') || last : null;
  let box = bubble ? bubble.parentElement : null;
  while (box && box.scrollHeight <= box.clientHeight + 1) box = box.parentElement;
  const r = bubble ? bubble.getBoundingClientRect() : null;
  const b = box ? box.getBoundingClientRect() : {top: 0, bottom: innerHeight};
  const cells = [...document.querySelectorAll('.ar-chat td code, .ar-chat th code')];
  const tables = [...document.querySelectorAll('.ar-chat table')];
  return {
    bots: bots.length,
    top: r && r.top, boxTop: Math.max(b.top, 0), boxBottom: Math.min(b.bottom, innerHeight),
    wrappedCodes: cells.filter(c => c.getClientRects().length !== 1).map(c => c.textContent),
    codesInTables: cells.length,
    pageOverflow: document.documentElement.scrollWidth - innerWidth,
    tableOverflow: Math.max(0, ...tables.map(t => t.getBoundingClientRect().right - innerWidth)),
    wideBlocks: [...document.querySelectorAll('.ar-chat pre')]
      .filter(p => p.scrollWidth > p.clientWidth + 1).length,
    markers: [...document.querySelectorAll('.ar-chat sup.ar-cite')].map(s => [s.textContent, s.title.length]),
    expanders: document.querySelectorAll('.ar-chat details').length,
    placeholder: (document.querySelector('.ar-input textarea') || {}).placeholder,
    codesOutOfBubble: [...document.querySelectorAll('.ar-chat .bot-row code')].filter(c => {
      const m = c.closest('.message') || c.closest('.bot-row');
      return c.getBoundingClientRect().right > m.getBoundingClientRect().right + 1;
    }).map(c => c.textContent.slice(0, 60)),
    text: document.body.innerText,
  };
}
"""


@pytest.fixture(scope="module")
def chat_server(index_settings):
    port = free_port()
    env = {**os.environ, "AUTORECIPE_DATA_DIR": str(index_settings.data_dir), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "ui.cli", "chat", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/", process, seconds=300)
        yield f"http://127.0.0.1:{port}/"
    finally:  # also when the server never came up: nothing is left running
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


def ask_on_page(page, question: str, expected: str) -> None:
    """Type the question, send it, wait until the side panel holds the answer's downloads (its last step)."""
    box = page.locator(".ar-input textarea")
    box.fill(question)
    box.press("Enter")
    page.locator(".ar-files a[download]").first.wait_for(timeout=ANSWER_SECONDS)
    assert expected in page.locator(".ar-chat .bot-row").last.inner_text()
    page.wait_for_timeout(800)  # the scroll-to-top runs after the last render


def check_layout(page, width: int) -> dict:
    seen = page.evaluate(MEASURE)
    assert seen["boxTop"] - 2 <= seen["top"] < seen["boxBottom"] - 40, f"answer top not in view at {width}px"
    assert seen["wrappedCodes"] == [], f"identifiers wrapped in table cells at {width}px"
    assert seen["pageOverflow"] <= 1 and seen["tableOverflow"] <= 1, f"sideways scroll at {width}px"
    assert seen["wideBlocks"] == 0, f"a code block scrolls sideways at {width}px"
    assert seen["codesOutOfBubble"] == [], f"code runs out of the answer bubble at {width}px"
    return seen


def check_downloads(page, tmp_path: Path) -> set[str]:
    kinds = set()
    for link in page.locator(".ar-files a[download]").all():
        response = page.request.get(link.get_attribute("href"))
        assert response.ok
        name, body = link.get_attribute("download") or link.inner_text(), response.text()
        if name.endswith(".sbatch"):
            script = tmp_path / name
            script.write_text(body)
            subprocess.run(["bash", "-n", str(script)], check=True)
            assert "#SBATCH" in body
        elif name.endswith(".yaml"):
            assert isinstance(yaml.safe_load(body), dict)
        elif name.endswith(".json"):
            assert json.loads(body)["recipe"]["name"]
        elif name.endswith(".overrides.txt"):
            assert all("=" in line for line in body.splitlines())
        else:
            pytest.fail(f"unexpected download {name}")
        kinds.add(name.rsplit(".", 1)[-1])
    return kinds


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_answer_page_at_both_widths(chat_server, browser, lang, tmp_path) -> None:
    question, expected = QUESTIONS[lang]
    page = browser.new_page(viewport={"width": WIDTHS[0], "height": 900}, accept_downloads=True)
    page.goto(chat_server, wait_until="domcontentloaded")
    page.locator(".ar-input textarea").wait_for(timeout=60_000)
    page.locator(".ar-input textarea").press("Enter")  # an empty message sends nothing
    page.wait_for_timeout(500)
    assert page.locator(".ar-chat .user-row").count() == 0
    ask_on_page(page, question, expected)
    shots = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900 if width > 500 else 844})
        page.wait_for_timeout(600)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.locator(".ar-chat").scroll_into_view_if_needed()
        page.evaluate(SCROLL_TO_ANSWER_TOP)
        page.wait_for_timeout(300)
        shots[width] = tmp_path / f"chat-{lang}-{width}.png"
        page.screenshot(path=str(shots[width]))  # before the checks, so a failing layout can be looked at
        seen = check_layout(page, width)
    assert seen["markers"] and all(length > 20 for _, length in seen["markers"])  # `[n]` with its passage
    assert seen["expanders"] == len(seen["markers"])  # each shown passage is marked once in the text
    assert seen["text"].count(words(lang, "section.sources")) == 1  # the sources once, not twice
    for key in ("recommendation", "command", "version"):
        assert words(lang, f"ui.{key}") in seen["text"], key
    assert seen["placeholder"] == words(lang, "ui.placeholder")
    assert not INTERNAL_WORDING.search(seen["text"])
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    if lang == "en":
        assert check_downloads(page, tmp_path) == {"sbatch", "txt", "yaml", "json"}
        if os.environ.get("AUTORECIPE_SCREENSHOT"):
            shutil.copyfile(shots[1280], README_SHOT)
    else:
        assert check_downloads(page, tmp_path) >= {"sbatch", "json"}
    page.locator(".ar-chat button[aria-label='Clear']").click()
    page.get_by_text(words(lang, "ui.no_recipe_yet").strip("_")).first.wait_for(timeout=10_000)
    assert page.locator(".ar-files a[download]").count() == 0
    assert page.locator(".ar-chat .bot-row").count() == 0
    page.close()
    assert all(shot.stat().st_size > 10_000 for shot in shots.values())
