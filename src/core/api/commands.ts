/**
 * Commands through REST: the second door to the command router (the WebSocket proxy is the
 * first). POST answers 202 once the command is on its way; the record shows how it ended.
 */
import { Elysia, t } from "elysia";
import type { CommandStore } from "../../db/command-store";
import { toU64 } from "../../protocol/json";
import { Command } from "../../protocol/messages";
import { NodeId } from "../../protocol/types";
import type { CommandRouter } from "../commands/router";
import type { Security } from "../auth";
import { ApiError, badRequest, errorResponses, notFound } from "./errors";
import { parseNodeId } from "./nodes";

export const CommandRecord = t.Object(
  {
    command_id: t.String(),
    node_id: NodeId,
    command: t.String({ description: "Command name.", example: "InstallPot" }),
    pot_id: t.Union([t.String(), t.Null()]),
    body: t.Unknown({ description: "The command object as sent to the node." }),
    status: t.Union([t.Literal("issued"), t.Literal("sent"), t.Literal("succeeded"), t.Literal("failed")], {
      description: "issued: recorded; sent: written to the node's connection; succeeded/failed: the node's CommandResult.",
    }),
    message: t.Union([t.String(), t.Null()], { description: "The node's message, or why the command failed." }),
    source: t.String({ description: "Door the command came through: rest or ws.", example: "rest" }),
    principal: t.Union([t.String(), t.Null()], { description: "Who sent it (the API token's name when authentication is on)." }),
    remote_addr: t.Union([t.String(), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  {
    example: {
      command_id: "0b5e7c1e-8f1c-4c55-9f0e-3f2a4d1c9a10",
      node_id: 18446744073709551557n,
      command: "DeployPot",
      pot_id: "ssh-01",
      body: { DeployPot: "ssh-01" },
      status: "succeeded",
      message: "ssh-01 is Running",
      source: "rest",
      principal: null,
      remote_addr: "127.0.0.1",
      created_at: "2026-11-22T01:07:41.947Z",
      updated_at: "2026-11-22T01:07:42.120Z",
    },
  },
);

const MAX_LIMIT = 500;

export const commandsApi = (router: CommandRouter, store: CommandStore, security: Security) =>
  new Elysia({ name: "commands", tags: ["Commands"] })
    .post(
      "/api/v1/nodes/:node_id/commands",
      ({ params, body, request, server, set }) => {
        const nodeId = parseNodeId(params.node_id);
        // Accept the bare command object (docs/api.md's examples) or a NodeCommand around it.
        const raw = body && typeof body === "object" && "command" in body ? (body as { command: unknown }).command : body;
        const principal = security.principals.get(request)?.name ?? null;
        const res = router.issue(nodeId, raw, { source: "rest", remote: server?.requestIP(request)?.address ?? null, principal });
        if (!res.ok) throw new ApiError(res.status, res.code, res.message);
        set.status = 202;
        return { command_id: res.command_id };
      },
      {
        params: t.Object({ node_id: t.String({ example: "18446744073709551557" }) }),
        // Validated by the router, which names the exact problem; documented here as the schema.
        body: t.Unknown({ description: "The command object", example: { DeployPot: "ssh-01" } }),
        response: { 202: t.Object({ command_id: t.String() }, { example: { command_id: "0b5e7c1e-8f1c-4c55-9f0e-3f2a4d1c9a10" } }), ...errorResponses(400, 404, 409) },
        detail: {
          summary: "Send a command to a node",
          description:
            "Validates the command, records it and sends it to the node over its control connection with a command_id. " +
            "400: unknown command or malformed argument; 404: unknown node; 409: node not connected. Follow the outcome with GET /api/v1/commands/{command_id}.",
          requestBody: { required: true, content: { "application/json": { schema: Command as any } } },
        },
      },
    )
    .get(
      "/api/v1/commands/:command_id",
      ({ params }) => {
        const rec = store.get(params.command_id);
        if (!rec) throw notFound(`command ${params.command_id} does not exist`);
        return rec;
      },
      { response: { 200: CommandRecord, ...errorResponses(404) }, detail: { summary: "Get one command and its outcome" } },
    )
    .get(
      "/api/v1/commands",
      ({ query }) => {
        const node_id = query.node_id === undefined ? undefined : (toU64(query.node_id) ?? undefined);
        if (query.node_id !== undefined && node_id === undefined) throw badRequest("node_id must be an unsigned 64-bit integer");
        const cursor = query.cursor === undefined ? undefined : Number(query.cursor);
        if (cursor !== undefined && !Number.isSafeInteger(cursor)) throw badRequest("cursor must be a next_cursor value from an earlier page");
        return store.list({ node_id, pot_id: query.pot_id, command: query.command, status: query.status, cursor, limit: query.limit ?? 100 });
      },
      {
        query: t.Object({
          node_id: t.Optional(t.String()),
          pot_id: t.Optional(t.String()),
          command: t.Optional(t.String({ description: "Command name, e.g. InstallPot." })),
          status: t.Optional(t.String({ description: "issued, sent, succeeded or failed." })),
          limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 100 })),
          cursor: t.Optional(t.String({ description: "next_cursor of the previous page." })),
        }),
        response: { 200: t.Object({ commands: t.Array(CommandRecord), next_cursor: t.Union([t.String(), t.Null()]) }), ...errorResponses(400) },
        detail: { summary: "List commands, newest first" },
      },
    );
