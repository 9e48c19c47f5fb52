import { join } from "node:path";
import { requireTool } from "./clients";

function openssl(cwd: string, ...args: string[]): void {
  const r = Bun.spawnSync([requireTool("openssl"), ...args], { cwd, stderr: "pipe", stdout: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr.toString()}`);
}

/** A throwaway CA, a server certificate for 127.0.0.1 and a client certificate, made now. */
export function makeCertificates(dir: string) {
  const p = (f: string) => join(dir, f);
  openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=honeybee-test-ca");
  for (const [name, ext] of [
    ["server", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
    ["client", "extendedKeyUsage=clientAuth"],
  ] as const) {
    openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=honeybee-test-${name}`);
    Bun.write(p(`${name}.ext`), ext + "\n");
    openssl(dir, "x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.pem`, "-days", "1", "-extfile", `${name}.ext`);
  }
  return { ca: p("ca.pem"), cert: p("server.pem"), key: p("server.key"), clientCert: p("client.pem"), clientKey: p("client.key") };
}
