/** A TFTP read (RFC 1350, octet mode) into a capture, for the fake shell's `tftp -g`. */
import type { Capture, Failure } from "./fetcher.ts";

const OP_DATA = 3;
const OP_ERROR = 5;
const BLOCK = 512;
const RETRY_MS = 1000;
const RETRIES = 5;

export async function tftpGet(host: string, port: number, file: string, capture: Capture, signal: AbortSignal): Promise<Failure | null> {
  const { promise, resolve } = Promise.withResolvers<Failure | null>();
  let tid: number | null = null;
  let expected = 1;
  let last: Uint8Array = Buffer.concat([Buffer.from([0, 1]), Buffer.from(`${file}\0octet\0`, "latin1")]);
  let lastPort = port;
  let tries = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const ack = (block: number) => Buffer.from([0, 4, (block >> 8) & 0xff, block & 0xff]);
  const socket = await Bun.udpSocket({
    socket: {
      data(sock, buf, rport) {
        if (tid === null) tid = rport;
        else if (rport !== tid) return;
        const op = buf.readUInt16BE(0);
        if (op === OP_ERROR) return finish({ ok: false, error: "http", message: `server error: ${buf.subarray(4).toString("latin1").replace(/\0.*$/s, "")}` });
        if (op !== OP_DATA || buf.length < 4) return;
        const block = buf.readUInt16BE(2);
        last = ack(block);
        lastPort = rport;
        sock.send(last, lastPort, host);
        if (block !== (expected & 0xffff)) return;
        expected++;
        tries = 0;
        const data = buf.subarray(4);
        const more = capture.push(data);
        if (data.length < BLOCK || !more) return finish(null);
        arm();
      },
    },
  });
  const send = () => socket.send(last, lastPort, host);
  function arm() {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      if (++tries > RETRIES) return finish({ ok: false, error: "timeout", message: "timeout" });
      send();
      arm();
    }, RETRY_MS);
  }
  function finish(result: Failure | null) {
    if (timer) clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    socket.close();
    resolve(result);
  }
  const onAbort = () => finish({ ok: false, error: "timeout", message: "timeout" });
  signal.addEventListener("abort", onAbort);
  send();
  arm();
  return promise;
}
