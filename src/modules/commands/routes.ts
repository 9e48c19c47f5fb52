/**
 * Commands through REST: the second door to the command router (the WebSocket proxy is the
 * first). POST answers 202 once the command is on its way; the record shows how it ended.
 */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { CommandStorage } from "../../db/stores";
import { toU64 } from "../../protocol/json";
import { Command } from "../../protocol/messages";
import type { CommandRouter } from "./router";
import type { Security } from "../../core/auth";
import { ApiError, ErrorBody, badRequest, errorResponses, notFound } from "../../core/http/errors";
import { parseNodeId } from "../../core/http/node-ref";
import { noQuery, queryParams } from "../../core/http/query";
import { CommandRecord } from "../../protocol/records";

export { CommandRecord } from "../../protocol/records";

const MAX_LIMIT = 500;

/** Ready-to-send bodies for Swagger UI's example list: one per command. */
const BODY_EXAMPLES = Object.fromEntries(
  (Command.anyOf as unknown as { description?: string; example: Record<string, unknown> }[]).map((v) => [Object.keys(v.example)[0]!, { summary: v.description, value: v.example }]),
);

/** This operation's errors, each with an example of its own. */
const commandError = (description: string, example: { code: string; message: string }) => t.Object(ErrorBody.properties, { description, example: { error: example } });
const COMMAND_ERRORS = {
  400: commandError(
    "The command is not one of the command shapes (code bad_json, bad_command, unknown_command or invalid_argument), or an InstallPot the node's catalogue refuses: a kind it does not have (unknown_kind), an unknown config key or a bad value (invalid_config). Nothing is recorded or sent.",
    {
      code: "invalid_argument",
      message: "invalid argument for DeployPot: /DeployPot Expected string to match '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'",
    },
  ),
  404: commandError("No node with this id is registered (code not_found).", { code: "not_found", message: "node 42 is not registered" }),
  409: commandError("The node is registered but not connected (code node_not_connected), or the command is for an External pot, which no node installed, so only RemovePot applies (code pot_external).", {
    code: "node_not_connected",
    message: "node 18446744073709551557 is not connected; its status is Unknown",
  }),
};

const CommandQuery = queryParams(
  Type.Object({
    node_id: Type.Optional(Type.String({ description: "Only commands to this node (unsigned 64-bit integer).", example: "18446744073709551557" })),
    pot_id: Type.Optional(Type.String({ description: "Only commands about this honeypot.", example: "ssh-01" })),
    command: Type.Optional(Type.String({ description: "Command name, e.g. InstallPot.", example: "InstallPot" })),
    status: Type.Optional(Type.String({ description: "issued, sent, succeeded or failed.", example: "failed" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 100, description: `Page size (1-${MAX_LIMIT}).`, example: 100 })),
    cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page.", example: "41" })),
  }),
);

export const commandsApi = (router: CommandRouter, store: CommandStorage, security: Security) =>
  new Elysia({ name: "commands", tags: ["Commands"] })
    .post(
      "/api/v1/nodes/:node_id/commands",
      async ({ params, body, request, server, set }) => {
        noQuery(request.url);
        const nodeId = parseNodeId(params.node_id);
        // Accept the bare command object (docs/api.md's examples) or a NodeCommand around it.
        const raw = body && typeof body === "object" && "command" in body ? (body as { command: unknown }).command : body;
        const principal = security.principals.get(request)?.name ?? null;
        const res = await router.issue(nodeId, raw, { source: "rest", remote: server?.requestIP(request)?.address ?? null, principal });
        if (!res.ok) throw new ApiError(res.status, res.code, res.message);
        set.status = 202;
        return { command_id: res.command_id };
      },
      {
        params: t.Object({ node_id: t.String({ example: "18446744073709551557" }) }),
        // No `body` schema: the router validates and names the exact problem (unknown_command,
        // invalid_argument, ...), which a generic validation error would not. The document shows
        // the command shapes through `requestBody` below, which the swagger plugin keeps only
        // when no `body` schema is given.
        response: { 202: t.Object({ command_id: t.String() }, { example: { command_id: "0b5e7c1e-8f1c-4c55-9f0e-3f2a4d1c9a10" } }), ...COMMAND_ERRORS },
        detail: {
          summary: "Send a command to a node",
          description:
            "Validates the command, records it and sends it to the node over its control connection with a command_id. " +
            "The body is one command object (a NodeCommand `{node_id, command}` around it is accepted too); pick one of the examples. " +
            "400: not a command shape, or an InstallPot the node's catalogue refuses (unknown_kind, invalid_config): Core checks the kind and config with the node's own rules when the node registered the catalogue Core has (NodeRegistration `catalogue`, the built-in one), so that nothing is registered for an install that cannot work; otherwise the node checks, and a pot it reports Failed stays in the registry until RemovePot (`honeybee remove NODE POT`) clears it. " +
            "404: unknown node; 409: node not connected, or a command other than RemovePot for an External pot. " +
            "RemovePot for an External pot (status External: Core registered it from its events; node 0 when they name no node) is Core's own: it takes the pot out of the registry at once, without the node, and its record is `succeeded`. " +
            "Follow the outcome, and the node's answer in `data`, with GET /api/v1/commands/{command_id}.",
          // A copy: the OpenAPI document is rewritten in place (openapi.ts), and the router's checks read Command.
          requestBody: { required: true, content: { "application/json": structuredClone({ schema: Command as any, examples: BODY_EXAMPLES }) } },
        },
      },
    )
    .get(
      "/api/v1/commands/:command_id",
      async ({ params, request }) => {
        noQuery(request.url);
        const rec = await store.find(params.command_id);
        if (!rec) throw notFound(`command ${params.command_id} does not exist`);
        return rec;
      },
      { response: { 200: CommandRecord, ...errorResponses({ 404: ["not_found", "command 0b5e7c1e-8f1c-4c55-9f0e-3f2a4d1c9a10 does not exist"] }) }, detail: { summary: "Get one command and its outcome" } },
    )
    .get(
      "/api/v1/commands",
      async ({ request }) => {
        const query = CommandQuery.parse(request.url);
        const node_id = query.node_id === undefined ? undefined : (toU64(query.node_id) ?? undefined);
        if (query.node_id !== undefined && node_id === undefined) throw badRequest("query parameter node_id must be an unsigned 64-bit integer");
        const cursor = query.cursor === undefined ? undefined : Number(query.cursor);
        if (cursor !== undefined && !Number.isSafeInteger(cursor)) throw badRequest("query parameter cursor must be a next_cursor value from an earlier page");
        return await store.list({ node_id, pot_id: query.pot_id, command: query.command, status: query.status, cursor, limit: query.limit ?? 100 });
      },
      {
        response: { 200: t.Object({ commands: t.Array(CommandRecord), next_cursor: t.Union([t.String(), t.Null()]) }), ...errorResponses({ 400: ["bad_request", 'query parameter limit: Expected integer to be less or equal to 500, got "1000"'] }) },
        detail: { summary: "List commands, newest first", parameters: CommandQuery.parameters },
      },
    );
