/** Webhook bodies: plain JSON batches and the Slack and Microsoft Teams message formats. */
import type { OutEvent } from "../event";
import { eventRecord } from "../event";
import { summary } from "./summary";

/** Lines per chat message: a burst becomes one readable message, not a wall of text. */
export const CHAT_LINES = 20;

function lines(events: OutEvent[]): string[] {
  const out = events.slice(0, CHAT_LINES).map(summary);
  if (events.length > CHAT_LINES) out.push(`... and ${events.length - CHAT_LINES} more`);
  return out;
}

export function jsonBody(output: string, events: OutEvent[]): Record<string, unknown> {
  return { output, events: events.map(eventRecord) };
}

/** Slack incoming webhook: `{text}` in Slack's mrkdwn, each line escaped (&, <, >). */
export function slackBody(events: OutEvent[]): Record<string, unknown> {
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return { text: lines(events).map(esc).join("\n") };
}

/** Teams Workflows webhook ("Post to a channel when a webhook request is received"): an Adaptive Card. */
export function teamsBody(events: OutEvent[]): Record<string, unknown> {
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body: [
            { type: "TextBlock", text: "HoneyBee", weight: "Bolder", size: "Medium" },
            ...lines(events).map((text) => ({ type: "TextBlock", text, wrap: true })),
          ],
        },
      },
    ],
  };
}
