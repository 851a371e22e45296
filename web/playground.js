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
  const ALL_DESIGNS = JSON.parse(M.designs());

  // What one design's queue holds, as the frames tell it: each pending
  // timer's bucket, plus the precision-error histogram of what fired.
  class TimerBook {
    constructor() {
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
        if (p) Object.assign(p, { level: m.to.level, slot: m.to.slot });
      }
      for (const a of frame.armed) {
        if (a.outcome === "queued" || a.outcome === "same_bucket")
          this.timers.set(a.timer, { level: a.level, slot: a.slot, bucket_expiry: a.bucket_expiry, requested: a.requested, label: a.label });
      }
      for (const c of frame.cancelled) this.timers.delete(c.timer);
    }
    place(id) { return this.timers.get(id); }
    lastPlace(id) { return this.last.get(id); }
    size() { return this.timers.size; }
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
    designs: ALL_DESIGNS.slice(),
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
      sessions.push({ design: d, s, book: new TimerBook(), frame: null });
    }
    if (sessions.length && state.file && state.file.path) {
      state.hz = sessions[0].s.hz();
      $("hz").value = String(state.hz);
    }
    for (const x of sessions) take(x, x.s.startFrame());
    state.tick = 0;
    nextTimer = 0;
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
    for (const x of sessions) {
      if (op.k === "a") x.s.addTimer(op.label);
      if (op.k === "a" || op.k === "r") take(x, x.s.arm(op.timer, op.j));
      else if (op.k === "c") take(x, x.s.cancel(op.timer));
    }
    if (op.k === "a") nextTimer = op.timer + 1;
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

  function addTimer(text, label) {
    const j = timeoutJiffies(text);
    const id = nextTimer;
    record({ tick: state.tick, k: "a", timer: id, j, label: label || text.trim() });
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
    return state.ops.map((op) => [op.tick, op.k + op.timer, op.k === "c" ? "" : op.j, op.k === "a" ? encodeURIComponent(op.label) : ""].join("~").replace(/~+$/, "")).join(",");
  }
  function decodeOps(text) {
    if (!text) return [];
    return text.split(",").map((item) => {
      const [tick, kt, j, label] = item.split("~");
      const op = { tick: Number(tick), k: kt[0], timer: Number(kt.slice(1)) };
      if (!["a", "r", "c"].includes(op.k) || !Number.isInteger(op.tick) || !Number.isInteger(op.timer)) throw new Error(`bad operation '${item}' in the link`);
      if (op.k !== "c") op.j = Number(j);
      if (op.k === "a") op.label = decodeURIComponent(label || "");
      return op;
    });
  }
  function writeUrl() {
    if (state.file) return; // a file is not in the link
    const h = `hz=${state.hz}&d=${state.designs.join(",")}&seed=${state.seed}&t=${state.tick}&ops=${encodeOps()}`;
    history.replaceState(null, "", `#${h}`);
  }
  function readUrl() {
    const p = new URLSearchParams(location.hash.slice(1));
    if (p.has("hz")) state.hz = Number(p.get("hz"));
    if (p.has("d")) state.designs = p.get("d").split(",").filter((d) => ALL_DESIGNS.includes(d));
    if (p.has("seed")) state.seed = Number(p.get("seed"));
    state.ops = decodeOps(p.get("ops"));
    return Number(p.get("t") || 0);
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
  // their jiffy, for one design (the first in the file) and CPU 0.
  function eventsOps(text, name) {
    const lines = text.split("\n");
    if (!lines[0].startsWith("design,cpu,time_ns,jiffies,event,timer,expires")) throw new Error(`${name}: not an events log`);
    // The log has no header: its tick 0 is INITIAL_JIFFIES (2^32 - 300 HZ) of the HZ chosen.
    const start = 2 ** 32 - 300 * state.hz;
    const ops = new Map();
    const dense = new Map();
    let design = null;
    let skipped = 0;
    let count = 0;
    for (let i = 1; i < lines.length; i++) {
      if (!lines[i]) continue;
      const f = lines[i].split(",");
      if (f.length < 10) throw new Error(`${name}:${i + 1}: expected 10 fields`);
      if (design === null) design = f[0];
      if (f[0] !== design || f[1] !== "0") { skipped++; continue; }
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
    return { ops, design, skipped, count, start };
  }

  async function loadFile(file) {
    const bytes = await readFile(file);
    const head = new TextDecoder().decode(bytes.slice(0, 200));
    if (head.startsWith("design,cpu,time_ns")) {
      const r = eventsOps(new TextDecoder().decode(bytes), file.name);
      // Relative timeouts are taken when an operation is applied, from the
      // absolute expiry in the log and the jiffies then.
      for (const list of r.ops.values()) for (const op of list) if (op.absolute !== undefined) op.j = op.absolute - (r.start + op.tick);
      state.file = { name: file.name, kind: `compare --events log (${r.design}'s rows of CPU 0: ${r.count} operations${r.skipped ? `, ${r.skipped} other rows skipped` : ""})`, ops: r.ops };
    } else {
      const path = "/input.trace";
      if (head.startsWith("# timersim-trace")) {
        M.FS.writeFile(path, bytes);
        state.file = { name: file.name, kind: "timersim trace", path };
      } else {
        M.FS.writeFile("/input.txt", bytes);
        const err = M.importFtrace("/input.txt", path, 0);
        if (err) throw new Error(err);
        state.file = { name: file.name, kind: "kernel ftrace text, imported as `timersim import` does", path };
      }
    }
    state.ops = [];
    selected = null;
    bucket = null;
    history.replaceState(null, "", location.pathname);
    rebuild(0);
  }

  // ---- drawing -----------------------------------------------------------
  let statusNote = "";
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
      const panel = panels.get(x.design) || document.createElement("section");
      panel.className = "wheel";
      panel.dataset.design = x.design;
      View.renderPanel(panel, x.frame, x.book, ctx);
      wheels.append(panel);
    }
    const hz = state.hz;
    const ms = (state.tick * 1000) / hz;
    let s = `tick ${state.tick} (${ms >= 10000 ? (ms / 1000).toFixed(1) + " s" : ms.toFixed(ms % 1 ? 1 : 0) + " ms"} at HZ=${hz}), ${state.ops.length} operations`;
    if (state.file) s += ` \u00b7 file ${state.file.name}: ${state.file.kind}`;
    if (statusNote) s += ` \u00b7 ${statusNote}`;
    statusLine.textContent = s;
    statusNote = "";
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
  const designBox = $("designs");
  for (const d of ALL_DESIGNS) {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = d;
    box.id = `design-${d}`;
    label.append(box, ` ${d}`);
    designBox.append(label);
    box.addEventListener("change", () => act(() => {
      state.designs = ALL_DESIGNS.filter((x) => $(`design-${x}`).checked);
      rebuild(state.tick);
    }));
  }

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
    rebuild(0);
  }));
  $("share").addEventListener("click", () => act(() => {
    writeUrl();
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(location.href).catch(() => {});
    statusNote = "the link in the address bar recreates this scenario";
  }));
  $("add").addEventListener("click", () => act(() => { selected = addTimer($("timeout").value); }));
  $("rearm").addEventListener("click", () => act(() => {
    record({ tick: state.tick, k: "r", timer: selected, j: timeoutJiffies($("timeout").value) });
  }));
  $("cancel").addEventListener("click", () => act(() => record({ tick: state.tick, k: "c", timer: selected })));
  $("batch").addEventListener("click", () => act(addBatch));
  $("add-preset").addEventListener("click", () => act(() => addPreset($("preset").value)));
  $("tick").addEventListener("click", () => act(tickOnce));
  $("run").addEventListener("click", () => act(() => {
    const n = Math.max(1, Math.min(1000000, Number($("run-n").value) || 1));
    for (let i = 0; i < n; i++) tickOnce();
  }));
  $("next").addEventListener("click", () => act(nextExpiry));
  $("back").addEventListener("click", () => act(() => {
    if (state.tick === 0) { statusNote = "already at tick 0"; return; }
    rebuild(state.tick - 1);
  }));
  $("file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    try {
      showError("");
      await loadFile(f);
    } catch (err) {
      showError(err.message);
      state.file = null;
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
    for (const d of ALL_DESIGNS) $(`design-${d}`).checked = state.designs.includes(d);
    rebuild(t);
  } catch (e) {
    showError(e.message);
    state.ops = [];
    rebuild(0);
  }
  render();
  document.body.dataset.ready = "true";
})();
