/**
 * One error shape everywhere: `{"error": {"code": "not_found", "message": "..."}}`.
 */
import { t } from "elysia";

export const ErrorBody = t.Object(
  { error: t.Object({ code: t.String(), message: t.String() }) },
  { description: "Every error has this shape.", example: { error: { code: "not_found", message: "node 42 is not registered" } } },
);
export type ErrorBody = typeof ErrorBody.static;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const notFound = (message: string) => new ApiError(404, "not_found", message);
export const badRequest = (message: string) => new ApiError(400, "bad_request", message);
export const conflict = (message: string) => new ApiError(409, "conflict", message);

export function errorBody(code: string, message: string): ErrorBody {
  return { error: { code, message } };
}

/**
 * Error responses for OpenAPI, each with an example of what this operation answers (a shared
 * example would show every operation a 400 about some node).
 */
export const errorResponses = (examples: Partial<Record<400 | 404 | 409, [code: string, message: string]>>) =>
  Object.fromEntries(Object.entries(examples).map(([status, [code, message]]) => [status, t.Object(ErrorBody.properties, { example: errorBody(code, message) })]));

/** A service's refusal of a change (`{ ok: false, status, code, message }`) as the error REST answers. */
export const refused = (r: { status: number; code: string; message: string }) => new ApiError(r.status, r.code, r.message);
