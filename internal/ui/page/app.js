// The memory page. Every piece of memory content reaches the document
// through textContent (or an SVG text node): nothing from the memory is
// ever parsed as HTML. All URLs are relative, so they stay below the
// secret path the page was opened at.
"use strict";

const $ = id => document.getElementById(id);
const el = (tag, text, cls) => {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
};
const SVG = "http://www.w3.org/2000/svg";
const svg = (tag, attrs) => {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
};

let current = null;   // the open entity's name, or null on the home view
let shown = null;     // the entity the page last drew
let depth = 1;

// The page's key: the server hands it over once, in the address's
// fragment (#key=...) after a first visit with ?token=; it is kept in this
// origin's storage, out of reach of other ports' scripts, and sent with
// every request, so that the cookie alone, which a browser also sends to
// other ports of this host, never suffices to read or edit the memory.
const keyName = "mcp-memory-page-key:" + location.pathname.replace(/[^/]*$/, "");
if (location.hash.startsWith("#key=")) {
  try { localStorage.setItem(keyName, location.hash.slice(5)); } catch (e) { /* storage off: edits are refused */ }
  history.replaceState(null, "", location.pathname + location.search);
}
function send(url, init) {
  init = init || {};
  let key = null;
  try { key = localStorage.getItem(keyName); } catch (e) { /* storage off */ }
  if (key) init.headers = Object.assign({ "X-Memory-Page-Key": key }, init.headers);
  return fetch(url, init);
}

async function api(path, params) {
  const r = await send("api/" + path + "?" + new URLSearchParams(params || {}));
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// Changes announced while an edit is in flight are applied after it, once
// the edit's own follow-up (a new name, a deleted entity) is in place.
let editing = 0, missed = false;
function refresh() {
  if (editing) { missed = true; return; }
  search();
  render();
}

// edit sends one edit; onDone runs at once when it succeeded.
async function edit(body, onDone) {
  editing++;
  try {
    let r;
    try {
      r = await send("api/edit", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    } catch (e) {
      say("The edit could not be sent: " + e.message, true);
      return false;
    }
    const res = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) { say(res.error, true); return false; }
    say(res.message);
    if (onDone) onDone();
    return true;
  } finally {
    editing--;
    if (editing === 0 && missed) { missed = false; refresh(); }
  }
}

// showMode hides the edit controls when the server says this page may
// only read the memory (a read grant on a team's memory); the server
// refuses such edits whatever the page shows.
function showMode(stats) {
  const readOnly = !!stats.readOnly;
  document.body.classList.toggle("readonly", readOnly);
  $("mode").hidden = !readOnly;
  $("mode").title = readOnly ? stats.readOnly : "";
}

let msgTimer;
function say(text, error) {
  const m = $("msg");
  m.textContent = text;
  m.className = error ? "error" : "";
  m.hidden = false;
  clearTimeout(msgTimer);
  if (!error) msgTimer = setTimeout(() => { m.hidden = true; }, 4000);
}

// --- search as you type -------------------------------------------------

let searchSeq = 0, searchTimer;
function searchSoon() { clearTimeout(searchTimer); searchTimer = setTimeout(search, 120); }

async function search() {
  const q = $("q").value, seq = ++searchSeq;
  let res;
  try { res = await api("search", { q }); } catch (e) { say(e.message, true); return; }
  if (seq !== searchSeq) return; // a newer search answered first
  $("count").textContent = q.trim() === ""
    ? `${res.total} entities${res.total > res.hits.length ? `, the first ${res.hits.length} shown` : ""}`
    : res.total === 0 ? `Nothing matches “${q}”.`
    : `${res.total} ${res.total === 1 ? "match" : "matches"}${res.total > res.hits.length ? `, the best ${res.hits.length} shown` : ""}`;
  const list = $("hits");
  list.replaceChildren();
  for (const h of res.hits) {
    const a = el("a");
    a.href = entityHash(h.name);
    a.dataset.name = h.name;
    if (h.name === current) a.className = "current";
    a.append(el("span", h.name, "hitname"), " ", el("span", h.entityType, "type"));
    if (h.snippet) a.append(el("span", h.snippet, "snippet"));
    const li = el("li");
    li.append(a);
    list.append(li);
  }
  const names = $("names");
  names.replaceChildren(...res.hits.map(h => { const o = el("option"); o.value = h.name; return o; }));
}

// --- views ----------------------------------------------------------------

const entityHash = name => "#e=" + encodeURIComponent(name);

// go opens the entity name (null: the home view) at once, before the hash
// change is announced.
function go(name) {
  current = name;
  location.hash = name === null ? "" : entityHash(name);
  render();
}

function route() {
  const h = location.hash;
  current = h.startsWith("#e=") ? decodeURIComponent(h.slice(3)) : null;
  for (const a of document.querySelectorAll("#hits a")) a.classList.toggle("current", a.dataset.name === current);
  render();
}

async function render() {
  $("homeView").hidden = current !== null;
  $("entityView").hidden = current === null;
  if (current === null) { shown = null; return renderHome(); }
  let p;
  try { p = await api("entity", { name: current }); } catch (e) {
    say(e.message, true);
    location.hash = "";
    return;
  }
  if (p.name !== current) return;
  document.title = p.name + " · Memory";
  $("ename").textContent = p.name;
  $("etype").textContent = p.entityType;
  const same = p.name === shown;
  shown = p.name;
  if (!same) {
    // Another entity: close what was open for the last one. The same
    // entity again (a live update): keep what the user is typing.
    $("renameForm").hidden = true;
    resetDelete();
  }
  const obs = $("obs");
  if (!(same && obs.querySelector("form"))) {
    obs.replaceChildren();
    if (p.observations.length === 0) obs.append(el("li", "No observations yet.", "type"));
    for (const o of p.observations) obs.append(observationItem(p.name, o));
  }
  const rels = $("rels");
  rels.replaceChildren();
  if (p.out.length + p.in.length === 0) rels.append(el("li", "No relations yet.", "type"));
  for (const r of p.out) rels.append(relationItem("→ ", r, { from: p.name, to: r.name, relationType: r.relationType }));
  for (const r of p.in) {
    if (r.name === p.name) continue; // a relation to itself is listed once, as outgoing
    rels.append(relationItem("← ", r, { from: r.name, to: p.name, relationType: r.relationType }));
  }
  renderPicture();
}

async function renderHome() {
  document.title = "Memory";
  try {
    const s = await api("stats");
    showMode(s);
    $("stats").textContent = `${s.entities} entities and ${s.relations} relations in ${s.where}. Search above, or open an entity from the list.`;
  } catch (e) { say(e.message, true); }
  renderPicture();
}

function observationItem(entity, text) {
  const li = el("li");
  const span = el("span", text, "text");
  const change = el("button", "Edit", "small edit");
  change.type = "button";
  change.title = "Change this observation";
  const del = el("button", "Delete", "small danger edit");
  del.type = "button";
  del.title = "Delete this observation";
  li.append(span, change, " ", del);
  change.onclick = () => {
    const form = el("form", null, "row");
    const input = el("input");
    input.value = text;
    input.setAttribute("aria-label", "Observation");
    const save = el("button", "Save");
    const cancel = el("button", "Cancel");
    cancel.type = "button";
    cancel.onclick = () => form.replaceWith(li);
    form.append(input, save, cancel);
    form.onsubmit = async ev => {
      ev.preventDefault();
      if (await edit({ op: "changeObservation", entity, old: text, observation: input.value }, () => form.remove())) render();
    };
    li.replaceWith(form);
    input.focus();
  };
  del.onclick = async () => {
    if (await edit({ op: "deleteObservation", entity, observation: text })) render();
  };
  return li;
}

function relationItem(arrow, r, triple) {
  const li = el("li", arrow + r.relationType + " ");
  const a = el("a", r.name);
  a.href = entityHash(r.name);
  if (!r.exists) { a.className = "missing"; a.title = "This entity does not exist"; }
  const del = el("button", "×", "small danger edit");
  del.type = "button";
  del.title = "Delete this relation";
  del.onclick = async () => { if (await edit({ op: "deleteRelation", ...triple })) render(); };
  li.append(a, " ", del);
  return li;
}

// Deleting takes two clicks: the first arms the button for five seconds.
let deleteArmed = null;
function resetDelete() {
  clearTimeout(deleteArmed);
  deleteArmed = null;
  $("deleteBtn").textContent = "Delete";
}

// --- the picture ----------------------------------------------------------

let picSeq = 0;
async function renderPicture() {
  const seq = ++picSeq;
  const pic = $("pic"), note = $("picNote");
  $("depthBtns").hidden = current === null;
  for (const b of document.querySelectorAll("#depthBtns button")) b.classList.toggle("on", +b.dataset.depth === depth);
  let g;
  try {
    g = await api("picture", current === null ? {} : { name: current, depth });
  } catch (e) {
    if (seq !== picSeq) return;
    pic.replaceChildren();
    pic.style.display = "none";
    $("picTitle").textContent = "Picture";
    note.textContent = e.message;
    return;
  }
  if (seq !== picSeq) return;
  pic.style.display = "";
  $("picTitle").textContent = current === null ? "The whole memory" : `Neighbourhood, depth ${depth}`;
  note.textContent = g.truncated
    ? `Showing the nearest ${g.nodes.length} entities only (the picture is capped at ${g.limit}).`
    : `${g.nodes.length} entities, ${g.edges.length} relations. Click one to open it.`;
  draw(pic, g);
}

// draw lays the graph out with a small force simulation and draws it.
function draw(pic, g) {
  const W = 800, H = 520, n = g.nodes.length;
  const index = new Map(g.nodes.map((v, i) => [v.name, i]));
  const pos = g.nodes.map((v, i) => {
    const a = 2 * Math.PI * i / Math.max(n, 1), r = i === 0 && current !== null ? 0 : 180;
    return { x: W / 2 + r * Math.cos(a), y: H / 2 + r * Math.sin(a), dx: 0, dy: 0 };
  });
  const edges = g.edges.map(e => [index.get(e.from), index.get(e.to), e.relationType]);
  const k = Math.sqrt(W * H / Math.max(n, 1)) * 0.6;
  for (let it = 0; it < 200; it++) {
    for (const p of pos) { p.dx = 0; p.dy = 0; }
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
      const a = pos[i], b = pos[j];
      let dx = a.x - b.x, dy = a.y - b.y, d2 = dx * dx + dy * dy + 0.01;
      const f = k * k / d2;
      a.dx += dx * f; a.dy += dy * f; b.dx -= dx * f; b.dy -= dy * f;
    }
    for (const [s, t] of edges) {
      if (s === t) continue;
      const a = pos[s], b = pos[t];
      const dx = a.x - b.x, dy = a.y - b.y, d = Math.sqrt(dx * dx + dy * dy) + 0.01, f = d / k;
      a.dx -= dx * f; a.dy -= dy * f; b.dx += dx * f; b.dy += dy * f;
    }
    const temp = 40 * (1 - it / 200) + 1;
    pos.forEach((p, i) => {
      p.dx += (W / 2 - p.x) * 0.02; p.dy += (H / 2 - p.y) * 0.02;
      const d = Math.sqrt(p.dx * p.dx + p.dy * p.dy) || 1, step = Math.min(d, temp);
      if (!(i === 0 && current !== null)) { p.x += p.dx / d * step; p.y += p.dy / d * step; }
      p.x = Math.min(W - 40, Math.max(40, p.x)); p.y = Math.min(H - 20, Math.max(20, p.y));
    });
  }
  // Fit the view to the drawing, labels included (a wide character is
  // about 17 units at this font size, others about 10.5).
  const shortName = name => name.length > 24 ? name.slice(0, 23) + "…" : name;
  const width = text => [...text].reduce((w, c) => w + (c.codePointAt(0) >= 0x2e80 ? 17 : 10.5), 0);
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  g.nodes.forEach((v, i) => {
    const p = pos[i], label = width(shortName(v.name)) + 16;
    x0 = Math.min(x0, p.x - 14); x1 = Math.max(x1, p.x + label);
    y0 = Math.min(y0, p.y - 16); y1 = Math.max(y1, p.y + 16);
  });
  const fw = Math.max(x1 - x0, 320), fh = Math.max(y1 - y0, 200);
  pic.setAttribute("viewBox", `${x0 - (fw - (x1 - x0)) / 2} ${y0 - (fh - (y1 - y0)) / 2} ${fw} ${fh}`);
  pic.replaceChildren();
  const labelEdges = edges.length <= 40;
  for (const [s, t, type] of edges) {
    const a = pos[s], b = pos[t];
    pic.append(svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y }));
    if (labelEdges && s !== t) {
      const label = svg("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, "text-anchor": "middle", class: "rel" });
      label.textContent = type;
      pic.append(label);
    }
  }
  g.nodes.forEach((v, i) => {
    const p = pos[i];
    const c = svg("circle", { cx: p.x, cy: p.y, r: 9, class: v.name === current ? "center" : "" });
    const title = svg("title", {});
    title.textContent = `${v.name} (${v.entityType})`;
    c.append(title);
    c.addEventListener("click", () => { location.hash = entityHash(v.name); });
    const t = svg("text", { x: p.x + 12, y: p.y + 5 });
    t.textContent = shortName(v.name);
    pic.append(c, t);
  });
}

// --- live updates ---------------------------------------------------------

function listen() {
  const es = new EventSource("api/events");
  es.onopen = () => { $("live").textContent = "● live"; $("live").className = "on"; };
  es.onerror = () => { $("live").textContent = "○ offline"; $("live").className = ""; };
  es.addEventListener("change", refresh);
}

// --- wiring -----------------------------------------------------------------

function init() {
  $("q").addEventListener("input", searchSoon);
  window.addEventListener("hashchange", route);
  for (const b of document.querySelectorAll("#depthBtns button")) b.onclick = () => { depth = +b.dataset.depth; renderPicture(); };

  $("renameBtn").onclick = () => {
    const f = $("renameForm");
    f.hidden = false;
    f.newName.value = current;
    f.newName.focus();
  };
  $("renameCancel").onclick = () => { $("renameForm").hidden = true; };
  $("renameForm").onsubmit = async ev => {
    ev.preventDefault();
    const to = ev.target.newName.value;
    await edit({ op: "rename", entity: current, newName: to }, () => { go(to); search(); });
  };
  $("deleteBtn").onclick = async () => {
    if (deleteArmed === null) {
      $("deleteBtn").textContent = "Click again to delete " + current;
      deleteArmed = setTimeout(resetDelete, 5000);
      return;
    }
    resetDelete();
    await edit({ op: "deleteEntity", entity: current }, () => { go(null); search(); });
  };
  $("addObs").onsubmit = async ev => {
    ev.preventDefault();
    const input = ev.target.observation;
    if (await edit({ op: "addObservation", entity: current, observation: input.value })) { input.value = ""; render(); }
  };
  $("addRel").onsubmit = async ev => {
    ev.preventDefault();
    const f = ev.target;
    if (await edit({ op: "addRelation", from: current, to: f.to.value, relationType: f.relationType.value })) { f.reset(); render(); }
  };
  $("createForm").onsubmit = async ev => {
    ev.preventDefault();
    const f = ev.target, name = f.entityName.value;
    await edit({ op: "createEntity", entity: name, entityType: f.entityType.value }, () => { f.reset(); go(name); search(); });
  };
  search();
  route();
  listen();
  api("stats").then(showMode, () => {});
}

init();
