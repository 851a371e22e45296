// Exactness of the WebAssembly build: the playground's sessions (web/
// playground.cpp, built by scripts/build-web) against the native binary, byte
// for byte, on the same inputs. Run under node:
//
//   node tests/web/exactness.cjs BUILD_WEB/site/timersim.js path/to/timersim
//
// Compared, for every design of the registry (Module.designs(), the CLI's
// every_design()): every frame of `timersim step --format json` (what fired
// at which tick, every arm's placement, every cascade, every level's or
// ring's occupancy and clock hand) for seeded connection churn, for
// timeouts at the level boundaries, and for the committed kernel capture;
// the capture's import (`timersim import`); `timersim explain` texts. The
// configurable wheel (wheel:SPEC, every preset and two custom specs), which
// step does not take, against `timersim run --zero-cost --events` on a
// seeded trace: the fired (timer, jiffy) sequence and every arm's bucket
// expiry, and against `timersim explain --design wheel:SPEC`. The heap,
// which step does not draw, is checked against its definition: a timer
// armed at jiffy J for E fires at tick max(E, J + 1). Prints PASS/FAIL per
// case, then "N passed, N failed".
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
  return execFileSync(timersim, args, { encoding: "utf8", maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "pipe"] });
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
  const designs = JSON.parse(M.designs()).map((d) => d.name);
  const presets = JSON.parse(M.wheelPresets()).map((p) => `wheel:${p.name}`);
  // The seeds' designs, everything but the kernel wheels and the heap.
  const seeds = designs.filter((d) => !["classic", "modern", "heap"].includes(d));
  const customWheels = ["wheel:bits=6x7:shift=2:mode=in-place:round=up", "wheel:bits=6/5/5/5:mode=cascade:round=up"];

  check("every design of the registry opens in the playground, as the CLI lists them", () => {
    for (const d of [...designs, ...presets, ...customWheels]) {
      const s = M.openSession(d, '{"hz":250}');
      if (!s) throw new Error(`${d}: ${M.lastError()}`);
      s.delete();
    }
    // `timersim run --help` lists the same names (design_names()).
    const help = native(["run", "--help"]).replace(/\s+/g, " ");
    for (const d of designs) if (!help.includes(` ${d},`) && !help.includes(` ${d} `)) throw new Error(`run --help does not name ${d}`);
    if (seeds.length < 7 || presets.length < 6) throw new Error(`designs() lists ${designs}, presets ${presets}`);
  });

  check("a bad wheel:SPEC is refused with the CLI's words", () => {
    for (const spec of ["wheel:bits=99", "wheel:foo", "wheel:bits=8x3:mode=sideways"]) {
      if (M.openSession(spec, '{"hz":250}')) throw new Error(`${spec} opened`);
      let cli = "";
      try {
        native(["explain", "--timeout", "1", "--design", spec]);
      } catch (e) {
        cli = String(e.stderr).split("\n")[0];
      }
      sameText(cli, `timersim: ${M.lastError()}`);
    }
  });

  // Seeded connection churn: the operation stream `timersim step` runs by default.
  for (const [hz, seed, connections, ticks] of [[250, 1, 300, 3000], [1000, 2, 500, 5000], [100, 3, 200, 2000], [300, 42, 1000, 1500]]) {
    for (const design of ["classic", "modern", ...(hz === 250 || hz === 1000 ? seeds : [])]) {
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
    for (const design of ["classic", "modern", ...seeds]) {
      if (design !== "classic" && slack) continue;
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
  for (const design of ["classic", "modern", ...seeds]) {
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
            const t = s.addTimer(timeout, false);
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

  // explain of the seeds' rings and of wheel:SPEC: the CLI's text, and the
  // bucket it names is the one the playground's queue holds the timer in.
  // modern-6.9 is modern's wheel on three bases: its explain names the base
  // (global, or deferrable), then modern's idx and due jiffy.
  for (const design of [...seeds, ...presets, ...customWheels]) {
    check(`explain ${design}: timers armed after some ticks, as \`timersim explain\`, in the bucket it names`, () => {
      const s = M.openSession(design, JSON.stringify({ hz: 250 }));
      try {
        let named = 0;
        for (const [i, timeout] of ["1", "64", "300ms", "5s", "4095", "262144", "30m"].entries()) {
          for (let k = 0; k < 37 * i; k++) s.tick();
          // modern-6.9: every other timer deferrable, on BASE_DEF with its own clk.
          const deferrable = design === "modern-6.9" && i % 2 === 1;
          const t = s.addTimer(timeout, deferrable);
          const frame = JSON.parse(s.arm(t, M.parseTimeout(timeout, 250)));
          const command = s.explainCommand(t);
          if (design === "scheme1" || design === "scheme2") {
            if (command) throw new Error("a list scheme has no explain command");
            if (!s.explain(t).includes(`explain does not apply to ${design}`)) throw new Error(s.explain(t));
            continue;
          }
          const want = native(command.split(" ").slice(1));
          sameText(want, s.explain(t));
          const p = JSON.parse(s.placement(t));
          const rows = frame.rows.map((r) => r.name);
          // Seeds: "placed by ... from clk C: ring2[46]." (cog: "ring2[46] (delta ..."); wheels: "-> level 3 slot 24" (the first placement).
          const seed = /from clk \d+: (\w+)(?:\[(\d+)\])?[.\s(]/.exec(want);
          const wheel = /-> level (\d+) slot (\d+)/.exec(want);
          // modern-6.9: "... BASE_GLOBAL ..." and modern's "idx = level offset 192 + (8388472 & 63) = 248".
          const idx = /Bucket index idx = level offset \d+ \+ \(\d+ & 63\) = (\d+) /.exec(want);
          if (design === "modern-6.9") {
            const base = deferrable ? "BASE_DEF" : "BASE_GLOBAL";
            if (command.includes("--deferrable") !== deferrable) throw new Error(command);
            if (!idx || !want.includes(`puts it on the arming CPU's ${base}`)) throw new Error(want);
            if (p.idx !== Number(idx[1])) throw new Error(`${timeout}: queued at idx ${p.idx}, explain says ${idx[0]}`);
            const due = /collects that bucket when clk reaches (\d+)/.exec(want);
            if (!due || Number(due[1]) !== p.bucket_expiry) throw new Error(`${timeout}: due at ${p.bucket_expiry}, explain says ${due && due[0]}`);
            named++;
          } else if (seed) {
            if (rows[p.level] !== seed[1] || (seed[2] !== undefined && p.slot !== Number(seed[2])))
              throw new Error(`${timeout}: drawn in ${rows[p.level]}[${p.slot}], explain says ${seed[0]}`);
            named++;
          } else if (wheel) {
            if (p.level !== Number(wheel[1]) || p.slot !== Number(wheel[2]))
              throw new Error(`${timeout}: drawn in L${p.level}[${p.slot}], explain says ${wheel[0]}`);
            named++;
          }
          const fires = /It fires (?:at jiff(?:y|ies)|on tick) (\d+)/.exec(want);
          if (fires && Number(fires[1]) !== p.bucket_expiry) throw new Error(`${timeout}: due at ${p.bucket_expiry}, explain says ${fires[0]}`);
        }
        if (!named && design !== "scheme1" && design !== "scheme2") throw new Error("no explain text named a bucket: the case checks nothing");
      } finally {
        s.delete();
      }
    });
  }

  // wheel:SPEC against the engine: a seeded one-CPU trace replayed by
  // `timersim run --zero-cost --events` (each softirq at its tick, as step
  // runs it), its fire rows (jiffies, timer) and enqueue rows' bucket expiry
  // against the playground's frames (the log has no row for an arm that
  // leaves the timer where it was). The kernel wheels go through the same
  // comparison first: it shows the method itself is exact.
  const gen = path.join(tmp, "churn.trace");
  native(["gen", "--workload", "connection-churn", "--connections", "300", "--duration", "16", "--seed", "7", "--hz", "250", "-o", gen]);
  M.FS.writeFile("/churn.trace", fs.readFileSync(gen));
  const genStart = Number(/start_jiffies=(\d+)/.exec(fs.readFileSync(gen, "utf8"))[1]);
  const genTicks = 4000;
  for (const design of ["classic", "modern", ...presets, ...customWheels]) {
    check(`run --events ${design}: a seeded trace, fired (jiffy, timer) and every arm's bucket expiry`, () => {
      const events = path.join(tmp, "events.csv");
      native(["run", "--design", design, "--trace", gen, "--zero-cost", "--events", events, "-o", path.join(tmp, "run.txt")]);
      const want = { fired: [], armed: [] };
      for (const line of fs.readFileSync(events, "utf8").split("\n").slice(1)) {
        const f = line.split(",");
        if (f.length < 12 || Number(f[3]) > genStart + genTicks) continue;
        if (f[4] === "fire") want.fired.push(`${f[3]} ${f[12]}`);
        if (f[4] === "enqueue") want.armed.push(`${f[3]} ${f[12]} ${f[9]}`);
      }
      const got = { fired: [], armed: [] };
      const s = M.openSession(design, JSON.stringify({ trace: "/churn.trace" }));
      if (!s) throw new Error(M.lastError());
      try {
        const take = (json) => {
          const frame = JSON.parse(json);
          if (frame.error) throw new Error(frame.error);
          for (const x of frame.fired) got.fired.push(`${frame.jiffies} ${x.label}`);
          for (const a of frame.armed) if (a.outcome === "queued") got.armed.push(`${frame.jiffies} ${a.label} ${a.bucket_expiry}`);
        };
        take(s.startFrame());
        for (let t = 0; t < genTicks; t++) take(s.tick());
      } finally {
        s.delete();
      }
      if (want.fired.length < 1000) throw new Error(`the run fired ${want.fired.length}: the case checks little`);
      sameText(want.fired.join("\n"), got.fired.join("\n"));
      sameText(want.armed.join("\n"), got.armed.join("\n"));
    });
  }

  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
});
