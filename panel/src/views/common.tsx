import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { problemOf, type Problem } from "../api.ts";
import { useI18n } from "../i18n.ts";

/** The page heading; focused when the page opens so screen readers and keyboards start there. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

/** An error answer as people read it, never a JSON dump. */
export function ErrorBox({ problem }: { problem: Problem | undefined }) {
  const { t } = useI18n();
  if (problem === undefined) return null;
  return (
    <div class="error" role="alert">
      <p>
        {problem.network
          ? t("networkError")
          : problem.retryAfterSeconds !== undefined
            ? t("retryIn", { s: problem.retryAfterSeconds })
            : problem.message}
      </p>
      {problem.fields.length > 0 && (
        <ul>
          {problem.fields.map((f) => (
            <li key={f.field}>
              <code>{f.field}</code>: {f.reason}
            </li>
          ))}
        </ul>
      )}
      {problem.requestId && <p class="small">{t("requestId", { id: problem.requestId })}</p>}
    </div>
  );
}

/**
 * Runs an async load; `reload()` runs it again. A 401 that survived the refresh ends the session elsewhere. A load
 * overtaken by the next one (its inputs changed, a reload, the page left) is aborted through `signal`: a load that
 * passes it on to its calls stops their requests, so a slow old answer is neither waited for nor decoded.
 */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
): { data: T | undefined; problem: Problem | undefined; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; problem: Problem | undefined; loading: boolean }>({
    data: undefined,
    problem: undefined,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const aborted = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(aborted.signal).then(
      (data) => !aborted.signal.aborted && setState({ data, problem: undefined, loading: false }),
      (err: unknown) =>
        !aborted.signal.aborted && setState({ data: undefined, problem: problemOf(err), loading: false }),
    );
    return () => aborted.abort();
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((n) => n + 1) };
}

/**
 * An action the page sends to the server: `run(work)` clears the last problem, marks the page busy while `work`
 * runs and keeps its failure as the problem to show. It resolves to that problem (undefined when the work
 * succeeded), for a page that also marks the field the server named.
 */
export function useAction(): {
  busy: boolean;
  problem: Problem | undefined;
  setProblem: (problem: Problem | undefined) => void;
  run: (work: () => Promise<unknown>) => Promise<Problem | undefined>;
} {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | undefined>();
  async function run(work: () => Promise<unknown>): Promise<Problem | undefined> {
    setProblem(undefined);
    setBusy(true);
    try {
      await work();
      return undefined;
    } catch (err) {
      const found = problemOf(err);
      setProblem(found);
      return found;
    } finally {
      setBusy(false);
    }
  }
  return { busy, problem, setProblem, run };
}

/** The signing secret, shown once, with a copy button and the warning. */
export function SecretBox({ secret, note, onDone }: { secret: string; note?: string | undefined; onDone: () => void }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState<"" | "ok" | "failed">("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  async function copy() {
    input.current?.select();
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("ok");
    } catch {
      setCopied("failed");
    }
  }
  return (
    <section class="secret" aria-labelledby="secret-title">
      <h2 id="secret-title">{t("secretTitle")}</h2>
      <p class="warning">
        <strong>{t("secretOnce")}</strong>
      </p>
      {note && <p>{note}</p>}
      <div class="secret-row">
        <label class="visually-hidden" for="secret-value">
          {t("secretTitle")}
        </label>
        <input
          id="secret-value"
          ref={input}
          readOnly
          value={secret}
          class="mono"
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
        <button type="button" onClick={copy}>
          {t("secretCopy")}
        </button>
      </div>
      <p role="status" class="small">
        {copied === "ok" ? t("secretCopied") : copied === "failed" ? t("secretCopyFailed") : ""}
      </p>
      <button type="button" class="primary" onClick={onDone}>
        {t("secretDone")}
      </button>
    </section>
  );
}

/** An inline confirmation (keyboard reachable, no browser dialog). */
export function Confirm({ text, onYes, onNo }: { text: string; onYes: () => void; onNo: () => void }) {
  const { t } = useI18n();
  const ref = useRef<HTMLButtonElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div class="confirm" role="group" aria-label={text}>
      <p>{text}</p>
      <button type="button" class="danger" id="confirm-yes" ref={ref} onClick={onYes}>
        {t("confirm")}
      </button>{" "}
      <button type="button" onClick={onNo}>
        {t("cancel")}
      </button>
    </div>
  );
}
