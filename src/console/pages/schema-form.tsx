/**
 * A form built from an output type's JSON Schema (GET /api/v1/output-types): one field per
 * property, with its description, default and required mark; credentials as password inputs
 * that say "(set)" when one is stored and keep it when left empty. Values are kept as text (or
 * booleans) under their path (`retry.min_backoff_ms`) and turned back into a definition by
 * the schema on submit.
 */
import type { JSX } from "preact";

export interface JsonSchema {
  type?: string;
  const?: unknown;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

/** What GET shows of a stored credential. */
export const SET = "(set)";

export type FormValues = Record<string, string | boolean>;

type Kind = "choice" | "boolean" | "number" | "text" | "list" | "text-or-list" | "object" | "map" | "fixed";

function kindOf(s: JsonSchema): Kind {
  if (s.const !== undefined) return "fixed";
  if (s.anyOf?.every((a) => a.const !== undefined)) return "choice";
  if (s.anyOf?.some((a) => a.type === "array")) return "text-or-list";
  if (s.type === "boolean") return "boolean";
  if (s.type === "integer" || s.type === "number") return "number";
  if (s.type === "array") return "list";
  if (s.type === "object" && s.properties) return "object";
  if (s.type === "object") return "map";
  return "text";
}

const splitList = (v: string) =>
  v
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/** The form's text of a value. */
function textOf(kind: Kind, v: unknown): string | boolean {
  if (kind === "boolean") return v === true;
  if (v === undefined || v === null) return "";
  if (Array.isArray(v)) return v.join(", ");
  if (kind === "map" && typeof v === "object") return Object.entries(v as Record<string, string>).map(([k, x]) => `${k}: ${x}`).join("\n");
  return String(v);
}

/** The form's values for a definition (edit) or the schema's defaults (a new one). */
export function valuesOf(schema: JsonSchema, def: Record<string, unknown> | null, prefix = ""): FormValues {
  const out: FormValues = {};
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    const kind = kindOf(s);
    if (kind === "fixed") continue;
    const v = def ? def[k] : s.default;
    if (kind === "object") Object.assign(out, valuesOf(s, (v as Record<string, unknown> | undefined) ?? (def ? {} : null), `${prefix}${k}.`));
    else out[prefix + k] = textOf(kind, v);
  }
  return out;
}

/**
 * The definition the form's values make: empty fields left out (the default applies, or a
 * stored credential is kept), a list field emptied is `[]`, numbers as numbers.
 */
export function definitionOf(schema: JsonSchema, values: FormValues, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    const kind = kindOf(s);
    const v = values[prefix + k];
    if (kind === "fixed") out[k] = s.const;
    else if (kind === "object") {
      const sub = definitionOf(s, values, `${prefix}${k}.`);
      if (Object.keys(sub).length > 0) out[k] = sub;
    } else if (kind === "boolean") out[k] = v === true;
    else if (typeof v !== "string") continue;
    else if (kind === "list") out[k] = splitList(v);
    else if (v.trim() === "") continue;
    else if (kind === "number") out[k] = Number(v);
    else if (kind === "choice") {
      const option = s.anyOf!.find((a) => String(a.const) === v);
      out[k] = option ? option.const : v;
    } else if (kind === "text-or-list") {
      const items = splitList(v);
      out[k] = items.length === 1 ? items[0] : items;
    } else if (kind === "map") {
      out[k] = Object.fromEntries(
        v
          .split("\n")
          .map((line) => line.trim())
          .filter(Boolean)
          .map((line) => {
            const at = line.indexOf(":");
            return at < 0 ? [line, ""] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
          }),
      );
    } else out[k] = v;
  }
  return out;
}

/** A schema's description, its `code` spans as code. */
export function Described({ text }: { text: string | undefined }) {
  if (!text) return null;
  return <>{text.split("`").map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}

function Field({ name, path, schema, required, secret, values, stored, set }: {
  name: string;
  path: string;
  schema: JsonSchema;
  required: boolean;
  secret: boolean;
  values: FormValues;
  stored: FormValues | null;
  set: (path: string, v: string | boolean) => void;
}) {
  const kind = kindOf(schema);
  const id = `f-${path.replace(/\./g, "-")}`;
  const value = values[path];
  const hasStored = secret && stored !== null && stored[path] !== "" && stored[path] !== undefined;
  const text = (e: Event) => set(path, (e.currentTarget as HTMLInputElement).value);
  let input: JSX.Element;
  const common = { id, name: path, "aria-describedby": schema.description ? `${id}-d` : undefined, "aria-required": required || undefined };
  if (kind === "choice") {
    input = (
      <select {...common} value={String(value ?? "")} onChange={text}>
        {!required && <option value="">{schema.default === undefined ? "–" : `default (${String(schema.default)})`}</option>}
        {schema.anyOf!.map((a) => (
          <option key={String(a.const)} value={String(a.const)}>
            {String(a.const)}
          </option>
        ))}
      </select>
    );
  } else if (kind === "boolean") {
    input = <input {...common} type="checkbox" checked={value === true} onChange={(e) => set(path, e.currentTarget.checked)} />;
  } else if (kind === "map") {
    input = <textarea {...common} rows={2} value={String(value ?? "")} placeholder="Name: value (one a line)" onInput={text} />;
  } else if (secret) {
    // Write-only: the stored value is never sent to the browser; empty keeps it.
    input = <input {...common} type="password" autocomplete="new-password" value={value === SET ? "" : String(value ?? "")} placeholder={hasStored ? SET : ""} onInput={text} />;
  } else if (kind === "number") {
    input = <input {...common} type="number" min={schema.minimum} max={schema.maximum} value={String(value ?? "")} onInput={text} />;
  } else {
    input = <input {...common} type="text" value={String(value ?? "")} placeholder={schema.default !== undefined ? String(schema.default) : undefined} onInput={text} />;
  }
  return (
    <div class={`field ${kind === "boolean" ? "check" : ""} ${kind === "map" ? "wide" : ""}`}>
      <div class="label-row">
        <label for={id}>{name}</label>
        {required && (
          <span class="req" aria-hidden="true" title="required">
            *
          </span>
        )}
        {hasStored && (
          <span class="badge mid stored" aria-hidden="true">
            {SET}
          </span>
        )}
      </div>
      {input}
      {(schema.description || kind === "list" || kind === "text-or-list" || secret) && (
        <small id={`${id}-d`} class="muted">
          <Described text={schema.description} />
          {(kind === "list" || kind === "text-or-list") && " Comma-separated."}
          {secret && (hasStored ? " Stored: leave empty to keep it." : " Write-only: never shown again.")}
        </small>
      )}
    </div>
  );
}

/** The fields of a schema (an object's as a group of their own), `type` left out: the caller chooses it. */
export function SchemaFields({ schema, secrets, values, stored, set, skip = [], prefix = "" }: {
  schema: JsonSchema;
  secrets: string[];
  values: FormValues;
  stored: FormValues | null;
  set: (path: string, v: string | boolean) => void;
  skip?: string[];
  prefix?: string;
}) {
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {}).filter(([k, s]) => !skip.includes(k) && kindOf(s) !== "fixed");
  // Required first, then the rest as the schema lists them; groups last.
  const order = (k: string, s: JsonSchema) => (kindOf(s) === "object" ? 2 : required.has(k) ? 0 : 1);
  entries.sort((a, b) => order(...a) - order(...b));
  return (
    <>
      {entries.map(([k, s]) =>
        kindOf(s) === "object" ? (
          <fieldset key={k} class="sub">
            <legend>{k}</legend>
            <SchemaFields schema={s} secrets={[]} values={values} stored={stored} set={set} prefix={`${prefix}${k}.`} />
          </fieldset>
        ) : (
          <Field key={k} name={k} path={prefix + k} schema={s} required={required.has(k)} secret={secrets.includes(k)} values={values} stored={stored} set={set} />
        ),
      )}
    </>
  );
}
