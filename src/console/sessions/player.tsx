/** A session's terminal recording played in the page (asciinema-player, loaded on demand). */
import { useEffect, useRef, useState } from "preact/hooks";
import { getText } from "../api";
import { ErrorNote } from "../components";

export function Player({ id }: { id: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<Error | null>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let live = true;
    let player: { dispose(): void } | null = null;
    Promise.all([getText(`/api/v1/sessions/${encodeURIComponent(id)}/recording`), import("./player-lazy")]).then(
      ([text, { createPlayer }]) => {
        if (!live || !box.current) return;
        player = createPlayer(text, box.current);
        setReady(true);
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
      player?.dispose();
    };
  }, [id]);
  return (
    <div class="player" data-testid="player">
      <ErrorNote error={error} />
      {!ready && !error && <p class="muted">Loading the recording…</p>}
      <div ref={box} />
    </div>
  );
}
