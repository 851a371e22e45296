// Exactness of the WebAssembly build: the playground's sessions (web/
// playground.cpp, built by scripts/build-web) against the native binary, byte
// for byte, on the same inputs. Run under node:
//
//   node tests/web/exactness.cjs BUILD_WEB/site/timersim.js path/to/timersim
//
// Compared: every frame of `timersim step --format json` (what fired at which
// tick, every arm's placement, every cascade, every level's occupancy and
// clock hand) for seeded connection churn, for timeouts at the level
// boundaries, and for the committed kernel capture; the capture's import
// (`timersim import`); `timersim explain` texts. The heap, which step does
// not draw, is checked against its definition: a timer armed at jiffy J for
// E fires at tick max(E, J + 1). Prints PASS/FAIL per case, then
// "N passed, N failed".
"use strict";

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const [wasmJs, timersim] = process.argv.slice(2);
if (!wasmJs || !timersim) {
  console.error("usage: node tests/web/exactness.cjs BUILD_WEB/site/timersim.js path/to/timersim");
  process.exit(2);
}
const repo = path.resolve(__dirname, "../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "timersim-web-"));

let passed = 0;
let failed = 0;
function check(name, f) {
  try {
    f();
    console.log(`PASS  ${name}`);
    passed++;
  } catch (e) {
    console.log(`FAIL  ${name}\n      ${String(e.message).split("\n").join("\n      ")}`);
    failed++;
  }
}

function native(args) {
  return execFileSync(timersim, args, { encoding: "utf8", maxBuffer: 1 << 30 });
}

// The first differing line of two texts, or null.
function firstDifference(a, b) {
  const x = a.split("\n");
  const y = b.split("\n");
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return `line ${i + 1}:\n  native: ${(x[i] ?? "<end>").slice(0, 300)}\n  wasm:   ${(y[i] ?? "<end>").slice(0, 300)}`;
  return null;
}
function sameText(nativeText, wasmText) {
  const d = firstDifference(nativeText, wasmText);
  if (d) throw new Error(d);
}

// The frames of one design: the start frame, then `ticks` ticks.
function wasmFrames(M, design, options, ticks) {
  const s = M.openSession(design, JSON.stringify(options));
  if (!s) throw new Error(`${design}: ${M.lastError()}`);
  try {
    const out = [s.startFrame()];
    for (let t = 0; t < ticks; t++) out.push(s.tick());
    for (const f of out) if (f.startsWith('{"error"')) throw new Error(f);
    return out.join("");
  } finally {
    s.delete();
  }
}

// Heap: every fire at max(requested, the jiffy of its last arm + 1), and
// nothing left pending that is due.
function checkHeap(M, options, ticks) {
  const s = M.openSession("heap", JSON.stringify(options));
  if (!s) throw new Error(M.lastError());
  try {
    const armedAt = new Map();
    const due = new Map();
    let fires = 0;
    const take = (json) => {
      const f = JSON.parse(json);
      if (f.error) throw new Error(f.error);
      for (const x of f.fired) {
        const want = Math.max(x.requested, armedAt.get(x.timer) + 1);
        if (f.jiffies !== want) throw new Error(`timer ${x.timer} fired at ${f.jiffies}, expected ${want}`);
        due.delete(x.timer);
        fires++;
      }
      for (const a of f.armed) {
        if (a.outcome === "same_expiry") continue;
        armedAt.set(a.timer, f.jiffies);
        due.set(a.timer, Math.max(a.requested, f.jiffies + 1));
      }
      for (const c of f.cancelled) due.delete(c.timer);
      for (const [t, j] of due) if (j < f.jiffies) throw new Error(`timer ${t} due at ${j} still pending at ${f.jiffies}`);
    };
    take(s.startFrame());
    for (let t = 0; t < ticks; t++) take(s.tick());
    if (fires === 0) throw new Error("nothing fired: the case checks nothing");
  } finally {
    s.delete();
  }
}

require(path.resolve(wasmJs))().then((M) => {
  const designs = JSON.parse(M.designs());

  check("every design of all_designs() opens in the playground", () => {
    for (const d of designs) {
      const s = M.openSession(d, '{"hz":250}');
      if (!s) throw new Error(`${d}: ${M.lastError()}`);
      s.delete();
    }
    if (!designs.includes("classic") || !designs.includes("modern") || !designs.includes("heap"))
      throw new Error(`designs() lists ${designs}`);
  });

  // Seeded connection churn: the operation stream `timersim step` runs by default.
  for (const [hz, seed, connections, ticks] of [[250, 1, 300, 3000], [1000, 2, 500, 5000], [100, 3, 200, 2000], [300, 42, 1000, 1500]]) {
    for (const design of ["classic", "modern"]) {
      check(`step ${design}: churn seed ${seed}, ${connections} connections, HZ=${hz}, ${ticks} ticks`, () => {
        const want = native(["step", "--format", "json", "--design", design, "--hz", `${hz}`, "--seed", `${seed}`,
          "--connections", `${connections}`, "--ticks", `${ticks}`]);
        sameText(want, wasmFrames(M, design, { hz, churn: { connections, seed, message_interval_ms: 1000 } }, ticks));
      });
    }
    check(`heap: churn seed ${seed}, HZ=${hz}: each timer fires at max(expires, arm jiffy + 1)`, () =>
      checkHeap(M, { hz, churn: { connections, seed, message_interval_ms: 1000 } }, ticks));
  }

  // Timeouts at and around every level boundary of both wheels, with and without slack.
  const edges = ["1", "2", "63", "64", "65", "255", "256", "257", "504", "511", "512", "4032", "4095", "4096",
    "16383", "16384", "32256", "262143", "262144", "2097152", "16777215", "16777216", "60s", "1.5s", "144ms"];
  for (const [hz, slack] of [[1000, null], [250, null], [250, "off"]]) {
    for (const design of ["classic", "modern"]) {
      if (design === "modern" && slack) continue;
      check(`step ${design}: ${edges.length} timeouts at level boundaries, HZ=${hz}${slack ? ", slack " + slack : ""}`, () => {
        const args = ["step", "--format", "json", "--design", design, "--hz", `${hz}`, "--timeouts", edges.join(","), "--ticks", "600"];
        if (slack) args.push("--slack", slack);
        const opts = { hz, timeouts: edges };
        if (slack) opts.slack = slack;
        sameText(native(args), wasmFrames(M, design, opts, 600));
      });
    }
  }

  // The committed kernel capture: imported, then stepped through whole.
  const capture = path.join(repo, "tests/data/kernel/capture-6.1-hz250.trace.xz");
  const text = execFileSync("xz", ["-dc", capture], { maxBuffer: 1 << 30 });
  const nativeTrace = path.join(tmp, "capture.trace");
  const nativeInput = path.join(tmp, "capture.txt");
  fs.writeFileSync(nativeInput, text);
  native(["import", nativeInput, "-o", nativeTrace]);
  check("import: the kernel capture, byte for byte as `timersim import`", () => {
    M.FS.writeFile("/capture.txt", text);
    const err = M.importFtrace("/capture.txt", "/capture.trace", 0);
    if (err) throw new Error(err);
    const got = M.FS.readFile("/capture.trace", { encoding: "utf8" });
    // The comment names the input file, which differs in name only.
    const want = fs.readFileSync(nativeTrace, "utf8").split(nativeInput).join("/capture.txt");
    sameText(want, got);
    if (got.split("\n").length < 1000) throw new Error("the import is short: the case checks little");
  });
  const header = fs.readFileSync(nativeTrace, "utf8").split("\n", 1)[0];
  const start = Number(/start_jiffies=(\d+)/.exec(header)[1]);
  const end = Number(/jiffies-at-end: (\d+)/.exec(text.toString("utf8"))[1]);
  const ticks = end - start + 10;
  M.FS.writeFile("/native.trace", fs.readFileSync(nativeTrace));
  for (const design of ["classic", "modern"]) {
    check(`step ${design}: the kernel capture, all ${ticks} ticks`, () => {
      const want = native(["step", "--format", "json", "--design", design, "--trace", nativeTrace, "--ticks", `${ticks}`]);
      const got = wasmFrames(M, design, { trace: "/native.trace" }, ticks);
      sameText(want, got);
      if (!/"fired":\[\{/.test(got)) throw new Error("nothing fired: the case checks little");
    });
  }
  check("heap: the kernel capture: each timer fires at max(expires, arm jiffy + 1)", () =>
    checkHeap(M, { trace: "/native.trace" }, ticks));

  // explain: the playground's text for a timer it armed, as the CLI prints it.
  for (const hz of [100, 250, 1000]) {
    check(`explain: timers armed after some ticks at HZ=${hz}, both wheels, as \`timersim explain\``, () => {
      let ownClock = 0; // arms computed from a wheel clock other than jiffies (--clk)
      for (const design of ["classic", "modern"]) {
        const s = M.openSession(design, JSON.stringify({ hz }));
        try {
          for (const [i, timeout] of ["1", "64", "300ms", "5s", "4095", "262144", "30m"].entries()) {
            for (let k = 0; k < 37 * i; k++) s.tick();
            const t = s.addTimer(timeout);
            s.arm(t, M.parseTimeout(timeout, hz));
            const cmd = s.explainCommand(t).split(" ");
            if (cmd[0] !== "timersim") throw new Error(`no command for ${design}`);
            if (cmd.includes("--clk")) ownClock++;
            sameText(native(cmd.slice(1)), s.explain(t));
          }
        } finally {
          s.delete();
        }
      }
      if (!ownClock) throw new Error("no arm used --clk: the case misses the clock-ahead path");
    });
  }

  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
});
