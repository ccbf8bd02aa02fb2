"""The playground page in a real browser: Debian's headless Chromium driven by Selenium against
``ragline serve`` (uvicorn on 127.0.0.1) with the northwind samples — ask, watch the answer stream in,
follow a citation to its source, search, and take a screenshot."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait
from typer.testing import CliRunner

from ragline.cli.app import app as cli
from ragline.cli.serve import build_app
from ragline.config import Settings
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
SCREENSHOT = "playground.png"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("home")
    samples = str(ROOT / "samples" / "northwind")
    result = CliRunner().invoke(cli, ["ingest", samples, "-n", "northwind", "--create", "--home", str(home)])
    assert result.exit_code == 0, result.output
    container = Container(Settings(home=home))
    server = uvicorn.Server(
        uvicorn.Config(
            build_app(ROOT / "functions", "local", container), host="127.0.0.1", port=0, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/"
    server.should_exit = True
    thread.join(timeout=10)
    container.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail("Debian's chromium and chromium-driver are missing: `make test` installs them")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,860"):
        options.add_argument(arg)
    b = webdriver.Chrome(service=Service(driver), options=options)
    yield b
    b.quit()


def test_ask_stream_cite_and_search(
    url: str, browser: webdriver.Chrome, tmp_path_factory: pytest.TempPathFactory
) -> None:
    wait = WebDriverWait(browser, 60)
    browser.get(url)
    wait.until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert Select(browser.find_element(By.ID, "namespace")).first_selected_option.text == "northwind"

    # Ask: the answer streams in, tool steps show as they happen, the run's usage at the end
    browser.find_element(By.ID, "question").send_keys("How often should I lubricate the chain?")
    browser.find_element(By.ID, "send").click()
    wait.until(lambda b: b.find_element(By.ID, "answer").get_attribute("data-state") == "done")
    answer = browser.find_element(By.ID, "answer").text
    assert "200 km" in answer or "200 kilometres" in answer, answer
    assert "<citation" not in answer  # citations are rendered as links, never as markup
    steps = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#steps li")]
    assert steps and steps[0].startswith("search:") and "hits" in steps[0]
    assert "exit answered" in browser.find_element(By.ID, "usage").text
    # and under it the answer's grounding: each cited sentence's label and score (issue 30 #1)
    grounding = browser.find_element(By.ID, "grounding")
    assert grounding.text.startswith("Grounding (verifier): score "), grounding.text
    labels = [li.get_attribute("data-label") for li in grounding.find_elements(By.TAG_NAME, "li")]
    assert labels and set(labels) <= {"supported", "contradicted", "not_enough_info"}
    # and the run's query plan, a collapsible tree: each turn and the searches it issued (issue 42 #3)
    tree = browser.find_element(By.ID, "plan-tree")
    assert tree.get_attribute("open") is None and tree.text.startswith("Query plan: agentic · ")
    tree.find_element(By.TAG_NAME, "summary").click()
    searches = tree.find_elements(By.CSS_SELECTOR, "details[data-step] li.search")
    assert len(searches) == len([s for s in steps if s.startswith("search:")])
    assert "hits" in searches[0].text and "in northwind" in searches[0].text

    # A citation links to its source, which carries its score breakdown
    citation = browser.find_element(By.CSS_SELECTOR, "#answer a.citation")
    target = citation.get_attribute("href").split("#", 1)[1]
    source = browser.find_element(By.ID, target)
    assert citation.get_attribute("data-id") in source.find_element(By.TAG_NAME, "h3").text
    citation.click()
    assert browser.execute_script("return location.hash") == "#" + target
    assert "fused" in source.find_element(By.CLASS_NAME, "scores").text
    shot = tmp_path_factory.mktemp("shots") / SCREENSHOT
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    if os.environ.get("RAGLINE_PLAYGROUND_SCREENSHOT"):  # the README's picture: docs/playground.png
        shutil.copy(shot, os.environ["RAGLINE_PLAYGROUND_SCREENSHOT"])

    # Search: hits with their semantic rank, BM25 rank and fused score
    browser.find_element(By.ID, "tab-search").click()
    browser.find_element(By.ID, "query").send_keys("tyre pressure")
    browser.find_element(By.ID, "go").click()
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#hits[data-state=done]")))
    hits = browser.find_elements(By.CSS_SELECTOR, "#hits .hit")
    assert hits and "maintenance-guide.html" in hits[0].text
    scores = hits[0].find_element(By.CLASS_NAME, "scores").text
    assert "semantic rank" in scores and "BM25 rank" in scores and "fused" in scores


def test_swagger_ui_renders_every_operation_offline(url: str, browser: webdriver.Chrome) -> None:
    browser.get(url + "docs")
    wait = WebDriverWait(browser, 60)
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".opblock")))
    operations = browser.find_elements(By.CSS_SELECTOR, ".opblock")
    assert len(operations) == operation_count(url) >= 16, len(operations)
    summaries = " ".join(op.text for op in operations)
    assert "/v1/chat" in summaries and "/v1/hosting-search" in summaries
    # every script and stylesheet came from this server
    sources = browser.execute_script(
        "return [...document.scripts].map(s => s.src)"
        ".concat([...document.querySelectorAll('link')].map(l => l.href))"
    )
    assert sources and all(s == "" or s.startswith(url) for s in sources), sources


def operation_count(url: str) -> int:
    """Every operation of the OpenAPI document the server gives Swagger UI."""
    import json
    from urllib.request import urlopen

    with urlopen(url + "openapi.json", timeout=30) as response:  # the local server (127.0.0.1)
        paths = json.load(response)["paths"]
    methods = {"get", "put", "post", "patch", "delete"}
    return sum(len(methods & set(item)) for item in paths.values())


def test_evaluation_jobs_are_listed_and_their_reports_open(url: str, browser: webdriver.Chrome) -> None:
    import json
    from urllib.request import Request, urlopen

    job = {
        "name": "chain care",
        "questions": [{"id": "c1", "question": "How often should I lubricate the chain?",
                       "reference": "Every 200 km.", "gold": ["maintenance-guide.html"]}],
        "namespaces": ["northwind"],
    }  # fmt: skip
    job["configs"] = [{"label": "A", "namespaces": job.pop("namespaces")}]
    sent = Request(url + "v1/evaluations", data=json.dumps(job).encode(), method="POST",
                   headers={"content-type": "application/json"})  # fmt: skip
    with urlopen(sent, timeout=30) as response:  # the local server (127.0.0.1)
        evaluation = json.load(response)["evaluationId"]
    wait = WebDriverWait(browser, 60)
    browser.get(url)
    wait.until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    browser.find_element(By.ID, "tab-evals").click()
    row = None
    for _ in range(60):  # the job runs on the server's threads; refresh until it completed
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#evaluations[data-state=done]")))
        rows = browser.find_elements(By.CSS_SELECTOR, "#evaluations tr")
        row = next((r for r in rows if "chain care" in r.text and "completed" in r.text), None)
        if row is not None:
            break
        browser.execute_script("document.getElementById('evaluations').dataset.state = ''")
        browser.find_element(By.ID, "refresh").click()
        time.sleep(0.5)
    assert row is not None and "1/1" in row.text and "reference-overlap" in row.text
    row.find_element(By.CSS_SELECTOR, "button.open").click()
    frame = browser.find_element(By.ID, "report")
    wait.until(lambda b: "chain care" in (frame.get_attribute("srcdoc") or ""))
    browser.switch_to.frame(frame)
    try:
        page = browser.find_element(By.TAG_NAME, "body").text
        assert "How often should I lubricate the chain?" in page and evaluation in page
    finally:
        browser.switch_to.default_content()
