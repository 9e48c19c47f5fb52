/**
 * An anonymous FTP download (passive mode, binary) into a capture, for the fake shell's
 * `ftpget`. The data connection goes to the control connection's host whatever PASV names, so
 * a server cannot point the honeypot at a third address (FTP bounce).
 */
import { connect, type Socket } from "node:net";
import type { Capture, Failure } from "./fetcher.ts";

class Replies {
  private buffer = "";
  private waiting: ((reply: { code: number; text: string }) => void) | null = null;
  private queue: { code: number; text: string }[] = [];

  constructor(socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.buffer += chunk.toString("latin1");
      // A reply ends with a line "NNN text" (a multi-line reply's other lines are "NNN-text").
      for (let m = /^(\d{3}) [^\n]*\n/m.exec(this.buffer); m; m = /^(\d{3}) [^\n]*\n/m.exec(this.buffer)) {
        const end = m.index + m[0].length;
        this.queue.push({ code: Number(m[1]), text: this.buffer.slice(0, end).trim() });
        this.buffer = this.buffer.slice(end);
      }
      this.deliver();
    });
  }

  next(): Promise<{ code: number; text: string }> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.deliver();
    });
  }

  private deliver() {
    if (this.waiting && this.queue.length > 0) {
      const w = this.waiting;
      this.waiting = null;
      w(this.queue.shift()!);
    }
  }
}

export async function ftpGet(host: string, port: number, path: string, capture: Capture, signal: AbortSignal): Promise<Failure | null> {
  const ctrl = connect({ host, port });
  const sockets: Socket[] = [ctrl];
  const aborted = new Promise<never>((_, reject) => {
    const fail = (err: Error) => reject(err);
    ctrl.once("error", fail);
    signal.addEventListener("abort", () => reject(Object.assign(new Error("timed out"), { name: "TimeoutError" })), { once: true });
  });
  aborted.catch(() => {});
  const replies = new Replies(ctrl);
  const expect = async (codes: number[]) => {
    const r = await Promise.race([replies.next(), aborted]);
    if (!codes.includes(r.code)) throw Object.assign(new Error(r.text), { ftp: true });
    return r;
  };
  const send = (line: string) => ctrl.write(`${line}\r\n`);
  try {
    await expect([220]);
    send("USER anonymous");
    const user = await expect([230, 331]);
    if (user.code === 331) {
      send("PASS anonymous@");
      await expect([230]);
    }
    send("TYPE I");
    await expect([200]);
    send("PASV");
    const pasv = await expect([227]);
    const nums = /(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)/.exec(pasv.text);
    if (!nums) throw Object.assign(new Error(pasv.text), { ftp: true });
    const data = connect({ host, port: Number(nums[5]) * 256 + Number(nums[6]) });
    sockets.push(data);
    const received = new Promise<void>((resolve, reject) => {
      data.on("data", (chunk: Buffer) => {
        if (!capture.push(chunk)) {
          data.destroy();
          resolve();
        }
      });
      data.on("end", resolve);
      data.on("close", resolve);
      data.on("error", reject);
    });
    send(`RETR ${path}`);
    await expect([125, 150]);
    await Promise.race([received, aborted]);
    return null;
  } catch (err) {
    if ((err as { ftp?: boolean }).ftp) return { ok: false, error: "http", message: (err as Error).message };
    throw err;
  } finally {
    for (const s of sockets) s.destroy();
  }
}
