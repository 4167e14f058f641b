// dreamer's memory page. Every text is set with textContent: memory is data, never markup.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
let pending = null; // the ids a shown forget preview would remove

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "on") node.addEventListener("click", value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
  }
  return node;
}

function say(text, error) {
  const box = document.getElementById("message");
  box.textContent = text;
  box.className = error ? "error" : "";
  box.setAttribute("role", error ? "alert" : "status");
}

async function call(path, body) {
  const options = { headers: { "X-Dream-Token": token } };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const answer = await fetch(path, options);
  const value = await answer.json();
  if (!answer.ok) throw new Error(value.error || answer.statusText);
  return value;
}

async function act(path, body, done) {
  try {
    const value = await call(path, body);
    say(done(value), false);
    await load();
    return value;
  } catch (error) {
    say("Error: " + error.message, true);
    return null;
  }
}

function button(label, action, onClick, danger) {
  return el("button", { type: "button", "data-action": action, class: danger ? "danger" : "",
    on: onClick, text: label });
}

function forgetButton(ids, label) {
  return button(label || "forget…", "forget", () => previewForget({ ids: ids }), true);
}

// --- MEMORY.md ---------------------------------------------------------------------------

function memoryLine(line) {
  const item = el("li", { class: line.kind, "data-line": String(line.n) });
  const text = el("span", { class: "text", text: line.text });
  item.append(text);
  if (line.kind !== "text") return item;
  item.append(
    button("edit", "edit", () => editLine(item, line)),
    button("sources", "sources", () => showSources(item, line)),
    button("pin", "pin-line", () => pinText(line.text)),
  );
  return item;
}

function editLine(item, line) {
  const input = el("input", { value: line.text, "aria-label": "Edit line " + line.n });
  const save = button("save", "save", async () => {
    await act("/api/edit", { line: line.n, before: line.text, after: input.value },
      () => "Line edited; the next dream keeps it.");
  });
  const cancel = button("cancel", "cancel", () => load());
  item.replaceChildren(input, save, cancel);
  input.focus();
}

async function showSources(item, line) {
  const old = item.querySelector("ul.sources");
  if (old) { old.remove(); return; }
  const list = el("ul", { class: "sources" });
  item.append(list);
  try {
    const hits = await call("/api/sources?line=" + line.n);
    if (!hits.length) list.append(el("li", { class: "meta", text: "no crystal near this line" }));
    for (const hit of hits) list.append(crystalItem(hit));
  } catch (error) {
    list.append(el("li", { class: "meta", text: "Error: " + error.message }));
  }
}

function crystalItem(hit) {
  return el("li", { "data-crystal": String(hit.id) },
    el("span", { class: "meta", text: "#" + hit.id + " " + hit.source + " · " + hit.lifecycle +
      " · " + (hit.created_at || "").slice(0, 16) + " " }),
    el("span", { class: "text", text: hit.text }), " ",
    button("pin", "pin", () => pinText(hit.text)),
    forgetButton([hit.id]));
}

// --- pins, search, forget ----------------------------------------------------------------

async function pinText(text) {
  await act("/api/pin", { text: text }, (value) => "Pinned #" + value.id + ".");
}

async function search(query) {
  const list = document.getElementById("search-results");
  try {
    const hits = await call("/api/search?q=" + encodeURIComponent(query));
    list.replaceChildren(...hits.map(crystalItem));
    if (!hits.length) list.append(el("li", { class: "meta", text: "nothing found" }));
    say(hits.length + " found for “" + query + "”.", false);
  } catch (error) {
    say("Error: " + error.message, true);
  }
}

async function previewForget(what) {
  try {
    const found = await call("/api/forget/preview", what);
    pending = found.crystals.map((c) => c.id);
    const section = document.getElementById("preview");
    document.getElementById("preview-crystals").replaceChildren(...found.crystals.map((c) =>
      el("li", { "data-crystal": String(c.id) },
        el("span", { class: "meta", text: "#" + c.id + " (" + c.lifecycle + ") " }), c.marked)));
    document.getElementById("preview-lines").replaceChildren(...(found.memory_lines.length
      ? found.memory_lines.map((line) => el("li", { text: line }))
      : [el("li", { class: "meta", text: "none" })]));
    document.getElementById("preview-notes").textContent =
      found.scratch_notes + " pending note(s) in the scratch go with them." +
      (found.many ? " That is many crystals: check each one." : "");
    section.hidden = false;
    section.scrollIntoView();
  } catch (error) {
    say("Error: " + error.message, true);
  }
}

async function confirmForget() {
  const ids = pending;
  if (!ids) return;
  const done = await act("/api/forget", { ids: ids }, (report) =>
    "Forgot " + report.forgotten.map((i) => "#" + i).join(", ") + ": " + report.memory_lines +
    " line(s) of MEMORY.md, " + report.scratch_notes + " pending note(s).");
  if (done) {
    // Gone from the page at once: search results and sources that showed them too.
    for (const id of ids) {
      document.querySelectorAll('[data-crystal="' + id + '"]').forEach((node) => node.remove());
    }
    closePreview();
  }
}

function closePreview() {
  pending = null;
  document.getElementById("preview").hidden = true;
  document.getElementById("preview-crystals").replaceChildren();
  document.getElementById("preview-lines").replaceChildren();
}

// --- the other sections ------------------------------------------------------------------

function diffBlock(diff) {
  const pre = el("pre", { class: "diff" });
  for (const line of diff.split("\n")) {
    const kind = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add"
      : line.startsWith("-") ? "del" : "";
    pre.append(el("span", { class: kind, text: line }));
  }
  return pre;
}

function renderCandidate(candidate) {
  const body = document.getElementById("candidate-body");
  if (!candidate) {
    body.replaceChildren(el("p", { class: "muted",
      text: "None waits. With memory.dream.review = true a dream writes one here." }));
    return;
  }
  if (candidate.problem) {
    body.replaceChildren(el("p", { text: candidate.problem }));
    return;
  }
  const back = el("input", { type: "checkbox", id: "return-notes" });
  body.replaceChildren(el("p", { text: "Written by dream #" + candidate.dream_id + " at " +
    candidate.written_at }));
  if (candidate.stale) {
    body.append(el("p", { class: "error", text:
      "MEMORY.md changed since this candidate was written: adopting it is refused." }));
  }
  body.append(
    diffBlock(candidate.diff || "(no difference)"),
    el("p", {},
      button("Adopt", "adopt", () => act("/api/adopt", {}, (v) =>
        "Adopted the candidate: MEMORY.md rewritten (journal #" + v.journal + ").")),
      " ",
      button("Discard", "discard", () => act("/api/discard",
        { return_notes: back.checked }, (v) => "Discarded the candidate of dream #" +
          v.dream_id + "." + (back.checked ? " " + v.returned + " notes wait." : "")), true),
      " ", el("label", {}, back, " put its notes back in front of the next dream")));
}

function renderHeld(held) {
  const list = document.getElementById("held-list");
  list.replaceChildren(...held.map((item) => el("li", { "data-crystal": String(item.id) },
    el("span", { class: "meta", text: "#" + item.id + " from " + (item.speaker || "?") + " (" +
      item.source + ") · " + (item.at || "").slice(0, 16) + " · " + item.reason + " " }),
    el("span", { class: "text", text: item.text }), " ",
    button("accept", "accept", () => act("/api/held/accept", { id: item.id },
      (v) => "Accepted #" + v.id + ": it may set rules now.")),
    forgetButton([item.id]))));
  if (!held.length) list.append(el("li", { class: "meta", text: "nothing held" }));
}

function renderRequests(requests) {
  const list = document.getElementById("request-list");
  list.replaceChildren(...requests.map((r) => el("li", {},
    el("span", { text: "“" + r.target + "” " }),
    el("span", { class: "meta", text: "(note #" + r.note_id + ", " +
      r.matches + " memories match) " }),
    button("preview forget", "forget-request",
      () => previewForget({ query: r.target }), true))));
  if (!requests.length) list.append(el("li", { class: "meta", text: "none waiting" }));
}

function renderJournal(dreams) {
  const box = document.getElementById("journal-list");
  box.replaceChildren(...dreams.map((d) => {
    const parts = [el("div", {}, el("strong", { text: "#" + d.id + " " + d.outcome }),
      el("span", { class: "meta", text: " " + (d.at || "") }), el("div", { text: d.reason }))];
    if (d.removed.length) {
      parts.push(el("div", { class: "meta", text: "Removed from MEMORY.md:" }),
        el("ul", {}, ...d.removed.map((line) => el("li", { text: line }))));
    }
    if (d.dropped.length) {
      parts.push(el("div", { class: "meta", text: "Dropped from the draft by a rule:" }),
        el("ul", {}, ...d.dropped.map((drop) => el("li", {}, drop.line + " ",
          el("span", { class: "meta", text: "(" + drop.section + ": " + drop.reason + ")" })))));
    }
    if (d.critiques.length) {
      parts.push(el("div", { class: "meta", text: "Why the guards held it back:" }),
        el("ul", {}, ...d.critiques.map((c) => el("li", { text: c }))));
    }
    if (d.left_pending) {
      parts.push(el("div", { class: "meta",
        text: d.left_pending + " note(s) did not fit and wait for the next dream." }));
    }
    for (const r of d.forget_requests) {
      parts.push(el("div", { class: "meta", text: "Forget request “" + r.target + "”: " +
        r.outcome + " (" + r.matches + " match(es))" }));
    }
    return el("div", { class: "dream" }, ...parts);
  }));
  if (!dreams.length) box.append(el("p", { class: "muted", text: "No dream yet." }));
}

function renderHealth(info) {
  const body = document.getElementById("health-body");
  const reasons = info.health.reasons;  // dream status --json's health object
  const lines = reasons.length ? reasons.map((h) => el("p", { class: "health-line",
    text: h })) : [el("p", { class: "muted", text: "Nothing needs attention." })];
  const rows = [["Next dream written by", info.synthesizer],
    ["Scratch", info.scratch_notes + " notes; " + info.pending_for_dream +
      " waiting for a dream (needs " + info.min_chunks_for_dream + ")"],
    ["Crystals", Object.entries(info.crystals).map(([k, v]) => v + " " + k).join(", ")],
    ["Last dream", info.last_dream ? "#" + info.last_dream.id + " " + info.last_dream.outcome +
      " at " + info.last_dream.started_at + " (" + info.last_dream.reason + ")" : "none yet"],
    ["Mood", info.mood]];
  for (const [period, spend] of Object.entries(info.spending || {})) {
    const caps = [];
    if (spend.usd_cap !== null) caps.push("$" + spend.usd_cap);
    if (spend.tokens_cap !== null) caps.push(spend.tokens_cap + " tokens");
    rows.push(["Spending this " + period, "$" + spend.usd.toFixed(4) + ", " + spend.tokens +
      " tokens; cap " + (caps.join(" and ") || "none") + " (resets " + spend.resets_at + ")"]);
  }
  const spent = info.llm_to_date;
  const read = spent.input_tokens + spent.cache_read_tokens + spent.cache_write_tokens;
  rows.push(["LLM to date", "$" + spent.cost_usd.toFixed(4) + " over " + spent.dreams +
    (spent.dreams === 1 ? " dream (" : " dreams (") + read + " input, " + spent.output_tokens +
    " output tokens)"]);
  for (const [job, state] of Object.entries(info.jobs)) {
    rows.push([job, state.enabled ? "last " + (state.last_at || "never") +
      (state.last_outcome ? " (" + state.last_outcome + ")" : "") : "disabled"]);
  }
  const list = el("dl", { class: "status" });
  for (const [key, value] of rows) list.append(el("dt", { text: key }), el("dd", { text: value }));
  body.replaceChildren(...lines, list);
}

async function load() {
  let data;
  try {
    data = await call("/api/overview");
  } catch (error) {
    say("Error: " + error.message, true);
    return;
  }
  document.getElementById("workspace").textContent = data.workspace;
  document.getElementById("sources-note").textContent = data.sources_note;
  document.getElementById("memory-lines").replaceChildren(...data.memory.map(memoryLine));
  document.getElementById("pin-list").replaceChildren(...data.pins.map((p) =>
    el("li", { "data-crystal": String(p.id) }, el("span", { class: "meta", text: "#" + p.id + " " }),
      el("span", { class: "text", text: p.text }), " ",
      button("unpin", "unpin", () => act("/api/unpin", { id: p.id }, (v) => "Unpinned #" + v.id +
        "."))),
  ));
  if (!data.pins.length) {
    document.getElementById("pin-list").append(el("li", { class: "meta", text: "no pins" }));
  }
  renderCandidate(data.candidate);
  renderHeld(data.held);
  renderRequests(data.forget_requests);
  renderJournal(data.journal);
  renderHealth(data.health);
  document.body.dataset.loaded = String(Date.now());
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    search(document.getElementById("search-query").value);
  });
  document.getElementById("pin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = document.getElementById("pin-text");
    if (await act("/api/pin", { text: input.value }, (v) => "Pinned #" + v.id + ".")) {
      input.value = "";
    }
  });
  document.getElementById("forget-confirm").addEventListener("click", confirmForget);
  document.getElementById("forget-cancel").addEventListener("click", closePreview);
  load();
});
