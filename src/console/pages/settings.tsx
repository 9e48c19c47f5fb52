/**
 * Settings: who you are signed in as, what the roles may do, how Core is secured, and the
 * outputs and alert rules (pages/outputs.tsx).
 */
import { get, type Stats } from "../api";
import { Card, ErrorNote, useAsync, useMe } from "../components";
import { OutputsCard, RulesCard } from "./outputs";

export function SettingsPage() {
  const me = useMe();
  const stats = useAsync(() => get<Stats>("/api/v1/stats?window=1h&top=1"), []);
  const sec = stats.data?.security;
  const yes = (b: boolean | undefined) => (b === undefined ? "–" : b ? "yes" : "no");
  return (
    <main id="main" class="settings">
      <h1>Settings</h1>
      <Card title="Access" id="access">
        <p data-testid="whoami">
          {me.auth_enabled ? (
            <>
              Signed in as <strong>{me.name}</strong> with role <strong>{me.role}</strong>.
            </>
          ) : (
            <>This Core checks no API tokens: it listens on loopback only, and everyone who can reach it is an operator.</>
          )}
        </p>
        <table>
          <thead>
            <tr>
              <th scope="col">role</th>
              <th scope="col">may</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>
                <strong>read</strong>
              </td>
              <td>Every page of this console, the REST reads and the live feed: events, statistics, nodes, honeypots, the catalogue, the command history.</td>
            </tr>
            <tr>
              <td>
                <strong>operator</strong>
              </td>
              <td>All of read, and changes: install, start, stop, restart and remove honeypots; add, edit, test, pause and delete outputs and alert rules. A command runs software on a node, so give this role to few.</td>
            </tr>
          </tbody>
        </table>
        <p class="muted">
          Tokens are made with <code>honeybee token create --name NAME --role read|operator</code>, which prints the token once and the entry (its SHA-256) for Core's <code>tokens</code>. The console keeps the token in this tab's session storage only.
        </p>
        <ErrorNote error={stats.error} />
        {sec && (
          <dl class="facts">
            <div>
              <dt>API tokens</dt>
              <dd>{yes(sec.auth_enabled)}</dd>
            </div>
            <div>
              <dt>Node enrollment (TOTP)</dt>
              <dd>{yes(sec.node_auth_enabled)}</dd>
            </div>
            <div>
              <dt>TLS</dt>
              <dd>{yes(sec.tls)}</dd>
            </div>
          </dl>
        )}
      </Card>
      <OutputsCard />
      <RulesCard />
    </main>
  );
}
