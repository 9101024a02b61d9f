// Live pages: the property's event stream (EventService.StreamEvents over Connect), resumed by cursor after a
// dropped connection, instead of polling. A page names the event types it shows and reloads when one arrives.
import { useEffect, useRef } from "preact/hooks";
import type { Signed } from "./api.ts";

/** Reloads come at most this often while events keep arriving (a burst of events is one reload). */
const SETTLE_MS = 250;
const MAX_BACKOFF_MS = 30_000;

/**
 * Calls `onChange(events)` when events of `types` (all types when empty) of the active property commit, with
 * the matching events of a burst together. The stream reconnects with the last cursor it received (1 s, 2 s,
 * ... 30 s apart), so nothing that committed while it was down is missed; the page reloads once after a
 * reconnect, too, in case the stream's history no longer reached back far enough.
 */
export function useLiveEvents(
  signed: Signed,
  types: readonly string[],
  onChange: (events: { type: string; data: Record<string, unknown> | undefined }[]) => void,
): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  const key = types.join(",");
  useEffect(() => {
    const stop = new AbortController();
    let cursor = "";
    let waiting: { type: string; data: Record<string, unknown> | undefined }[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const batch = waiting;
        waiting = [];
        if (!stop.signal.aborted) latest.current(batch);
      }, SETTLE_MS);
    };
    void (async () => {
      for (let attempt = 0; !stop.signal.aborted; attempt++) {
        try {
          const stream = signed.events.streamEvents(
            { cursor, eventTypes: key === "" ? [] : key.split(",") },
            { signal: stop.signal },
          );
          for await (const m of stream) {
            attempt = 0;
            document.documentElement.dataset.live = "on";
            if (m.kind.case === "keepAlive") cursor = m.kind.value.cursor;
            else if (m.kind.case === "event") {
              cursor = m.kind.value.cursor;
              waiting.push({ type: m.kind.value.type, data: m.kind.value.data });
              settle();
            }
          }
        } catch {
          // dropped, refused or cut off: resume from the cursor below
        }
        if (stop.signal.aborted) return;
        document.documentElement.dataset.live = "off";
        await new Promise((r) => setTimeout(r, Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.min(attempt, 5))));
        // what the page shows may be older than the cursor's history: read it once more
        if (cursor !== "") latest.current([]);
      }
    })();
    return () => {
      stop.abort();
      clearTimeout(timer);
    };
  }, [signed, key]);
}
