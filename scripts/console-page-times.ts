/**
 * How long each console page takes to show its data on a grown database (issue 34's goal: under
 * 300 ms with 10M stored events). The database is grown through Core's own event socket by the
 * growth bench's filler (bench/growth.ts `fill`: realistic Cowrie traffic spread over 14 days, the
 * newest events now, pots cowrie-01..03 on one node); then Core runs on it, a real node agent
 * registers under the node id those events name and installs two pots (cowrie-01, cowrie-02), and
 * Debian's chromium (playwright-core) loads each page: one warm load, then CONSOLE_TIMES_LOADS
 * timed ones.
 *
 * A page's time is from the start of its navigation until its data is shown: every element that
 * the page draws from its API answers is there (a page-specific list of selectors, checked on
 * every animation frame), and every API request the page made until then has been answered. The
 * navigation's `load` event is not enough: the console asks Core for its data after it.
 * Events keep arriving meanwhile, at the rate that grew the database (about 8 a second at 10M).
 * Beside it: the slowest API request of the median load as the page saw it (Playwright's timings:
 * from the request's start, so queueing behind the page's other requests counts), and each of
 * those requests timed alone (what it costs Core by itself; the sum is the page's API work).
 *
 *   bun scripts/console-page-times.ts                        # 10M events (about 3 GB of disk, a minute or two to fill)
 *   CONSOLE_TIMES_EVENTS=1e6 bun scripts/console-page-times.ts
 *   CONSOLE_TIMES_DB=/path/grown.db bun scripts/console-page-times.ts   # keep (or reuse) the grown database
 *
 * Env: CONSOLE_TIMES_EVENTS (10e6), CONSOLE_TIMES_DAYS (14), CONSOLE_TIMES_LOADS (5),
 * CONSOLE_TIMES_DB (a database path: filled when it does not exist, reused when it does; kept),
 * CONSOLE_TIMES_DIR (where a temporary database goes; default the temp dir).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Page, Request } from "playwright-core";
import { UNIQUE_IP, fill } from "../bench/growth";
import { NODE_ID, addressOf, eventLinesOf } from "../bench/ingest-events";
import { median, startCoreOn, table } from "../bench/lib";
import { silentLogger } from "../src/log";
import { startNode } from "../src/node/agent";
import { freePort, getJson, until } from "../tests/helpers";
import { launchBrowser } from "../tests/helpers/console";

const EVENTS = Math.round(Number(process.env.CONSOLE_TIMES_EVENTS ?? 10e6));
const DAYS = Number(process.env.CONSOLE_TIMES_DAYS ?? 14);
const LOADS = Math.max(1, Number(process.env.CONSOLE_TIMES_LOADS ?? 5));
const GOAL_MS = 300;
const NODE_NAME = "sensor-eu-1";
const POTS = ["cowrie-01", "cowrie-02"];
/** The generator's busiest address (index 0: about 2% of the sessions). */
const BUSIEST_IP = addressOf(0);

const tmp = process.env.CONSOLE_TIMES_DB ? null : mkdtempSync(join(process.env.CONSOLE_TIMES_DIR ?? tmpdir(), "honeybee-console-times-"));
const dbPath = process.env.CONSOLE_TIMES_DB ?? join(tmp!, "grown.db");

try {
  if (existsSync(dbPath)) console.log(`Reusing ${dbPath}`);
  else {
    const s = await fill(dbPath, EVENTS, (DAYS * 86_400_000) / EVENTS);
    console.log(`Filled ${EVENTS.toLocaleString("en-US")} events over ${DAYS} days in ${s.toFixed(0)} s`);
  }
  await measure();
} finally {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}

async function measure() {
  const core = await startCoreOn(dbPath, ["--log-events", "false"], { HONEYBEE_API_RATE_PER_MINUTE: "0" });
  const api = `http://127.0.0.1:${core.ports.api}`;
  const nodeDir = mkdtempSync(join(tmpdir(), "honeybee-console-times-node-"));
  // The node takes the id the stored events name, so its page and its pots' pages show them.
  writeFileSync(join(nodeDir, "node_id"), `${NODE_ID}\n`);
  const node = await startNode(
    { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: nodeDir, name: NODE_NAME, relay_port: 0, log_level: "silent", heartbeat_ms: 5000 },
    silentLogger(),
  );
  try {
    await until(async () => (await getJson(`${api}/api/v1/nodes/${NODE_ID}`)).status === 200, "the node's registration", 3000);
    const command = async (body: unknown) => {
      const r = await getJson(`${api}/api/v1/nodes/${NODE_ID}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (r.status >= 300) throw new Error(`${JSON.stringify(body)}: ${r.status} ${r.text}`);
    };
    const potIds = async () => ((await getJson(`${api}/api/v1/honeypots`)).body.honeypots as { pot_id: string }[]).map((p) => p.pot_id);
    for (const pot of POTS) {
      // The stored events made it an External pot (events, no install): the node installs it for real.
      if ((await potIds()).includes(pot)) {
        await command({ RemovePot: pot });
        await until(async () => !(await potIds()).includes(pot), `${pot} removed from the registry`, 3000);
      }
      await command({ InstallPot: { pot_id: pot, honeypot_type: "cowrie", config: { ssh_port: String(freePort()), telnet_port: String(freePort()) }, auto_start: true } });
    }
    await until(
      async () => {
        const pots = (await getJson(`${api}/api/v1/honeypots`)).body.honeypots as { pot_id: string; status: string }[];
        return POTS.every((id) => pots.some((p) => p.pot_id === id && p.status === "Running"));
      },
      `${POTS.join(", ")} Running`,
      3000,
    );
    // Placed, so the attack map draws its arcs from the source countries to it.
    const put = await getJson(`${api}/api/v1/nodes/${NODE_ID}/location`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ lat: 50.11, lon: 8.68, label: "Frankfurt" }) });
    if (put.status >= 300) throw new Error(`PUT location: ${put.status} ${put.text}`);
    const loadBefore = loadavg()[0]!;
    const stopTraffic = await traffic(core.ports.event);
    let rows: (string | number)[][];
    try {
      rows = await loadPages(api);
    } finally {
      stopTraffic();
    }
    const total = (await getJson(`${api}/api/v1/stats`)).body.total_events as number;
    console.log(
      `\nConsole pages on ${total.toLocaleString("en-US")} stored events (SQLite): ms from navigation start until the page's data is shown, median of ${LOADS} loads after a warm one, events arriving meanwhile (load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after); of the median load: when its last API answer arrived, its slowest API request as the page saw it, and the same requests each timed alone.\n`,
    );
    console.log(table(["page", "ms", `over ${GOAL_MS} ms`, "last API answer at", "slowest API request in the page (ms)", "API requests", "costliest API request alone (ms)", "API ms alone, sum"], rows));
  } finally {
    await node.stop();
    await core.stop();
    rmSync(nodeDir, { recursive: true, force: true });
  }
}

/**
 * Events keep arriving while the pages load, at the rate that grew the database (at least one a
 * second), timed now: as on a sensor under attack, no page is answered from a cache of the
 * previous load, and the live pages have something to show.
 */
async function traffic(port: number): Promise<() => void> {
  const perSecond = Math.max(1, EVENTS / (DAYS * 86_400));
  const make = eventLinesOf("flat", 17, Date.now(), 1000 / perSecond);
  const sock = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
  let i = 0;
  const started = performance.now();
  const timer = setInterval(() => {
    let lines = "";
    for (const due = Math.floor(((performance.now() - started) / 1000) * perSecond); i < due; i++) lines += make(i) + "\n";
    if (lines) sock.write(lines);
  }, 100);
  return () => {
    clearInterval(timer);
    sock.end();
  };
}

/** Each page with the selectors that show its data (every one must match an element). */
function pages(): [string, string[]][] {
  const dash = ['[data-testid="dash-sources"] tbody a', '[data-testid="range-events"]'];
  return [
    ["/", ['[data-testid="top-ips"] tbody a', '[data-testid="health"] a', "#world svg path"]],
    ["/events", ['[data-testid="events"] tbody tr td']],
    ["/sessions", ['[data-testid="sessions"] tbody tr[data-session]']],
    ["/map", ['[data-testid="countries"] tbody a', "#world svg path", '[data-testid="sensor"]', '[data-testid="arc"]']],
    ["/nodes", ['[data-testid="nodes"] tbody a']],
    [`/nodes/${NODE_ID}`, ['[data-testid="pots"] tr[data-pot]', ...dash]],
    ["/kinds/cowrie", dash],
    [`/pots/${POTS[0]}`, ['[data-testid="pot-facts"]', ...dash]],
    ["/artifacts", ['[data-testid="artifacts"]']],
    [`/attackers/${BUSIEST_IP}`, ['[data-testid="attacker-facts"]', '[data-testid="credentials"]', '[data-testid="attacker-events"] tbody tr td']],
    [`/attackers/${UNIQUE_IP}`, ['[data-testid="attacker-facts"]', '[data-testid="attacker-events"] tbody tr td']],
    ["/settings", ['[data-testid="whoami"]', '[data-testid="outputs"]', '[data-testid="rules"]']],
    ["/live", ['.dot.open', '[data-testid="live-events"] tbody tr:not(.spacer-row) td']],
  ];
}

interface Load {
  ms: number;
  /** ms from navigation start until the last API answer arrived (≤ ms: the rest is the page's own work). */
  apiEnd: number;
  slowest: { url: string; ms: number } | null;
  urls: string[];
}

async function loadPages(api: string): Promise<(string | number)[][]> {
  await using browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  context.setDefaultTimeout(60_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const rows: (string | number)[][] = [];
  for (const [path, selectors] of pages()) {
    await loadOnce(page, api + path, selectors); // warm
    const loads: Load[] = [];
    for (let i = 0; i < LOADS; i++) loads.push(await loadOnce(page, api + path, selectors));
    loads.sort((a, b) => a.ms - b.ms);
    const mid = loads[Math.floor(loads.length / 2)]!;
    const ms = median(loads.map((l) => l.ms));
    const alone = await timeAlone([...new Set(mid.urls)]);
    const costliest = alone.reduce<{ url: string; ms: number } | null>((m, a) => (m && m.ms >= a.ms ? m : a), null);
    const sum = alone.reduce((t, a) => t + a.ms, 0);
    const short = (u: string) => u.replace(api, "");
    console.log(`${path}: ${loads.map((l) => Math.round(l.ms)).join(", ")} ms; its API requests alone, costliest first:`);
    for (const a of [...alone].sort((x, y) => y.ms - x.ms).slice(0, 6)) console.log(`  ${a.ms.toFixed(1)} ms ${short(a.url)}`);
    rows.push([
      path,
      Math.round(ms),
      ms > GOAL_MS ? "OVER" : "",
      Math.round(mid.apiEnd),
      mid.slowest ? `${short(mid.slowest.url)} (${Math.round(mid.slowest.ms)})` : "-",
      mid.urls.length,
      costliest ? `${short(costliest.url)} (${Math.round(costliest.ms)})` : "-",
      Math.round(sum),
    ]);
  }
  if (errors.length) console.log(`Page errors: ${errors.join("; ")}`);
  return rows;
}

/**
 * Each API request a page made, timed alone from here (median of 3 after one warm-up): what it
 * costs Core without the page's other requests queued beside it on the same connection pool.
 */
async function timeAlone(urls: string[]): Promise<{ url: string; ms: number }[]> {
  const out: { url: string; ms: number }[] = [];
  for (const url of urls) {
    const ms: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t = performance.now();
      await (await fetch(url)).arrayBuffer();
      if (i > 0) ms.push(performance.now() - t);
    }
    out.push({ url, ms: median(ms) });
  }
  return out;
}

/** One navigation: ms until every selector matches and every API request made until then is answered. */
async function loadOnce(page: Page, url: string, selectors: string[]): Promise<Load> {
  const requests: Request[] = [];
  const done = new Set<Request>();
  const onRequest = (r: Request) => {
    if (!new URL(r.url()).pathname.startsWith("/api/")) return;
    requests.push(r);
  };
  const onDone = (r: Request) => void done.add(r);
  page.on("request", onRequest);
  page.on("requestfinished", onDone);
  page.on("requestfailed", onDone);
  try {
    await page.goto(url, { waitUntil: "commit" });
    const shownMs = await page
      .waitForFunction((sels) => sels.every((s) => document.querySelector(s) !== null) && performance.now(), selectors, { polling: "raf", timeout: 30_000 })
      .catch(async (e) => {
        const missing = await page.evaluate((sels) => sels.filter((s) => document.querySelector(s) === null), selectors);
        throw new Error(`${url}: no ${missing.join(", ")} (${e})`);
      });
    const shown = (await shownMs.jsonValue()) as number;
    const origin = (await page.evaluate(() => performance.timeOrigin)) as number;
    // The API requests made before the data showed (later ones are the page's polls): all answered.
    const before = requests.filter((r) => r.timing().startTime <= origin + shown);
    await until(() => before.every((r) => done.has(r)), `${url}: its API answers`, 6000);
    let apiEnd = 0;
    let slowest: Load["slowest"] = null;
    for (const r of before) {
      const t = r.timing();
      if (t.responseEnd < 0) continue;
      apiEnd = Math.max(apiEnd, t.startTime + t.responseEnd - origin);
      if (!slowest || t.responseEnd > slowest.ms) slowest = { url: r.url(), ms: t.responseEnd };
    }
    return { ms: Math.max(shown, apiEnd), apiEnd, slowest, urls: before.map((r) => r.url()) };
  } finally {
    page.off("request", onRequest);
    page.off("requestfinished", onDone);
    page.off("requestfailed", onDone);
  }
}
