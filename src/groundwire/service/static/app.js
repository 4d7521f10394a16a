// groundwire web page: plain DOM, no build step. User text is only ever set through textContent.
"use strict";

const $ = (id) => document.getElementById(id);
const keyInput = $("api-key");
keyInput.value = localStorage.getItem("groundwire.apiKey") || "";
keyInput.addEventListener("change", () => localStorage.setItem("groundwire.apiKey", keyInput.value.trim()));

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  const key = keyInput.value.trim();
  if (key) headers["Authorization"] = "Bearer " + key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json();
  if (!response.ok) {
    const err = data && data.error ? data.error : { status: response.status, message: response.statusText };
    throw new Error(`${err.status} ${err.code || ""}: ${err.message}`);
  }
  return data;
}

// Control characters and bidi controls, which the service refuses in ids now but a row logged before may hold:
// shown as their code points, so that a NUL is not hidden and a right-to-left override does not reorder the id.
const HIDDEN_IN_IDS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
function visibleId(id) {
  return String(id).replace(HIDDEN_IN_IDS, (ch) => `\u27e8U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? String(error.message || error) : "";
  box.hidden = !error;
}

async function guarded(fn) {
  showError(null);
  document.body.dataset.busy = "1";
  try {
    await fn();
  } catch (error) {
    showError(error);
  } finally {
    delete document.body.dataset.busy;
  }
}

// ---- tabs
const loaders = { history: loadHistory, review: loadReview, eval: () => loadEval() };
document.querySelectorAll("#tabs button").forEach((button) => {
  button.addEventListener("click", () => {
    document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b === button));
    document.querySelectorAll(".tab").forEach((tab) => { tab.hidden = tab.id !== "tab-" + button.dataset.tab; });
    const load = loaders[button.dataset.tab];
    if (load) guarded(load);
  });
});

function openTab(name) { document.querySelector(`#tabs button[data-tab="${name}"]`).click(); }

// ---- context: blocks separated by a line holding only ---; "[id] text" names a block
function parseContext(text) {
  const blocks = text.split(/^\s*---\s*$/m).map((b) => b.trim()).filter(Boolean);
  return blocks.map((block, i) => {
    const named = block.match(/^\[([^\]\s]+)\]\s*([\s\S]*)$/);
    return named ? { id: named[1], text: named[2].trim() } : { id: "S" + (i + 1), text: block };
  });
}

async function readFiles(files) {
  return Promise.all(Array.from(files).map((f) => f.text().then((text) => ({ name: f.name, text }))));
}

$("context-files").addEventListener("change", (event) => guarded(async () => {
  const files = await readFiles(event.target.files);
  const existing = parseContext($("context").value);
  const added = files.map((f, i) => `[S${existing.length + i + 1}] ${f.text.trim()}`);
  $("context").value = [$("context").value.trim(), ...added].filter(Boolean).join("\n---\n");
}));

$("answer-file").addEventListener("change", (event) => guarded(async () => {
  const [file] = await readFiles(event.target.files);
  if (file) $("answer").value = file.text.trim();
}));

function requestBody() {
  const body = { answer: $("answer").value, chunks: parseContext($("context").value) };
  const question = $("question").value.trim();
  if (question) body.question = question;
  return body;
}

$("check-form").addEventListener("submit", (event) => {
  event.preventDefault();
  guarded(async () => render(await api("POST", "/v1/verify", requestBody())));
});
$("repair-btn").addEventListener("click", () => guarded(async () => render(await api("POST", "/v1/repair", requestBody()))));

// ---- result rendering
let current = null;

function render(result) {
  current = result;
  const report = result.report;
  $("result").hidden = false;
  $("result").dataset.requestId = result.request_id;
  $("request-id").textContent = result.request_id;
  const route = report.route || report.decision;  // a request logged before the report's `decision` became `route`
  $("decision").textContent = route;
  $("decision").className = "badge " + route;
  $("answer-score").textContent = report.score.toFixed(2);
  $("review-flag").hidden = !(result.review && result.review.queued);
  renderWarnings(report);
  renderAnswer(report);
  $("claim-detail").hidden = true;
  const repaired = result.repaired;
  $("repaired").hidden = !repaired;
  if (repaired) {
    $("repaired-text").textContent = repaired.answer;
    $("repaired-note").textContent = repaired.summary || "";
  }
  refreshReviewCount().catch(showError);
}

function renderWarnings(report) {
  // Answer-level findings (fabricated citations, misplaced refusal token...) and warnings (language...).
  const notes = [...(report.findings || []).map((f) => `${f.check}: ${f.detail}`), ...(report.warnings || [])];
  const list = $("warnings");
  list.replaceChildren(...notes.map((note) => { const li = document.createElement("li"); li.textContent = note; return li; }));
  list.hidden = notes.length === 0;
}

function renderAnswer(report) {
  const view = $("answer-view");
  view.replaceChildren();
  const text = report.answer;
  const claims = report.claims.map((c, index) => ({ c, index })).sort((a, b) => a.c.claim.span[0] - b.c.claim.span[0]);
  let at = 0;
  for (const { c, index } of claims) {
    const [start, end] = c.claim.span;
    if (start < at) continue; // overlapping spans: the first one wins
    if (start > at) view.append(document.createTextNode(text.slice(at, start)));
    const span = document.createElement("span");
    span.className = "claim " + c.verdict;
    span.dataset.index = String(index);
    span.dataset.verdict = c.verdict;
    span.title = `${c.verdict} · score ${c.score.toFixed(2)}`;
    span.textContent = text.slice(start, end);
    span.addEventListener("click", () => showClaim(index, span));
    view.append(span);
    at = end;
  }
  if (at < text.length) view.append(document.createTextNode(text.slice(at)));
}

function showClaim(index, element) {
  document.querySelectorAll(".claim.selected").forEach((el) => el.classList.remove("selected"));
  element.classList.add("selected");
  const c = current.report.claims[index];
  $("claim-detail").hidden = false;
  $("claim-text").textContent = c.claim.text;
  $("claim-verdict").textContent = c.verdict + (c.decided_by ? ` (by ${c.decided_by})` : "");
  $("claim-score").textContent = c.score.toFixed(3);
  $("claim-route").textContent = c.route;
  $("claim-chunk-id").textContent = c.chunk_id ? visibleId(c.chunk_id) : "none";
  $("claim-note").textContent = [c.note, ...(c.checks || []).map((f) => `${f.check}: ${f.detail}`)].filter(Boolean).join(" · ");
  const view = $("chunk-view");
  view.replaceChildren();
  const chunk = (current.chunks || []).find((ch) => ch.id === c.chunk_id);
  if (!chunk) {
    view.textContent = c.evidence || "(no chunk supports this claim)";
    return;
  }
  const [start, end] = c.evidence_span || [0, 0];
  view.append(document.createTextNode(chunk.text.slice(0, start)));
  if (end > start) {
    const mark = document.createElement("mark");
    mark.className = "evidence";
    mark.textContent = chunk.text.slice(start, end);
    view.append(mark);
  }
  view.append(document.createTextNode(chunk.text.slice(Math.max(start, end))));
}

// ---- history
function when(iso) {
  return iso ? iso.slice(0, 19).replace("T", " ") + " UTC" : "";
}

function failureText(item) {
  return `${item.status} ${item.http_route} · ${item.error.code}: ${item.error.message}`;
}

function answerText(item) {
  const answer = item.answer || "";
  return (item.question ? "Q: " + item.question + " · " : "") + (answer.length > 140 ? answer.slice(0, 139) + "…" : answer);
}

function summaryCell(item) {
  return item.error ? failureText(item) : answerText(item);
}

function verdictText(verdict) {
  if (!verdict) return "";
  const marked = verdict.unfaithful_claims.length;
  return verdict.faithful ? "faithful" : "not faithful" + (marked ? ` (${marked} claim${marked > 1 ? "s" : ""} marked)` : "");
}

async function loadHistory() {
  const data = await api("GET", "/v1/requests?limit=100");
  const body = $("history-table").querySelector("tbody");
  body.replaceChildren();
  for (const item of data.requests) {
    const row = body.insertRow();
    row.dataset.requestId = item.request_id;
    const review = item.review.queued ? (item.feedback || item.verdict ? "reviewed" : "queued") : "";
    const feedback = [item.feedback ? `up ${item.feedback.up} · down ${item.feedback.down}` +
      (item.feedback.corrections ? ` · ${item.feedback.corrections} correction(s)` : "") : "",
                      verdictText(item.verdict)].filter(Boolean).join(" · ");
    for (const value of [when(item.created_at), item.endpoint, item.route || item.decision || "", item.score == null ? "" : item.score.toFixed(2),
                         review, feedback, summaryCell(item)]) {
      row.insertCell().textContent = value;
    }
    row.addEventListener("click", () => guarded(async () => {
      const entry = await api("GET", "/v1/requests/" + encodeURIComponent(item.request_id));
      if (!entry.response || !entry.response.report) throw new Error("this request has no report to show");
      openTab("check");
      render(entry.response);
    }));
  }
}
$("history-refresh").addEventListener("click", () => guarded(loadHistory));

// ---- review queue
function reviewPath() {
  const order = $("review-order").value;
  return "/v1/review" + (order ? "?order=" + encodeURIComponent(order) : "");
}

async function refreshReviewCount() {
  const data = await api("GET", reviewPath());
  $("review-count").textContent = data.total ? String(data.total) : "";
  return data;
}
$("review-order").addEventListener("change", () => guarded(loadReview));

// The claim's text with the words and figures its evidence lacks (`lacking`: [start, end) offsets) in <mark>s, built
// node by node: the text is only ever set through text nodes, never parsed as markup.
function claimWithGaps(claim) {
  const span = document.createElement("span");
  span.className = "claim " + claim.verdict;
  let at = 0;
  for (const [start, end] of claim.lacking || []) {
    if (start < at) continue;
    span.append(document.createTextNode(claim.text.slice(at, start)));
    const gap = document.createElement("mark");
    gap.className = "lacking";
    gap.textContent = claim.text.slice(start, end);
    span.append(gap);
    at = end;
  }
  span.append(document.createTextNode(claim.text.slice(at)));
  return span;
}

function teachText(item) {
  const t = item.teach;
  return `#${item.position} · ${item.reasons.join(", ")} · teach ${t.total.toFixed(2)} ` +
    `(few labels ${t.scarcity.toFixed(2)}, new source ${t.novelty})`;
}

// The item the keys act on: the first, or the one last clicked.
function currentReviewItem() {
  return document.querySelector("#review-list .review-item.current");
}

function selectReviewItem(box) {
  document.querySelectorAll("#review-list .review-item.current").forEach((b) => b.classList.remove("current"));
  if (box) {
    box.classList.add("current");
    box.scrollIntoView({ block: "nearest" });
  }
}

document.addEventListener("keydown", (event) => {
  if ($("tab-review").hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
                 (target.tagName === "INPUT" && target.type !== "checkbox" && target.type !== "radio"))) return;
  const box = currentReviewItem();
  if (!box) return;
  const key = event.key;
  let handled = true;
  if (key === "f" || key === "n") box.querySelector(`button[data-action="${key === "f" ? "faithful" : "not-faithful"}"]`).click();
  else if (key === "j") selectReviewItem(box.nextElementSibling || box);
  else if (key === "k") selectReviewItem(box.previousElementSibling || box);
  else if (/^[1-9]$/.test(key)) {
    const mark = box.querySelector(`input[data-claim-index="${Number(key) - 1}"]`);
    if (mark && !mark.disabled) mark.click();
    else handled = false;
  } else handled = false;
  if (handled) event.preventDefault();
});

async function loadReview() {
  const data = await refreshReviewCount();
  const patterns = data.patterns.length ? `, matching ${data.patterns.join(", ")}` : "";
  const threshold = data.threshold == null ? "" : `, scoring below ${data.threshold}`;
  $("review-rule").textContent = `Escalated answers, ${(data.audit_share * 100).toFixed(0)}% of the accepted and ` +
    `rejected ones as an audit${threshold}${patterns}, with a validator finding, or that failed after their answer ` +
    `was accepted; not yet reviewed. ${data.total} in all, in ${data.order} order` +
    (data.order === "teach" ? " (audit first, then the verdicts that would move the routing most)." : " (newest first).");
  const list = $("review-list");
  list.replaceChildren();
  if (!data.items.length) list.textContent = "Nothing to review.";
  for (const item of data.items) {
    const box = document.createElement("div");
    box.className = "review-item";
    box.dataset.requestId = item.request_id;
    box.dataset.reason = item.reason;
    box.addEventListener("click", () => selectReviewItem(box));
    const head = document.createElement("div");
    head.textContent = `${when(item.created_at)} · ${item.endpoint} · score ${item.score == null ? "?" : item.score.toFixed(2)}`;
    const why = document.createElement("div");
    why.className = "teach";
    why.textContent = teachText(item);
    const reasons = document.createElement("div");
    reasons.className = "reasons";
    reasons.textContent = item.review.reasons.join("; ");
    const text = document.createElement("div");
    text.className = "review-answer";
    text.textContent = answerText(item);
    // A check that failed after its answer was accepted: its error beside the answer it never routed.
    const failure = document.createElement("div");
    failure.className = "review-failure";
    failure.hidden = !item.error;
    if (item.error) failure.textContent = "failed: " + failureText(item);
    // The reviewer's verdict: faithful or not, and which claims are not (marking a claim means "not faithful"). Each
    // claim shows the evidence sentence it was checked against beside it.
    const claims = document.createElement("ol");
    claims.className = "review-claims";
    const marks = (item.claims || []).map((claim) => {
      const li = document.createElement("li");
      const label = document.createElement("label");
      const mark = document.createElement("input");
      mark.type = "checkbox";
      mark.dataset.claimIndex = String(claim.index);
      label.append(mark, " not faithful: ", claimWithGaps(claim));
      const evidence = document.createElement("span");
      evidence.className = "evidence";
      evidence.textContent = claim.evidence ? `${claim.chunk_id || "?"}: ${claim.evidence}` : "no evidence sentence";
      li.append(label, evidence);
      claims.append(li);
      return mark;
    });
    const verdict = document.createElement("div");
    verdict.className = "verdict";
    verdict.append("Verdict:");
    const choices = [["faithful", true], ["not faithful", false]].map(([label, faithful]) => {
      const wrap = document.createElement("label");
      const choice = document.createElement("input");
      choice.type = "radio";
      choice.name = "verdict-" + item.request_id;
      choice.dataset.faithful = String(faithful);
      wrap.append(choice, " " + label);
      verdict.append(wrap);
      return choice;
    });
    const [faithfulChoice, unfaithfulChoice] = choices;
    const correction = document.createElement("textarea");
    correction.rows = 2;
    correction.placeholder = "correction (optional)";
    const buttons = document.createElement("div");
    buttons.className = "buttons";
    const save = document.createElement("button");
    save.type = "button";
    save.textContent = "Save verdict";
    save.dataset.action = "verdict";
    save.disabled = true;
    const sync = () => {
      const marked = marks.some((m) => m.checked);
      if (marked) unfaithfulChoice.checked = true;
      faithfulChoice.disabled = marked;  // an answer with a claim marked is not faithful
      save.disabled = !choices.some((c) => c.checked);
    };
    [...marks, ...choices].forEach((input) => input.addEventListener("change", sync));
    // Every button sends what the reviewer filled in: thumbs (its own), the correction, the verdict when chosen (or
    // the one its button gives: `faithful`, the one-key verdicts).
    const submit = (thumbs, faithful) => guarded(async () => {
      const body = { request_id: item.request_id };
      if (thumbs) body.thumbs = thumbs;
      if (correction.value.trim()) body.correction = correction.value.trim();
      const chosen = choices.find((c) => c.checked);
      if (faithful !== undefined || chosen) {
        body.faithful = faithful !== undefined ? faithful : chosen.dataset.faithful === "true";
        const marked = marks.filter((m) => m.checked).map((m) => Number(m.dataset.claimIndex));
        if (!body.faithful && marked.length) body.unfaithful_claims = marked;
      }
      await api("POST", "/v1/feedback", body);
      await loadReview();
    });
    for (const [label, thumbs] of [["Thumbs up: correct", "up"], ["Thumbs down: wrong", "down"]]) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.dataset.thumbs = thumbs;
      b.addEventListener("click", () => submit(thumbs));
      buttons.append(b);
    }
    save.addEventListener("click", () => submit(null));
    buttons.append(save);
    // One key, one verdict: f and n (keydown above) press these.
    for (const [label, action, faithful] of [["Faithful (f)", "faithful", true], ["Not faithful (n)", "not-faithful", false]]) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.dataset.action = action;
      b.addEventListener("click", () => {
        if (faithful && marks.some((m) => m.checked)) {
          showError(new Error("a claim is marked not faithful: unmark it, or give the verdict not faithful (n)"));
          return;
        }
        submit(null, faithful);
      });
      buttons.append(b);
    }
    const open = document.createElement("button");
    open.type = "button";
    open.textContent = "open";
    open.addEventListener("click", () => guarded(async () => {
      const entry = await api("GET", "/v1/requests/" + encodeURIComponent(item.request_id));
      openTab("check");
      if (entry.response && entry.response.report) {
        render(entry.response);
        return;
      }
      // A check that failed has no report: its question, answer and context go into the form, to read or check again.
      $("result").hidden = true;
      $("question").value = entry.question || "";
      $("answer").value = entry.answer || "";
      $("context").value = (entry.chunks || []).map((c) => `[${c.id}] ${c.text}`).join("\n---\n") || entry.context || "";
    }));
    buttons.append(open);
    box.append(head, why, reasons, failure, text, claims, verdict, correction, buttons);
    list.append(box);
  }
  selectReviewItem(list.querySelector(".review-item"));
}

// ---- eval loop dashboard
function fmt(value) {
  return typeof value === "number" ? (Number.isInteger(value) ? String(value) : value.toFixed(3)) : value == null ? "–" : String(value);
}

async function loadEval(record = false) {
  const data = record ? await api("POST", "/v1/eval/runs") : await api("GET", "/v1/eval");
  $("eval-meta").textContent = `rolling sample of ${data.meta.sample_size} logged requests · release ${data.meta.release}` +
    ` · ${data.history.length} recorded run(s)` + (data.meta.evidence?.reason ? ` · ${data.meta.evidence.reason}` : "");
  const cards = $("eval-cards");
  cards.replaceChildren();
  for (const [name, value] of Object.entries(data.metrics)) {
    if (value !== null && typeof value === "object") continue; // cards show scalars only
    const card = document.createElement("div");
    card.className = "card";
    card.dataset.metric = name;
    const v = document.createElement("div");
    v.className = "value";
    v.textContent = fmt(value);
    const n = document.createElement("div");
    n.className = "name";
    n.textContent = name.replaceAll("_", " ");
    card.append(v, n);
    cards.append(card);
  }
  drawSeries(data.series);
  fillTable($("eval-releases"), data.releases);
  const failures = $("eval-failures").querySelector("tbody");
  failures.replaceChildren();
  for (const f of data.failure_examples) {
    const row = failures.insertRow();
    for (const value of [f.id, f.failure, f.release || "", (f.unsupported || []).join(" | ")]) row.insertCell().textContent = value;
  }
  showLabels(data.labels);
  await showProfile();
}

// The reviewers' labels and what `groundwire adapt --from-log` would fit on them (or its refusal), as the CLI's
// eval-loop report shows them. Every text is set as textContent: a scope, a task or a message is never markup.
function showLabels(labels) {
  const section = $("eval-labels");
  section.hidden = !labels;
  if (!labels) return;
  const c = labels.counts, r = labels.refit;
  $("eval-labels-summary").textContent = `scope ${labels.scope}: ${c.labelled} reviewed answers, ${c.not_faithful} not ` +
    `faithful (${c.claim_marked} with claims marked), ${c.faithful} faithful` +
    (c.unreadable ? ` · ${c.unreadable} reviewed requests make no row` : "") +
    (c.judge && c.judge.labelled ? ` · judge labels, counted apart and not in this refit: ${c.judge.labelled} ` +
      `(${c.judge.not_faithful} not faithful, ${c.judge.faithful} faithful)` : "");
  const tasks = $("eval-labels-tasks").querySelector("tbody");
  tasks.replaceChildren();
  for (const [task, tally] of Object.entries(c.by_task)) {
    const row = tasks.insertRow();
    row.dataset.task = task;
    for (const value of [task, tally.not_faithful, tally.faithful]) row.insertCell().textContent = String(value);
  }
  const t = r.targets;
  const head = `groundwire adapt (false accept ${t.false_accept}, false reject ${t.false_reject}, confidence ${t.confidence})`;
  const refit = $("eval-refit");
  refit.dataset.status = r.status;
  const needed = Object.entries(r.needed || {}).map(([name, n]) => `${n} more ${name}`).join(" and ");
  refit.textContent = {
    refused: `${head} would refuse these labels (${r.refusal?.code}): ${r.refusal?.message}` +
      (needed ? ` It needs ${needed} labelled answers with a checkable claim.` : ""),
    not_computed: `${head}: not computed (${r.refusal?.code}): ${r.refusal?.message}`,
    unchanged: `${head} would fit the thresholds in force: no refit needed.`,
    would_change: `${head} would change the thresholds in force` + (r.combiner_changes ? " and refit the combiner." : "."),
  }[r.status] || r.status;
  if (needed && (r.status === "unchanged" || r.status === "would_change")) {  // a one-sided refit (calibration.sides)
    refit.textContent += ` One-sided: the other threshold stays the base model's until ${needed} labelled answers ` +
      "with a checkable claim.";
  }
  const pairs = $("eval-refit-thresholds");
  const body = pairs.querySelector("tbody");
  body.replaceChildren();
  const pair = (p) => p ? `${p[0].toFixed(4)} / ${p[1].toFixed(4)}` : "–";
  for (const [key, now] of Object.entries(r.in_force)) {
    const row = body.insertRow();
    row.dataset.key = key;
    for (const value of [key === "all" ? "all (pooled)" : key, pair(now), pair(r.thresholds?.[key])]) {
      row.insertCell().textContent = value;
    }
  }
  pairs.hidden = !Object.keys(r.in_force).length;
  const validation = r.profile?.validation;
  const rates = (v) => ["false_accept", "false_reject", "escalated"]
    .map((name) => `${name.replaceAll("_", " ")} ${fmt(v[name].value)}`).join(", ");
  $("eval-refit-rates").textContent = validation ? `cross-validated within the labels (${validation.folds} folds by ` +
    `source document): refit ${rates(validation.profile)}; shipped routing ${rates(validation.shipped)}` : "";
  const command = $("eval-refit-command");
  command.textContent = r.status === "would_change" ? r.command : "";
  command.hidden = r.status !== "would_change";
}
// The scope's domain profile under `serve --profiles`: the version in force and its history, newest first (what
// `groundwire adapt history` prints). A scope without a profile (404) shows nothing. Texts are set as textContent.
async function showProfile() {
  const section = $("eval-profile");
  let state;
  try {
    state = await api("GET", "/v1/profile");
  } catch (error) {
    if (String(error.message).startsWith("404")) { section.hidden = true; return; }
    throw error;
  }
  section.hidden = false;
  const inForce = state.version ?? "– (a folder written before versions)";
  $("eval-profile-summary").textContent = `scope ${state.scope}: version in force ${inForce} · ` +
    `${state.versions.length} version(s) kept · ${state.history.length} event(s)`;
  const body = $("eval-profile-history").querySelector("tbody");
  body.replaceChildren();
  const labels = (l) => l ? `${l.human ?? 0} human · ${l.judge ?? 0} judge (${l.hallucinated ?? "?"} not faithful, ` +
    `${l.faithful ?? "?"} faithful)` : "";
  const rate = (r) => r && r.value != null ? r.value.toFixed(3) : "–";
  const held = (f) => {
    const g = f?.guard ?? f;  // a replacement records {guard, cross_validated}; a refusal the guard's figures alone
    if (!g?.candidate) return "";
    return ["false_accept", "false_reject", "escalated"].map((name) =>
      `${name.replaceAll("_", " ")} ${rate(g.candidate?.[name])} (${rate(g.in_force?.[name])})`).join(", ") +
      ` on ${g.held_answers} answers`;
  };
  for (const entry of [...state.history].reverse()) {
    const row = body.insertRow();
    row.dataset.event = entry.event;
    const version = entry.previous && entry.previous !== entry.version ? `${entry.previous} → ${entry.version}` : (entry.version ?? "–");
    for (const value of [entry.time, entry.event, version, entry.by ?? "", labels(entry.labels),
                         held(entry.figures), entry.reason ?? ""]) {
      row.insertCell().textContent = String(value);
    }
  }
}

$("eval-refresh").addEventListener("click", () => guarded(() => loadEval()));
$("eval-record").addEventListener("click", () => guarded(() => loadEval(true)));
$("eval-report-btn").addEventListener("click", () => guarded(async () => {
  const headers = {};
  const key = keyInput.value.trim();
  if (key) headers["Authorization"] = "Bearer " + key;
  const response = await fetch("/v1/eval/report", { headers });
  if (!response.ok) throw new Error(`${response.status}: ${(await response.json()).error.message}`);
  const frame = $("eval-report");
  frame.srcdoc = await response.text();
  frame.hidden = false;
}));

function fillTable(table, rows) {
  const columns = rows.length ? Object.keys(rows[0]) : [];
  const head = table.querySelector("thead");
  head.replaceChildren();
  const hr = head.insertRow();
  columns.forEach((c) => { const th = document.createElement("th"); th.textContent = c.replaceAll("_", " "); hr.append(th); });
  const body = table.querySelector("tbody");
  body.replaceChildren();
  for (const item of rows) {
    const row = body.insertRow();
    columns.forEach((c) => { row.insertCell().textContent = fmt(item[c]); });
  }
}

function drawSeries(series) {
  const svg = $("eval-chart");
  svg.replaceChildren();
  if (!series.length) return;
  const ns = "http://www.w3.org/2000/svg";
  const w = 600, h = 180, pad = 10;
  const x = (i) => series.length === 1 ? w / 2 : pad + (i * (w - 2 * pad)) / (series.length - 1);
  const y = (v) => h - pad - v * (h - 2 * pad);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", series.map((p, i) => `${x(i)},${y(p.score)}`).join(" "));
  svg.append(line);
  series.forEach((p, i) => {
    const dot = document.createElementNS(ns, "circle");
    dot.setAttribute("cx", x(i));
    dot.setAttribute("cy", y(p.score));
    dot.setAttribute("r", 3);
    const title = document.createElementNS(ns, "title");
    title.textContent = `${p.created_at}: ${p.score.toFixed(2)}`;
    dot.append(title);
    svg.append(dot);
  });
}
