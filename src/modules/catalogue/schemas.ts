/** The catalogue's REST shape (docs/api.md): a kind with its config keys and events. */
import { Type } from "@sinclair/typebox";

export const CatalogueKind = Type.Object({
  name: Type.String({ example: "cowrie" }),
  aliases: Type.Array(Type.String(), { example: ["ssh-telnet", "ssh"] }),
  description: Type.String(),
  config: Type.Record(
    Type.String(),
    Type.Object({ default: Type.String(), description: Type.String(), port: Type.Boolean() }),
    { description: "Config keys of InstallPot's `config`, with defaults; all values are strings.", example: { ssh_port: { default: "2222", description: "Port of the SSH listener.", port: true } } },
  ),
  events: Type.Array(Type.String(), { description: "Event types the kind emits.", example: ["cowrie.login.failed"] }),
});
