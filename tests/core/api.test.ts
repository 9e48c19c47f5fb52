import { describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { BIG_ID, getJson, registerNode, startTestCore } from "../helpers";

describe("REST API", () => {
  test("GET /health", async () => {
    await using core = await startTestCore();
    expect(await getJson(`${core.api}/health`)).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  test("empty registry", async () => {
    await using core = await startTestCore();
    expect((await getJson(`${core.api}/api/v1/nodes`)).body).toEqual({ nodes: [] });
    expect((await getJson(`${core.api}/api/v1/honeypots`)).body).toEqual({ honeypots: [] });
  });

  test("errors have one shape: 400, 404, 405", async () => {
    await using core = await startTestCore();
    using _node = await registerNode(core);
    const cases: [string, RequestInit | undefined, number, string][] = [
      ["/api/v1/nodes/abc", undefined, 400, "bad_request"],
      ["/api/v1/nodes/-1", undefined, 400, "bad_request"],
      ["/api/v1/nodes/18446744073709551616", undefined, 400, "bad_request"],
      ["/api/v1/nodes/42", undefined, 404, "not_found"],
      ["/api/v1/nope", undefined, 404, "not_found"],
      ["/health", { method: "POST" }, 405, "method_not_allowed"],
      [`/api/v1/nodes/${BIG_ID}`, { method: "DELETE" }, 405, "method_not_allowed"],
    ];
    for (const [path, init, status, code] of cases) {
      const res = await getJson(core.api + path, init);
      expect({ path, status: res.status, code: res.body?.error?.code, hasMessage: typeof res.body?.error?.message === "string" }).toEqual({ path, status, code, hasMessage: true });
    }
    const r = await getJson(`${core.api}/health`, { method: "POST" });
    expect(r.headers.get("allow")).toBe("GET");
  });

  test("OpenAPI document describes the four operations with summaries and tags", async () => {
    await using core = await startTestCore();
    const doc = (await getJson(`${core.api}/swagger/json`)).body;
    expect(doc.openapi).toStartWith("3.");
    for (const path of ["/health", "/api/v1/nodes", "/api/v1/nodes/{node_id}", "/api/v1/honeypots"]) {
      const op = doc.paths[path]?.get;
      expect({ path, summary: typeof op?.summary, tags: Array.isArray(op?.tags) }).toEqual({ path, summary: "string", tags: true });
    }
    const node = doc.paths["/api/v1/nodes/{node_id}"].get.responses["200"].content["application/json"].schema;
    expect(node.properties.node_id).toMatchObject({ type: "integer", format: "uint64" });
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/swagger"))).toEqual([]);
  });

  test("GET /swagger/json is a valid OpenAPI 3 document", async () => {
    await using core = await startTestCore({ tokens: [{ name: "a", role: "read", sha256: "0".repeat(64) }] });
    const doc = (await getJson(`${core.api}/swagger/json`)).body;
    const result = await new Validator().validate(JSON.parse(JSON.stringify(doc, (_k, v) => (typeof v === "bigint" ? Number(v) : v))));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.paths["/api/v1/nodes/{node_id}"].get.responses["200"].content["application/json"].example.node_id).toBe(18446744073709551557n);
  });
});
