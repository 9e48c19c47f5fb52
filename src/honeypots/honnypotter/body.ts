/**
 * Request bodies, read the way nginx in front of PHP would take them: at most MAX_BODY bytes
 * (nginx's client_max_body_size, set low because a login form is tiny and 256 concurrent requests
 * must fit in memory), and form fields only from the two content types PHP fills $_POST from.
 */

export const MAX_BODY = 64 * 1024;

/** Returns null when the body is larger than `limit`, without reading more than `limit` + one chunk. */
export async function readBody(req: Request, limit = MAX_BODY): Promise<Uint8Array | null> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) return null;
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** PHP's $_POST: last value wins for a repeated name; anything but a form leaves it empty. */
export async function formFields(contentType: string | null, body: Uint8Array): Promise<Map<string, string>> {
  const fields = new Map<string, string>();
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") {
    for (const [name, value] of new URLSearchParams(new TextDecoder().decode(body))) fields.set(name, value);
  } else if (type === "multipart/form-data") {
    try {
      const form = await new Response(body, { headers: { "content-type": contentType ?? "" } }).formData();
      for (const [name, value] of form) if (typeof value === "string") fields.set(name, value);
    } catch {
      // A malformed multipart body gives PHP an empty $_POST, and so it gives us.
    }
  }
  return fields;
}
