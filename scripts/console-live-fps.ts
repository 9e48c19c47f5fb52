/**
 * The frame rate of the console's /live page while Core feeds it 1,000 events/s: a real Core,
 * events sent on its event socket in steps of 20 every 20 ms, chromium counting animation
 * frames and long tasks in the page. Run: bun scripts/console-live-fps.ts [events/s] [seconds]
 */
import { stringify } from "../src/protocol/json";
import { EventStreamClient, startTestCore } from "../tests/helpers";
import { launchBrowser } from "../tests/helpers/console";

const RATE = Number(process.argv[2] ?? 1000);
const SECONDS = Number(process.argv[3] ?? 10);

await using core = await startTestCore();
await using browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
await page.goto(core.api + "/live");
await page.locator(".dot.open").waitFor();

using c = await EventStreamClient.connect(core.ports.event);
let n = 0;
const tick = 20;
const timer = setInterval(() => {
  const lines: string[] = [];
  for (let i = 0; i < (RATE * tick) / 1000; i++) {
    n++;
    lines.push(stringify({ eventid: "cowrie.login.failed", src_ip: `198.51.100.${n % 250}`, username: "root", password: `pw${n}`, session: `s${n % 97}`, sensor: "fps" }));
  }
  c.send(lines);
}, tick);

if (process.env.HIDE) await page.addStyleTag({ content: process.env.HIDE });
await page.waitForTimeout(2000); // warm up
const result = await page.evaluate(
  (seconds) =>
    new Promise<{ frames: number; longTasks: number; longest: number; worstFrame: number; rows: string | null; rate: string | null }>((resolve) => {
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
        else resolve({ frames: frames / seconds, longTasks, longest, worstFrame: worst, rows: null, rate: document.querySelector('[data-testid="rate"]')?.textContent ?? null });
      };
      requestAnimationFrame(loop);
    }),
  SECONDS,
);
clearInterval(timer);
console.log(
  `/live at ${RATE} events/s for ${SECONDS} s: ${result.frames.toFixed(1)} frames/s, worst frame ${result.worstFrame.toFixed(0)} ms, ${result.longTasks} long tasks (longest ${result.longest.toFixed(0)} ms); the page showed ${result.rate} events/s; ${n} events sent`,
);
