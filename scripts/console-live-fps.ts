/**
 * The frame rate of a console page fed by the live feed: /live (the default: its table) or /map
 * (the attack map: a live arc from each new event's source country to its sensor, fading in 2 s).
 * A real Core with a registered node placed on the map, events sent on its event socket in that
 * node's name in steps every 20 ms, from public addresses all over the world (so that the map has
 * arcs to draw), chromium counting animation frames and long tasks in the page.
 *
 *   bun scripts/console-live-fps.ts [events/s] [seconds] [page]     # defaults: 1000 10 /live
 *   bun scripts/console-live-fps.ts 200 10 /map
 */
import { stringify } from "../src/protocol/json";
import { BIG_ID, EventStreamClient, getJson, registerNode, startTestCore } from "../tests/helpers";
import { launchBrowser } from "../tests/helpers/console";

const numbers = process.argv.slice(2).filter((a) => !a.startsWith("/"));
const RATE = Number(numbers[0] ?? 1000);
const SECONDS = Number(numbers[1] ?? 10);
const PAGE = process.argv.slice(2).find((a) => a.startsWith("/")) ?? "/live";
/** What shows that the page follows the feed. */
const READY: Record<string, string> = { "/live": ".dot.open", "/map": '[data-feed="open"]' };
if (!READY[PAGE]) throw new Error(`pages measured: ${Object.keys(READY).join(", ")}`);

await using core = await startTestCore();
using node = await registerNode(core, BIG_ID, "fps-sensor");
node.send("NodeStatusUpdate", { node_id: BIG_ID, status: "Running" });
const put = await getJson(`${core.api}/api/v1/nodes/${BIG_ID}/location`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ lat: 50.11, lon: 8.68, label: "Frankfurt" }) });
if (put.status >= 300) throw new Error(`PUT location: ${put.status} ${put.text}`);
await using browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
await page.goto(core.api + PAGE);
await page.locator(READY[PAGE]!).waitFor({ state: "attached" });

using c = await EventStreamClient.connect(core.ports.event, { node_id: BIG_ID });
let n = 0;
const tick = 20;
const timer = setInterval(() => {
  const lines: string[] = [];
  for (let i = 0; i < (RATE * tick) / 1000; i++) {
    n++;
    lines.push(stringify({ eventid: "cowrie.login.failed", src_ip: publicAddress(n), username: "root", password: `pw${n}`, session: `s${n % 97}`, sensor: "fps" }));
  }
  c.send(lines);
}, tick);

/** Addresses spread over the unicast space (skipping 0/8, 10/8, 127/8 and 224/3): most have a country. */
function publicAddress(n: number): string {
  let a = 1 + ((n * 37) % 223);
  if (a === 10 || a === 127) a++;
  return `${a}.${(n * 101) % 256}.${(n * 7) % 256}.${1 + (n % 250)}`;
}

if (process.env.HIDE) await page.addStyleTag({ content: process.env.HIDE });
await page.waitForTimeout(2000); // warm up
const result = await page.evaluate(
  (seconds) =>
    new Promise<{ frames: number; longTasks: number; longest: number; worstFrame: number; rows: string | null; rate: string | null; arcs: string | null }>((resolve) => {
      let frames = 0;
      let last = performance.now();
      let worst = 0;
      let longTasks = 0;
      let longest = 0;
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) {
          longTasks++;
          longest = Math.max(longest, e.duration);
        }
      }).observe({ entryTypes: ["longtask"] });
      const end = performance.now() + seconds * 1000;
      const loop = (t: number) => {
        frames++;
        worst = Math.max(worst, t - last);
        last = t;
        if (t < end) requestAnimationFrame(loop);
        else resolve({ frames: frames / seconds, longTasks, longest, worstFrame: worst, rows: null, rate: document.querySelector('[data-testid="rate"]')?.textContent ?? null, arcs: document.querySelector("canvas[data-feed]")?.getAttribute("data-live") ?? null });
      };
      requestAnimationFrame(loop);
    }),
  SECONDS,
);
clearInterval(timer);
console.log(
  `${PAGE} at ${RATE} events/s for ${SECONDS} s: ${result.frames.toFixed(1)} frames/s, worst frame ${result.worstFrame.toFixed(0)} ms, ${result.longTasks} long tasks (longest ${result.longest.toFixed(0)} ms); ${result.rate === null ? "" : `the page showed ${result.rate} events/s; `}${result.arcs === null ? "" : `live arcs on the map: ${result.arcs}; `}${n} events sent`,
);
