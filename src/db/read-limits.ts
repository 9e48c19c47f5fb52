/**
 * What the read queries return at most, and the top lists' shape: shared with what describes
 * them (REST's schemas, the console) without the queries themselves.
 */

/** One entry of a top list: a value and how often it was seen in the window. */
export interface TopEntry {
  value: string;
  count: number;
}

/**
 * Commands are not counted at ingest (no hourly counter: reading `input` out of every event
 * would cost the hot path); the top list reads the window's most recent command events, a few
 * pages through the event-type summaries.
 */
export const COMMANDS_SAMPLE = 10_000;

/** Events a session page holds at most (a scripted bot can type thousands of commands). */
export const MAX_SESSION_EVENTS = 5000;
