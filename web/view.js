// Drawing for the playground: one panel per design, its levels as rows of
// 64 buckets (classic tv1's 256 slots as four rows, as `timersim step`
// draws them), the clock hand of each level, the pending timers, the last
// tick's events and the precision-error histogram. Pure DOM, no library.
// Everything drawn comes from the step JSON frames (schema timersim.step.v1)
// the C++ returns, and from what playground.js keeps of them (TimerBook).
"use strict";

const View = (() => {
  const ROW = 64;

  function el(tag, attrs = {}, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Darker for more timers; every step keeps text and outlines readable.
  function occupancyClass(n) {
    if (n === 0) return "o0";
    if (n === 1) return "o1";
    if (n <= 3) return "o2";
    if (n <= 9) return "o3";
    return "o4";
  }

  // The precision-error bins: how late a timer fired, in jiffies.
  const BINS = ["early", "0", "1", "2-3", "4-7", "8-15", "16-31", "32-63", "64-127", "128-255", "256+"];
  function binOf(late) {
    if (late < 0) return 0;
    if (late === 0) return 1;
    const b = 2 + Math.floor(Math.log2(late));
    return Math.min(b, BINS.length - 1);
  }

  // A design's title: its name and the registry's one-line summary
  // (setTitles() from Module.designs()); a wheel:SPEC names itself.
  const TITLES = {};
  function setTitles(designs) {
    for (const d of designs) TITLES[d.name] = `${d.name}: ${d.summary}`;
  }
  function title(design) {
    return TITLES[design] || (design.startsWith("wheel:") ? `${design}: configurable wheel` : design);
  }

  // The modern wheel's deferrable base (BASE_DEF) is drawn below the
  // standard one, its levels numbered from here.
  const DEF = 100;

  // What a frame draws: the kernel wheels' levels (and the modern wheel's
  // deferrable base once it is in use), or the rows of the seeds' queues and
  // of wheel:SPEC (row r is Placement::level r; a row without buckets is a
  // list). Each as {name, level, counts, pointer, total, list}.
  function frameRows(frame) {
    if (frame.rows) return frame.rows.map((r, i) => ({ name: r.name, level: i, counts: r.counts, pointer: r.pointer, total: r.total, list: r.counts.length === 0 }));
    const out = frame.levels.map((l) => ({ name: l.name, level: l.level, counts: l.counts, pointer: l.pointer, total: l.counts.reduce((a, b) => a + b, 0) }));
    if (frame.deferrable_base)
      for (const l of frame.deferrable_base.levels)
        out.push({ name: `d${l.name}`, level: DEF + l.level, counts: l.counts, pointer: l.pointer, total: l.counts.reduce((a, b) => a + b, 0) });
    return out;
  }

  // A ring design (one ring of slots: schemes 4-6, netty) is drawn as a ring.
  function ringRow(frame, rows) {
    const rings = rows.filter((r) => !r.list);
    return frame.rows && rings.length === 1 && rings[0].counts.length >= 128 ? rings[0] : null;
  }

  // Row names of the last frame of each design, for bucketName().
  const ROWNAMES = {};

  // Where a placement is drawn: [row name, cell index] for a level's bucket.
  function levelRows(frame) {
    const rows = [];
    for (const level of frameRows(frame).filter((r) => !r.list)) {
      const n = level.counts.length;
      for (let start = 0; start < n; start += ROW) {
        rows.push({
          name: start === 0 ? level.name : `+${start}`,
          level: level.level,
          start,
          counts: level.counts.slice(start, start + ROW),
          pointer: level.pointer >= start && level.pointer < start + ROW ? level.pointer - start : -1,
          total: start === 0 ? level.total : null,
        });
      }
    }
    return rows;
  }

  function bucketName(design, level, slot) {
    if (design === "classic") return `tv${level}[${slot}]`;
    if (design === "modern") return level >= DEF ? `deferrable L${level - DEF}[${slot}] (idx ${(level - DEF) * 64 + slot})` : `L${level}[${slot}] (idx ${level * 64 + slot})`;
    if (design === "heap") return `heap position ${slot}`;
    const row = ROWNAMES[design] && ROWNAMES[design][level];
    if (!row) return `level ${level}[${slot}]`;
    return row.list ? row.name : `${row.name}[${slot}]`;
  }

  function clockLine(frame) {
    const parts = [`tick ${frame.tick}`, `jiffies ${frame.jiffies}`];
    if (frame.design === "classic") parts.push(`timer_jiffies ${frame.timer_jiffies}`);
    if (frame.design === "modern") parts.push(`clk ${frame.clk}`, `next_expiry ${frame.next_expiry}`);
    if (frame.summary) parts.push(frame.summary);
    else parts.push(`${frame.pending} pending`);
    // 6.1 queues deferrable timers on a base of their own (BASE_DEF), drawn
    // as the rows dL0.. once a deferrable timer was added.
    if (frame.deferrable_base) parts.push(`deferrable base: clk ${frame.deferrable_base.clk}, ${frame.deferrable_base.pending} pending`);
    return parts.join(" \u00b7 ");
  }

  function describeEvents(frame, start) {
    const out = [];
    const tickOf = (j) => j - start;
    if (frame.softirq) out.push(`softirq: ${frame.cost.buckets_scanned} buckets scanned, ${frame.cost.expired} expired`);
    for (const f of frame.fired)
      out.push(`fired #${f.timer} ${f.label} (asked for tick ${tickOf(f.requested)}, ${f.late > 0 ? "+" + f.late + " j late" : f.late < 0 ? f.late + " j EARLY" : "on time"})`);
    if (frame.cascaded.length) {
      const from = new Map();
      for (const m of frame.cascaded) {
        const k = `${bucketName(frame.design, m.from.level, m.from.slot)}`;
        from.set(k, (from.get(k) || 0) + 1);
      }
      for (const [k, n] of from) out.push(`cascade: ${n} timer${n === 1 ? "" : "s"} moved out of ${k}`);
    }
    for (const a of frame.armed)
      out.push(`armed #${a.timer} ${a.label}: ${a.outcome === "queued" || a.outcome === "same_bucket" ? bucketName(frame.design, a.level, a.slot) + ", due at tick " + tickOf(a.bucket_expiry) : a.outcome}`);
    for (const c of frame.cancelled) out.push(`cancelled #${c.timer} ${c.label}${c.pending ? "" : " (was not pending)"}`);
    return out;
  }

  // One design's panel; `book` is playground.js's TimerBook of that design.
  function renderPanel(panel, frame, book, ctx) {
    panel.replaceChildren();
    panel.append(el("h2", {}, title(frame.design)));
    panel.append(el("p", { class: "clock" }, clockLine(frame)));
    const allRows = frameRows(frame);
    ROWNAMES[frame.design] = allRows;
    ctx.ringSize = 0;
    ctx.now = frame.jiffies;

    const fired = new Set(frame.fired.map((f) => book.lastPlace(f.timer)).filter(Boolean).map(key));
    const cascadedTo = new Set(frame.cascaded.map((m) => key(m.to)));
    const cascadedFrom = new Set(frame.cascaded.map((m) => key(m.from)));
    const selectedKey = ctx.selected !== null && book.place(ctx.selected) ? key(book.place(ctx.selected)) : null;

    // One bucket's cell, in a row or on a ring.
    const cellFor = (level, slot, n, extra = "") => {
      const k = `${level}:${slot}`;
      const c = el("div", {
        class: `cell ${occupancyClass(n)} ${extra}`,
        "data-level": level,
        "data-slot": slot,
        "data-count": n,
        "data-timers": book.inBucket(level, slot).join(" "),
        title: `${bucketName(frame.design, level, slot)}: ${n} timer${n === 1 ? "" : "s"}`,
      });
      if (fired.has(k)) c.classList.add("fired");
      if (cascadedTo.has(k)) c.classList.add("cascade-to");
      if (cascadedFrom.has(k)) c.classList.add("cascade-from");
      if (k === selectedKey) c.classList.add("selected");
      c.addEventListener("click", () => ctx.onBucket(frame.design, level, slot));
      return c;
    };

    const ring = ringRow(frame, allRows);
    if (ring) {
      // One ring of slots, clockwise from the top, the hand at its slot.
      ctx.ringSize = ring.counts.length;
      // Rounds: a hashed ring's timers can be revolutions away; scheme 4
      // keeps those on its overflow list instead.
      ctx.ringLevel = allRows.some((r) => r.name === "overflow") ? -1 : ring.level;
      const box = el("div", { class: "ring", role: "grid", "aria-label": `${frame.design} ring of ${ring.counts.length} slots` });
      const n = ring.counts.length;
      ring.counts.forEach((count, slot) => {
        const a = (2 * Math.PI * slot) / n;
        const c = cellFor(ring.level, slot, count, slot === ring.pointer ? "hand" : "");
        c.style.left = `${50 + 46 * Math.sin(a)}%`;
        c.style.top = `${50 - 46 * Math.cos(a)}%`;
        box.append(c);
      });
      const hand = el("div", { class: "ring-hand" });
      hand.style.transform = `rotate(${(360 * ring.pointer) / n}deg)`;
      box.append(hand);
      box.append(el("div", { class: "ring-label" }, `${ring.name}: ${ring.total} in ${n} slots, hand at ${ring.pointer}`));
      panel.append(box);
    }

    // Lists (schemes 1 and 2, scheme 4's overflow, netty's queue of new
    // timeouts and of cancellations): their length and their timers.
    for (const row of allRows.filter((r) => r.list)) {
      // Scheme 2 keeps its list sorted by expiry; the others in arm order.
      const ids = frame.design === "scheme2" ? book.inLevel(row.level) : book.inLevel(row.level).sort((a, b) => a - b);
      const box = el("div", { class: "list", "data-level": row.level, "data-count": row.total });
      box.append(el("span", { class: "lname" }, `${row.name}: ${row.total} entr${row.total === 1 ? "y" : "ies"}`));
      const cells = el("div", { class: "list-cells" });
      for (const id of ids.slice(0, 64)) {
        const p = book.place(id);
        const c = el("button", { type: "button", class: id === ctx.selected ? "entry chosen" : "entry", "data-timer": id,
          title: `#${id} ${p.label}: due tick ${p.bucket_expiry - ctx.start}` }, String(p.bucket_expiry - frame.jiffies));
        c.addEventListener("click", () => ctx.onTimer(id));
        cells.append(c);
      }
      if (ids.length > 64) cells.append(el("span", { class: "more" }, `+${ids.length - 64}`));
      if (row.total > ids.length && !ids.length) cells.append(el("span", { class: "more" }, "held (cancelled, freed at the next tick)"));
      box.append(cells);
      panel.append(box);
    }

    const gridRows = ring ? [] : levelRows(frame);
    if (gridRows.length) {
      const grid = el("div", { class: "levels", role: "grid", "aria-label": `${frame.design} buckets` });
      for (const row of gridRows) {
        const line = el("div", { class: "level", "data-level": row.level });
        line.append(el("span", { class: "lname" }, row.name));
        const cells = el("div", { class: "cells" });
        row.counts.forEach((n, i) => cells.append(cellFor(row.level, row.start + i, n, i === row.pointer ? "hand" : "")));
        // A level of fewer than 64 buckets (wheel:SPEC) spans the width too.
        if (row.counts.length !== ROW) cells.style.gridTemplateColumns = `repeat(${row.counts.length}, 1fr)`;
        line.append(cells);
        line.append(el("span", { class: "ltotal" }, row.total === null ? "" : String(row.total)));
        grid.append(line);
      }
      panel.append(grid);
    }

    const events = describeEvents(frame, ctx.start);
    const log = el("ul", { class: "events", "aria-label": "what the last step did" });
    for (const e of events.slice(0, 12)) log.append(el("li", {}, e));
    if (events.length > 12) log.append(el("li", {}, `\u2026 and ${events.length - 12} more`));
    if (!events.length) log.append(el("li", { class: "quiet" }, "nothing happened in the last step"));
    panel.append(log);

    if (ctx.bucket && ctx.bucket.design === frame.design) {
      const ids = book.inBucket(ctx.bucket.level, ctx.bucket.slot);
      const box = el("div", { class: "bucket-detail" });
      box.append(el("h3", {}, `${bucketName(frame.design, ctx.bucket.level, ctx.bucket.slot)}: ${ids.length} timer${ids.length === 1 ? "" : "s"}`));
      box.append(timerList(ids.slice(0, 200), book, ctx, frame.design));
      panel.append(box);
    }

    const pending = book.soonest(50);
    const det = el("details", { class: "pending", open: true });
    det.append(el("summary", {}, `Pending timers, soonest first (${book.size()})`));
    det.append(timerList(pending, book, ctx, frame.design));
    panel.append(det);

    panel.append(histogram(book.hist, frame.design));
  }

  function key(p) {
    return `${p.level}:${p.slot}`;
  }

  function timerList(ids, book, ctx, design) {
    const ol = el("ol", { class: "timers" });
    for (const id of ids) {
      const p = book.place(id);
      if (!p) continue;
      const li = el("li");
      const b = el("button", {
        type: "button",
        class: id === ctx.selected ? "timer chosen" : "timer",
        "data-timer": id,
        title: "select: explain, cancel or re-arm",
      }, `#${id} ${p.label}`);
      b.addEventListener("click", () => ctx.onTimer(id));
      // A hashed ring's timer waits out its rounds: visits of its slot
      // before the one that expires it (scheme 6's and netty's counter).
      const rounds = ctx.ringSize && p.level === ctx.ringLevel ? `, rounds ${Math.max(0, Math.floor((p.bucket_expiry - ctx.now - 1) / ctx.ringSize))}` : "";
      li.append(b, el("span", {}, ` ${design === "heap" ? "" : bucketName(design, p.level, p.slot) + ","} due tick ${p.bucket_expiry - ctx.start}${rounds}`));
      ol.append(li);
    }
    return ol;
  }

  function histogram(hist, design) {
    const box = el("div", { class: "hist", "data-design": design });
    const total = hist.reduce((a, b) => a + b, 0);
    box.append(el("h3", {}, `Precision error: how late timers fired (${total} fired)`));
    const max = Math.max(1, ...hist);
    const table = el("div", { class: "bars" });
    BINS.forEach((name, i) => {
      table.append(el("span", { class: "bin" }, `${name} j`));
      const bar = el("span", { class: i === 0 && hist[0] ? "bar early" : "bar" });
      bar.style.width = `${(100 * hist[i]) / max}%`;
      const cell = el("span", { class: "barcell" });
      cell.append(bar);
      table.append(cell, el("span", { class: "count", "data-bin": name }, String(hist[i])));
    });
    box.append(table);
    return box;
  }

  function renderExplain(box, items) {
    box.replaceChildren();
    for (const it of items) {
      const d = el("div", { class: "explain-design", "data-design": it.design });
      d.append(el("h3", {}, title(it.design)));
      const p = it.place;
      d.append(el("p", {
        class: "placement",
        "data-pending": p.pending,
        "data-level": p.level,
        "data-slot": p.slot,
      }, p.pending ? `now in ${bucketName(it.design, p.level, p.slot)}, due at tick ${p.bucket_expiry - it.start} (jiffies ${p.bucket_expiry})` : "not pending"));
      d.append(el("pre", { class: "explain-text" }, it.text));
      if (it.command) {
        const p = el("p", { class: "command" }, "The same text from the CLI: ");
        p.append(el("code", {}, it.command));
        d.append(p);
      }
      box.append(d);
    }
  }

  // Cascades as they happen: a dot per moved timer (at most 24) glides
  // from the bucket it left to the one it went to. Nothing moves when the
  // reader asked for reduced motion: the cells' outlines still mark both.
  // `moves`: {timer, from, to} with from and to as {level, slot}.
  function animateCascades(panel, moves) {
    if (!moves.length || !panel.animate) return;
    if (window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches) return;
    // A bucket's cell, or a list's box (netty's queue, scheme 4's overflow).
    const cellOf = (p) => panel.querySelector(`.cell[data-level="${p.level}"][data-slot="${p.slot}"]`) ||
      panel.querySelector(`.list[data-level="${p.level}"] .lname`);
    const base = panel.getBoundingClientRect();
    for (const m of moves.slice(0, 24)) {
      const a = cellOf(m.from);
      const b = cellOf(m.to);
      if (!a || !b) continue;
      const ra = a.getBoundingClientRect();
      const rb = b.getBoundingClientRect();
      const dot = el("div", { class: "mover", "aria-hidden": "true" });
      dot.style.left = `${ra.left - base.left + ra.width / 2 - 4}px`;
      dot.style.top = `${ra.top - base.top + ra.height / 2 - 4}px`;
      panel.append(dot);
      const dx = rb.left - ra.left + (rb.width - ra.width) / 2;
      const dy = rb.top - ra.top + (rb.height - ra.height) / 2;
      dot.animate([{ transform: "translate(0, 0)", opacity: 1 }, { transform: `translate(${dx}px, ${dy}px)`, opacity: 0.9 }],
        { duration: 900, easing: "ease-in-out", fill: "forwards" }).finished.then(() => dot.remove(), () => dot.remove());
    }
  }

  return { renderPanel, renderExplain, animateCascades, binOf, BINS, bucketName, setTitles, DEF };
})();
