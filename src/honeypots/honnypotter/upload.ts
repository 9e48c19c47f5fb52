/**
 * Files POSTed to the site (multipart/form-data, as WordPress upload exploits and webshell
 * droppers send them, to any path): each file part is kept in the pot's outbox (mode 0600, never
 * executed) for the node to send to Core as an artifact, and recorded as honnypotter.upload
 * (docs/artifacts.md). The page then answers as it would have anyway.
 */
import type { EventSink } from "../shared/sink.ts";
import { OutboxFull, type Outbox } from "../shared/outbox.ts";

/** Files taken from one request; a form with thousands of empty parts is not worth more. */
const MAX_FILES = 16;

export function isMultipart(contentType: string | null): boolean {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase() === "multipart/form-data";
}

export async function captureUploads(contentType: string, body: Uint8Array, outbox: Outbox, sink: EventSink, request: Record<string, unknown> & { src_ip: string; request_uri: string }): Promise<number> {
  let form: Awaited<ReturnType<Response["formData"]>>;
  try {
    form = await new Response(body, { headers: { "content-type": contentType } }).formData();
  } catch {
    return 0;
  }
  let taken = 0;
  for (const [field, value] of form) {
    if (typeof value === "string" || taken >= MAX_FILES) continue;
    const bytes = new Uint8Array(await value.arrayBuffer());
    if (bytes.length === 0) continue;
    taken++;
    const filename = value.name.slice(0, 255);
    let saved: { sha256: string; size: number; outfile: string | null };
    try {
      saved = outbox.put(bytes, { source: "honnypotter.upload", session: null, url: request.request_uri, filename });
    } catch (err) {
      if (!(err instanceof OutboxFull)) throw err;
      // Not kept, but still recorded with its hash.
      saved = { sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"), size: bytes.length, outfile: null };
    }
    sink.emit({
      eventid: "honnypotter.upload",
      ...request,
      field: field.slice(0, 255),
      filename,
      content_type: value.type.slice(0, 255),
      size: saved.size,
      shasum: saved.sha256,
      outfile: saved.outfile,
      message: `File uploaded: ${filename} (${saved.size} bytes, SHA-256 ${saved.sha256}) from ${request.src_ip}`,
    });
  }
  return taken;
}
