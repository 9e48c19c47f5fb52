/**
 * Is a port free for a honeypot? Checked by binding it for a moment on the wildcard address,
 * which also collides with a listener on one specific address (127.0.0.1:2222 blocks
 * 0.0.0.0:2222 on Linux), so one bind answers for every address a honeypot might use.
 */
export function portProblem(port: number): string | null {
  try {
    const probe = Bun.listen({ hostname: "0.0.0.0", port, exclusive: true, socket: { data() {} } });
    probe.stop(true);
    return null;
  } catch (e) {
    const err = e as { code?: string; message?: string };
    if (err.code === "EADDRINUSE" || /in use/i.test(err.message ?? "")) return "is already in use";
    if (err.code === "EACCES" || /permission|EACCES/i.test(err.message ?? "")) return "needs privileges this node does not have (ports below 1024 need root or CAP_NET_BIND_SERVICE)";
    return `cannot be bound: ${err.message ?? String(e)}`;
  }
}
