/** A dual-stack listener reports IPv4 peers as "::ffff:a.b.c.d"; events carry the plain address. */
export function plainIp(address: string | undefined): string {
  if (!address) return "";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
