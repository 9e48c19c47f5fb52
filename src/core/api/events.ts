// Placeholder until the event pipeline lands.
import { Elysia } from "elysia";
import type { Db } from "../../db";
import type { Ingest } from "../ingest/types";

export const eventsApi = (_deps: { db: Db; ingest: Ingest }) => new Elysia({ name: "events" });
