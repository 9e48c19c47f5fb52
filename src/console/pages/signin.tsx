/** Sign-in: Core checks API tokens; the token stays in this tab's sessionStorage only. */
import { useState } from "preact/hooks";
import { get, token } from "../api";

export function SignIn({ onSignedIn, failed }: { onSignedIn: () => void; failed: boolean }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(failed ? "Core did not accept the token: sign in again." : null);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="signin">
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          token.set(value.trim());
          try {
            await get("/api/v1/whoami");
            onSignedIn();
          } catch (err) {
            token.clear();
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <h1>
          <span aria-hidden="true">⬢</span> HoneyBee Core
        </h1>
        <p>This Core checks API tokens. Paste yours (from <code>honeybee token create</code>); it is kept in this browser tab only and forgotten when the tab closes.</p>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autoComplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || value.trim() === ""}>
          Sign in
        </button>
      </form>
    </main>
  );
}
