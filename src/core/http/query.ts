/**
 * Query strings, read strictly: a parameter the operation does not take is refused (a misspelt
 * filter must not return everything), and every error names the parameter.
 *
 * Elysia's own query validation drops unknown keys and reports a bad number without its name,
 * so operations declare their parameters here; the same schemas feed the OpenAPI document
 * (`detail.parameters`). Routes that take none use `noQuery`.
 */
import { Type, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { badRequest } from "./errors";

export interface QueryParams<T extends TObject> {
  /** OpenAPI parameter objects, for the route's `detail.parameters`. */
  readonly parameters: { name: string; in: "query"; required: boolean; description?: string; schema: Record<string, unknown>; example?: unknown }[];
  /** The parameters of a request URL, checked; throws a 400 ApiError naming the bad one. */
  parse(url: string): Static<T>;
}

const EMPTY = Object.freeze({});

export function queryParams<T extends TObject>(schema: T): QueryParams<T> {
  const props = schema.properties as Record<string, TSchema>;
  const names = Object.keys(props);
  const checks = new Map<string, TypeCheck<TSchema>>(names.map((n) => [n, TypeCompiler.Compile(props[n]!)]));
  const takes = names.length ? `it takes ${names.join(", ")}` : "it takes none";
  const parameters = names.map((name) => {
    const { description, example, ...rest } = props[name] as TSchema & { description?: string; example?: unknown };
    return { name, in: "query" as const, required: false, description, schema: rest, ...(example === undefined ? {} : { example }) };
  });
  return {
    parameters,
    parse(url) {
      const q = url.indexOf("?");
      // Most requests carry no query: they get one shared empty answer.
      if (q < 0 || q === url.length - 1) return EMPTY as Static<T>;
      const out: Record<string, unknown> = {};
      for (const [key, raw] of new URLSearchParams(url.slice(q + 1))) {
        const check = checks.get(key);
        if (!check) throw badRequest(`unknown query parameter ${JSON.stringify(key)}; ${takes}`);
        if (key in out) throw badRequest(`query parameter ${key} is given more than once`);
        const value = props[key]!.type === "integer" && /^-?\d{1,16}$/.test(raw) ? Number(raw) : raw;
        if (!check.Check(value)) {
          const first = check.Errors(value).First();
          throw badRequest(`query parameter ${key}: ${first?.message ?? "invalid value"}, got ${JSON.stringify(raw)}`);
        }
        out[key] = value;
      }
      return out as Static<T>;
    },
  };
}

const none = queryParams(Type.Object({}));

/** For operations without parameters: anything after `?` is refused (costs an indexOf otherwise). */
export function noQuery(url: string): void {
  none.parse(url);
}
