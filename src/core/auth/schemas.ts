/** The security layer's REST shape: who a request's token is (`GET /api/v1/whoami`). */
import { Type } from "@sinclair/typebox";

export const WhoAmI = Type.Object(
  {
    name: Type.String({ description: "The token's name; `anonymous` when Core checks no tokens." }),
    role: Type.Union([Type.Literal("read"), Type.Literal("operator")], { description: "read: REST reads and the live feed; operator: also commands." }),
    auth_enabled: Type.Boolean({ description: "Core checks API tokens." }),
  },
  { example: { name: "alice", role: "operator", auth_enabled: true } },
);
