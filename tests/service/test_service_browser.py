"""The web page, end to end in headless Debian chromium (selenium + chromedriver), against a live server.

Screenshots go to tests/artifacts/service/ (git-ignored).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer
from service_common import KEYS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chromium import needs_chromium, start_chromium

pytest.importorskip("fastapi")
pytest.importorskip("selenium")

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "service"
pytestmark = needs_chromium

CONTEXT = (
    "[S1] The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase.\n"
    "---\n"
    "[S2] Support is available by email on weekdays."
)
ANSWER = "The Pro plan costs $10 a month. Refunds are issued within 90 days of purchase."
UNSOURCED = "A dedicated account manager is assigned to every Pro customer."
MARKUP_KEY = "key-markup"
MARKUP_SCOPE = "<b>ops</b> & <img src=x onerror=alert(1)>"
"""A scope whose name is markup: the page prints it as text."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("browser-server")
    with LiveServer(workdir, api_keys={**KEYS, MARKUP_KEY: MARKUP_SCOPE},
                    extra_args=("--high-risk", r"\bdosage\b", "--review-threshold", "0.5", "--review-audit", "0")) as live:
        yield live


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def wait(driver, condition, timeout: float = 60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def idle(driver) -> None:
    """Wait until the page has no request in flight (app.js marks <body data-busy> while one runs)."""
    wait(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-busy") is None)


def open_page(browser, server: LiveServer, key: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server.url + "/")
    browser.execute_script("localStorage.clear()")
    browser.get(server.url + "/")
    field = browser.find_element(By.ID, "api-key")
    field.clear()
    field.send_keys(key)


def fill_and_verify(browser, *, question: str = "", answer: str = ANSWER) -> None:
    from selenium.webdriver.common.by import By

    for element_id, text in (("question", question), ("context", CONTEXT), ("answer", answer)):
        element = browser.find_element(By.ID, element_id)
        element.clear()
        if text:
            element.send_keys(text)
    browser.find_element(By.ID, "verify-btn").click()
    wait(browser, lambda d: d.find_element(By.ID, "result").is_displayed())
    idle(browser)


def open_tab(browser, name: str) -> None:
    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, f'#tabs button[data-tab="{name}"]').click()


def review_item(browser, request_id: str):
    """The request's item in the review queue, once the queue has loaded."""
    from selenium.webdriver.common.by import By

    open_tab(browser, "review")
    selector = f'.review-item[data-request-id="{request_id}"]'
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, selector))
    idle(browser)
    return browser.find_element(By.CSS_SELECTOR, selector)


def submitted(browser, request_id: str) -> None:
    """Wait until a review of the request has been sent and the queue reloaded without it."""
    from selenium.webdriver.common.by import By

    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, f'.review-item[data-request-id="{request_id}"]'))
    idle(browser)


def history_cells(browser, request_id: str) -> list[str]:
    from selenium.webdriver.common.by import By

    open_tab(browser, "history")
    selector = f'#history-table tr[data-request-id="{request_id}"]'
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, selector))
    idle(browser)
    return [c.text for c in browser.find_elements(By.CSS_SELECTOR, f"{selector} td")]


def colour(element) -> str:
    return element.value_of_css_property("background-color")


def test_page_highlights_claims_and_shows_the_evidence_span(browser, server: LiveServer) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, server, "key-alpha")
    fill_and_verify(browser, answer=f"{ANSWER} {UNSOURCED}")
    claims = browser.find_elements(By.CSS_SELECTOR, "#answer-view .claim")
    assert [c.get_attribute("data-verdict") for c in claims] == ["SUPPORTED", "CONTRADICTED", "UNRESOLVED"]
    assert [c.text for c in claims] == ["The Pro plan costs $10 a month.",
                                        "Refunds are issued within 90 days of purchase.", UNSOURCED]
    green, red, violet = ([int(v) for v in colour(c).split("(")[1].split(",")[:3]] for c in claims)
    assert green[1] > green[0] and green[1] > green[2]  # green: G dominates
    assert red[0] > red[1] and red[0] > red[2]  # red: R dominates
    assert violet[2] > violet[1] and violet[0] > violet[1]  # violet (unresolved): R and B over G
    assert len({tuple(green), tuple(red), tuple(violet)}) == 3
    contradicted = claims[1]
    assert browser.find_element(By.ID, "decision").text == "reject"
    assert not browser.find_element(By.ID, "tab-history").is_displayed()  # only the open tab shows
    assert not browser.find_element(By.ID, "warnings").is_displayed()  # nothing answer-level to warn about
    assert browser.find_element(By.ID, "review-flag").is_displayed()

    contradicted.click()
    detail = browser.find_element(By.ID, "claim-detail")
    wait(browser, lambda d: detail.is_displayed())
    assert browser.find_element(By.ID, "claim-verdict").text.startswith("CONTRADICTED")
    assert browser.find_element(By.ID, "claim-chunk-id").text == "S1"
    mark = browser.find_element(By.CSS_SELECTOR, "#chunk-view mark.evidence")
    assert mark.text == "Refunds are issued within 30 days of purchase."
    chunk_text = browser.find_element(By.ID, "chunk-view").text
    assert chunk_text.startswith("The Pro plan costs $10 a month.")

    # The score on the page is the one the API logged for this request.
    request_id = browser.find_element(By.ID, "request-id").text
    entry = httpx.get(f"{server.url}/v1/requests/{request_id}", headers={"X-API-Key": "key-alpha"}).json()
    assert browser.find_element(By.ID, "claim-score").text == f"{entry['claims'][1]['score']:.3f}"
    assert [c["verdict"] for c in entry["claims"]] == ["SUPPORTED", "CONTRADICTED", "UNRESOLVED"]
    browser.save_screenshot(str(ARTIFACTS / "check-claim-detail.png"))


def test_history_review_queue_and_feedback(browser, server: LiveServer) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, server, "key-alpha")
    fill_and_verify(browser, question="What dosage and refund terms apply?")
    request_id = browser.find_element(By.ID, "request-id").text

    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="history"]').click()
    row_selector = f'#history-table tr[data-request-id="{request_id}"]'
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, row_selector))
    idle(browser)
    browser.save_screenshot(str(ARTIFACTS / "history.png"))
    browser.find_element(By.CSS_SELECTOR, row_selector).click()
    wait(browser, lambda d: d.find_element(By.ID, "tab-check").is_displayed()
         and d.find_element(By.ID, "request-id").text == request_id)

    item = review_item(browser, request_id)
    assert "high-risk pattern" in item.find_element(By.CLASS_NAME, "reasons").text
    assert "below" in item.find_element(By.CLASS_NAME, "reasons").text
    item.find_element(By.TAG_NAME, "textarea").send_keys("Refunds are issued within 30 days.")
    browser.save_screenshot(str(ARTIFACTS / "review-queue.png"))
    item.find_element(By.CSS_SELECTOR, 'button[data-thumbs="down"]').click()
    submitted(browser, request_id)

    entry = httpx.get(f"{server.url}/v1/requests/{request_id}", headers={"X-API-Key": "key-alpha"}).json()
    assert [(f["thumbs"], f["correction"]) for f in entry["feedback"]] == [(-1, "Refunds are issued within 30 days.")]

    # The history now shows the request as reviewed, with its feedback.
    cells = history_cells(browser, request_id)
    assert cells[4] == "reviewed" and cells[5] == "up 0 · down 1 · 1 correction(s)"


def test_review_view_records_a_verdict_with_marked_claims_and_prints_claims_literally(browser,
                                                                                     server: LiveServer) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, server, "key-alpha")
    markup = "Support answers <b>every</b> email <img src=x onerror=alert(1)> within an hour."
    fill_and_verify(browser, question="What dosage and refund terms apply?", answer=f"{ANSWER} {markup}")
    request_id = browser.find_element(By.ID, "request-id").text
    logged = httpx.get(f"{server.url}/v1/requests/{request_id}", headers={"X-API-Key": "key-alpha"}).json()["claims"]

    item = review_item(browser, request_id)
    # Each claim as the log lists it, printed as text: the answer's markup is neither rendered nor run.
    shown = [c.text for c in item.find_elements(By.CSS_SELECTOR, ".review-claims .claim")]
    assert shown == [c["text"] for c in logged] and any("<b>every</b>" in text for text in shown)
    assert item.find_elements(By.CSS_SELECTOR, ".review-claims b, .review-claims img") == []
    save = item.find_element(By.CSS_SELECTOR, 'button[data-action="verdict"]')
    faithful = item.find_element(By.CSS_SELECTOR, 'input[data-faithful="true"]')
    assert not save.is_enabled()  # nothing chosen yet
    item.find_element(By.CSS_SELECTOR, 'input[data-claim-index="1"]').click()
    # Marking a claim makes the verdict "not faithful" and the "faithful" choice unavailable.
    assert item.find_element(By.CSS_SELECTOR, 'input[data-faithful="false"]').is_selected()
    assert not faithful.is_enabled() and save.is_enabled()
    item.find_element(By.TAG_NAME, "textarea").send_keys("Refunds are issued within 30 days.")
    browser.save_screenshot(str(ARTIFACTS / "review-verdict.png"))
    item.find_element(By.CSS_SELECTOR, 'button[data-thumbs="down"]').click()  # sends thumbs and the verdict at once
    submitted(browser, request_id)
    entry = httpx.get(f"{server.url}/v1/requests/{request_id}", headers={"X-API-Key": "key-alpha"}).json()
    assert [(f["thumbs"], f["correction"]) for f in entry["feedback"]] == [(-1, "Refunds are issued within 30 days.")]
    assert entry["verdict"]["faithful"] is False
    assert entry["verdict"]["unfaithful_claims"] == [{"index": 1, "text": logged[1]["text"]}]

    # A verdict alone: "faithful", saved without thumbs.
    open_tab(browser, "check")
    fill_and_verify(browser, question="What dosage applies?")
    second = browser.find_element(By.ID, "request-id").text
    item = review_item(browser, second)
    item.find_element(By.CSS_SELECTOR, 'input[data-faithful="true"]').click()
    item.find_element(By.CSS_SELECTOR, 'button[data-action="verdict"]').click()
    submitted(browser, second)
    entry = httpx.get(f"{server.url}/v1/requests/{second}", headers={"X-API-Key": "key-alpha"}).json()
    assert entry["feedback"] == [] and entry["verdict"]["faithful"] is True

    cells = history_cells(browser, request_id)
    assert (cells[4], cells[5]) == ("reviewed", "up 0 · down 1 · 1 correction(s) · not faithful (1 claim marked)")
    assert history_cells(browser, second)[4:6] == ["reviewed", "faithful"]


def test_review_view_shows_each_claims_evidence_with_what_it_lacks_and_takes_a_verdict_in_one_key(
        browser, server: LiveServer) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    open_page(browser, server, "key-alpha")
    claim_text = "Refunds are issued within <b>90</b> days of purchase by <i>phone</i>."
    fill_and_verify(browser, question="What dosage applies?", answer=claim_text)
    request_id = browser.find_element(By.ID, "request-id").text
    logged = httpx.get(f"{server.url}/v1/review", headers={"X-API-Key": "key-alpha"}).json()["items"]
    claim = next(i for i in logged if i["request_id"] == request_id)["claims"][0]
    assert claim["evidence"] == "Refunds are issued within 30 days of purchase." and claim["lacking"]

    item = review_item(browser, request_id)
    row = item.find_element(By.CSS_SELECTOR, ".review-claims li")
    # The evidence sentence beside the claim, and the claim's words the evidence lacks marked, all printed as text.
    assert row.find_element(By.CLASS_NAME, "evidence").text == f"{claim['chunk_id']}: {claim['evidence']}"
    marked = [m.text for m in row.find_elements(By.CSS_SELECTOR, "mark.lacking")]
    assert marked == [claim["text"][start:end] for start, end in claim["lacking"]]
    assert row.find_element(By.CSS_SELECTOR, ".claim").text == claim["text"]
    assert row.find_elements(By.CSS_SELECTOR, "b, i, img") == []
    browser.save_screenshot(str(ARTIFACTS / "review-evidence.png"))

    # One key each: select the item, mark its first claim (1), and give the verdict "not faithful" (n).
    item.find_element(By.CLASS_NAME, "teach").click()
    assert "current" in item.get_attribute("class")
    ActionChains(browser).send_keys("1").perform()
    ActionChains(browser).send_keys("n").perform()
    submitted(browser, request_id)
    entry = httpx.get(f"{server.url}/v1/requests/{request_id}", headers={"X-API-Key": "key-alpha"}).json()
    assert entry["verdict"]["faithful"] is False
    assert entry["verdict"]["unfaithful_claims"] == [{"index": 0, "text": claim["text"]}]


def test_page_shows_structured_errors_and_other_scopes_see_nothing(browser, server: LiveServer) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, server, "not-a-key")
    browser.find_element(By.ID, "context").send_keys(CONTEXT)
    browser.find_element(By.ID, "answer").send_keys(ANSWER)
    browser.find_element(By.ID, "verify-btn").click()
    error = browser.find_element(By.ID, "error")
    wait(browser, lambda d: error.is_displayed())
    assert "401" in error.text and "invalid_api_key" in error.text

    # Answer-level findings are shown above the answer: here a citation of a chunk that was not retrieved.
    open_page(browser, server, "key-beta")
    fill_and_verify(browser, answer="The Pro plan costs $10 a month [S9].")
    warnings = browser.find_element(By.ID, "warnings")
    assert warnings.is_displayed() and "S9" in warnings.text
    browser.save_screenshot(str(ARTIFACTS / "fabricated-citation.png"))

    open_page(browser, server, "key-gamma")
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="history"]').click()
    idle(browser)
    wait(browser, lambda d: d.find_element(By.ID, "tab-history").is_displayed())
    assert browser.find_elements(By.CSS_SELECTOR, "#history-table tbody tr") == []
    browser.save_screenshot(str(ARTIFACTS / "other-scope-history.png"))


def test_load_files_repair_and_eval_dashboard(browser, server: LiveServer, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, server, "key-alpha")
    pricing = tmp_path / "pricing.txt"
    pricing.write_text("The Pro plan costs $10 a month. Refunds are issued within 30 days of purchase.\n")
    support = tmp_path / "support.md"
    support.write_text("Support is available by email on weekdays.\n")
    answer = tmp_path / "answer.txt"
    answer.write_text(ANSWER + "\n")
    browser.find_element(By.ID, "context").clear()
    browser.find_element(By.ID, "context-files").send_keys(f"{pricing}\n{support}")
    wait(browser, lambda d: "[S2] Support" in d.find_element(By.ID, "context").get_attribute("value"))
    browser.find_element(By.ID, "answer").clear()
    browser.find_element(By.ID, "answer-file").send_keys(str(answer))
    wait(browser, lambda d: d.find_element(By.ID, "answer").get_attribute("value") == ANSWER)

    browser.find_element(By.ID, "repair-btn").click()
    repaired = browser.find_element(By.ID, "repaired")
    wait(browser, lambda d: repaired.is_displayed())
    idle(browser)
    text = browser.find_element(By.ID, "repaired-text").text
    assert "$10 a month" in text and "90 days" not in text
    verdicts = [c.get_attribute("data-verdict") for c in browser.find_elements(By.CSS_SELECTOR, "#answer-view .claim")]
    assert verdicts == ["SUPPORTED", "CONTRADICTED"]
    browser.save_screenshot(str(ARTIFACTS / "repair.png"))

    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="eval"]').click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#eval-cards .card[data-metric="faithfulness"]'))
    idle(browser)
    expected = httpx.get(f"{server.url}/v1/eval", headers={"X-API-Key": "key-alpha"}).json()["metrics"]
    shown = browser.find_element(By.CSS_SELECTOR, '#eval-cards .card[data-metric="n"] .value').text
    assert shown == str(expected["n"]) and expected["n"] >= 1
    faithfulness = browser.find_element(By.CSS_SELECTOR, '#eval-cards .card[data-metric="faithfulness"] .value').text
    assert faithfulness == f"{expected['faithfulness']:.3f}"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#eval-chart circle")) == min(expected["n"], 200)
    browser.find_element(By.ID, "eval-report-btn").click()
    frame = browser.find_element(By.ID, "eval-report")
    wait(browser, lambda d: frame.is_displayed())
    idle(browser)
    browser.save_screenshot(str(ARTIFACTS / "eval-dashboard.png"))


def test_eval_dashboard_shows_the_labels_section_as_the_api_gives_it(browser, server: LiveServer) -> None:
    from selenium.webdriver.common.by import By

    headers = {"X-API-Key": MARKUP_KEY}
    for i, (answer, faithful, task) in enumerate([(ANSWER, False, "qa"), (ANSWER, False, "qa"),
                                                  ("The Pro plan costs $10 a month.", True, "qa"),
                                                  ("Support is available by email on weekdays.", True, "summary")]):
        checked = httpx.post(f"{server.url}/v1/verify", headers=headers, timeout=60, json={
            "answer": answer, "task": task, "question": f"question {i}",
            "chunks": [{"id": "S1", "text": CONTEXT.split("---")[0]}, {"id": "S2", "text": CONTEXT.split("---")[1]}]})
        assert checked.status_code == 200, checked.text
        given = httpx.post(f"{server.url}/v1/feedback", headers=headers, timeout=60,
                           json={"request_id": checked.json()["request_id"], "faithful": faithful})
        assert given.status_code == 200, given.text
    labels = httpx.get(f"{server.url}/v1/eval", headers=headers, timeout=120).json()["labels"]
    assert labels["scope"] == MARKUP_SCOPE and labels["refit"]["status"] == "refused"
    assert labels["refit"]["refusal"]["code"] == "too_few_labels" and labels["refit"]["needed"]

    open_page(browser, server, MARKUP_KEY)
    open_tab(browser, "eval")
    wait(browser, lambda d: d.find_element(By.ID, "eval-labels").is_displayed())
    idle(browser)
    summary = browser.find_element(By.ID, "eval-labels-summary").text
    assert summary.startswith(f"scope {MARKUP_SCOPE}: 4 reviewed answers, 2 not faithful")
    assert browser.find_elements(By.CSS_SELECTOR, "#eval-labels b, #eval-labels img") == []
    tasks = {row.get_attribute("data-task"): [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
             for row in browser.find_elements(By.CSS_SELECTOR, "#eval-labels-tasks tbody tr")}
    assert tasks == {"qa": ["qa", "2", "1"], "summary": ["summary", "0", "1"]}
    refit = browser.find_element(By.ID, "eval-refit")
    assert refit.get_attribute("data-status") == "refused"
    assert "would refuse these labels (too_few_labels)" in refit.text
    for name, n in labels["refit"]["needed"].items():
        assert f"{n} more {name}" in refit.text
    pairs = {row.get_attribute("data-key"): [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
             for row in browser.find_elements(By.CSS_SELECTOR, "#eval-refit-thresholds tbody tr")}
    assert set(pairs) == {"all", "qa", "summary"} and pairs["all"][2] == "–"
    assert pairs["all"][1] == "{:.4f} / {:.4f}".format(*labels["refit"]["in_force"]["all"])
    assert not browser.find_element(By.ID, "eval-refit-command").is_displayed()
    browser.save_screenshot(str(ARTIFACTS / "eval-labels.png"))


def test_review_view_shows_a_failed_check_with_its_error_and_records_a_verdict(
        browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from live_server import free_port
    from selenium.webdriver.common.by import By

    # repair edits an escalated claim with the LLM; nothing listens on this loopback port, so the check fails (502)
    # after its answer was accepted, and is logged with it for review.
    monkeypatch.setenv("GROUNDWIRE_LLM_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("GROUNDWIRE_LLM_MODEL", "gone")
    monkeypatch.setenv("GROUNDWIRE_LLM_MAX_RETRIES", "0")
    answer = "The pump is serviced each spring by <b>the vendor</b>."
    chunks = [{"id": "S1", "text": "The pump runs at 40 litres per minute."},
              {"id": "S2", "text": "It is serviced every March."}]
    with LiveServer(tmp_path, api_keys=KEYS, extra_args=("--llm",)) as failing:
        failed = httpx.post(f"{failing.url}/v1/repair", headers={"X-API-Key": "key-alpha"}, timeout=60,
                            json={"question": "When is the pump serviced?", "answer": answer, "chunks": chunks})
        assert failed.status_code == 502 and failed.json()["error"]["code"] == "llm_unavailable", failed.text
        [logged] = httpx.get(f"{failing.url}/v1/requests", headers={"X-API-Key": "key-alpha"}).json()["requests"]
        request_id = logged["request_id"]

        open_page(browser, failing, "key-alpha")
        item = review_item(browser, request_id)
        failure = item.find_element(By.CLASS_NAME, "review-failure")
        assert failure.is_displayed() and "502 POST /v1/repair · llm_unavailable" in failure.text
        assert "failed after its answer was accepted" in item.find_element(By.CLASS_NAME, "reasons").text
        assert item.find_element(By.CLASS_NAME, "review-answer").text == f"Q: When is the pump serviced? · {answer}"
        assert item.find_elements(By.CSS_SELECTOR, ".review-answer b, .review-claims li") == []
        browser.save_screenshot(str(ARTIFACTS / "review-failed-check.png"))
        item.find_element(By.CSS_SELECTOR, 'input[data-faithful="false"]').click()
        item.find_element(By.CSS_SELECTOR, 'button[data-action="verdict"]').click()
        submitted(browser, request_id)
        entry = httpx.get(f"{failing.url}/v1/requests/{request_id}", headers={"X-API-Key": "key-alpha"}).json()
        assert entry["verdict"]["faithful"] is False and entry["verdict"]["unfaithful_claims"] == []


def test_docs_render_offline_under_their_csp(browser, server: LiveServer) -> None:
    # The browser has no network but this server: a CDN asset, or an inline script the CSP blocks, leaves no UI.
    from selenium.webdriver.common.by import By

    browser.get(server.url + "/docs")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"))
    assert browser.find_element(By.CSS_SELECTOR, ".swagger-ui .info .title").text.startswith("groundwire")
    assert browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path[data-path='/v1/verify']")
    blocked = [entry for entry in browser.get_log("browser") if "Content Security Policy" in entry["message"]]
    assert blocked == []
    browser.save_screenshot(str(ARTIFACTS / "docs.png"))


def test_page_shows_a_logged_chunk_id_with_control_characters_as_code_points(browser, server: LiveServer) -> None:
    """The service refuses control and bidi characters in ids (issue 58); a row logged before may still hold one, and
    the review view's "open" renders its stored response: the page shows such an id with its code points visible (a
    NUL not hidden, a right-to-left override not applied), and markup in it as text."""
    from selenium.webdriver.common.by import By

    open_page(browser, server, "key-alpha")
    chunks = [{"id": "S1", "text": "The Pro plan costs $10 a month."}]
    result = httpx.post(f"{server.url}/v1/verify", headers={"X-API-Key": "key-alpha"},
                        json={"answer": "The Pro plan costs $10 a month.", "chunks": chunks}).json()
    odd = "S\x00\u202e<b>1</b>"
    for chunk in result["chunks"]:
        chunk["id"] = odd
    for claim in result["report"]["claims"]:
        claim["chunk_id"] = odd
    browser.execute_script("render(arguments[0])", result)
    browser.find_element(By.CSS_SELECTOR, "#answer-view .claim").click()
    wait(browser, lambda d: d.find_element(By.ID, "claim-detail").is_displayed())
    assert browser.find_element(By.ID, "claim-chunk-id").text == "S\u27e8U+0000\u27e9\u27e8U+202E\u27e9<b>1</b>"
    assert browser.find_element(By.CSS_SELECTOR, "#chunk-view mark.evidence").text == chunks[0]["text"]
    assert browser.find_element(By.CSS_SELECTOR, 'link[rel="icon"]').get_attribute("href").endswith("/favicon.svg")


def _write_lexical_profile(accept_at: float, reject_at: float):
    import json

    def fill(folder: Path) -> None:
        (folder / "profile.json").write_text(json.dumps({
            "format": 1, "base_model": "lexical-baseline",
            "calibration": {"thresholds": [accept_at, reject_at], "task_thresholds": {}, "decide_at": None,
                            "combiner": None}}))
    return fill


def test_eval_dashboard_shows_the_profile_s_versions_replacements_and_refusals(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from groundwire.calibration import versions

    folder = tmp_path / "profiles" / "alpha"
    versions.install(folder, _write_lexical_profile(0.6, 0.2), by="adapt", reason="first fit",
                     labels={"human": 120, "judge": 0, "hallucinated": 50, "faithful": 70})
    rate = {"value": 0.05, "low": 0.01, "high": 0.12, "n": 40}
    versions.install(folder, _write_lexical_profile(0.55, 0.25), by="learn", reason="refit <b>held</b>",
                     labels={"human": 200, "judge": 30, "hallucinated": 80, "faithful": 150},
                     figures={"guard": {"held_answers": 61, "weighted": False,
                                        "candidate": {"false_accept": rate, "escalated": rate | {"value": 0.3}},
                                        "in_force": {"false_accept": rate | {"value": 0.08},
                                                     "escalated": rate | {"value": 0.5}}}})
    versions.record(folder, "refused", version=versions.current_version(folder), by="learn",
                    reason="escalates more than the profile in force",
                    figures={"held_answers": 70, "weighted": False, "candidate": {"escalated": rate | {"value": 0.6}},
                             "in_force": {"escalated": rate | {"value": 0.3}}},
                    labels={"human": 240, "judge": 0, "hallucinated": 90, "faithful": 150})
    with LiveServer(tmp_path, api_keys=KEYS, extra_args=("--profiles", str(tmp_path / "profiles"))) as live:
        open_page(browser, live, "key-alpha")
        open_tab(browser, "eval")
        wait(browser, lambda d: d.find_element(By.ID, "eval-profile").is_displayed())
        idle(browser)
        assert browser.find_element(By.ID, "eval-profile-summary").text.startswith(
            "scope alpha: version in force v0002 · 2 version(s) kept · 3 event(s)")
        rows = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                for row in browser.find_elements(By.CSS_SELECTOR, "#eval-profile-history tbody tr")]
        assert [row[1] for row in rows] == ["refused", "replaced", "installed"]  # newest first
        assert rows[1][2] == "v0001 → v0002" and rows[2][2] == "v0001"
        assert rows[1][4] == "200 human · 30 judge (80 not faithful, 150 faithful)"
        assert rows[1][5] == ("false accept 0.050 (0.080), false reject – (–), escalated 0.300 (0.500) "
                              "on 61 answers")
        assert rows[0][5].startswith("false accept – (–), false reject – (–), escalated 0.600 (0.300)")
        assert rows[1][6] == "refit <b>held</b>"  # printed literally
        assert browser.find_elements(By.CSS_SELECTOR, "#eval-profile b") == []
        browser.save_screenshot(str(ARTIFACTS / "eval-profile.png"))

        open_page(browser, live, "key-beta")  # a scope without a profile: no section, no error
        open_tab(browser, "eval")
        wait(browser, lambda d: d.find_element(By.ID, "eval-meta").text)
        idle(browser)
        assert not browser.find_element(By.ID, "eval-profile").is_displayed()
        assert not browser.find_element(By.ID, "error").is_displayed()
