// Baseline for the REST bench: a bare Bun.serve answering every request with the same bytes.
export {};
const body = await Bun.file(process.argv[2]!).bytes();
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(body, { headers: { "content-type": "application/json; charset=utf-8" } }) });
console.log(JSON.stringify({ port: server.port }));
