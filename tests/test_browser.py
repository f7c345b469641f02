"""The Gradio page in a real browser (Debian chromium driven by Playwright): ask, see recipe and command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import free_port, wait_until_serving

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def launch_chromium(playwright):
    """Debian chromium, headless, that can reach only 127.0.0.1 (never `playwright install`)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        ],
    )
ARTIFACTS = Path(__file__).parent / "artifacts"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (make browser)"),
]


@pytest.fixture()
def chat_server(index_settings):
    port = free_port()
    env = {**os.environ, "AUTORECIPE_DATA_DIR": str(index_settings.data_dir)}
    exe = Path(sys.executable).with_name("autorecipe")
    process = subprocess.Popen(
        [str(exe), "chat", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until_serving(f"http://127.0.0.1:{port}/", process)
    yield f"http://127.0.0.1:{port}/"
    process.terminate()
    process.wait(timeout=30)


def test_ask_in_the_browser_and_see_recipe_and_command(chat_server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(chat_server, wait_until="domcontentloaded")
        box = page.locator("textarea").first
        box.wait_for(timeout=60_000)
        box.fill("Qwen3 30B-A3B SFT on 16 H100")
        box.press("Enter")
        page.get_by_text("qwen3_30b_a3b_sft_config").first.wait_for(timeout=120_000)
        page.get_by_text("run_recipe.py").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(ARTIFACTS / "chat.png"))
        body = page.locator("body").inner_text()
        browser.close()
    assert "qwen3_30b_a3b_sft_config" in body
    assert "--nproc_per_node=8" in body and "--nnodes=2" in body
    assert "--dataset squad" in body or "--dataset" in body
    assert (ARTIFACTS / "chat.png").stat().st_size > 10_000
