"use strict";
(function () {
  const t0 = performance.now();
  const $ = (id) => document.getElementById(id);
  const outcomes = ["allowed", "refused", "throttled", "blocked"];
  const embedded = $("data");
  const live = !embedded;
  let view = null;
  const state = { zone: "", classes: null, search: "", sort: "total", dir: -1, range: live ? 3600 : 0 };

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  const fmtTime = (s) => (s ? new Date(s).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "");
  const fmtShort = (s) => (s ? new Date(s).toISOString().slice(5, 19).replace("T", " ") : "");
  const total = (b) => b.allowed + b.refused + b.throttled + b.blocked;

  // A view of one site's statistics in its zone (the state it shares);
  // site names it, with its zone where that is another name.
  const site = (z) => z.site || z.zone;
  const siteLabel = (z) => (z.site && z.zone && z.site !== z.zone ? `${z.site} (zone ${z.zone})` : site(z));

  function zones() {
    return view.zones.filter((z) => !state.zone || site(z) === state.zone);
  }

  function setup() {
    const zsel = $("zone");
    const have = new Set([...zsel.options].map((o) => o.value));
    for (const z of view.zones) if (!have.has(site(z))) { zsel.append(el("option", { value: site(z) }, siteLabel(z))); have.add(site(z)); }
    const classes = new Set();
    for (const z of view.zones) for (const b of z.bots) classes.add(b.class);
    const fs = $("classes");
    const shown = new Set([...fs.querySelectorAll("input")].map((i) => i.value));
    for (const c of [...classes].sort()) {
      if (shown.has(c)) continue;
      const box = el("input", { type: "checkbox", value: c, name: "class" });
      box.checked = !state.classes || state.classes.has(c);
      box.addEventListener("change", () => {
        state.classes = new Set([...fs.querySelectorAll("input:checked")].map((i) => i.value));
        render();
      });
      fs.append(el("label", {}, box, " " + c));
    }
  }

  function classOn(c) {
    return !state.classes || state.classes.has(c);
  }

  function render() {
    const zs = zones();
    const src = view.source === "live" ? "live statistics of this Caddy" : "built from decision logs";
    $("subtitle").textContent = `${src}, ${fmtTime(view.generated)}` + (zs.length ? `; since ${fmtTime(zs.map((z) => z.since).sort()[0])}` : "") +
      (zs.length ? `; ${zs.length === 1 ? "site" : "sites"} ${zs.map(siteLabel).join(", ")}` : "");
    renderTotals(zs);
    renderChart(zs);
    renderBots(zs);
    renderClaims(zs);
    renderBlocked(zs);
    renderProblems();
  }

  function renderTotals(zs) {
    const sums = Object.fromEntries(outcomes.map((o) => [o, 0]));
    let dry = 0;
    for (const z of zs) {
      for (const b of z.bots) if (classOn(b.class)) for (const o of outcomes) sums[o] += b[o];
      dry += z.dry_run;
    }
    const box = $("totals");
    box.replaceChildren(...outcomes.map((o) => el("div", { class: "card " + o, id: "total-" + o }, el("b", {}, sums[o].toLocaleString("en")), o)));
    if (dry) box.append(el("div", { class: "card" }, el("b", {}, dry.toLocaleString("en")), "dry run: not enforced"));
  }

  function renderChart(zs) {
    const svg = $("chart");
    const W = 960, H = 240, top = 10, bottom = 20;
    let points = 0, start = null, step = 60;
    const sum = Object.fromEntries(outcomes.map((o) => [o, null]));
    for (const z of zs) {
      const s = z.series;
      if (!s) continue;
      points = s.points; start = s.start; step = s.step;
      for (const [cls, byOutcome] of Object.entries(s.classes || {})) {
        if (!classOn(cls)) continue;
        for (const [o, arr] of Object.entries(byOutcome)) {
          if (!sum[o]) sum[o] = new Array(arr.length).fill(0);
          arr.forEach((v, i) => (sum[o][i] += v));
        }
      }
    }
    // Keep the last part of the series that the range selects, and of
    // that the part that has data: 6 minutes of data fill the chart, not a
    // sliver at its right edge (at least 10 steps are shown).
    let keep = state.range > 0 ? Math.min(points, Math.ceil(state.range / step)) : points;
    let first = points;
    for (const o of outcomes) if (sum[o]) { const i = sum[o].findIndex((v) => v > 0); if (i >= 0) first = Math.min(first, i); }
    const fitted = first < points && points - first + 1 < keep;
    if (fitted) keep = Math.min(keep, Math.max(10, points - first + 1));
    // Not before the statistics began (Caddy's start; the first line of
    // the logs): minutes before it were not counted, not quiet. A line
    // needs two points: the caption says when the count began.
    const since = zs.map((z) => z.since).filter((x) => x).sort()[0];
    const began = start && since ? Math.floor((Date.parse(since) - Date.parse(start)) / (step * 1000)) : 0;
    const clamped = began > 0 && points - began < keep;
    if (clamped) keep = Math.min(points, Math.max(2, points - began));
    if (start && keep < points) {
      start = new Date(Date.parse(start) + (points - keep) * step * 1000).toISOString();
      for (const o of outcomes) if (sum[o]) sum[o] = sum[o].slice(points - keep);
      points = keep;
    }
    svg.dataset.points = String(points);
    const kids = [];
    let maxY = 1;
    for (const o of outcomes) if (sum[o]) maxY = Math.max(maxY, ...sum[o]);
    const sx = (i) => (points > 1 ? (i * W) / (points - 1) : 0);
    const sy = (v) => top + (H - top - bottom) * (1 - v / maxY);
    for (const f of [0, 0.5, 1]) {
      const y = sy(maxY * f);
      kids.push(svgEl("line", { class: "grid", x1: 0, x2: W, y1: y, y2: y }));
      kids.push(svgEl("text", { x: 4, y: y - 2 }, String(Math.round(maxY * f))));
    }
    for (const o of outcomes) {
      if (!sum[o]) continue;
      const pts = sum[o].map((v, i) => `${sx(i).toFixed(1)},${sy(v).toFixed(1)}`).join(" ");
      kids.push(svgEl("polyline", { class: o, points: pts, "data-outcome": o }));
    }
    if (start) {
      const t0 = Date.parse(start), span = step * 1000 * (points - 1);
      for (const f of [0, 0.25, 0.5, 0.75, 1]) {
        const d = new Date(t0 + span * f).toISOString();
        kids.push(svgEl("text", { x: Math.min(W - 90, Math.max(0, W * f - 40)), y: H - 4 }, d.slice(5, 16).replace("T", " ")));
      }
    }
    svg.replaceChildren(...kids);
    const cap = $("chart-caption");
    const per = step >= 3600 ? step / 3600 + " h" : step / 60 + " min";
    const from = clamped ? ` (${view.source === "live" ? "robots_guard started" : "the logs begin"} ${fmtShort(since)} UTC: all the data there is)` : fitted ? " (all the data there is)" : "";
    const span = start ? `, ${fmtShort(start).slice(0, -3)} to ${fmtShort(new Date(Date.parse(start) + step * 1000 * points).toISOString()).slice(0, -3)} UTC` + from : " (UTC)";
    cap.replaceChildren(`Requests per ${per}${span}, classes as filtered:`,
      ...outcomes.flatMap((o) => [el("span", { class: "key " + o }), o]));
  }

  function svgEl(tag, attrs, text) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function sortValue(b, key) {
    if (key === "total") return total(b);
    const v = b[key];
    return v === undefined || v === null ? "" : v;
  }

  function renderBots(zs) {
    const q = state.search.toLowerCase();
    const rows = [];
    for (const z of zs)
      for (const b of z.bots) {
        if (!classOn(b.class)) continue;
        if (q && ![b.key, b.name, b.operator].some((s) => s && s.toLowerCase().includes(q))) continue;
        rows.push([z, b]);
      }
    rows.sort((x, y) => {
      const a = sortValue(x[1], state.sort), b = sortValue(y[1], state.sort);
      return (a < b ? -1 : a > b ? 1 : 0) * state.dir || x[1].key.localeCompare(y[1].key);
    });
    const body = document.querySelector("#bots tbody");
    body.replaceChildren(...rows.map(([z, b]) => botRow(z, b)));
    $("bots-empty").hidden = rows.length > 0;
    for (const th of document.querySelectorAll("#bots th[data-key]"))
      th.setAttribute("aria-sort", th.dataset.key === state.sort ? (state.dir > 0 ? "ascending" : "descending") : "none");
  }

  function botRow(z, b) {
    const name = el("td", { class: "bot" }, el("b", {}, b.key));
    if (b.impostor) name.append(el("br"), el("small", {}, `claimed ${b.name || b.token}, failed its verification`));
    else if (b.name && b.name.toLowerCase() !== b.key) name.append(el("br"), el("small", {}, b.name));
    if (view.zones.length > 1) name.append(el("br"), el("small", { class: "site" }, "site " + siteLabel(z)));
    if (b.bots) name.append(el("br"), el("small", {}, b.bots + " bots"));
    if (b.read_ignored) name.append(el("br"), el("span", { class: "badge ignored", title: b.read_ignored + " violations after its address read robots.txt" }, "read robots.txt, ignored it"));
    const verified = el("td", {}, b.verification ? el("span", { class: "badge " + b.verification }, b.verification) : "");
    const rules = el("ul", {}, ...(b.rules || []).map((r) => el("li", {}, ruleLink(z, r), ` ×${r.count}`)));
    const paths = el("ul", {}, ...(b.paths || []).map((p) => el("li", {}, el("code", {}, p.path), ` ×${p.count}`)));
    // Its own requests for robots.txt, and, for a row marked "read
    // robots.txt, ignored it", when its address had read it: robots.txt
    // is read per address, and another client of the address may have.
    const robots = el("td", { class: "robots" }, b.robots_reads ? `${b.robots_reads}×, last ${fmtShort(b.robots_at)}` : "never");
    if (b.read_ignored)
      robots.append(el("br"), el("small", { class: "address-read" }, b.address_robots_at
        ? `its address: ${fmtShort(b.address_robots_at)}, then ${b.read_ignored} ${b.read_ignored === 1 ? "violation" : "violations"}`
        : `its address: before ${b.read_ignored} ${b.read_ignored === 1 ? "violation" : "violations"} (time not logged)`));
    const tr = el("tr", { "data-key": b.key, "data-class": b.class, "data-zone": z.zone, "data-site": site(z) },
      name, el("td", {}, b.operator || ""), el("td", {}, b.class), verified,
      ...outcomes.map((o) => el("td", { class: "num " + o }, b[o].toLocaleString("en"))),
      el("td", { class: "num" }, b.violations.toLocaleString("en")), robots,
      el("td", {}, rules), el("td", {}, paths), el("td", { title: fmtTime(b.last) }, fmtShort(b.last)));
    if (b.read_ignored) tr.classList.add("ignored");
    return tr;
  }

  function ruleLink(z, r) {
    const older = r.older && r.older.length ? el("small", { title: "also broken under robots.txt " + r.older.join(", ") }, ` (also ${r.older.length} earlier ${r.older.length === 1 ? "version" : "versions"})`) : null;
    if (!r.line) {
      // A rule the guard added to the served robots.txt: say what for.
      const why = { blocked_class: "block_class", trap: "trap" }[r.reason];
      return el("span", { class: "rule" }, el("code", {}, r.rule), why ? ` (${why}: added to the served robots.txt)` : " (added to the served robots.txt)", older);
    }
    const label = `line ${r.line}: ${r.rule}`;
    if (!r.version) return el("span", { class: "rule" }, el("code", {}, label), older);
    const a = el("a", { href: `#robots-${z.zone}-${r.version}-L${r.line}`, title: "robots.txt version " + r.version }, el("code", {}, label));
    a.addEventListener("click", (ev) => { ev.preventDefault(); showVersion(z, r.version, r.line); });
    return el("span", { class: "rule" }, a, older);
  }

  async function showVersion(z, id, line) {
    const ver = (z.versions || []).find((v) => v.id === id);
    let text = ver && ver.text;
    if (!text && live && ver && ver.has_text) {
      const resp = await fetch(`robots?zone=${encodeURIComponent(z.zone)}&site=${encodeURIComponent(z.site || "")}&version=${encodeURIComponent(id)}`);
      if (resp.ok) text = await resp.text();
    }
    const sec = $("robots-section");
    sec.hidden = false;
    $("robots-title").textContent = `robots.txt version ${id} (site ${siteLabel(z)})` + (ver ? `, in force ${fmtTime(ver.first)} to ${fmtTime(ver.last)}` : "");
    const pre = $("robots-text");
    if (!text) {
      pre.replaceChildren(el("span", {}, "The text of this version is not kept" + (live ? "." : ": give it with report --robots FILE.")));
    } else {
      pre.replaceChildren(...text.replace(/\n$/, "").split("\n").map((l, i) => el("span", { "data-line": i + 1, id: `robots-${z.zone}-${id}-L${i + 1}`, class: i + 1 === line ? "hl" : "" }, l || " ")));
      const hl = pre.querySelector(".hl");
      if (hl) hl.scrollIntoView({ block: "center" });
    }
    history.replaceState(null, "", `#robots-${z.zone}-${id}-L${line}`);
  }

  // The requests claiming a browser for a disallowed path, per zone:
  // served and refused, by class and evidence, top paths and rules.
  function renderClaims(zs) {
    const rows = [];
    for (const z of zs) {
      const c = z.browser_disallowed;
      if (!c || c.served + c.refused === 0) continue;
      const counts = (m, f) => el("ul", {}, ...Object.keys(m || {}).sort().map((k) => el("li", { "data-key": k }, k + " ", f(m[k]))));
      const byClass = counts(c.by_class, (n) => `${n.served} served, ${n.refused} refused`);
      const ev = counts(c.evidence, (n) => `×${n}`);
      const paths = el("ul", {}, ...(c.paths || []).map((p) => el("li", {}, el("code", {}, p.path), ` ×${p.count}`)));
      const rules = el("ul", {}, ...(c.rules || []).map((r) => el("li", {}, ruleLink(z, r), ` ×${r.count}`)));
      rows.push(el("tr", { "data-zone": z.zone, "data-site": site(z) }, el("td", {}, siteLabel(z)), el("td", { class: "num served" }, c.served.toLocaleString("en")),
        el("td", { class: "num refused" }, c.refused.toLocaleString("en")), el("td", { class: "by-class" }, byClass), el("td", { class: "evidence" }, ev),
        el("td", { class: "paths" }, paths), el("td", { class: "rules" }, rules)));
    }
    $("claims-section").hidden = rows.length === 0;
    document.querySelector("#claims tbody").replaceChildren(...rows);
  }

  // What made a block, in words (enforce.BlockReason's names).
  const blockWhy = {
    trap: "trap: fetched a trap path",
    disallowed: "strikes: disallowed paths",
    rate: "strikes: kept on through Retry-After",
    class: "block_class: its class is shut out",
    invalid: "strikes: unreadable request targets",
    bad_agent: "a known abusive User-Agent",
    impostor: "impostor: failed the verification of the bot it claims",
    unknown: "unknown (blocked before blocks kept their reason)",
  };

  function renderBlocked(zs) {
    // Live: the store's blocks, with Unblock. From logs: the blocks the
    // logged decisions show in force at the end of the logs.
    if (!live && !zs.some((z) => (z.blocked || []).length)) return;
    $("blocked-section").hidden = false;
    $("blocked-hint").hidden = live;
    $("blocked-hint").textContent = live ? "" : "Blocks in force at the end of the logs, as the decisions logged them; the token is that of the refused request. A running Caddy may have lifted or added blocks since.";
    const rows = [];
    for (const z of zs)
      for (const b of z.blocked || []) {
        let btn = "";
        if (live && !b.ip.startsWith("(")) { // a verified crawler's identity: unblock an address of it
          btn = el("button", { type: "button", "data-ip": b.ip }, "Unblock");
          btn.addEventListener("click", () => unblock(z.zone, b.ip, btn));
        }
        const why = el("td", { class: "why", "data-reason": b.reason || "" }, b.reason ? blockWhy[b.reason] || b.reason : "");
        rows.push(el("tr", { "data-ip": b.ip, "data-site": b.site || site(z) }, el("td", {}, b.site && b.site !== site(z) ? b.site : siteLabel(z)), el("td", {}, el("code", {}, b.ip)), el("td", {}, b.token || (b.crawler ? `(crawler: ${b.crawler})` : live || b.reason === "trap" ? "(whole IP)" : "")), why,
          el("td", {}, fmtTime(b.until) + (b.dry_run ? " (dry run)" : "")), el("td", { class: "num" }, live ? b.offenses : ""), el("td", {}, live ? (b.read_robots ? "yes" : "no") : ""), el("td", {}, btn)));
      }
    document.querySelector("#blocked tbody").replaceChildren(...rows);
    $("blocked-empty").hidden = rows.length > 0;
  }

  async function unblock(zone, ip, btn) {
    btn.disabled = true;
    const status = $("unblock-status");
    try {
      const resp = await fetch("unblock", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ ip, zone }) });
      const ans = await resp.json();
      if (!resp.ok) throw new Error(ans.error || resp.statusText);
      status.textContent = `${ans.ip}: ${ans.lifted} ${ans.lifted === 1 ? "block" : "blocks"} lifted`;
      await load();
    } catch (e) {
      status.textContent = `unblock ${ip} failed: ${e.message}`;
      btn.disabled = false;
    }
  }

  function renderProblems() {
    const ps = view.problems || [];
    $("problems").hidden = ps.length === 0;
    $("problem-list").replaceChildren(...ps.map((p) => el("li", {}, el("b", {}, p.level), " ", p.message, p.file ? ` (${p.file})` : "", p.error ? `: ${p.error}` : "",
      ` — ${p.count}×` + (p.first ? `, first ${fmtTime(p.first)}` : ""))));
    const ns = view.notes || [];
    $("notes").hidden = ns.length === 0;
    $("note-list").replaceChildren(...ns.map((n) => el("li", {}, n)));
  }

  async function load() {
    if (live) {
      const resp = await fetch("stats", { headers: { Accept: "application/json" } });
      if (!resp.ok) throw new Error("stats: " + resp.status);
      view = await resp.json();
    } else {
      view = JSON.parse(embedded.textContent);
    }
    setup();
    render();
  }

  $("range").value = String(state.range);
  $("range").addEventListener("change", (e) => { state.range = Number(e.target.value); render(); });
  $("zone").addEventListener("change", (e) => { state.zone = e.target.value; render(); });
  $("search").addEventListener("input", (e) => { state.search = e.target.value; render(); });
  for (const th of document.querySelectorAll("#bots th[data-key]"))
    th.addEventListener("click", () => {
      const k = th.dataset.key;
      state.dir = state.sort === k ? -state.dir : (["key", "operator", "class", "verification"].includes(k) ? 1 : -1);
      state.sort = k;
      render();
    });
  if (live) {
    $("refresh-label").hidden = false;
    setInterval(() => { if ($("autorefresh").checked) load().catch(showError); }, 15000);
  }
  function showError(e) { $("subtitle").textContent = "could not load the statistics: " + e.message; }
  load().then(() => {
    window.reviewRenderMs = performance.now() - t0;
    document.body.dataset.ready = "true";
  }, showError);
})();
