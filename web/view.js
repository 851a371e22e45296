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

  const TITLES = { classic: "classic (Linux <= 4.7)", modern: "modern (Linux 6.1)", heap: "heap (exact)" };

  // Where a placement is drawn: [row name, cell index] for a level's bucket.
  function levelRows(frame) {
    const rows = [];
    for (const level of frame.levels) {
      const n = level.counts.length;
      for (let start = 0; start < n; start += ROW) {
        rows.push({
          name: start === 0 ? level.name : `+${start}`,
          level: level.level,
          start,
          counts: level.counts.slice(start, start + ROW),
          pointer: level.pointer >= start && level.pointer < start + ROW ? level.pointer - start : -1,
          total: start === 0 ? level.counts.reduce((a, b) => a + b, 0) : null,
        });
      }
    }
    return rows;
  }

  function bucketName(design, level, slot) {
    if (design === "classic") return `tv${level}[${slot}]`;
    if (design === "modern") return `L${level}[${slot}] (idx ${level * 64 + slot})`;
    return `heap position ${slot}`;
  }

  function clockLine(frame) {
    const parts = [`tick ${frame.tick}`, `jiffies ${frame.jiffies}`];
    if (frame.design === "classic") parts.push(`timer_jiffies ${frame.timer_jiffies}`);
    if (frame.design === "modern") parts.push(`clk ${frame.clk}`, `next_expiry ${frame.next_expiry}`);
    parts.push(`${frame.pending} pending`);
    // 6.1 queues deferrable timers on a base of their own (BASE_DEF); its
    // levels are not drawn, and the timer lists do not tell the bases apart.
    if (frame.deferrable_base) parts.push(`${frame.deferrable_base.pending} on the deferrable base (not drawn)`);
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
    panel.append(el("h2", {}, TITLES[frame.design] || frame.design));
    panel.append(el("p", { class: "clock" }, clockLine(frame)));

    const fired = new Set(frame.fired.map((f) => book.lastPlace(f.timer)).filter(Boolean).map(key));
    const cascadedTo = new Set(frame.cascaded.map((m) => key(m.to)));
    const cascadedFrom = new Set(frame.cascaded.map((m) => key(m.from)));
    const selectedKey = ctx.selected !== null && book.place(ctx.selected) ? key(book.place(ctx.selected)) : null;

    if (frame.levels.length) {
      const grid = el("div", { class: "levels", role: "grid", "aria-label": `${frame.design} buckets` });
      for (const row of levelRows(frame)) {
        const line = el("div", { class: "level", "data-level": row.level });
        line.append(el("span", { class: "lname" }, row.name));
        const cells = el("div", { class: "cells" });
        row.counts.forEach((n, i) => {
          const slot = row.start + i;
          const k = `${row.level}:${slot}`;
          const timers = book.inBucket(row.level, slot);
          const c = el("div", {
            class: `cell ${occupancyClass(n)}`,
            "data-level": row.level,
            "data-slot": slot,
            "data-count": n,
            "data-timers": timers.join(" "),
            title: `${bucketName(frame.design, row.level, slot)}: ${n} timer${n === 1 ? "" : "s"}`,
          });
          if (i === row.pointer) c.classList.add("hand");
          if (fired.has(k)) c.classList.add("fired");
          if (cascadedTo.has(k)) c.classList.add("cascade-to");
          if (cascadedFrom.has(k)) c.classList.add("cascade-from");
          if (k === selectedKey) c.classList.add("selected");
          c.addEventListener("click", () => ctx.onBucket(frame.design, row.level, slot));
          cells.append(c);
        });
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
      li.append(b, el("span", {}, ` ${design === "heap" ? "" : bucketName(design, p.level, p.slot) + ","} due tick ${p.bucket_expiry - ctx.start}`));
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
      d.append(el("h3", {}, TITLES[it.design] || it.design));
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

  return { renderPanel, renderExplain, binOf, BINS, bucketName };
})();
