// The playground's state and controls. One WebAssembly Session per design
// (web/playground.cpp) runs the real queue; every user action is an
// operation in a log (tick, what, timer, timeout), so stepping back and the
// shared link both replay that log from tick 0: the same operations give
// the same frames, the C++ being deterministic. A loaded file is replayed
// the same way from its own events.
"use strict";

(async () => {
  const $ = (id) => document.getElementById(id);
  const statusLine = $("status");
  const errorLine = $("error");
  // Errors are shown, not logged: the tests treat any console error as a bug.
  function showError(msg) {
    errorLine.textContent = msg;
    errorLine.hidden = !msg;
  }

  const M = await createTimersim();
  // Every design of the registry (sim/machine/design.hpp's every_design()),
  // and the configurable wheel's presets: a design added there shows here.
  const REGISTRY = JSON.parse(M.designs());
  const ALL_DESIGNS = REGISTRY.map((d) => d.name);
  const PRESETS_WHEEL = JSON.parse(M.wheelPresets());
  View.setTitles(REGISTRY);
  const DEFAULT_DESIGNS = ["classic", "modern", "heap"];
  const isWheel = (d) => d === "wheel" || d.startsWith("wheel:");
  // Timers added as deferrable (TIMER_DEFERRABLE), shared by every design.
  const deferrable = new Set();

  // What one design's queue holds, as the frames tell it: each pending
  // timer's bucket, plus the precision-error histogram of what fired.
  class TimerBook {
    constructor(design) {
      // The modern wheel's frames do not say which base a timer is on: the
      // book does, from the timers added as deferrable.
      this.base = design === "modern" ? (id) => (deferrable.has(id) ? View.DEF : 0) : () => 0;
      this.timers = new Map(); // id -> {level, slot, bucket_expiry, requested, label}
      this.last = new Map(); // id -> the placement it fired from
      this.hist = new Array(View.BINS.length).fill(0);
    }
    apply(frame) {
      this.last.clear();
      for (const f of frame.fired) {
        const p = this.timers.get(f.timer);
        if (p) this.last.set(f.timer, p);
        this.timers.delete(f.timer);
        this.hist[View.binOf(f.late)]++;
      }
      for (const m of frame.cascaded) {
        const p = this.timers.get(m.timer);
        if (p) Object.assign(p, { level: m.to.level + this.base(m.timer), slot: m.to.slot });
        m.from.level += this.base(m.timer);
        m.to.level += this.base(m.timer);
      }
      for (const a of frame.armed) {
        if (a.outcome === "queued" || a.outcome === "same_bucket")
          this.timers.set(a.timer, { level: a.level + this.base(a.timer), slot: a.slot, bucket_expiry: a.bucket_expiry, requested: a.requested, label: a.label });
      }
      for (const c of frame.cancelled) this.timers.delete(c.timer);
    }
    // The queue's own word on where every pending timer is (Session::
    // placements()), before drawing: moves no frame reports are taken too.
    // Returns those moves, as {timer, from, to}, for the page to animate.
    sync(list) {
      const now = new Map();
      const moved = [];
      for (const [id, level, slot, due] of list) {
        const old = this.timers.get(id);
        const p = old || { requested: due, label: "" };
        const to = { level: level + this.base(id), slot };
        if (old && (old.level !== to.level || old.slot !== to.slot)) moved.push({ timer: id, from: { level: old.level, slot: old.slot }, to });
        now.set(id, Object.assign(p, to, { bucket_expiry: due }));
      }
      this.timers = now;
      return moved;
    }
    place(id) { return this.timers.get(id); }
    lastPlace(id) { return this.last.get(id); }
    size() { return this.timers.size; }
    inLevel(level) {
      return this.soonestWhere((p) => p.level === level);
    }
    soonestWhere(f) {
      return [...this.timers.entries()].filter((e) => f(e[1])).sort((a, b) => a[1].bucket_expiry - b[1].bucket_expiry || a[0] - b[0]).map((e) => e[0]);
    }
    inBucket(level, slot) {
      const ids = [];
      for (const [id, p] of this.timers) if (p.level === level && p.slot === slot) ids.push(id);
      return ids;
    }
    soonest(n) {
      return [...this.timers.entries()].sort((a, b) => a[1].bucket_expiry - b[1].bucket_expiry || a[0] - b[0]).slice(0, n).map((e) => e[0]);
    }
    nextExpiry() {
      let best = Infinity;
      for (const p of this.timers.values()) best = Math.min(best, p.bucket_expiry);
      return best;
    }
  }

  // ---- state -------------------------------------------------------------
  const state = {
    hz: 250,
    designs: DEFAULT_DESIGNS.slice(),
    wheels: [], // wheel:SPEC designs added, checked or not
    seed: 1,
    ops: [], // {tick, k: "a"|"r"|"c", timer, j, label}
    tick: 0,
    file: null, // {name, kind, path | ops}
  };
  let sessions = []; // {design, s, book, frame}
  let selected = null;
  let bucket = null;
  let nextTimer = 0;

  function freeSessions() {
    for (const x of sessions) x.s.delete();
    sessions = [];
  }

  function openSessions() {
    freeSessions();
    const options = { hz: state.hz };
    if (state.file && state.file.path) options.trace = state.file.path;
    for (const d of state.designs) {
      const s = M.openSession(d, JSON.stringify(options));
      if (!s) throw new Error(`${d}: ${M.lastError()}`);
      sessions.push({ design: s.design(), s, book: new TimerBook(s.design()), frame: null });
    }
    if (sessions.length && state.file && state.file.path) {
      state.hz = sessions[0].s.hz();
      $("hz").value = String(state.hz);
    }
    for (const x of sessions) take(x, x.s.startFrame());
    state.tick = 0;
    nextTimer = 0;
    deferrable.clear();
  }

  function take(x, json) {
    const frame = JSON.parse(json);
    if (frame.error) throw new Error(`${x.design}: ${frame.error}`);
    x.book.apply(frame);
    x.frame = frame;
  }

  function startJiffies() {
    return sessions.length ? sessions[0].s.startJiffies() : 0;
  }

  // Applies one operation to every design (the timer numbers agree: every
  // session creates its timers in the same order).
  function applyOp(op) {
    const add = op.k === "a" || op.k === "A"; // A: a deferrable timer
    if (op.k === "A") deferrable.add(op.timer);
    for (const x of sessions) {
      if (add) x.s.addTimer(op.label, op.k === "A");
      if (add || op.k === "r") take(x, x.s.arm(op.timer, op.j));
      else if (op.k === "c") take(x, x.s.cancel(op.timer));
    }
    if (add) nextTimer = op.timer + 1;
  }

  function fileOpsAt(tick) {
    return state.file && state.file.ops ? state.file.ops.get(tick) || [] : [];
  }

  function tickOnce() {
    for (const x of sessions) take(x, x.s.tick());
    state.tick++;
    for (const op of fileOpsAt(state.tick)) applyOp(op);
    for (const op of state.ops) if (op.tick === state.tick) applyOp(op);
  }

  // Back to tick 0, then forward to `target` applying the log on the way.
  function rebuild(target) {
    openSessions();
    state.ops = state.ops.filter((op) => op.tick <= target);
    for (const op of fileOpsAt(0)) applyOp(op);
    for (const op of state.ops) if (op.tick === 0) applyOp(op);
    while (state.tick < target) tickOnce();
  }

  function record(op) {
    state.ops.push(op);
    applyOp(op);
  }

  // ---- actions -----------------------------------------------------------
  function timeoutJiffies(text) {
    const j = M.parseTimeout(text.trim(), state.hz);
    if (j < 0) throw new Error(M.lastError());
    return j;
  }

  function addTimer(text, label, isDeferrable = false) {
    const j = timeoutJiffies(text);
    const id = nextTimer;
    record({ tick: state.tick, k: isDeferrable ? "A" : "a", timer: id, j, label: label || text.trim() });
    return id;
  }

  // Seeded, so the same seed and count give the same batch.
  function mulberry32(a) {
    return () => {
      a |= 0;
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function addBatch() {
    const n = Math.max(1, Math.min(5000, Number($("batch-count").value) || 1));
    const max = timeoutJiffies($("batch-max").value);
    const rand = mulberry32(state.seed * 1000003 + state.ops.length);
    for (let i = 0; i < n; i++) {
      const j = 1 + Math.floor(rand() * max);
      record({ tick: state.tick, k: "a", timer: nextTimer, j, label: `rand${i}` });
    }
  }

  // Presets: typical kernel timeouts (the workloads/generators use the same values).
  const PRESETS = {
    // tcp_retransmit_timer(): RTO of at least 200 ms (TCP_RTO_MIN) plus RTT
    // jitter, some connections in backoff (doubling), delayed ACKs at 40 ms.
    tcp: () => {
      const rand = mulberry32(state.seed * 7919 + state.ops.length);
      const out = [];
      for (let i = 0; i < 24; i++) out.push([`${200 + Math.floor(rand() * 60)}ms`, "rto"]);
      for (const b of [400, 800, 1600, 3200]) out.push([`${b}ms`, "rto-backoff"]);
      for (let i = 0; i < 8; i++) out.push([`${40 + Math.floor(rand() * 4)}ms`, "delack"]);
      return out;
    },
    // sk_wait_data() with SO_RCVTIMEO 5 s, idle timeouts of 60 s, keepalive 2 h.
    socket: () => {
      const out = [];
      for (let i = 0; i < 16; i++) out.push(["5s", "rcvtimeo"]);
      for (let i = 0; i < 16; i++) out.push(["60s", "idle"]);
      for (let i = 0; i < 4; i++) out.push(["7200s", "keepalive"]);
      return out;
    },
    burst: () => Array.from({ length: 100 }, () => ["1s", "burst"]),
  };

  function addPreset(name) {
    for (const [t, label] of PRESETS[name]()) addTimer(t, label);
  }

  // Ticks until one fires: at most to the soonest pending bucket, or (a
  // file may arm sooner timers on the way) until the file's timers fire.
  function nextExpiry() {
    const LIMIT = 100000;
    let target = Infinity;
    for (const x of sessions) target = Math.min(target, x.book.nextExpiry());
    if (target === Infinity && !state.file) {
      statusNote = "nothing is pending";
      return;
    }
    let steps = state.file ? LIMIT : Math.max(1, target - sessions[0].frame.jiffies);
    if (steps > LIMIT) {
      statusNote = `the next expiry is ${steps} ticks away; running ${LIMIT}`;
      steps = LIMIT;
    }
    for (let i = 0; i < steps; i++) {
      tickOnce();
      if (sessions.some((x) => x.frame.fired.length)) break;
    }
  }

  // ---- the URL -----------------------------------------------------------
  // #hz=250&d=classic,modern&seed=1&t=40&ops=0~a0~75~300ms,3~c0
  function encodeOps() {
    return state.ops.map((op) => [op.tick, op.k + op.timer, op.k === "c" ? "" : op.j, op.k === "a" || op.k === "A" ? encodeURIComponent(op.label) : ""].join("~").replace(/~+$/, "")).join(",");
  }
  function decodeOps(text) {
    if (!text) return [];
    return text.split(",").map((item) => {
      const [tick, kt, j, label] = item.split("~");
      const op = { tick: Number(tick), k: kt[0], timer: Number(kt.slice(1)) };
      if (!["a", "A", "r", "c"].includes(op.k) || !Number.isInteger(op.tick) || !Number.isInteger(op.timer)) throw new Error(`bad operation '${item}' in the link`);
      if (op.k !== "c") op.j = Number(j);
      if (op.k === "a" || op.k === "A") op.label = decodeURIComponent(label || "");
      return op;
    });
  }
  // A loaded file travels in the link when small: deflate-raw, base64url,
  // at most FILE_LINK_MAX characters (links beyond a few tens of kB are cut
  // by mail and chat clients); a larger one is named in the status line.
  const FILE_LINK_MAX = 16000;
  // #hz=250&d=classic,modern,wheel%3Arfc-2015&w=wheel%3Arfc-2015&seed=1&t=40&ops=...
  // (or &file=NAME~DATA&src=DESIGN/CPU instead of ops for a loaded file).
  function writeUrl() {
    const enc = (list) => list.map(encodeURIComponent).join(",");
    let h = `hz=${state.hz}&d=${enc(state.designs)}`;
    if (state.wheels.length) h += `&w=${enc(state.wheels)}`;
    h += `&seed=${state.seed}&t=${state.tick}`;
    if (state.file) {
      if (!state.file.link) return; // too big: the link would not recreate it
      h += `&file=${state.file.link}`;
      if (state.file.source) h += `&src=${encodeURIComponent(state.file.source)}`;
    } else {
      h += `&ops=${encodeOps()}`;
    }
    history.replaceState(null, "", `#${h}`);
  }
  function readUrl() {
    const p = new URLSearchParams(location.hash.slice(1));
    if (p.has("hz")) state.hz = Number(p.get("hz"));
    if (p.has("w")) state.wheels = p.get("w").split(",").filter(isWheel);
    if (p.has("d")) state.designs = p.get("d").split(",").filter((d) => ALL_DESIGNS.includes(d) || state.wheels.includes(d));
    if (p.has("seed")) state.seed = Number(p.get("seed"));
    if (p.has("file")) state.fileFromUrl = { link: p.get("file"), source: p.get("src") };
    else state.ops = decodeOps(p.get("ops"));
    return Number(p.get("t") || 0);
  }

  function toBase64url(bytes) {
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function fromBase64url(text) {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  }
  async function pipe(bytes, stream) {
    return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
  }
  // "NAME~DATA": the file's name and its deflated bytes, or null when too big.
  async function fileLink(name, bytes) {
    if (typeof CompressionStream === "undefined") return null;
    const data = toBase64url(await pipe(bytes, new CompressionStream("deflate-raw")));
    const link = `${encodeURIComponent(name)}~${data}`;
    return link.length <= FILE_LINK_MAX ? link : null;
  }
  async function loadShared(shared, tick) {
    // URLSearchParams has decoded the name already; base64url has no "~".
    const cut = shared.link.lastIndexOf("~");
    if (cut < 0 || typeof DecompressionStream === "undefined") throw new Error("the link's file cannot be read here");
    const bytes = await pipe(fromBase64url(shared.link.slice(cut + 1)), new DecompressionStream("deflate-raw"));
    await loadBytes(shared.link.slice(0, cut), bytes, shared.source);
    rebuild(tick);
  }

  // ---- files -------------------------------------------------------------
  async function readFile(file) {
    let bytes = new Uint8Array(await file.arrayBuffer());
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    } else if (bytes[0] === 0xfd && bytes[1] === 0x37 && bytes[2] === 0x7a && bytes[3] === 0x58) {
      throw new Error(`${file.name}: xz-compressed; decompress it first (xz -dk ${file.name}) or use gzip`);
    }
    return bytes;
  }

  // A `compare --events` log: its enqueue and cancel rows as operations at
  // their jiffy, for one of its sources, "DESIGN/CPU" (the first one unless
  // `source` names another); every source it holds is listed for the picker.
  function eventsOps(text, name, source) {
    const lines = text.split("\n");
    if (!lines[0].startsWith("design,cpu,time_ns,jiffies,event,timer,expires")) throw new Error(`${name}: not an events log`);
    // The log has no header: its tick 0 is INITIAL_JIFFIES (2^32 - 300 HZ) of the HZ chosen.
    const start = 2 ** 32 - 300 * state.hz;
    const ops = new Map();
    const dense = new Map();
    const sources = [];
    let skipped = 0;
    let count = 0;
    for (let i = 1; i < lines.length; i++) {
      if (!lines[i]) continue;
      const f = lines[i].split(",");
      if (f.length < 10) throw new Error(`${name}:${i + 1}: expected 10 fields`);
      const here = `${f[0]}/${f[1]}`;
      if (!sources.includes(here)) sources.push(here);
      if (source === undefined || source === null) source = here;
      if (here !== source) { skipped++; continue; }
      const jiffies = Number(f[3]);
      const tick = jiffies - start;
      if (tick < 0) throw new Error(`${name}:${i + 1}: jiffies ${jiffies} is before INITIAL_JIFFIES at HZ=${state.hz}: pick the log's HZ first`);
      // Fires, cascades and softirq runs are the queue's own doing: the
      // playground's wheel makes them again from the operations.
      if (f[4] === "fire" || f[4] === "cascade" || f[4] === "softirq_start" || f[4] === "softirq_end") continue;
      const known = dense.has(f[5]);
      if (!known) dense.set(f[5], dense.size);
      const timer = dense.get(f[5]);
      let op;
      if (f[4] === "enqueue") op = { tick, k: known ? "r" : "a", timer, absolute: Number(f[6]), label: `t${f[5]}` };
      else if (f[4] === "cancel") { if (!known) continue; op = { tick, k: "c", timer }; }
      else throw new Error(`${name}:${i + 1}: event: expected enqueue, cancel, fire, cascade, softirq_start or softirq_end, got '${f[4]}'`);
      if (!ops.has(tick)) ops.set(tick, []);
      ops.get(tick).push(op);
      count++;
    }
    if (!sources.includes(source)) throw new Error(`${name}: no rows of ${source} (it holds ${sources.join(", ")})`);
    return { ops, source, sources, skipped, count, start };
  }

  // The picker of an events log's sources (design/CPU), shown only for one.
  function showSources() {
    const box = $("events-source");
    const f = state.file;
    box.hidden = !(f && f.sources && f.sources.length > 1);
    $("events-source-label").hidden = box.hidden;
    if (box.hidden) return;
    box.replaceChildren(...f.sources.map((src) => {
      const o = document.createElement("option");
      o.value = src;
      const [d, cpu] = src.split("/");
      o.textContent = `${d}, CPU ${cpu}`;
      o.selected = src === f.source;
      return o;
    }));
  }

  async function loadFile(file) {
    await loadBytes(file.name, await readFile(file), null);
    rebuild(0);
  }

  async function loadBytes(name, bytes, source) {
    const head = new TextDecoder().decode(bytes.slice(0, 200));
    if (head.startsWith("design,cpu,time_ns")) {
      const r = eventsOps(new TextDecoder().decode(bytes), name, source);
      // Relative timeouts are taken when an operation is applied, from the
      // absolute expiry in the log and the jiffies then.
      for (const list of r.ops.values()) for (const op of list) if (op.absolute !== undefined) op.j = op.absolute - (r.start + op.tick);
      const [d, cpu] = r.source.split("/");
      state.file = { name, bytes, kind: `compare --events log (${d}'s rows of CPU ${cpu}: ${r.count} operations${r.skipped ? `, ${r.skipped} rows of ${r.sources.length - 1} other source${r.sources.length === 2 ? "" : "s"} not shown` : ""})`, ops: r.ops, sources: r.sources, source: r.source };
    } else {
      const path = "/input.trace";
      if (head.startsWith("# timersim-trace")) {
        M.FS.writeFile(path, bytes);
        state.file = { name, bytes, kind: "timersim trace", path };
      } else {
        M.FS.writeFile("/input.txt", bytes);
        const err = M.importFtrace("/input.txt", path, 0);
        if (err) throw new Error(err);
        state.file = { name, bytes, kind: "kernel ftrace text, imported as `timersim import` does", path };
      }
    }
    state.file.link = await fileLink(name, bytes);
    if (!state.file.link) statusNote = `the file is too big for the link (over ${FILE_LINK_MAX} characters deflated): the link will not bring it`;
    state.ops = [];
    selected = null;
    bucket = null;
    showSources();
  }

  // ---- drawing -----------------------------------------------------------
  let statusNote = "";
  // Cascades glide only after a single step forward (tick or next expiry),
  // not after a run of many ticks or a replay.
  let animate = false;
  function render() {
    const wheels = $("wheels");
    const start = startJiffies();
    const ctx = {
      selected,
      bucket,
      start,
      onBucket: (design, level, slot) => act(() => { bucket = { design, level, slot }; }),
      onTimer: (id) => act(() => { selected = id; }),
    };
    const panels = new Map([...wheels.children].map((p) => [p.dataset.design, p]));
    wheels.replaceChildren();
    for (const x of sessions) {
      // Moves no frame reported (netty's queue to its wheel, scheme 4's
      // overflow to a slot) glide like cascades.
      const silent = x.book.sync(JSON.parse(x.s.placements()));
      const panel = panels.get(x.design) || document.createElement("section");
      panel.className = "wheel";
      panel.dataset.design = x.design;
      View.renderPanel(panel, x.frame, x.book, ctx);
      wheels.append(panel);
      if (animate) View.animateCascades(panel, [...x.frame.cascaded, ...silent]);
    }
    const hz = state.hz;
    const ms = (state.tick * 1000) / hz;
    let s = `tick ${state.tick} (${ms >= 10000 ? (ms / 1000).toFixed(1) + " s" : ms.toFixed(ms % 1 ? 1 : 0) + " ms"} at HZ=${hz}), ${state.ops.length} operations`;
    if (state.file) s += ` \u00b7 file ${state.file.name}: ${state.file.kind}${state.file.link ? "" : " (too big to travel in the link)"}`;
    if (statusNote) s += ` \u00b7 ${statusNote}`;
    statusLine.textContent = s;
    statusNote = "";
    animate = false;
    $("hz").disabled = Boolean(state.file && state.file.path);
    for (const id of ["add", "batch", "add-preset"]) $(id).disabled = Boolean(state.file);
    $("rearm").disabled = $("cancel").disabled = selected === null;

    const items = [];
    if (selected !== null) {
      for (const x of sessions) {
        items.push({
          design: x.design,
          place: JSON.parse(x.s.placement(selected)),
          text: x.s.explain(selected),
          command: x.s.explainCommand(selected),
          start,
        });
      }
    }
    $("selected-none").hidden = selected !== null;
    View.renderExplain($("explain"), items);
    writeUrl();
  }

  function act(f) {
    try {
      showError("");
      f();
    } catch (e) {
      showError(e.message);
    }
    render();
  }

  // ---- wiring ------------------------------------------------------------
  // One checkbox per design of the registry, then one per wheel:SPEC added.
  const designBox = $("designs");
  function designBoxes() {
    designBox.querySelectorAll("label").forEach((l) => l.remove());
    for (const d of [...ALL_DESIGNS, ...state.wheels]) {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.value = d;
      box.checked = state.designs.includes(d);
      box.dataset.design = d;
      const info = REGISTRY.find((r) => r.name === d);
      label.title = info ? info.summary : "configurable wheel (uncheck to leave it out)";
      label.append(box, ` ${d}`);
      designBox.append(label);
      box.addEventListener("change", () => act(() => {
        const on = new Set([...designBox.querySelectorAll("input:checked")].map((b) => b.value));
        state.designs = [...ALL_DESIGNS, ...state.wheels].filter((x) => on.has(x));
        rebuild(state.tick);
      }));
    }
  }

  // The configurable wheel: a preset, or a spec typed in; checked by the C++
  // (parse_wheel_spec()), a bad one refused with the CLI's words.
  const presetBox = $("wheel-preset");
  for (const p of PRESETS_WHEEL) {
    const o = document.createElement("option");
    o.value = `wheel:${p.name}`;
    o.textContent = p.name;
    o.title = `${p.spec}: ${p.source}`;
    presetBox.append(o);
  }
  presetBox.addEventListener("change", () => { $("wheel-spec").value = presetBox.value; });
  $("wheel-spec").value = presetBox.value;
  function addWheel(spec) {
    const s = M.openSession(spec.trim(), JSON.stringify({ hz: state.hz }));
    if (!s) throw new Error(M.lastError());
    const name = s.design(); // the canonical spec, as reports print it
    s.delete();
    if (!state.wheels.includes(name)) state.wheels.push(name);
    if (!state.designs.includes(name)) state.designs.push(name);
    designBoxes();
    rebuild(state.tick);
  }
  $("add-wheel").addEventListener("click", () => act(() => addWheel($("wheel-spec").value)));
  $("wheel-spec").addEventListener("keydown", (e) => { if (e.key === "Enter") $("add-wheel").click(); });

  $("hz").addEventListener("change", () => act(() => {
    state.hz = Number($("hz").value);
    state.ops = [];
    selected = null;
    rebuild(0);
  }));
  $("seed").addEventListener("change", () => act(() => { state.seed = Number($("seed").value) || 0; }));
  $("reset").addEventListener("click", () => act(() => {
    state.ops = [];
    state.file = null;
    selected = null;
    bucket = null;
    $("file").value = "";
    showSources();
    rebuild(0);
  }));
  $("share").addEventListener("click", () => act(() => {
    writeUrl();
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(location.href).catch(() => {});
    statusNote = "the link in the address bar recreates this scenario";
  }));
  $("add").addEventListener("click", () => act(() => { selected = addTimer($("timeout").value, undefined, $("deferrable").checked); }));
  $("rearm").addEventListener("click", () => act(() => {
    record({ tick: state.tick, k: "r", timer: selected, j: timeoutJiffies($("timeout").value) });
  }));
  $("cancel").addEventListener("click", () => act(() => record({ tick: state.tick, k: "c", timer: selected })));
  $("batch").addEventListener("click", () => act(addBatch));
  $("add-preset").addEventListener("click", () => act(() => addPreset($("preset").value)));
  $("tick").addEventListener("click", () => act(() => { tickOnce(); animate = true; }));
  $("run").addEventListener("click", () => act(() => {
    const n = Math.max(1, Math.min(1000000, Number($("run-n").value) || 1));
    for (let i = 0; i < n; i++) tickOnce();
  }));
  $("next").addEventListener("click", () => act(() => { nextExpiry(); animate = true; }));
  $("back").addEventListener("click", () => act(() => {
    if (state.tick === 0) { statusNote = "already at tick 0"; return; }
    rebuild(state.tick - 1);
  }));
  $("events-source").addEventListener("change", async (e) => {
    try {
      showError("");
      await loadBytes(state.file.name, state.file.bytes, e.target.value);
      rebuild(0);
    } catch (err) {
      showError(err.message);
    }
    render();
  });
  $("file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    try {
      showError("");
      await loadFile(f);
    } catch (err) {
      showError(err.message);
      state.file = null;
      showSources();
      rebuild(0);
    }
    render();
  });

  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = { t: "tick", " ": "tick", r: "run", n: "next", b: "back", a: "add", e: "rearm", x: "cancel" };
    const id = keys[e.key];
    if (!id || $(id).disabled) return;
    e.preventDefault();
    $(id).click();
  });

  // ---- start ---------------------------------------------------------------
  try {
    const t = readUrl();
    $("hz").value = String(state.hz);
    $("seed").value = String(state.seed);
    designBoxes();
    if (state.fileFromUrl) await loadShared(state.fileFromUrl, t);
    else rebuild(t);
  } catch (e) {
    showError(e.message);
    state.ops = [];
    state.file = null;
    designBoxes();
    rebuild(0);
  }
  render();
  document.body.dataset.ready = "true";
})();
