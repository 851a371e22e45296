// The playground in a real browser: Debian's Chromium (headless), driven by
// playwright-core (web/package.json; it never downloads a browser), on the
// page as built, opened from file://. Any console error or page error fails
// the case it happens in.
//
//   node tests/web/browser.cjs BUILD_WEB/site path/to/timersim SCREENSHOT_DIR
//
// The bucket a timer is drawn in and the tick it fires at are checked
// against what the native `timersim explain` prints for the same timer.
// Screenshots (one per design at 1280x720, one panel per design of the
// registry and of a wheel:SPEC, and the phone layout) go to SCREENSHOT_DIR. Prints PASS/FAIL per case, then "N passed, N failed".
"use strict";

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const [site, timersim, shots] = process.argv.slice(2);
if (!site || !timersim || !shots) {
  console.error("usage: node tests/web/browser.cjs BUILD_WEB/site path/to/timersim SCREENSHOT_DIR");
  process.exit(2);
}
const repo = path.resolve(__dirname, "../..");
const { chromium } = require(path.join(repo, "web/node_modules/playwright-core"));
const pageUrl = "file://" + path.resolve(site, "index.html");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
fs.mkdirSync(shots, { recursive: true });

let passed = 0;
let failed = 0;
let problems = []; // console errors and page errors of the current case

function native(args) {
  return execFileSync(timersim, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}
function assert(cond, what) {
  if (!cond) throw new Error(what);
}
function sameLines(got, want) {
  const a = got.split("\n");
  const b = want.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if (a[i] !== b[i]) throw new Error(`line ${i + 1}: page '${a[i]}', CLI '${b[i]}'`);
}

// Where native `timersim explain` puts a timer armed at tick 0 with `timeout`
// jiffies, and the tick it fires at.
function nativePlacement(hz, timeout) {
  const text = native(["explain", "--hz", `${hz}`, "--timeout", `${timeout}`, "--design", "both"]);
  const start = Number(/armed at jiffies (\d+)/.exec(text)[1]);
  const idx = Number(/Bucket index idx = .* = (\d+) /.exec(text)[1]);
  const level = Number(/the timer goes to level (\d+)/.exec(text)[1]);
  const modernAt = Number(/collects that bucket when clk reaches (\d+)/.exec(text)[1]);
  const hops = [...text.matchAll(/-> tv(\d)\[(\d+)\]/g)].map((m) => ({ level: Number(m[1]), slot: Number(m[2]) }));
  const cascadeAt = [...text.matchAll(/At jiffy (\d+) \(timer_jiffies reaches/g)].map((m) => Number(m[1]) - start);
  const classicAt = Number(/loop step where timer_jiffies == (\d+)/.exec(text)[1]);
  return {
    start,
    modern: { level, slot: idx - 64 * level, fires: modernAt - start },
    classic: { hops, cascadeAt, fires: classicAt - start },
    heap: { fires: timeout },
  };
}

async function main() {
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));

  // A fresh page each time: a goto that changes only the hash would keep the old state.
  async function open(hash = "") {
    await page.goto("about:blank");
    await page.goto(pageUrl + hash);
    await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
  }
  async function check(name, f) {
    problems = [];
    try {
      await f();
      if (problems.length) throw new Error(problems.join("\n"));
      console.log(`PASS  ${name}`);
      passed++;
    } catch (e) {
      console.log(`FAIL  ${name}\n      ${String(e.message).split("\n").join("\n      ")}`);
      failed++;
    }
  }
  const statusText = () => page.textContent("#status");
  const currentTick = async () => Number(/^tick (\d+)/.exec(await statusText())[1]);
  // The level and slot of the bucket whose timer list holds `timer`, per design.
  const bucketOf = (design, timer) =>
    page.evaluate(([d, t]) => {
      const cells = [...document.querySelectorAll(`.wheel[data-design="${d}"] .cell`)];
      const c = cells.find((x) => x.dataset.timers.split(" ").includes(String(t)));
      return c ? { level: Number(c.dataset.level), slot: Number(c.dataset.slot), classes: c.className } : null;
    }, [design, timer]);
  const firedIn = (design, timer) =>
    page.evaluate(([d, t]) => [...document.querySelectorAll(`.wheel[data-design="${d}"] .events li`)].some((li) => li.textContent.startsWith(`fired #${t} `)), [design, timer]);
  async function addPreset(name) {
    await page.selectOption("#preset", name);
    await page.click("#add-preset");
  }
  async function runTo(tick) {
    const now = await currentTick();
    assert(tick >= now, `cannot run back from ${now} to ${tick}`);
    if (tick === now) return;
    await page.fill("#run-n", String(tick - now));
    await page.click("#run");
    assert((await currentTick()) === tick, `expected tick ${tick}, the page says ${await statusText()}`);
  }

  const hz = 1000;
  const timeout = 300;
  const want = nativePlacement(hz, timeout);

  await check("a timer added at HZ=1000 sits in the bucket native explain names, in both wheels", async () => {
    await open(`#hz=${hz}`);
    assert((await page.inputValue("#hz")) === String(hz), "the link's HZ was not taken");
    await page.fill("#timeout", String(timeout));
    await page.click("#add");
    const m = await bucketOf("modern", 0);
    assert(m && m.level === want.modern.level && m.slot === want.modern.slot,
      `modern: drawn in ${JSON.stringify(m)}, explain says L${want.modern.level}[${want.modern.slot}]`);
    const c = await bucketOf("classic", 0);
    const first = want.classic.hops[0];
    assert(c && c.level === first.level && c.slot === first.slot,
      `classic: drawn in ${JSON.stringify(c)}, explain says tv${first.level}[${first.slot}]`);
    // The selected timer's explain text is the CLI's, and names the same bucket.
    const text = await page.textContent('#explain [data-design=modern] .explain-text');
    assert(text.includes(`idx ${want.modern.level * 64 + want.modern.slot}`) || text.includes(`= ${want.modern.level * 64 + want.modern.slot} (what`),
      "the explain text names another bucket");
  });

  await check("the classic timer cascades at the jiffy explain names, into the slot it names", async () => {
    assert(want.classic.hops.length === 2, `the case expects one cascade, explain shows ${want.classic.hops.length - 1}`);
    await runTo(want.classic.cascadeAt[0] - 1);
    let c = await bucketOf("classic", 0);
    assert(c.level === want.classic.hops[0].level, `moved early: ${JSON.stringify(c)}`);
    await page.keyboard.press("t");
    c = await bucketOf("classic", 0);
    const to = want.classic.hops[1];
    assert(c && c.level === to.level && c.slot === to.slot, `after the cascade: ${JSON.stringify(c)}, explain says tv${to.level}[${to.slot}]`);
    assert(c.classes.includes("cascade-to"), "the cascade is not animated");
  });

  for (const design of ["heap", "classic", "modern"]) {
    await check(`${design}: the timer fires on tick ${want[design].fires}, the tick native explain gives`, async () => {
      await runTo(want[design].fires - 1);
      assert(!(await firedIn(design, 0)), "fired a tick early");
      const pending = await page.evaluate((d) => document.querySelector(`.wheel[data-design=${d}] .pending summary`).textContent, design);
      assert(/\(1\)/.test(pending), `not pending the tick before: ${pending}`);
      await page.keyboard.press("t");
      assert(await firedIn(design, 0), `did not fire at tick ${want[design].fires}`);
      const late = want[design].fires - timeout;
      const bin = late === 0 ? "0" : late === 1 ? "1" : late <= 3 ? "2-3" : late <= 7 ? "4-7" : "8-15";
      const count = await page.textContent(`.hist[data-design=${design}] .count[data-bin="${bin}"]`);
      assert(count === "1", `histogram bin ${bin} j holds ${count}`);
    });
  }

  await check("step back replays to the tick before; the link recreates the scenario", async () => {
    const before = await currentTick();
    await page.keyboard.press("b");
    assert((await currentTick()) === before - 1, "step back did not go one tick back");
    assert(!(await firedIn("modern", 0)) && (await bucketOf("modern", 0)) !== null, "one tick back the modern timer is pending again");
    const url = page.url();
    assert(/ops=0~a0~300~300/.test(url), `the link does not hold the operation: ${url}`);
    await open(url.slice(url.indexOf("#")));
    assert((await currentTick()) === before - 1, `the link opened at ${await statusText()}`);
    const m = await bucketOf("modern", 0);
    assert(m && m.slot === want.modern.slot, "the link lost the timer");
  });

  await check("cancel and re-arm by clicking a timer", async () => {
    await open(`#hz=250`);
    await addPreset("burst");
    await page.fill("#timeout", "5s");
    await page.click("#add");
    const id = 100;
    const b = await bucketOf("modern", id);
    assert(b, "the 5 s timer is not drawn");
    // Select it by clicking its bucket, then the timer in the bucket's list.
    await page.click(`.wheel[data-design=modern] .cell[data-level="${b.level}"][data-slot="${b.slot}"]`);
    await page.click(`.wheel[data-design=modern] .bucket-detail button[data-timer="${id}"]`);
    await page.keyboard.press("x");
    assert((await bucketOf("modern", id)) === null && (await bucketOf("classic", id)) === null, "cancelled timer still drawn");
    await page.fill("#timeout", "1.5s");
    await page.click("#rearm");
    const again = await bucketOf("modern", id);
    const text = native(["explain", "--hz", "250", "--timeout", "1.5s", "--design", "modern"]);
    const idx = Number(/Bucket index idx = .* = (\d+) /.exec(text)[1]);
    assert(again && again.level * 64 + again.slot === idx, `re-armed into ${JSON.stringify(again)}, explain says idx ${idx}`);
    // The burst: 100 timers of 1 s all in one bucket.
    const burst = await bucketOf("modern", 0);
    const n = await page.getAttribute(`.wheel[data-design=modern] .cell[data-level="${burst.level}"][data-slot="${burst.slot}"]`, "data-count");
    assert(n === "100", `the burst bucket holds ${n}`);
  });

  await check("every key and the batch, TCP and socket presets work; next expiry stops at a fire", async () => {
    await open(`#hz=250`);
    await addPreset("tcp");
    await addPreset("socket");
    await page.fill("#batch-count", "50");
    await page.click("#batch");
    await page.keyboard.press("n");
    const fired = await page.evaluate(() => [...document.querySelectorAll(".events li")].some((li) => li.textContent.startsWith("fired")));
    assert(fired, "next expiry stopped where nothing fired");
    await page.keyboard.press("r");
    await page.keyboard.press(" ");
    assert((await currentTick()) > 64, "r and space did not tick");
    await page.screenshot({ path: path.join(shots, "all-designs-1280x720.png") });
  });

  for (const design of ["classic", "modern", "heap"]) {
    await check(`screenshot: ${design} alone, TCP preset, 80 ticks, a timer selected`, async () => {
      await open(`#hz=250&d=${design}`);
      await addPreset("tcp");
      await page.fill("#run-n", "80");
      await page.click("#run");
      await page.click(`.wheel[data-design=${design}] .pending button[data-timer]`);
      assert((await page.$$(".wheel")).length === 1, "more than one design shown");
      await page.screenshot({ path: path.join(shots, `${design}-1280x720.png`) });
    });
  }

  await check("screenshots: each design's panel, the three side by side at 1280x720", async () => {
    await open(`#hz=250`);
    await addPreset("tcp");
    await page.fill("#run-n", "80");
    await page.click("#run");
    await page.click(`.wheel[data-design=modern] .pending button[data-timer]`);
    for (const design of ["classic", "modern", "heap"]) {
      const panel = await page.$(`.wheel[data-design=${design}]`);
      assert(panel, `no ${design} panel`);
      await panel.screenshot({ path: path.join(shots, `${design}-panel.png`) });
    }
    await (await page.$("#selected")).screenshot({ path: path.join(shots, "explain.png") });
  });


  // A seed design and a wheel:SPEC, as the kernel wheels above: the bucket
  // the native explain names, the tick it fires on, and for cog the cascade
  // drawn as it happens (a dot gliding between the buckets, none when the
  // reader asks for reduced motion).
  const seedText = native(["explain", "--hz", "250", "--timeout", "5000", "--design", "cog"]);
  const seedStart = Number(/armed at jiffies (\d+)/.exec(seedText)[1]);
  // "... from clk C: ring2[46] (delta ...", then its hops, then "It fires on tick T".
  const seedPlace = /from clk \d+: ring(\d+)\[(\d+)\]/.exec(seedText);
  const seedFires = Number(/It fires on tick (\d+)/.exec(seedText)[1]) - seedStart;
  await check("cog: a 5000-jiffy timer sits in the ring and slot native explain names; the cascade glides", async () => {
    await open("#hz=250&d=cog");
    await page.fill("#timeout", "5000");
    await page.click("#add");
    const b = await bucketOf("cog", 0);
    assert(b && b.level === Number(seedPlace[1]) && b.slot === Number(seedPlace[2]),
      `drawn in ${JSON.stringify(b)}, explain says ring${seedPlace[1]}[${seedPlace[2]}]`);
    const text = await page.textContent('#explain [data-design="cog"] .explain-text');
    assert(text.includes(`: ring${seedPlace[1]}[${seedPlace[2]}]`), "the explain text names another bucket");
    // Ring 2 cascades when clk reaches (expires >> 12) << 12.
    const expires = seedStart + 5000;
    const cascadeTick = Math.floor(expires / 4096) * 4096 - seedStart;
    await runTo(cascadeTick - 1);
    assert((await bucketOf("cog", 0)).level === Number(seedPlace[1]), "moved before its cascade");
    await page.keyboard.press("t");
    const moved = await bucketOf("cog", 0);
    assert(moved && moved.level < Number(seedPlace[1]) && moved.classes.includes("cascade-to"), `after the cascade: ${JSON.stringify(moved)}`);
    assert((await page.$$(".wheel .mover")).length > 0, "no timer glides from its old bucket to the new one");
    await page.emulateMedia({ reducedMotion: "reduce" });
    await page.keyboard.press("b");
    await page.keyboard.press("t");
    assert((await page.$$(".wheel .mover")).length === 0, "reduced motion: a dot still moves");
    await page.emulateMedia({ reducedMotion: "no-preference" });
  });
  await check(`cog: the timer fires on tick ${seedFires}, the tick native explain gives`, async () => {
    await runTo(seedFires - 1);
    assert(!(await firedIn("cog", 0)), "fired a tick early");
    await page.keyboard.press("t");
    assert(await firedIn("cog", 0), `did not fire at tick ${seedFires}`);
  });

  await check("netty: new timeouts wait in its queue, the next tick moves them into the wheel, gliding there", async () => {
    await open("#hz=250&d=netty");
    await page.fill("#timeout", "5000");
    await page.click("#add");
    const queue = await page.$eval('.wheel[data-design="netty"] .list[data-level="1"]', (e) => e.dataset.count);
    assert(queue === "1", `the queue holds ${queue}`);
    assert((await bucketOf("netty", 0)) === null, "a new timeout is in the wheel before the tick");
    await page.keyboard.press("t");
    const b = await bucketOf("netty", 0);
    // deadline & 511 from the native explain.
    const slot = Number(/bucket max\(deadline, tick\) & 511 = (\d+)/.exec(native(["explain", "--hz", "250", "--timeout", "5000", "--design", "netty"]))[1]);
    assert(b && b.level === 0 && b.slot === slot, `after the tick: ${JSON.stringify(b)}, explain says bucket ${slot}`);
    assert((await page.$$(".wheel .mover")).length === 1, "the transfer does not glide");
  });

  const wheel = "wheel:rfc-2015";
  const wheelText = native(["explain", "--hz", "250", "--timeout", "5000", "--design", wheel]);
  const wheelPlace = /-> level (\d+) slot (\d+)/.exec(wheelText);
  const wheelFires = Number(/It fires at jiffy (\d+)/.exec(wheelText)[1]) - Number(/armed at jiffies (\d+)/.exec(wheelText)[1]);
  await check(`${wheel}: added from the preset list, the timer in the level and slot native explain names, fires on tick ${wheelFires}`, async () => {
    await open("#hz=250&d=heap");
    await page.selectOption("#wheel-preset", wheel);
    await page.click("#add-wheel");
    assert(await page.$(`.wheel[data-design="${wheel}"]`), "no panel for the wheel");
    assert((await page.$$(".wheel")).length === 2, "the heap and the wheel should be shown");
    await page.fill("#timeout", "5000");
    await page.click("#add");
    const b = await bucketOf(wheel, 0);
    assert(b && b.level === Number(wheelPlace[1]) && b.slot === Number(wheelPlace[2]),
      `drawn in ${JSON.stringify(b)}, explain says ${wheelPlace[0]}`);
    const text = await page.textContent(`#explain [data-design="${wheel}"] .explain-text`);
    sameLines(text.replace(/\n$/, ""), wheelText.replace(/\n$/, ""));
    await runTo(wheelFires - 1);
    assert(!(await firedIn(wheel, 0)), "fired a tick early");
    await page.keyboard.press("t");
    assert(await firedIn(wheel, 0), `did not fire at tick ${wheelFires}`);
    // The link brings the wheel back.
    const url = page.url();
    await open(url.slice(url.indexOf("#")));
    assert(await page.$(`.wheel[data-design="${wheel}"]`), `the link lost the wheel: ${url}`);
  });

  await check("a custom wheel:SPEC; a bad one shows the CLI's error line", async () => {
    await open("#hz=250&d=");
    await page.fill("#wheel-spec", "wheel:bits=6x7:shift=2:mode=in-place:round=up");
    await page.click("#add-wheel");
    assert((await page.$$(".wheel")).length === 1, "the custom wheel is not shown");
    await page.fill("#wheel-spec", "wheel:bits=99");
    await page.click("#add-wheel");
    let cli = "";
    try {
      native(["explain", "--timeout", "1", "--design", "wheel:bits=99"]);
    } catch (e) {
      cli = String(e.stderr).split("\n")[0];
    }
    const shown = await page.textContent("#error");
    assert(cli === `timersim: ${shown}`, `the page says '${shown}', the CLI '${cli}'`);
  });

  await check("a deferrable timer on the modern wheel: the deferrable base drawn, the timer in it", async () => {
    await open("#hz=250&d=modern");
    await page.check("#deferrable");
    await page.fill("#timeout", "300ms");
    await page.click("#add");
    const b = await bucketOf("modern", 0);
    assert(b && b.level >= 100, `the deferrable timer is drawn in ${JSON.stringify(b)}`);
    const rows = await page.$$eval('.wheel[data-design="modern"] .lname', (e) => e.map((x) => x.textContent));
    assert(rows.includes("dL0"), `no deferrable rows: ${rows}`);
    assert(/deferrable base: clk/.test(await page.textContent('.wheel[data-design="modern"] .clock')), "the clock line does not name the deferrable base");
    assert(/ops=0~A0~/.test(page.url()), `the link does not keep it deferrable: ${page.url()}`);
    await page.uncheck("#deferrable");
  });

  await check("a compare --events log of two designs on two CPUs: every design and CPU can be picked", async () => {
    const dir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "timersim-web-"));
    const events = path.join(dir, "events.csv");
    native(["compare", "--hz", "250", "--cpus", "2", "--connections", "60", "--ticks", "300", "--design", "classic,modern",
      "--events", events, "-o", path.join(dir, "report.txt")]);
    await open("#hz=250");
    await page.setInputFiles("#file", events);
    await page.waitForFunction(() => /events log/.test(document.getElementById("status").textContent));
    const options = await page.$$eval("#events-source option", (o) => o.map((x) => x.value));
    for (const want of ["classic/0", "classic/1", "modern/0", "modern/1"])
      assert(options.includes(want), `the picker offers ${options}`);
    await page.selectOption("#events-source", "modern/1");
    await page.waitForFunction(() => /modern's rows of CPU 1/.test(document.getElementById("status").textContent));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  await check("a small loaded file travels in the link (deflate-raw, base64url) and comes back from it", async () => {
    const dir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "timersim-web-"));
    const trace = path.join(dir, "small.trace");
    native(["import", path.join(repo, "tests/data/kernel/small-6.1-hz250.txt"), "-o", trace]);
    await open("#hz=250&d=modern");
    await page.setInputFiles("#file", trace);
    await page.waitForFunction(() => /timersim trace/.test(document.getElementById("status").textContent));
    await page.fill("#run-n", "120");
    await page.click("#run");
    const before = await page.textContent('.wheel[data-design="modern"] .pending summary');
    const url = page.url();
    assert(/file=small\.trace~/.test(url), `the link does not hold the file: ${url.slice(0, 200)}`);
    await open(url.slice(url.indexOf("#")));
    assert(/file small\.trace/.test(await statusText()) && (await currentTick()) === 120, `the link opened: ${await statusText()}`);
    assert((await page.textContent('.wheel[data-design="modern"] .pending summary')) === before, "the link's file gave other frames");
    // A trace that deflates to more than the cap stays out of the link, and the page says so.
    const big = path.join(dir, "big.trace");
    native(["gen", "--workload", "connection-churn", "--connections", "3000", "--duration", "20", "-o", big]);
    await open("#hz=250&d=heap");
    await page.setInputFiles("#file", big);
    await page.waitForFunction(() => /file big\.trace/.test(document.getElementById("status").textContent));
    assert(/too big to travel in the link/.test(await statusText()), `no word of the size: ${await statusText()}`);
    assert(!/file=/.test(page.url()), "a file over the cap went into the link");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // One panel per design of the registry and two wheel:SPECs, for docs/.
  await check("screenshots: every design's panel (TCP and socket presets, 80 ticks, a timer selected)", async () => {
    // Half a 1280 screen: one panel as it shows beside another.
    await page.setViewportSize({ width: 640, height: 720 });
    await open("#hz=250&d=heap");
    const designs = await page.$$eval("#designs input", (b) => b.map((x) => x.value));
    assert(designs.length >= 10, `the page offers ${designs}`);
    for (const design of [...designs, "wheel:rfc-2015", "wheel:classic"]) {
      const w = design.startsWith("wheel:") ? `&w=${encodeURIComponent(design)}` : "";
      await open(`#hz=250&d=${encodeURIComponent(design)}${w}`);
      await addPreset("tcp");
      await addPreset("socket");
      await page.fill("#run-n", "80");
      await page.click("#run");
      // Cancel the soonest timer (netty holds it until the next tick, cog
      // keeps a tombstone), then select the next one.
      await page.click(`.wheel[data-design="${design}"] .pending button[data-timer]`);
      await page.keyboard.press("x");
      await page.click(`.wheel[data-design="${design}"] .pending button[data-timer]`);
      const panel = await page.$(`.wheel[data-design="${design}"]`);
      assert(panel, `no ${design} panel`);
      // Down to the histogram (the same in every panel's screenshot): smaller PNGs for docs/.
      await panel.scrollIntoViewIfNeeded();
      const scroll = await page.evaluate(() => ({ x: window.scrollX, y: window.scrollY }));
      const box = await panel.boundingBox(); // relative to the viewport
      const hist = await (await panel.$(".hist")).boundingBox();
      await page.screenshot({ path: path.join(shots, `panel-${design.replace(/[^a-z0-9-]/gi, "-")}.png`),
        clip: { x: box.x + scroll.x, y: box.y + scroll.y, width: box.width, height: hist.y - box.y }, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 720 });
  });

  await check("load kernel ftrace text (tests/data/kernel/small-6.1-hz250.txt) and step through it", async () => {
    await open();
    await page.setInputFiles("#file", path.join(repo, "tests/data/kernel/small-6.1-hz250.txt"));
    await page.waitForFunction(() => /file small-6\.1/.test(document.getElementById("status").textContent));
    assert(/kernel ftrace text/.test(await statusText()), await statusText());
    assert(await page.isDisabled("#hz"), "a trace fixes HZ, the select should be off");
    await page.fill("#run-n", "400");
    await page.click("#run");
    const pending = await page.evaluate(() => [...document.querySelectorAll(".pending summary")].map((s) => s.textContent));
    assert(pending.every((p) => !/\(0\)/.test(p)), `nothing pending after 400 ticks: ${pending}`);
    const hist = await page.evaluate(() => [...document.querySelectorAll(".hist h3")].map((h) => Number(/\((\d+) fired\)/.exec(h.textContent)[1])));
    assert(hist.every((n) => n > 0), `nothing fired: ${hist}`);
    await page.screenshot({ path: path.join(shots, "ftrace-1280x720.png") });
  });

  await check("load a timersim trace and a compare --events log", async () => {
    const dir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "timersim-web-"));
    const trace = path.join(dir, "small.trace");
    native(["import", path.join(repo, "tests/data/kernel/small-6.1-hz250.txt"), "-o", trace]);
    await page.setInputFiles("#file", trace);
    await page.waitForFunction(() => /timersim trace/.test(document.getElementById("status").textContent));
    await page.keyboard.press("n");
    assert((await currentTick()) > 0, "next expiry did not move");
    const events = path.join(dir, "events.csv");
    native(["compare", "--hz", "250", "--workload", "uniform", "--connections", "50", "--op-interval-ms", "200",
      "--timeout-max-ms", "500", "--ticks", "400", "--design", "modern",
      "--events", events, "-o", path.join(dir, "report.txt")]);
    // A trace fixed HZ; Reset lets the log's HZ be chosen.
    await page.click("#reset");
    await page.selectOption("#hz", "250");
    await page.setInputFiles("#file", events);
    await page.waitForFunction(() => /events log/.test(document.getElementById("status").textContent));
    // The log's own fires, against what the playground's modern wheel fires.
    const rows = fs.readFileSync(events, "utf8").trim().split("\n").slice(1).map((l) => l.split(","));
    const start = 2 ** 32 - 300 * 250;
    const logFires = rows.filter((r) => r[4] === "fire" && Number(r[3]) - start <= 300).length;
    assert(logFires > 0, "the log fires nothing in 300 ticks: the case checks little");
    await page.fill("#run-n", "300");
    await page.click("#run");
    const shown = await page.evaluate(() => Number(/\((\d+) fired\)/.exec(document.querySelector(".hist[data-design=modern] h3").textContent)[1]));
    assert(shown === logFires, `the playground fired ${shown} in 300 ticks, the log ${logFires}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  await check("phone viewport (390x844): the buckets fit the width, no horizontal scroll", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await open(`#hz=250&d=modern`);
    await addPreset("tcp");
    await page.keyboard.press("n");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert(width <= 390, `the page is ${width} px wide`);
    await page.screenshot({ path: path.join(shots, "phone-390x844.png"), fullPage: false });
    await page.setViewportSize({ width: 1280, height: 720 });
  });

  await check("text contrast: every visible text at least 4.5:1 against its background (WCAG AA)", async () => {
    await open(`#hz=250`);
    await page.click("#add-preset");
    const bad = await page.evaluate(() => {
      const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
      const lum = ([r, g, b]) => {
        const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
      };
      const background = (e) => {
        for (; e; e = e.parentElement) {
          const c = rgb(getComputedStyle(e).backgroundColor);
          if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
        }
        return [255, 255, 255];
      };
      const out = [];
      for (const e of document.querySelectorAll("body *")) {
        if (![...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
        if (!e.offsetParent && e.tagName !== "BODY") continue;
        const fg = rgb(getComputedStyle(e).color).slice(0, 3);
        const a = lum(fg), b = lum(background(e));
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        if (ratio < 4.5) out.push(`${e.tagName}.${e.className} "${e.textContent.trim().slice(0, 30)}": ${ratio.toFixed(2)}`);
      }
      return out;
    });
    assert(bad.length === 0, bad.slice(0, 10).join("\n"));
  });

  await browser.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log(`FAIL  browser: ${e.message}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
