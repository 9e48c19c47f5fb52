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
  dashboard: Type.Array(
    Type.Object({
      title: Type.String({ description: "The table's title." }),
      event_type: Type.String({ description: "The event type whose field is listed; `<prefix>.*`: every type it starts." }),
      field: Type.String({ description: "The field's path in the events' data, or several joined by commas (`username,password`)." }),
    }),
    {
      description: "What the kind records worth a top list on its dashboard: each entry is a `GET /api/v1/stats/top?event_type=...&field=...` table (empty when the manifest names none).",
      example: [
        { title: "Credentials", event_type: "cowrie.login.*", field: "username,password" },
        { title: "Commands", event_type: "cowrie.command.input", field: "input" },
      ],
    },
  ),
});
