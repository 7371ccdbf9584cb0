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
// visible shows the invisible characters of a name (controls, the
// bidirectional overrides and isolates, zero-width characters, line
// separators) as \u escapes, so that one client's name cannot pass for
// another's.
const visible = s => s.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, c => "\\u" + c.codePointAt(0).toString(16).padStart(4, "0"));
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
  // The memory's history, which holds what was deleted, is the editors'.
  $("historyBox").hidden = !stats.history || readOnly;
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

// fmt writes a count as people read it (5,000); plural agrees with it.
const fmt = n => n.toLocaleString("en-US");
const plural = (n, one, many) => `${fmt(n)} ${n === 1 ? one : many}`;

const pageSize = 50;  // the server's page of the list
let listOffset = 0;   // where the shown page of the list starts

let searchSeq = 0, searchTimer;
// searchSoon searches for what is typed, and brings the results into view
// when the page was scrolled past them.
function searchSoon() { clearTimeout(searchTimer); searchTimer = setTimeout(async () => { listOffset = 0; await search(); resultsInView(); }, 120); }

function resultsInView() {
  const r = $("results"), top = r.getBoundingClientRect().top, below = $("q").closest("header").getBoundingClientRect().bottom;
  if (top < below || top > window.innerHeight - 40) r.scrollIntoView({ block: "start" });
}

// searchFrom shows the page of the list that starts at offset.
function searchFrom(offset) { listOffset = Math.max(0, offset); search(); }

async function search() {
  const q = $("q").value, seq = ++searchSeq;
  let res;
  try { res = await api("search", { q, offset: listOffset }); } catch (e) { say(e.message, true); return; }
  if (seq !== searchSeq) return; // a newer search answered first
  if (res.hits.length === 0 && res.total > 0 && listOffset > 0) {
    // The list got shorter (a deletion elsewhere): show its last page.
    return searchFrom(Math.floor((res.total - 1) / pageSize) * pageSize);
  }
  const range = res.total > res.hits.length ? `${fmt(res.offset + 1)}–${fmt(res.offset + res.hits.length)} of ${fmt(res.total)}` : "";
  const count = $("count");
  count.className = "";
  if (q.trim() === "") {
    count.textContent = res.total === 0 ? "No entities yet."
      : range ? `Entities ${range}` : plural(res.total, "entity", "entities");
  } else if (res.total === 0) {
    count.textContent = `Nothing matches “${q}”.`;
  } else if (res.exact === 0) {
    count.textContent = `No entity contains “${q}”; the closest matches by the words they share with it:`;
    count.className = "partial";
  } else {
    count.textContent = range ? `Matches ${range}` : plural(res.exact, "match", "matches");
  }
  pager(res);
  const list = $("hits");
  list.replaceChildren();
  res.hits.forEach((h, i) => {
    const at = res.offset + i;
    if (res.exact > 0 && at === res.exact) list.append(el("li", "No other entity contains it; the closest by the words they share with it:", "partial"));
    const a = el("a");
    a.href = entityHash(h.name);
    a.dataset.name = h.name;
    if (h.name === current) a.className = "current";
    a.append(el("span", h.name, "hitname"), " ", el("span", h.entityType, "type"));
    if (h.snippet) a.append(snippet(h.snippet, h.matched ? q : ""));
    const li = el("li");
    li.append(a);
    list.append(li);
  });
  const names = $("names");
  names.replaceChildren(...res.hits.map(h => { const o = el("option"); o.value = h.name; return o; }));
}

// pager shows the buttons to move through a list longer than a page.
function pager(res) {
  const last = Math.max(0, Math.floor((res.total - 1) / pageSize) * pageSize);
  $("pager").hidden = res.total <= pageSize;
  $("firstPage").disabled = $("prevPage").disabled = res.offset === 0;
  $("nextPage").disabled = $("lastPage").disabled = res.offset >= last;
  $("firstPage").onclick = () => searchFrom(0);
  $("prevPage").onclick = () => searchFrom(res.offset - pageSize);
  $("nextPage").onclick = () => searchFrom(res.offset + pageSize);
  $("lastPage").onclick = () => searchFrom(last);
}

// snippet shows an observation with the query (or, when no observation
// holds all of it, its words) marked, starting near the first mark so
// that the match is in view.
function snippet(text, query) {
  const span = el("span", null, "snippet");
  const q = query.trim();
  const esc = s => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  let terms = [];
  if (q !== "") {
    terms = new RegExp(esc(q), "iu").test(text) ? [q]
      : q.split(/\s+/).filter(w => w.length > 1 || /[^\x00-\x7f]/.test(w));
  }
  if (terms.length === 0) { span.textContent = text; return span; }
  const re = new RegExp(terms.sort((a, b) => b.length - a.length).map(esc).join("|"), "giu");
  const parts = [];
  let last = 0, m;
  while ((m = re.exec(text)) !== null) {
    if (m[0] === "") { re.lastIndex++; continue; }
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(el("mark", m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  if (typeof parts[0] === "string" && parts[0].length > 40) {
    // Start a few words before the first match.
    let cut = parts[0].length - 30;
    const space = parts[0].indexOf(" ", cut);
    if (space >= 0 && space < cut + 12) cut = space + 1;
    parts[0] = "…" + parts[0].slice(cut);
  }
  span.append(...parts);
  return span;
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
  document.body.classList.toggle("home", current === null);
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
  $("elearned").replaceChildren();
  if (p.createdAt) {
    const t = when(p.createdAt, "learned ");
    if (p.updatedAt && p.updatedAt !== p.createdAt) t.title += "\nLast changed " + exactTime(p.updatedAt);
    $("elearned").append(t);
  }
  const same = p.name === shown;
  shown = p.name;
  if (!same) {
    // Another entity: close what was open for the last one. The same
    // entity again (a live update): keep what the user is typing.
    $("renameForm").hidden = true;
    resetDelete();
    $("historyBox").open = false;
    $("ehistory").replaceChildren();
    $("ehistoryNote").textContent = "";
  }
  const obs = $("obs");
  if (!(same && obs.querySelector("form"))) {
    obs.replaceChildren();
    if (p.observations.length === 0) obs.append(el("li", "No observations yet.", "type"));
    p.observations.forEach((o, i) => obs.append(observationItem(p.name, o, p.observationTimes[i])));
  }
  const rels = $("rels");
  rels.replaceChildren();
  if (p.out.length + p.in.length === 0) rels.append(el("li", "No relations yet.", "type"));
  for (const r of p.out) rels.append(relationItem("→ ", r, { from: p.name, to: r.name, relationType: r.relationType }));
  for (const r of p.in) {
    if (r.name === p.name) continue; // a relation to itself is listed once, as outgoing
    rels.append(relationItem("← ", r, { from: r.name, to: p.name, relationType: r.relationType }));
  }
  if ($("historyBox").open) renderHistory();
  renderPicture();
}

async function renderHome() {
  document.title = "Memory";
  try {
    const s = await api("stats");
    showMode(s);
    $("stats").textContent = `${plural(s.entities, "entity", "entities")} and ${plural(s.relations, "relation", "relations")} in ${s.where}. Search above, or open an entity from the list.`;
    $("vectors").hidden = !s.vectors;
    if (s.vectors) $("vectors").textContent = `Vectors ${fmt(s.vectors.ready)} of ${fmt(s.vectors.texts)} texts`;
  } catch (e) { say(e.message, true); }
  renderLearned();
  renderPicture();
}

// --- history ----------------------------------------------------------------

// renderHistory lists the open entity's recorded changes, newest first.
let historySeq = 0;
async function renderHistory() {
  const seq = ++historySeq, name = current;
  let res;
  try { res = await api("history", { name }); } catch (e) { $("ehistoryNote").textContent = e.message; return; }
  if (seq !== historySeq || name !== current) return;
  $("ehistory").replaceChildren(...res.records.map(r => historyItem(r, false)));
  $("ehistoryNote").textContent = res.records.length === 0 ? "No change to it is recorded."
    : res.more ? `Older changes: mcp-server-memory history ${JSON.stringify(name)} shows them all.` : "";
}

// historyItem shows one recorded write: when, by what, what it changed,
// and for a write that only deleted, a button that restores what it
// deleted (an undo of the write, recorded in its turn).
function historyItem(r, compact) {
  const li = el("li");
  const by = el("span", r.tool + (r.client ? ` (${visible(r.client)})` : ""), "type");
  const texts = r.observations.length > 0 ? r.observations.map(o => `“${o}”`).join(", ") + (r.more > 0 ? ` and ${fmt(r.more)} more` : "") : "";
  if (compact) {
    // One line: what it did to entities; the rest on hover.
    li.className = "compact";
    const what = el("span", r.headline, "summary");
    li.title = r.summary + (texts ? "\n" + texts : "");
    li.append(when(r.time), " · ", by, " · ", what);
  } else {
    li.append(when(r.time), " · ", by, " · ", el("span", r.summary, "summary"));
    if (texts) li.append(" ", el("span", texts, "texts"));
  }
  if (r.back) {
    li.append(" ", el("span", "(back in the memory)", "type"));
  } else if (r.later) {
    li.append(" ", el("span", "(deleted again since)", "type"));
  } else if (!r.restorable && compact) {
    const u = el("code", r.undo, "type undo");
    u.title = "Undo this change with this command, which says what it will change first";
    li.append(" ", u);
  } else if (r.restorable) {
    const b = el("button", "Restore", "small edit");
    b.type = "button";
    b.title = "Bring back what this change deleted";
    b.onclick = async () => { if (await edit({ op: "restore", record: r.id })) refresh(); };
    li.append(" ", b);
  }
  return li;
}

// --- when facts were learned ------------------------------------------------

// ago says in English how long before now (milliseconds) the time iso
// was: "just now", "5 minutes ago", "yesterday", "3 days ago", "2 months
// ago", and for a clock ahead "3 hours from now"; "" when unknown. The
// commands say the same (graph.Time.Ago), tested on the same cases.
function ago(iso, now) {
  if (!iso) return "";
  let d = Math.floor(now / 1000) - Math.floor(Date.parse(iso) / 1000);
  const future = d < 0;
  if (future) d = -d;
  const minute = 60, hour = 60 * minute, day = 24 * hour, year = 365 * day, month = year / 12;
  const units = (n, unit) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  let s;
  if (d < minute) return "just now";
  else if (d < hour) s = units(Math.floor(d / minute), "minute");
  else if (d < day) s = units(Math.floor(d / hour), "hour");
  else if (d < 2 * day && !future) return "yesterday";
  else if (d < 30 * day) s = units(Math.floor(d / day), "day");
  else if (d < year) s = units(Math.max(1, Math.floor(d / month)), "month");
  else s = units(Math.floor(d / year), "year");
  return future ? s + " from now" : s + " ago";
}

// exactTime is the date and time of iso in the reader's time zone.
const exactFormat = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
const exactTime = iso => exactFormat.format(new Date(iso));

// when is a <time> saying how long ago iso was, after prefix, with the
// exact date and time on hover; refreshTimes keeps it true as time passes.
function when(iso, prefix) {
  const t = el("time", null, "when");
  t.dateTime = iso;
  t.dataset.prefix = prefix || "";
  t.title = (prefix ? "Learned " : "") + exactTime(iso);
  t.textContent = t.dataset.prefix + ago(iso, Date.now());
  return t;
}
function refreshTimes() {
  const now = Date.now();
  for (const t of document.querySelectorAll("time.when")) t.textContent = t.dataset.prefix + ago(t.dateTime, now);
}

// Days are UTC days, "2026-11-30", as the server counts them.
const dayFormat = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
const longDayFormat = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
const dayLabel = (day, long) => (long ? longDayFormat : dayFormat).format(new Date(day + "T00:00:00Z"));

let learned = null; // the days last plotted, redrawn on resize

// renderLearned shows when the memory learned its facts, the oldest and
// newest, and plots the writes its history recorded on each of the last 30
// days, or without a history the facts learned on each.
async function renderLearned() {
  let res;
  try { res = await api("learned"); } catch (e) { say(e.message, true); return; }
  const tl = res.learned, writes = res.writes;
  $("deleted").hidden = !res.deleted || res.deleted.records.length === 0;
  if (res.deleted) $("deletedList").replaceChildren(...res.deleted.records.map(r => historyItem(r, true)));
  const days = writes || tl.perDay, what = writes ? ["write", "writes"] : ["fact learned", "facts learned"];
  const total = days.reduce((s, d) => s + d.count, 0);
  $("learned").hidden = tl.known + tl.unknown === 0 && !writes;
  $("learnedTitle").textContent = writes ? "Writes per day, last 30 days" : "Facts learned per day, last 30 days";
  const note = $("learnedNote"), plot = $("perDay");
  note.replaceChildren();
  const plotted = writes || tl.known > 0;
  plot.toggleAttribute("hidden", !plotted);
  learned = plotted ? { days, what } : null;
  if (plotted) {
    const top = days.reduce((a, d) => d.count > a.count ? d : a, days[0]);
    note.append(`${plural(total, ...what)} in the last ${days.length} days` + (total === 0 ? "" : top.count === total ? `, on ${dayLabel(top.day)}` : `, at most ${fmt(top.count)} on ${dayLabel(top.day)}`) + ". ");
    drawPerDay(plot, days, what);
  }
  if (writes && tl.known > 0) {
    const kept = tl.perDay.reduce((s, d) => s + d.count, 0);
    note.append(`${plural(kept, "fact", "facts")} learned in that time ${kept === 1 ? "is" : "are"} still in the memory. `);
  }
  if (tl.known > 0) note.append("The oldest fact was learned ", when(tl.oldest), ", the newest ", when(tl.newest), ". ");
  else if (tl.unknown > 0) note.append("No fact here says when it was learned: it was written by tools that keep no times. ");
  if (tl.known > 0 && tl.unknown > 0) note.append(`${plural(tl.unknown, "fact has", "facts have")} no time: written by tools that keep no times.`);
}

// drawPerDay draws a bar per day, one pixel to one unit so that the text
// keeps its size; each day's bar names its date and count on hover, and
// the plot's label says the same for screen readers.
function drawPerDay(plot, days, what) {
  const W = Math.max(240, Math.min(640, Math.floor(plot.parentElement.clientWidth))), H = 120;
  const left = 28, right = 6, top = 8, bottom = 20, plotH = H - top - bottom;
  const most = Math.max(1, ...days.map(d => d.count));
  const slot = (W - left - right) / days.length;
  plot.replaceChildren();
  plot.setAttribute("viewBox", `0 0 ${W} ${H}`);
  plot.setAttribute("width", W);
  plot.setAttribute("height", H);
  const label = (x, y, text, anchor) => {
    const t = svg("text", { x, y, "text-anchor": anchor });
    t.textContent = text;
    plot.append(t);
  };
  plot.append(svg("line", { class: "axis", x1: left, y1: top + plotH + 0.5, x2: W - right, y2: top + plotH + 0.5 }));
  label(left - 4, top + 8, fmt(most), "end");
  label(left - 4, top + plotH, "0", "end");
  days.forEach((d, i) => {
    const x = left + i * slot, g = svg("g", { class: "day", "data-day": d.day, "data-count": d.count });
    const title = svg("title", {});
    title.textContent = `${dayLabel(d.day, true)}: ${plural(d.count, ...what)}`;
    const h = d.count === 0 ? 2 : Math.max(3, Math.round(d.count / most * plotH));
    g.append(title,
      svg("rect", { x, y: top, width: slot, height: plotH, fill: "transparent" }), // the day's hover area
      svg("rect", { class: d.count === 0 ? "none" : "bar", x: x + slot * 0.15, y: top + plotH - h, width: slot * 0.7, height: h }));
    plot.append(g);
  });
  label(left, H - 5, dayLabel(days[0].day), "start");
  label(W - right, H - 5, "today (UTC)", "end");
  const busy = days.filter(d => d.count > 0).map(d => `${dayLabel(d.day)}: ${fmt(d.count)}`);
  plot.setAttribute("aria-label", `${what[1][0].toUpperCase() + what[1].slice(1)} per day, ${dayLabel(days[0].day)} to today (UTC): ` + (busy.length ? busy.join(", ") : "none") + ".");
}

// observationItem lists an observation with when it was learned (at, or
// null when unknown) and its edit buttons.
function observationItem(entity, text, at) {
  const li = el("li");
  const span = el("span", text, "text");
  const change = el("button", "Edit", "small edit");
  change.type = "button";
  change.title = "Change this observation";
  const del = el("button", "Delete", "small danger edit");
  del.type = "button";
  del.title = "Delete this observation";
  // The time and the buttons stay together, on the text's first line.
  const side = el("span", null, "side");
  if (at) side.append(when(at), " ");
  side.append(change, " ", del);
  li.append(span, side);
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
  li.append(a, " ");
  if (r.createdAt) li.append(when(r.createdAt), " ");
  li.append(del);
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

let picSeq = 0, drawn = null; // drawn: the graph last drawn, redrawn on resize
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
    drawn = null;
    pic.replaceChildren();
    pic.style.display = "none";
    $("picTitle").textContent = "Picture";
    note.textContent = e.message;
    return;
  }
  if (seq !== picSeq) return;
  pic.style.display = "";
  $("picTitle").textContent = current === null ? "The whole memory" : `Neighbourhood, depth ${depth}`;
  const counts = `${plural(g.nodes.length, "entity", "entities")}, ${plural(g.edges.length, "relation", "relations")}`;
  drawn = { g, width: 0 };
  draw(pic, g);
  const left = draw.unlabelled > 0 ? ` ${plural(draw.unlabelled, "relation's name is", "relations' names are")} left out where there is no room (point at a line to read it).` : "";
  note.textContent = g.truncated
    ? `Showing the nearest ${plural(g.nodes.length, "entity", "entities")} only (the picture is capped at ${fmt(g.limit)}).${left}`
    : g.nodes.length === 0 ? "Nothing to draw yet." : `${counts}.${left} Click an entity to open it.`;
}

// Sizes in screen pixels: the picture is drawn one unit to one pixel, so
// the text is always this size, and as wide as its box; it grows
// downwards when the graph needs more room.
const nodeFont = 14, edgeFont = 12, padX = 7, padY = 4, margin = 6, loopSize = 16;

// draw lays the graph out and draws it: each connected part laid out on its
// own by a small force simulation with the labels' real sizes, then the
// parts packed in rows from the centre; relations are arrows from border to
// border, named where the name fits without covering anything.
function draw(pic, g) {
  const W = Math.max(200, Math.floor(pic.parentElement.clientWidth) - 2);
  if (drawn) drawn.width = W;
  pic.replaceChildren();
  const defs = svg("defs", {});
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
  defs.append(marker);
  const edgeLayer = svg("g", { class: "edges" }), labelLayer = svg("g", { class: "rels" }), nodeLayer = svg("g", { class: "nodes" });
  pic.append(defs, edgeLayer, labelLayer, nodeLayer);

  // Nodes: a label in a box, measured as drawn.
  const nodes = g.nodes.map(v => {
    const grp = svg("g", { class: v.name === current ? "node center" : "node", "data-name": v.name });
    const rect = svg("rect", { rx: 6, ry: 6 });
    const text = svg("text", { "text-anchor": "middle", "dominant-baseline": "central" });
    const title = svg("title", {});
    title.textContent = `${v.name} (${v.entityType})`;
    grp.append(title, rect, text);
    grp.addEventListener("click", () => { location.hash = entityHash(v.name); });
    nodeLayer.append(grp);
    let label = [...v.name];
    text.textContent = label.length > 28 ? label.slice(0, 27).join("") + "…" : v.name;
    // Never wider than the picture: shorten further if need be.
    while (text.getComputedTextLength() + 2 * padX > W - 2 * margin && label.length > 2) {
      label = label.slice(0, -2);
      text.textContent = label.join("") + "…";
    }
    const tw = text.getComputedTextLength() || text.textContent.length * nodeFont * 0.6;
    return { grp, rect, text, w: Math.ceil(tw) + 2 * padX, h: Math.ceil(nodeFont * 1.3) + 2 * padY, x: 0, y: 0 };
  });
  const index = new Map(g.nodes.map((v, i) => [v.name, i]));
  const edges = g.edges.map(e => ({ s: index.get(e.from), t: index.get(e.to), type: e.relationType, from: e.from, to: e.to, lw: 0 }));
  // Relations' names, measured now: the layout leaves room for them.
  const nameEdges = edges.length <= 80;
  if (nameEdges) for (const e of edges) {
    e.label = svg("text", { class: "rel", "text-anchor": "middle", "dominant-baseline": "central" });
    e.label.textContent = e.type.length > 24 ? [...e.type].slice(0, 23).join("") + "…" : e.type;
    labelLayer.append(e.label);
    e.lw = (e.label.getComputedTextLength() || e.label.textContent.length * edgeFont * 0.6) + 4;
  }
  for (const e of edges) if (e.s === e.t) nodes[e.s].loop = Math.max(nodes[e.s].loop || 0, 2 * loopSize + e.lw + 4);

  // Connected parts, the open entity's first, then by size.
  const part = g.nodes.map((_, i) => i);
  const find = i => part[i] === i ? i : (part[i] = find(part[i]));
  for (const e of edges) part[find(e.s)] = find(e.t);
  const parts = new Map();
  g.nodes.forEach((_, i) => { const r = find(i); if (!parts.has(r)) parts.set(r, []); parts.get(r).push(i); });
  const centre = current === null ? -1 : index.get(current);
  const ordered = [...parts.values()].sort((a, b) => (b.includes(centre) - a.includes(centre)) || b.length - a.length);
  const boxes = ordered.map(members => layoutPart(members, nodes, edges.filter(e => members.includes(e.s)), W));

  // Pack the parts in rows, each row centred, the rows from the top.
  const gap = 18;
  const rows = [];
  for (const b of boxes) {
    const row = rows[rows.length - 1];
    if (row && row.width + gap + b.w <= W - 2 * margin) { row.items.push(b); row.width += gap + b.w; row.height = Math.max(row.height, b.h); }
    else rows.push({ items: [b], width: b.w, height: b.h });
  }
  let y = margin;
  for (const row of rows) {
    let x = (W - row.width) / 2;
    for (const b of row.items) {
      const dx = x - b.x0, dy = y + (row.height - b.h) / 2 - b.y0;
      for (const i of b.members) { nodes[i].x += dx; nodes[i].y += dy; }
      x += b.w + gap;
    }
    y += row.height + gap;
  }
  // A short drawing sits in the middle of a box at least 120 high.
  const H = Math.max(120, y - gap + margin), lift = (H - (y - gap + margin)) / 2;
  if (lift > 0) for (const n of nodes) n.y += lift;
  pic.setAttribute("viewBox", `0 0 ${W} ${H}`);
  pic.setAttribute("width", W);
  pic.setAttribute("height", H);

  for (const n of nodes) {
    n.rect.setAttribute("x", n.x - n.w / 2); n.rect.setAttribute("y", n.y - n.h / 2);
    n.rect.setAttribute("width", n.w); n.rect.setAttribute("height", n.h);
    n.text.setAttribute("x", n.x); n.text.setAttribute("y", n.y);
  }

  // Relations: from border to border, curved apart when two join the same
  // pair of entities, a loop above an entity related to itself.
  const pairs = new Map();
  for (const e of edges) {
    const key = Math.min(e.s, e.t) + " " + Math.max(e.s, e.t);
    if (!pairs.has(key)) pairs.set(key, []);
    pairs.get(key).push(e);
  }
  const taken = nodes.map(n => ({ x0: n.x - n.w / 2 - 3, y0: n.y - n.h / 2 - 3, x1: n.x + n.w / 2 + 3, y1: n.y + n.h / 2 + 3 }));
  draw.unlabelled = 0;
  for (const group of pairs.values()) group.forEach((e, k) => {
    const a = nodes[e.s], b = nodes[e.t];
    const path = svg("path", { class: "edge", "marker-end": "url(#arrow)", "data-from": e.from, "data-to": e.to });
    const title = svg("title", {});
    title.textContent = `${e.from} ${e.type} ${e.to}`;
    path.append(title);
    let at; // where the name may go: t from 0 to 1 → a point
    if (e.s === e.t) {
      // A loop on the right, its name beside it.
      const side = a.x + a.w / 2, r = loopSize + 8 * k;
      path.setAttribute("d", `M${side},${a.y - 5} C${side + 1.6 * r},${a.y - 1.6 * r} ${side + 1.6 * r},${a.y + 1.6 * r} ${side + 1.5},${a.y + 5}`);
      at = () => ({ x: side + 1.2 * r + 4 + e.lw / 2, y: a.y });
    } else {
      // Canonical direction, so that opposite relations bend apart.
      const [p, q] = e.s < e.t ? [a, b] : [b, a];
      const off = (k - (group.length - 1) / 2) * 26;
      const dx = q.x - p.x, dy = q.y - p.y, d = Math.hypot(dx, dy) || 1;
      const c = { x: (a.x + b.x) / 2 - dy / d * off, y: (a.y + b.y) / 2 + dx / d * off };
      const s = border(a, c.x - a.x, c.y - a.y, 0), t = border(b, c.x - b.x, c.y - b.y, 1.5);
      path.setAttribute("d", off === 0 ? `M${s.x},${s.y} L${t.x},${t.y}` : `M${s.x},${s.y} Q${c.x},${c.y} ${t.x},${t.y}`);
      at = u => {
        const v = 1 - u;
        return off === 0 ? { x: v * s.x + u * t.x, y: v * s.y + u * t.y }
          : { x: v * v * s.x + 2 * v * u * c.x + u * u * t.x, y: v * v * s.y + 2 * v * u * c.y + u * u * t.y };
      };
    }
    edgeLayer.append(path);
    if (!nameEdges) { draw.unlabelled++; return; }
    const label = e.label, lw = e.lw, lh = edgeFont * 1.3;
    // On the line, else beside it, from the middle outwards.
    const spots = [];
    if (e.s === e.t) spots.push(at(0));
    else for (const u of [0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78]) {
      const p = at(u), q = at(u + 0.01), dx = q.x - p.x, dy = q.y - p.y, d = Math.hypot(dx, dy) || 1;
      const nx = -dy / d, ny = dx / d, off = Math.abs(nx) * lw / 2 + Math.abs(ny) * lh / 2 + 3;
      spots.push(p, { x: p.x + nx * off, y: p.y + ny * off }, { x: p.x - nx * off, y: p.y - ny * off });
    }
    for (const p of spots) {
      const box = { x0: p.x - lw / 2, y0: p.y - lh / 2, x1: p.x + lw / 2, y1: p.y + lh / 2 };
      if (box.x0 < 1 || box.y0 < 1 || box.x1 > W - 1 || box.y1 > H - 1) continue;
      if (taken.some(o => box.x0 < o.x1 && o.x0 < box.x1 && box.y0 < o.y1 && o.y0 < box.y1)) continue;
      taken.push(box);
      label.setAttribute("x", p.x); label.setAttribute("y", p.y);
      return;
    }
    label.remove(); // no room: the line's title still names it
    draw.unlabelled++;
  });
}

// border returns where a line leaving node n's centre towards (dx, dy)
// crosses its box, pushed out by gap.
function border(n, dx, dy, gap) {
  const hw = n.w / 2 + gap, hh = n.h / 2 + gap;
  if (dx === 0 && dy === 0) return { x: n.x, y: n.y };
  const f = Math.min(dx === 0 ? Infinity : hw / Math.abs(dx), dy === 0 ? Infinity : hh / Math.abs(dy));
  return { x: n.x + dx * f, y: n.y + dy * f };
}

// layoutPart places one connected part's nodes no wider than W, and returns
// its bounding box (labels included).
function layoutPart(members, nodes, edges, W) {
  const m = members.length, ns = members.map(i => nodes[i]);
  const local = new Map(members.map((i, j) => [i, j]));
  // Each relation's ideal length leaves room for its name between the two
  // boxes; L, their mean, sets how hard unrelated entities push apart.
  const adj = ns.map(() => []), want = new Map();
  for (const e of edges) if (e.s !== e.t) {
    const i = local.get(e.s), j = local.get(e.t), key = Math.min(i, j) + " " + Math.max(i, j);
    const len = Math.min(e.lw, 180);
    if (!want.has(key)) { adj[i].push(j); adj[j].push(i); }
    want.set(key, Math.max(want.get(key) || 0, len));
  }
  // Across, a relation needs its name's width between the boxes; down,
  // its height.
  const springLength = (i, j, lw, c, s) => c * ((ns[i].w + ns[j].w) / 2 + lw + 24) + s * ((ns[i].h + ns[j].h) / 2 + 2.5 * edgeFont + 12);
  const springs = [...want].map(([key, lw]) => [...key.split(" ").map(Number), lw]);
  // (In a narrow picture they push less, or the part grows very tall.)
  const L = Math.min(W / 5, springs.length ? springs.reduce((s, [i, j, lw]) => s + springLength(i, j, lw, 0.6, 0.4), 0) / springs.length : 100);
  for (const n of ns) { n.l = n.w / 2; n.r = n.w / 2 + (n.loop || 0); } // a loop and its name on the right
  // Start on a spiral in breadth-first order from the first (the open
  // entity, or the part's first): the same graph is always drawn the same.
  const order = [0], seen = new Set([0]);
  for (let k = 0; k < order.length; k++) for (const j of adj[order[k]]) if (!seen.has(j)) { seen.add(j); order.push(j); }
  order.forEach((j, k) => {
    const r = L * 0.7 * Math.sqrt(k), a = k * 2.39996;
    ns[j].x = r * Math.cos(a); ns[j].y = r * Math.sin(a);
  });
  // x stays in [lo, hi], so that the part is never wider than the picture.
  const lo = ns.map(n => Math.min(0, -(W / 2 - margin - n.l))), hi = ns.map(n => Math.max(0, W / 2 - margin - n.r));
  const clampX = (i, x) => Math.max(lo[i], Math.min(hi[i], x));
  // orient lays the part's longer axis across the picture, which is wider
  // than tall, or down it when the part is too wide for that; the
  // simulation then settles the relations' lengths in that direction.
  const orient = () => {
    const mx = ns.reduce((s, n) => s + n.x, 0) / m, my = ns.reduce((s, n) => s + n.y, 0) / m;
    let sxx = 0, syy = 0, sxy = 0;
    for (const n of ns) { n.x -= mx; n.y -= my; sxx += n.x * n.x; syy += n.y * n.y; sxy += n.x * n.y; }
    const turn = a => ns.map(n => ({ x: n.x * Math.cos(a) + n.y * Math.sin(a), y: -n.x * Math.sin(a) + n.y * Math.cos(a) }));
    const a = 0.5 * Math.atan2(2 * sxy, sxx - syy);
    let p = turn(a);
    const width = Math.max(...p.map((q, i) => q.x + ns[i].r)) - Math.min(...p.map((q, i) => q.x - ns[i].l));
    if (width > W - 2 * margin) p = turn(a + Math.PI / 2);
    p.forEach((q, i) => { ns[i].x = clampX(i, q.x); ns[i].y = q.y; });
  };
  const its = m === 1 ? 0 : 300;
  for (let it = 0; it < its; it++) {
    if (it === its * 0.4) orient();
    const fx = new Float64Array(m), fy = new Float64Array(m);
    for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) {
      const dx = ns[i].x - ns[j].x, dy = ns[i].y - ns[j].y, d2 = Math.max(dx * dx + dy * dy, 1);
      const f = 0.4 * L * L / d2;
      fx[i] += dx * f; fy[i] += dy * f; fx[j] -= dx * f; fy[j] -= dy * f;
    }
    for (const [i, j, lw] of springs) {
      const dx = ns[i].x - ns[j].x, dy = ns[i].y - ns[j].y, d = Math.hypot(dx, dy) || 1;
      const len = springLength(i, j, lw, Math.abs(dx) / d, Math.abs(dy) / d), f = (d - len) / d * 0.8 + d / len * 0.2;
      fx[i] -= dx * f; fy[i] -= dy * f; fx[j] += dx * f; fy[j] += dy * f;
    }
    const temp = L * 0.5 * (1 - it / its) + 1;
    for (let i = 0; i < m; i++) {
      fx[i] -= ns[i].x * 0.03; fy[i] -= ns[i].y * 0.03; // towards the middle
      const d = Math.hypot(fx[i], fy[i]) || 1, step = Math.min(d, temp);
      ns[i].x = clampX(i, ns[i].x + fx[i] / d * step);
      ns[i].y += fy[i] / d * step;
    }
  }
  // No two boxes overlap: push overlapping pairs apart along the shorter
  // overlap (upwards and downwards where the width is used up).
  const gx = 14, gy = 12;
  for (let pass = 0; pass < 200; pass++) {
    let moved = false;
    for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) {
      const a = ns[i], b = ns[j];
      // How far a's box reaches into b's, a on the left (sx -1) or right.
      const sx = a.x < b.x || (a.x === b.x && i < j) ? -1 : 1, sy = a.y < b.y || (a.y === b.y && i < j) ? -1 : 1;
      const reach = (ax, bx) => sx < 0 ? ax + a.r + gx - (bx - b.l) : bx + b.r + gx - (ax - a.l);
      const ox = reach(a.x, b.x), oy = (a.h + b.h) / 2 + gy - Math.abs(a.y - b.y);
      if (ox <= 0 || oy <= 0) continue;
      moved = true;
      const ax = clampX(i, a.x + sx * ox / 2), bx = clampX(j, b.x - sx * ox / 2);
      if (ox < oy && reach(ax, bx) <= 0.5) { a.x = ax; b.x = bx; }
      else { a.y += sy * oy / 2; b.y -= sy * oy / 2; }
    }
    if (!moved) break;
  }
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const n of ns) {
    x0 = Math.min(x0, n.x - n.l); x1 = Math.max(x1, n.x + n.r);
    y0 = Math.min(y0, n.y - n.h / 2); y1 = Math.max(y1, n.y + n.h / 2);
  }
  if (ns.some(n => n.loop)) { y0 -= loopSize; y1 += loopSize; } // a loop is taller than its box
  return { members, x0, y0, w: x1 - x0, h: y1 - y0 };
}

window.addEventListener("resize", () => {
  clearTimeout(window.redrawTimer);
  window.redrawTimer = setTimeout(() => {
    if (drawn && Math.floor($("pic").parentElement.clientWidth) - 2 !== drawn.width) draw($("pic"), drawn.g);
    if (learned && current === null) drawPerDay($("perDay"), learned.days, learned.what);
  }, 150);
});

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
  $("historyBox").addEventListener("toggle", () => { if ($("historyBox").open) renderHistory(); });
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
  setInterval(refreshTimes, 60 * 1000);
  api("stats").then(showMode, () => {});
}

init();
