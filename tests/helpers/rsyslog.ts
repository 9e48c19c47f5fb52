/**
 * A private rsyslogd for the syslog output tests: its own config (TCP and UDP inputs on
 * loopback, every message written to a file with the fields rsyslog parsed from it), pid file
 * and work folder, in the foreground (`-n`), stopped by the test.
 */
import type { Subprocess } from "bun";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { requireTool } from "./clients";
import { freePort } from "./index";
import { waitFor } from "./outputs";

export const RSYSLOGD = () => requireTool("rsyslogd");

export class Rsyslog {
  private proc: Subprocess | null = null;
  readonly out: string;
  readonly tcpPort = freePort();
  readonly udpPort = freePort();

  constructor(private readonly dir: string) {
    this.out = join(dir, "received.log");
    writeFileSync(
      join(dir, "rsyslog.conf"),
      [
        `global(workDirectory="${dir}")`,
        `module(load="imtcp")`,
        `input(type="imtcp" address="127.0.0.1" port="${this.tcpPort}")`,
        `module(load="imudp")`,
        `input(type="imudp" address="127.0.0.1" port="${this.udpPort}")`,
        // What rsyslog parsed out of each RFC 5424 message, so the test sees its reading of them.
        `template(name="parsed" type="list") { property(name="pri") constant(value="|") property(name="hostname") constant(value="|") property(name="app-name") constant(value="|") property(name="procid") constant(value="|") property(name="msgid") constant(value="|") property(name="structured-data") constant(value="|") property(name="msg") constant(value="\\n") }`,
        `*.* action(type="omfile" file="${this.out}" template="parsed")`,
        "",
      ].join("\n"),
    );
  }

  async start(): Promise<this> {
    this.proc = Bun.spawn([RSYSLOGD(), "-n", "-f", join(this.dir, "rsyslog.conf"), "-i", join(this.dir, "rsyslogd.pid")], { stdout: "ignore", stderr: "pipe" });
    const proc = this.proc;
    await waitFor(
      () =>
        proc.exitCode !== null
          ? Promise.reject(new Error(`rsyslogd exited with ${proc.exitCode}`))
          : new Promise<boolean>((resolve) => {
              const s = connect({ host: "127.0.0.1", port: this.tcpPort });
              s.once("connect", () => {
                s.destroy();
                resolve(true);
              });
              s.once("error", () => resolve(false));
            }),
      "rsyslogd to listen",
    );
    return this;
  }

  async stop(): Promise<void> {
    if (!this.proc) return;
    this.proc.kill("SIGTERM");
    await this.proc.exited;
    this.proc = null;
  }

  /** The lines rsyslog wrote, split into the fields of the template. */
  lines(): { pri: string; hostname: string; app: string; procid: string; msgid: string; sd: string; msg: string }[] {
    if (!existsSync(this.out)) return [];
    return readFileSync(this.out, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [pri, hostname, app, procid, msgid, ...rest] = l.split("|");
        // The structured data holds no `|` here; the message may (CEF).
        const sdEnd = rest.join("|").indexOf("]|") + 1;
        const tail = rest.join("|");
        return { pri: pri!, hostname: hostname!, app: app!, procid: procid!, msgid: msgid!, sd: tail.slice(0, sdEnd), msg: tail.slice(sdEnd + 1) };
      });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
