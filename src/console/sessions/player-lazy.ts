/**
 * asciinema-player and its stylesheet, in a chunk of their own: only a session's page imports
 * this (dynamically), so the console's first load does not carry the player (~85 KB gzip).
 * The stylesheet comes in as text and goes into a <style> once, so it too loads with the
 * player and not with the first page (Bun emits imported .css files as first-load links).
 */
import { create } from "asciinema-player";
import css from "asciinema-player/dist/bundle/asciinema-player.css" with { type: "text" };

let styled = false;

export function createPlayer(text: string, el: HTMLElement): { dispose(): void } {
  if (!styled) {
    const style = document.createElement("style");
    style.dataset.for = "asciinema-player";
    style.textContent = css;
    document.head.append(style);
    styled = true;
  }
  // The recording is handed over as data: it was fetched with the API token, which a URL
  // source could not carry. idleTimeLimit shortens an attacker's long pauses to 2 s.
  return create({ data: text }, el, { fit: "width", idleTimeLimit: 2, terminalFontSize: "small", preload: true, controls: true });
}
