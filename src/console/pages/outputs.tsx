/**
 * Outputs and alert rules in Settings (docs/outputs.md): tables with each one's delivery
 * state, and for operators forms to add and edit them (an output's built from its type's
 * schema, GET /api/v1/output-types), a test delivery, pause and resume, and removal after a
 * confirmation. The read role sees the same tables without buttons.
 */
import { useState } from "preact/hooks";
import type { OutputInfo as OutputInfoOf, OutputTypes as OutputTypesOf, TestResult as TestResultOf } from "../../modules/outputs/schemas";
import type { RuleInfo as RuleInfoOf, RulesStatus as RulesStatusOf } from "../../modules/rules/schemas";
import { ApiError, del, get, post, put, type Wire } from "../api";
import { Card, ErrorNote, Unavailable, useAsync, useInterval, useMe } from "../components";
import { num } from "../format";
import { definitionOf, Described, SchemaFields, valuesOf, type FormValues, type JsonSchema } from "./schema-form";
import "./outputs.css";

type OutputInfo = Wire<typeof OutputInfoOf.static>;
type OutputType = Wire<typeof OutputTypesOf.static>["types"][number] & { schema: JsonSchema };
type TestResult = Wire<typeof TestResultOf.static>;
type RuleInfo = Wire<typeof RuleInfoOf.static>;
type RulesStatus = Wire<typeof RulesStatusOf.static>;
type Rule = RuleInfo["rule"];

const REFRESH_MS = 5000;

/** A 404 means this Core has no such API (an older one): shown as unavailable rather than an error. */
async function orMissing<T>(load: Promise<T>): Promise<T | null> {
  try {
    return await load;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

function StateBadge({ state }: { state: string }) {
  const tone = state === "idle" || state === "delivering" || state === "active" ? "ok" : state === "retrying" || state === "stopped" ? "bad" : "mid";
  return <span class={`badge ${tone}`}>{state}</span>;
}

/** A button that runs an action, disabled while it runs; errors go to `onError`. */
function Action({ label, run, onError, class: cls }: { label: string; run: () => Promise<unknown>; onError: (e: Error | null) => void; class?: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      class={cls}
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        onError(null);
        try {
          await run();
        } catch (e) {
          onError(e as Error);
        } finally {
          setBusy(false);
        }
      }}
    >
      {label}
    </button>
  );
}

/** Delete, then "Delete NAME? Yes / Cancel". */
function ConfirmDelete({ name, remove, onError }: { name: string; remove: () => Promise<unknown>; onError: (e: Error | null) => void }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Delete
      </button>
    );
  return (
    <span class="confirm">
      Delete {name}?
      <Action label="Yes, delete" class="danger" run={remove} onError={onError} />
      <button type="button" class="ghost" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A form's submission: `send` runs on submit, `onDone` after it worked; its error is shown. */
function useSubmit(send: () => Promise<unknown>, onDone: () => void) {
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await send();
      onDone();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, onSubmit };
}

function FormFooter({ error, busy, label, onCancel }: { error: Error | null; busy: boolean; label: string; onCancel: () => void }) {
  return (
    <>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {label}
        </button>
        <button type="button" class="ghost" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}

/** Pause or Resume, Edit, Delete: what an operator may do to an output or rule defined over REST (`base` its REST path). */
function ChangeActions({ base, name, paused, canEdit = true, edit, after, onError }: {
  base: string;
  name: string;
  paused: boolean;
  canEdit?: boolean;
  edit: () => void;
  after: (p: Promise<unknown>) => Promise<void>;
  onError: (e: Error | null) => void;
}) {
  const path = `${base}/${encodeURIComponent(name)}`;
  return (
    <>
      {paused ? <Action label="Resume" run={() => after(post(`${path}/resume`, undefined))} onError={onError} /> : <Action label="Pause" run={() => after(post(`${path}/pause`, undefined))} onError={onError} />}
      <button type="button" disabled={!canEdit} onClick={edit}>
        Edit
      </button>
      <ConfirmDelete name={name} remove={() => after(del(path))} onError={onError} />
    </>
  );
}

function OutputForm({ types, editing, onDone, onCancel }: { types: OutputType[]; editing: OutputInfo | null; onDone: () => void; onCancel: () => void }) {
  const def = editing?.definition as Record<string, unknown> | undefined;
  const [type, setType] = useState<string>((def?.type as string) ?? types[0]!.type);
  const schemaOf = (t: string) => types.find((x) => x.type === t)!;
  const [name, setName] = useState<string>((def?.name as string) ?? "");
  const stored = def && def.type === type ? valuesOf(schemaOf(type).schema, def) : null;
  const [values, setValues] = useState<FormValues>(() => stored ?? valuesOf(schemaOf(type).schema, null));
  const t = schemaOf(type);
  const nameSchema = t.schema.properties?.name;
  const { error, busy, onSubmit } = useSubmit(() => {
    const body = { ...definitionOf(t.schema, values), name, type };
    return editing ? put(`/api/v1/outputs/${encodeURIComponent(name)}`, body) : post("/api/v1/outputs", body);
  }, onDone);
  return (
    <form class="output-form" data-testid="output-form" aria-label={editing ? `Edit output ${name}` : "New output"} onSubmit={onSubmit}>
      <h3>{editing ? `Edit output ${name}` : "New output"}</h3>
      <div class="fields">
        <div class="field">
          <label for="f-type">type</label>
          <select
            id="f-type"
            value={type}
            disabled={editing !== null}
            onChange={(e) => {
              const next = e.currentTarget.value;
              setType(next);
              setValues(valuesOf(schemaOf(next).schema, null));
            }}
          >
            {types.map((x) => (
              <option key={x.type} value={x.type}>
                {x.type}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <div class="label-row">
            <label for="f-name">name</label>
            <span class="req" aria-hidden="true" title="required">
              *
            </span>
          </div>
          <input id="f-name" value={name} disabled={editing !== null} aria-required="true" aria-describedby="f-name-d" onInput={(e) => setName(e.currentTarget.value)} />
          <small id="f-name-d" class="muted">
            <Described text={nameSchema?.description} />
          </small>
        </div>
        <SchemaFields schema={t.schema} secrets={t.secrets} values={values} stored={stored} set={(p, v) => setValues((old) => ({ ...old, [p]: v }))} skip={["name"]} />
      </div>
      <FormFooter error={error} busy={busy} label={editing ? "Save" : "Add output"} onCancel={onCancel} />
    </form>
  );
}

/** A table's head: the columns' names, `#` before a name right-aligns a number's column; actions only for operators. */
function Head({ cols, operator }: { cols: string[]; operator: boolean }) {
  return (
    <thead>
      <tr>
        {[...cols, ...(operator ? ["actions"] : [])].map((c) => (
          <th key={c} scope="col" class={c.startsWith("#") ? "n" : undefined}>
            {c.replace(/^#/, "")}
          </th>
        ))}
      </tr>
    </thead>
  );
}

function TestNote({ r }: { r: TestResult }) {
  return (
    <p class={r.delivered ? "test-ok" : "error"} role="status" data-testid="test-result">
      {r.delivered ? `Test event delivered to ${r.name} in ${r.duration_ms} ms.` : `Test event not delivered to ${r.name}: ${r.error}`}
    </p>
  );
}

export function OutputsCard() {
  const me = useMe();
  const operator = me.role === "operator";
  const list = useAsync(() => orMissing(get<{ outputs: OutputInfo[] }>("/api/v1/outputs")), []);
  const types = useAsync(() => (operator ? orMissing(get<{ types: OutputType[] }>("/api/v1/output-types")) : Promise.resolve(null)), [operator]);
  useInterval(list.reload, REFRESH_MS);
  const [form, setForm] = useState<{ editing: OutputInfo | null } | null>(null);
  const [tested, setTested] = useState<TestResult | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const outputs = list.data?.outputs;
  const path = (name: string, op = "") => `/api/v1/outputs/${encodeURIComponent(name)}${op}`;
  const after = async (p: Promise<unknown>) => {
    await p;
    list.reload();
  };
  return (
    <Card title="Outputs" id="outputs">
      <p class="muted">Where events and alerts are shipped: webhooks (Slack, Teams), syslog, MQTT, NATS, files. Each goes on from its own position, so one that is down loses nothing.</p>
      <ErrorNote error={list.error ?? error} />
      {list.data === null && !list.loading && !list.error && <Unavailable what="Outputs" api="GET /api/v1/outputs" />}
      {outputs && (
        <div class="table-wrap">
          <table data-testid="outputs">
            <Head cols={["name", "type", "state", "#lag", "#delivered", "#failed", "last error"]} operator={operator} />
            <tbody>
              {outputs.length === 0 && (
                <tr>
                  <td colSpan={operator ? 8 : 7} class="muted">
                    No outputs yet.
                  </td>
                </tr>
              )}
              {outputs.map((o) => {
                const s = o.status;
                const api = o.origin === "api";
                return (
                  <tr key={s.name} data-output={s.name}>
                    <td>
                      <strong>
                        <bdi>{s.name}</bdi>
                      </strong>
                      {!api && <span class="muted"> (config file)</span>}
                    </td>
                    <td>{s.type}</td>
                    <td>
                      <StateBadge state={s.state} />
                    </td>
                    <td class="n">{num(s.lag)}</td>
                    <td class="n">{num(s.delivered)}</td>
                    <td class="n">{num(s.failed)}</td>
                    <td class={s.last_error ? "last-error" : "muted"}>
                      <bdi>{s.last_error ?? "–"}</bdi>
                    </td>
                    {operator && (
                      <td>
                        <div class="actions">
                          <Action label="Test" run={async () => setTested(await post<TestResult>(path(s.name, "/test"), undefined))} onError={setError} />
                          {api && <ChangeActions base="/api/v1/outputs" name={s.name} paused={s.state === "paused"} canEdit={!!types.data} edit={() => setForm({ editing: o })} after={after} onError={setError} />}
                        </div>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {tested && <TestNote r={tested} />}
      {operator && types.data && !form && (
        <div class="toolbar">
          <button type="button" onClick={() => setForm({ editing: null })}>
            New output
          </button>
        </div>
      )}
      {operator && types.data && form && (
        <OutputForm
          key={form.editing?.status.name ?? "new"}
          types={types.data.types}
          editing={form.editing}
          onCancel={() => setForm(null)}
          onDone={() => {
            setForm(null);
            list.reload();
          }}
        />
      )}
    </Card>
  );
}

/** Milliseconds as the seconds a form shows (empty when absent). */
const secs = (ms: number | undefined) => (ms === undefined ? "" : String(ms / 1000));
const list = (v: string | string[] | undefined) => (v === undefined ? "" : Array.isArray(v) ? v.join(", ") : v);

interface Condition {
  field: string;
  op: "equals" | "regex";
  value: string;
  ignore_case: boolean;
}

function RuleForm({ editing, outputs, onDone, onCancel }: { editing: Rule | null; outputs: string[]; onDone: () => void; onCancel: () => void }) {
  const r = editing;
  const [name, setName] = useState(r?.name ?? "");
  const [description, setDescription] = useState(r?.description ?? "");
  const [severity, setSeverity] = useState<string>(r?.severity ?? "medium");
  const [eventTypes, setEventTypes] = useState(list(r?.match?.event_type));
  const [conditions, setConditions] = useState<Condition[]>(
    (r?.match?.fields ?? []).map((f) => ({ field: f.field, op: f.regex !== undefined ? "regex" : "equals", value: String(f.regex ?? f.equals ?? ""), ignore_case: f.ignore_case === true })),
  );
  const [count, setCount] = useState(r?.threshold ? String(r.threshold.count) : "");
  const [windowS, setWindowS] = useState(secs(r?.threshold?.window_ms));
  const [cooldownS, setCooldownS] = useState(secs(r?.cooldown_ms ?? 600_000));
  const [routed, setRouted] = useState<string[]>(r?.outputs ?? []);
  const setCondition = (i: number, c: Partial<Condition>) => setConditions((old) => old.map((x, j) => (j === i ? { ...x, ...c } : x)));

  const body = () => {
    // Other parts of a rule made over REST (pot_type, src_ip, new_value...) are kept as they were.
    const match: Record<string, unknown> = { ...(r?.match ?? {}) };
    const types = eventTypes
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean);
    if (types.length > 0) match.event_type = types;
    else delete match.event_type;
    if (conditions.length > 0) match.fields = conditions.map((c) => ({ field: c.field.trim(), [c.op]: c.value, ...(c.op === "regex" && c.ignore_case ? { ignore_case: true } : {}) }));
    else delete match.fields;
    const rule: Record<string, unknown> = { ...(r ?? {}), name, severity, match, outputs: routed };
    if (description.trim()) rule.description = description.trim();
    else delete rule.description;
    if (count.trim() || windowS.trim()) rule.threshold = { count: Number(count), window_ms: Math.round(Number(windowS) * 1000) };
    else delete rule.threshold;
    if (cooldownS.trim()) rule.cooldown_ms = Math.round(Number(cooldownS) * 1000);
    else delete rule.cooldown_ms;
    return rule;
  };

  const { error, busy, onSubmit } = useSubmit(() => (editing ? put(`/api/v1/rules/${encodeURIComponent(name)}`, body()) : post("/api/v1/rules", body())), onDone);
  return (
    <form class="rule-form" data-testid="rule-form" aria-label={editing ? `Edit rule ${name}` : "New alert rule"} onSubmit={onSubmit}>
      <h3>{editing ? `Edit rule ${name}` : "New alert rule"}</h3>
      <div class="fields">
        <div class="field">
          <div class="label-row">
            <label for="r-name">rule name</label>
            <span class="req" aria-hidden="true" title="required">
              *
            </span>
          </div>
          <input id="r-name" value={name} disabled={editing !== null} aria-required="true" onInput={(e) => setName(e.currentTarget.value)} />
          <small class="muted">
            <Described text="Letters, digits, `.`, `_`, `-`. Alerts are stored as events of type `alert.<name>`." />
          </small>
        </div>
        <div class="field">
          <label for="r-severity">severity</label>
          <select id="r-severity" value={severity} onChange={(e) => setSeverity(e.currentTarget.value)}>
            {["low", "medium", "high", "critical"].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div class="field wide">
          <label for="r-description">description</label>
          <input id="r-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <div class="field wide">
          <label for="r-types">event types</label>
          <input id="r-types" value={eventTypes} placeholder="cowrie.login.success, cowrie.command.*" onInput={(e) => setEventTypes(e.currentTarget.value)} />
          <small class="muted">
            <Described text="Comma-separated, `*` matching any characters; empty matches every event type." />
          </small>
        </div>
      </div>
      <fieldset class="conditions">
        <legend>field conditions (every one must hold)</legend>
        {conditions.map((c, i) => (
          <div class="condition" key={i} data-testid="condition">
            <input aria-label="field" value={c.field} placeholder="data.input" onInput={(e) => setCondition(i, { field: e.currentTarget.value })} />
            <select aria-label="test" value={c.op} onChange={(e) => setCondition(i, { op: e.currentTarget.value as Condition["op"] })}>
              <option value="equals">equals</option>
              <option value="regex">matches regex</option>
            </select>
            <input aria-label="value" value={c.value} onInput={(e) => setCondition(i, { value: e.currentTarget.value })} />
            {c.op === "regex" && (
              <label class="check">
                <input type="checkbox" checked={c.ignore_case} onChange={(e) => setCondition(i, { ignore_case: e.currentTarget.checked })} /> ignore case
              </label>
            )}
            <button type="button" class="ghost" onClick={() => setConditions((old) => old.filter((_, j) => j !== i))}>
              Remove
            </button>
          </div>
        ))}
        <div>
          <button type="button" onClick={() => setConditions((old) => [...old, { field: "", op: "equals", value: "", ignore_case: false }])}>
            Add condition
          </button>
          <small class="muted"> Fields: data.&lt;key&gt; (the honeypot's), geo.country, geo.asn, src_ip, pot_id, pot_type, node_id. Regexes in RE2 syntax.</small>
        </div>
      </fieldset>
      <div class="fields">
        <div class="field">
          <label for="r-count">threshold: events</label>
          <input id="r-count" type="number" min={2} value={count} onInput={(e) => setCount(e.currentTarget.value)} />
          <small class="muted">Fire only after this many matching events from one address…</small>
        </div>
        <div class="field">
          <label for="r-window">threshold: within (s)</label>
          <input id="r-window" type="number" min={0.001} step="any" value={windowS} onInput={(e) => setWindowS(e.currentTarget.value)} />
          <small class="muted">…within this many seconds. Both empty: every matching event.</small>
        </div>
        <div class="field">
          <label for="r-cooldown">cooldown (s)</label>
          <input id="r-cooldown" type="number" min={0} step="any" value={cooldownS} onInput={(e) => setCooldownS(e.currentTarget.value)} />
          <small class="muted">After firing for an address, stay quiet for it this long.</small>
        </div>
      </div>
      <fieldset class="routed">
        <legend>send alerts to</legend>
        {outputs.length === 0 && <span class="muted">No outputs yet: alerts are stored as events only.</span>}
        {outputs.map((o) => (
          <label class="check" key={o}>
            <input type="checkbox" checked={routed.includes(o)} onChange={(e) => setRouted((old) => (e.currentTarget.checked ? [...old, o] : old.filter((x) => x !== o)))} />
            <bdi>{o}</bdi>
          </label>
        ))}
      </fieldset>
      <FormFooter error={error} busy={busy} label={editing ? "Save" : "Add rule"} onCancel={onCancel} />
    </form>
  );
}

/** What a rule matches, in a few words. */
function matchSummary(rule: Rule): string {
  const m = rule.match ?? {};
  const parts: string[] = [];
  if (m.event_type !== undefined) parts.push(list(m.event_type));
  for (const f of m.fields ?? []) parts.push(f.regex !== undefined ? `${f.field} ~ /${f.regex}/` : `${f.field} = ${String(f.equals)}`);
  for (const k of ["pot_type", "pot_id", "src_ip", "country", "asn", "node_id"] as const) if (m[k] !== undefined) parts.push(`${k} ${list((Array.isArray(m[k]) ? m[k] : [m[k]]).map(String))}`);
  if (rule.new_value) parts.push(`new ${rule.new_value}`);
  if (rule.threshold) parts.push(`≥ ${rule.threshold.count} in ${rule.threshold.window_ms / 1000} s`);
  return parts.join("; ") || "every event";
}

export function RulesCard() {
  const me = useMe();
  const operator = me.role === "operator";
  const rules = useAsync(() => orMissing(get<{ rules: RuleInfo[]; status: RulesStatus }>("/api/v1/rules")), []);
  const outputs = useAsync(() => orMissing(get<{ outputs: OutputInfo[] }>("/api/v1/outputs")), []);
  useInterval(rules.reload, REFRESH_MS);
  const [form, setForm] = useState<{ editing: Rule | null } | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const after = async (p: Promise<unknown>) => {
    await p;
    rules.reload();
  };
  const s = rules.data?.status;
  return (
    <Card title="Alert rules" id="rules">
      <p class="muted">
        A rule raises an alert (an event of type <code>alert.&lt;rule&gt;</code>) when events match it, and sends it to the outputs it names.
        {s && (
          <>
            {" "}
            The rules have read up to event {num(s.position)} (lag {num(s.lag)}) and raised {num(s.alerts)} alerts since Core started.
          </>
        )}
      </p>
      <ErrorNote error={rules.error ?? error} />
      {rules.data === null && !rules.loading && !rules.error && <Unavailable what="Alert rules" api="GET /api/v1/rules" />}
      {rules.data && (
        <div class="table-wrap">
          <table data-testid="rules">
            <Head cols={["name", "severity", "matches", "sent to", "state", "#held back"]} operator={operator} />
            <tbody>
              {rules.data.rules.length === 0 && (
                <tr>
                  <td colSpan={operator ? 7 : 6} class="muted">
                    No alert rules yet.
                  </td>
                </tr>
              )}
              {rules.data.rules.map(({ rule, origin, paused }) => (
                <tr key={rule.name} data-rule={rule.name}>
                  <td>
                    <strong>
                      <bdi>{rule.name}</bdi>
                    </strong>
                    {origin === "config" && <span class="muted"> (config file)</span>}
                    {rule.description && <div class="muted">{rule.description}</div>}
                  </td>
                  <td>{rule.severity ?? "medium"}</td>
                  <td class="match">
                    <bdi>{matchSummary(rule)}</bdi>
                  </td>
                  <td>{(rule.outputs ?? []).join(", ") || "–"}</td>
                  <td>
                    <StateBadge state={paused ? "paused" : "active"} />
                  </td>
                  <td class="n" title="Alerts a cool-down held back since Core started">
                    {num(s?.suppressed[rule.name] ?? 0)}
                  </td>
                  {operator && (
                    <td>
                      {origin === "api" && (
                        <div class="actions">
                          <ChangeActions base="/api/v1/rules" name={rule.name} paused={paused} edit={() => setForm({ editing: rule })} after={after} onError={setError} />
                        </div>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {operator && rules.data && !form && (
        <div class="toolbar">
          <button
            type="button"
            onClick={() => {
              outputs.reload();
              setForm({ editing: null });
            }}
          >
            New rule
          </button>
        </div>
      )}
      {operator && form && (
        <RuleForm
          key={form.editing?.name ?? "new"}
          editing={form.editing}
          outputs={(outputs.data?.outputs ?? []).map((o) => o.status.name)}
          onCancel={() => setForm(null)}
          onDone={() => {
            setForm(null);
            rules.reload();
          }}
        />
      )}
    </Card>
  );
}
