/**
 * Which events an output ships: those its `event_types` patterns match, plus the alerts of
 * rules that name it in their `outputs` (an alert carries them in `data.outputs`).
 */
import { globRegex, isAlert, type OutEvent } from "./event";

export function selector(name: string, eventTypes: readonly string[]): (e: OutEvent) => boolean {
  const types = globRegex(eventTypes);
  return (e) => {
    if (types.test(e.event_type)) return true;
    if (!isAlert(e)) return false;
    const routed = e.data.outputs;
    return Array.isArray(routed) && routed.includes(name);
  };
}
