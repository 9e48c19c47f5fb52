/**
 * ISO 8601 UTC with microseconds, the way Cowrie writes `timestamp` ("2026-11-22T01:07:41.947048Z"),
 * so analysts' range queries and string sorts behave the same on our events as on Cowrie's.
 * The wall clock gives milliseconds and the monotonic clock the digits below; the result never goes
 * backwards within a process, so events of one session sort in the order they happened.
 */
let last = 0;

export function isoMicro(): string {
  let micros = Date.now() * 1000 + Math.floor(((performance.now() * 1000) % 1000));
  if (micros <= last) micros = last + 1;
  last = micros;
  const whole = new Date(Math.floor(micros / 1000)).toISOString(); // yyyy-mm-ddThh:mm:ss.mmmZ
  return `${whole.slice(0, 23)}${String(micros % 1000).padStart(3, "0")}Z`;
}
