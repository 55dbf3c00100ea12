// The review page: plain DOM. Every piece of a record goes in as a text node (textContent, never
// innerHTML), so model-written markup is shown, never run; highlighting wraps tokens in spans made here.

const config = JSON.parse(document.getElementById("config").textContent);
const token = new URLSearchParams(location.search).get("token");
const $ = (id) => document.getElementById(id);
const CLIP = 20000;
const state = {
  stage: config.stage,
  kind: "o",
  filter: {},
  sort: "position",
  page: 0,
  size: 50,
  rows: [],
  current: -1,
  queueAt: -1,
  view: null,
  filtered: 0,
};
$("reviewer").value = localStorage.getItem("reviewer") || config.reviewer;
$("reviewer").addEventListener("change", () => localStorage.setItem("reviewer", $("reviewer").value));

async function api(path, init = {}) {
  const headers = { ...(init.headers || {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) };
  const res = await fetch(path, { ...init, headers });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function option(value, label = value) {
  const node = el("option", null, label);
  node.value = value;
  return node;
}

function notice(text) {
  $("notice").hidden = !text;
  $("notice").textContent = text || "";
}

const KEYWORDS = new Set(
  (
    "def class return if elif else for while in import from as with try except finally raise lambda yield " +
    "pass break continue and or not is None True False function const let var new this typeof instanceof " +
    "public private protected static void int long double float char bool boolean string struct enum interface " +
    "package func go defer chan map range type fn let mut impl trait pub use match self Self null nil true false " +
    "switch case default do throw throws catch extends implements namespace using include template typename auto " +
    "select from where insert update delete create table values begin end then local echo fi done esac"
  ).split(" "),
);
const HASH_COMMENTS = new Set(["python", "ruby", "shell", "bash", "r", "perl", "yaml", "toml", "powershell"]);

/** `code` as text nodes and token spans; very long code stays plain text. */
function highlight(code, lang) {
  const pre = el("pre", `code lang-${lang}`);
  if (code.length > 100000) {
    pre.textContent = code;
    return pre;
  }
  const comment = HASH_COMMENTS.has(lang)
    ? "#[^\\n]*"
    : lang === "sql"
      ? "--[^\\n]*"
      : "\\/\\*[\\s\\S]*?\\*\\/|\\/\\/[^\\n]*";
  const pattern = new RegExp(
    `(${comment})|("(?:[^"\\\\\\n]|\\\\.)*"|'(?:[^'\\\\\\n]|\\\\.)*'|\`(?:[^\`\\\\]|\\\\.)*\`)|\\b(\\d+(?:\\.\\d+)?)\\b|\\b([A-Za-z_]\\w*)\\b`,
    "g",
  );
  let at = 0;
  for (const m of code.matchAll(pattern)) {
    const kind = m[1] ? "c" : m[2] ? "s" : m[3] ? "n" : KEYWORDS.has(m[4]) ? "k" : null;
    if (!kind) continue;
    if (m.index > at) pre.append(document.createTextNode(code.slice(at, m.index)));
    pre.append(el("span", `tok-${kind}`, m[0]));
    at = m.index + m[0].length;
  }
  if (at < code.length) pre.append(document.createTextNode(code.slice(at)));
  return pre;
}

/** A text shown clipped, with a button for the rest. */
function clipped(text, make = (t) => el("pre", null, t), limit = CLIP) {
  if (text.length <= limit) return make(text);
  const box = el("div");
  const more = el("button", "more", `show all (${text.length.toLocaleString()} characters)`);
  more.type = "button";
  more.addEventListener("click", () => box.replaceChildren(make(text)));
  box.append(make(`${text.slice(0, limit)}…`), more);
  return box;
}

// a block's output starts this short; validate kept at most 4096 characters of each stream
const OUTPUT_CLIP = 600;

/** A stream of a block's run, labelled, clipped with a button for the rest validate kept. */
function stream(name, result) {
  const text = result[name];
  if (typeof text !== "string") return null;
  const cut = result[`${name}_cut`];
  const label = `${name}${typeof cut === "number" ? ` (${cut.toLocaleString()} characters cut by validate)` : ""}`;
  return el("div", `stream ${name}`, el("div", "label", label), clipped(text, undefined, OUTPUT_CLIP));
}

/** A message's text and its fenced code blocks, in order (the k-th fence is block k). */
function segments(content) {
  const out = [];
  const lines = content.replace(/\r\n?/g, "\n").split("\n");
  let text = [];
  let code = null;
  for (const line of lines) {
    if (code) {
      const close = /^[ \t]*(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close && close[1][0] === code.fence[0] && close[1].length >= code.fence.length) {
        out.push({ code: code.lines.join("\n") });
        code = null;
      } else code.lines.push(line);
      continue;
    }
    const open = /^[ \t]*(`{3,}|~{3,})[ \t]*([^`\n]*?)[ \t]*$/.exec(line);
    if (open) {
      if (text.length) out.push({ text: text.join("\n") });
      text = [];
      code = { fence: open[1], lines: [] };
    } else text.push(line);
  }
  if (code) out.push({ code: code.lines.join("\n") });
  if (text.length) out.push({ text: text.join("\n") });
  return out;
}

function resultBox(result) {
  if (!result) return el("div", "result none", "not run by validate");
  const parts = [String(result.outcome)];
  if (result.reason) parts.push(`(${result.reason})`);
  if (result.exit_code !== undefined)
    parts.push(result.exit_code === null ? "no exit status" : `exit ${result.exit_code}`);
  if (result.signal) parts.push(`signal ${result.signal}`);
  if (typeof result.time_s === "number") parts.push(`${result.time_s.toFixed(3)} s`);
  if (typeof result.peak_memory_kb === "number")
    parts.push(`${(result.peak_memory_kb / 1024).toFixed(1)} MiB peak`);
  if (result.harness) parts.push(`run ${result.harness}`);
  if (result.stopped) parts.push(`stopped: ${JSON.stringify(result.stopped)}`);
  const box = el("div", `result ${result.outcome}`, el("span", "outcome", parts.join(" · ")));
  box.dataset.outcome = String(result.outcome);
  if (result.error) box.append(clipped(String(result.error)));
  for (const shown of [stream("stdout", result), stream("stderr", result)]) if (shown) box.append(shown);
  if (result.truncated)
    box.append(el("div", "label", "the sandbox kept only its output cap: the program printed more"));
  return box;
}

function renderMessages(view) {
  const box = el("div");
  view.messages.forEach((m, i) => {
    const message = el("div", `message ${m.role}`, el("div", "role", `${i} · ${m.role}`));
    let block = 0;
    for (const seg of segments(m.content)) {
      if (seg.text !== undefined) {
        if (seg.text.trim()) message.append(clipped(seg.text));
        continue;
      }
      const info = m.blocks[block] || { lang: "text" };
      const wrap = el("div", "block");
      wrap.dataset.block = String(block);
      wrap.append(
        clipped(seg.code, (t) => highlight(t, info.lang)),
        resultBox(info.result),
      );
      message.append(wrap);
      block++;
    }
    box.append(message);
  });
  return box;
}

function renderRecord(view) {
  const root = $("record");
  root.replaceChildren();
  const judge = el("div", "judge");
  const reason = el("select");
  reason.id = "reason";
  reason.append(option(""), ...config.reasons.map((r) => option(r)));
  const note = el("input");
  note.id = "note";
  note.placeholder = "note";
  const good = el("button", null, "good (g)");
  const bad = el("button", null, "bad (b)");
  good.type = bad.type = "button";
  good.addEventListener("click", () => mark("good"));
  bad.addEventListener("click", () => mark("bad"));
  judge.append(
    el("strong", null, `${view.stage} ${view.kind === "r" ? "reject " : ""}${view.id}`),
    good,
    bad,
    reason,
    note,
  );
  // each reviewer's verdict is their latest mark
  const current = new Map(view.marks.map((m) => [m.reviewer, m])).values();
  const status = el("span", "marks");
  status.id = "mark-status";
  for (const m of current) {
    status.append(
      el("span", `verdict-${m.verdict}`, `${m.verdict} by ${m.reviewer}${m.reason ? ` (${m.reason})` : ""}`),
    );
    if (m.stale) status.append(el("span", "stale", " stale: the record changed since"));
    status.append(" ");
  }
  judge.append(status);
  root.append(judge);
  if (view.state !== "complete")
    root.append(
      el(
        "p",
        "state running",
        `${view.stage} is ${view.state}${view.stateReason ? ` (${view.stateReason})` : ""}: showing what it has committed`,
      ),
    );
  if (view.reject)
    root.append(el("p", "verdict-bad", `rejected: ${view.reject.reason}`), clipped(view.reject.detail || ""));
  if (view.release) root.append(el("p", "release", `release: ${view.release}`));
  if (view.validation) {
    const v = view.validation;
    root.append(
      el(
        "p",
        null,
        `validation: ${v.outcome}${v.reason ? ` (${v.reason})` : ""}${v.error ? ` — ${v.error}` : ""}`,
      ),
    );
    if (v.gates.length) {
      const gates = el("ul", "gates");
      for (const g of v.gates)
        gates.append(el("li", null, `${g.rule} at message ${g.message}: ${g.detail || ""}`));
      root.append(el("h3", null, "gates"), gates);
    } else root.append(el("p", null, "gates: none fired"));
  }
  root.append(renderMessages(view));
  const dl = el("dl");
  for (const [k, v] of Object.entries(view.provenance))
    dl.append(
      el("dt", null, k),
      el("dd", null, clipped(typeof v === "string" ? v : JSON.stringify(v, null, 2))),
    );
  root.append(el("h3", null, "where it came from"), dl);
  if (view.links.length) {
    const links = el("ul", "links");
    for (const l of view.links) {
      const b = el("button", "link", `${l.stage} ${l.kind === "r" ? "reject " : ""}${l.id}`);
      b.type = "button";
      b.addEventListener("click", () => openRecord(l.stage, l.id, l.kind));
      const about = `${l.reason ? ` (${l.reason})` : ""}${l.release ? ` · ${l.release}` : ""}`;
      links.append(el("li", null, `${l.relation}: `, b, about || null));
    }
    root.append(el("h3", null, "elsewhere"), links);
  }
  if (view.marks.length) {
    const history = el("ul", "history");
    for (const m of view.marks)
      history.append(
        el(
          "li",
          m.stale ? "stale" : null,
          `${m.at} ${m.reviewer}: ${m.verdict}${m.reason ? ` (${m.reason})` : ""}${m.note ? ` — ${m.note}` : ""}${m.stale ? " [stale]" : ""}`,
        ),
      );
    root.append(el("h3", null, "marks"), history);
  }
}

async function openRecord(stage, id, kind) {
  try {
    const view = await api(`/api/record?${new URLSearchParams({ stage, id, ...(kind ? { kind } : {}) })}`);
    state.view = view;
    renderRecord(view);
    for (const tr of document.querySelectorAll("tr.row"))
      tr.classList.toggle("current", tr.dataset.id === id);
  } catch (error) {
    notice(error.message);
  }
}

async function mark(verdict) {
  const view = state.view;
  if (!view) return;
  const reviewer = $("reviewer").value.trim();
  try {
    await api("/api/marks", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        stage: view.stage,
        id: view.id,
        verdict,
        reason: $("reason").value,
        note: $("note").value,
        reviewer,
      }),
    });
    notice("");
    await openRecord(view.stage, view.id, view.kind);
    await loadList(false);
  } catch (error) {
    notice(error.message);
  }
}

function fillSelect(select, counts) {
  const chosen = select.value;
  select.replaceChildren(
    option("", "any"),
    ...Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([v, c]) => option(v, `${v} (${c})`)),
  );
  select.value = Object.hasOwn(counts, chosen) ? chosen : "";
}

async function loadFacets() {
  const facets = await api(`/api/facets?${new URLSearchParams({ stage: state.stage, kind: state.kind })}`);
  for (const select of document.querySelectorAll("[data-filter]"))
    fillSelect(select, facets[select.dataset.filter] || {});
}

async function loadList(openFirst) {
  const params = {
    stage: state.stage,
    kind: state.kind,
    sort: state.sort,
    page: state.page,
    size: state.size,
    ...state.filter,
  };
  const text = $("text").value.trim();
  if (text) params.text = text;
  const listed = await api(`/api/list?${new URLSearchParams(params)}`);
  state.rows = listed.rows;
  state.filtered = listed.filtered;
  $("counts").textContent =
    `${listed.filtered.toLocaleString()} of ${listed.total.toLocaleString()} ${state.kind === "r" ? "rejects" : "records"}`;
  const pages = Math.max(1, Math.ceil(listed.filtered / state.size));
  $("page").textContent = `page ${state.page + 1} of ${pages}`;
  const body = $("rows");
  body.replaceChildren();
  for (const [i, r] of listed.rows.entries()) {
    const marks = r.marks.map((m) => `${m.verdict}${m.stale ? " (stale)" : ""} · ${m.reviewer}`).join(", ");
    const tr = el(
      "tr",
      "row",
      el("td", null, r.id),
      el("td", null, r.method || ""),
      el("td", null, r.lang || ""),
      el("td", null, r.verdict || ""),
      el("td", null, r.reason || (r.gates || "").split(",").filter(Boolean).join(", ")),
      el("td", null, marks),
    );
    tr.dataset.id = r.id;
    tr.addEventListener("click", () => {
      state.current = i;
      openRecord(state.stage, r.id, state.kind);
    });
    body.append(tr);
  }
  if (openFirst && listed.rows.length) {
    state.current = 0;
    await openRecord(state.stage, listed.rows[0].id, state.kind);
  }
}

async function loadStages() {
  const stages = await api("/api/stages");
  const select = $("stage");
  select.replaceChildren(
    ...stages.map((s) => option(s.name, `${s.name} (${s.state}, ${s.outputs}/${s.rejects})`)),
  );
  select.value = state.stage;
  const current = stages.find((s) => s.name === state.stage);
  $("stage-state").textContent = current
    ? `${current.state}${current.reason ? `: ${current.reason}` : ""}`
    : "";
  $("stage-state").className = `state ${current ? current.state : ""}`;
  if (!config.hasRuns)
    notice(
      `No runs in ${config.dataDir} yet: run \`pnpm pipeline run <stage>\` there first, then reload this page.`,
    );
  else if (current && current.state === "running")
    notice(`${current.name} is running: showing its committed records; reload for more.`);
  else notice("");
}

async function reload() {
  state.page = 0;
  state.current = -1;
  await loadStages();
  await loadFacets();
  await loadList(false);
}

async function step(delta) {
  if (config.queue) {
    const next = Math.min(Math.max(state.queueAt + delta, 0), config.queue.length - 1);
    state.queueAt = next;
    $("queue-state").textContent = `queue ${next + 1} of ${config.queue.length}`;
    await openRecord(state.stage, config.queue[next], "o");
    return;
  }
  let next = state.current + delta;
  if (next >= state.rows.length) {
    state.page++;
    await loadList(false);
    if (state.rows.length === 0) {
      state.page--;
      await loadList(false);
      return;
    }
    next = 0;
  } else if (next < 0) {
    if (state.page === 0) return;
    state.page--;
    await loadList(false);
    next = state.rows.length - 1;
  }
  state.current = next;
  await openRecord(state.stage, state.rows[next].id, state.kind);
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const tag = event.target.tagName;
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
  const action = { j: () => step(1), k: () => step(-1), g: () => mark("good"), b: () => mark("bad") }[
    event.key
  ];
  if (!action) return;
  event.preventDefault();
  action();
});
$("stage").addEventListener("change", () => {
  state.stage = $("stage").value;
  state.filter = {};
  reload();
});
for (const radio of document.querySelectorAll("input[name=kind]"))
  radio.addEventListener("change", () => {
    state.kind = radio.value;
    state.filter = {};
    reload();
  });
/** Lists page `page` of the rows the filters take. */
function listPage(page) {
  state.page = page;
  loadList(false);
}
for (const select of document.querySelectorAll("[data-filter]"))
  select.addEventListener("change", () => {
    if (select.value) state.filter[select.dataset.filter] = select.value;
    else delete state.filter[select.dataset.filter];
    listPage(0);
  });
$("text").addEventListener("change", () => listPage(0));
$("sort").addEventListener("change", () => {
  state.sort = $("sort").value;
  listPage(0);
});
$("prev").addEventListener("click", () => {
  if (state.page > 0) listPage(state.page - 1);
});
$("next").addEventListener("click", () => {
  if ((state.page + 1) * state.size < state.filtered) listPage(state.page + 1);
});
reload()
  .then(() => (config.queue ? step(1) : undefined))
  .then(() => document.body.setAttribute("data-ready", "1"))
  .catch((error) => notice(error.message));
