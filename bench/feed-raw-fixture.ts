/**
 * Live-feed baseline: a bare Bun.serve with native pub/sub that publishes the frames it reads
 * on a TCP socket (one per line) to every subscriber, the least work a live feed can do.
 */
export {};
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (req, srv) => (srv.upgrade(req, { data: undefined }) ? undefined : new Response("ws only", { status: 400 })),
  websocket: { open: (ws) => void ws.subscribe("feed"), message() {}, backpressureLimit: 4 * 1024 * 1024, closeOnBackpressureLimit: true },
});
let rest = "";
const ingest = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    data(_s, chunk) {
      rest += chunk.toString();
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        server.publish("feed", `{"version":2,"message":{"PotEvent":${line}}}`);
      }
    },
  },
});
console.log(JSON.stringify({ ws: server.port, ingest: ingest.port }));
