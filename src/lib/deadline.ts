import { AsyncLocalStorage } from "node:async_hooks";
import { Code, ConnectError } from "@connectrpc/connect";
import { AppError } from "../errors.ts";

/**
 * The deadline of the call a piece of work belongs to (gRPC `grpc-timeout`, Connect `Connect-Timeout-Ms`): the
 * call's signal, which both servers (connect-es and the unary fast path) abort with deadline_exceeded when it
 * passes. The call interceptor runs every RPC inside it; the places where a call waits for something shared (a
 * pooled database connection in `transact`, a place in a concurrency limit, the row writer) ask it before they
 * start work, so a call whose caller has given up is abandoned before it writes.
 */
/** A call's signal, and whether the caller set a deadline (then the caller going away also means it gave up). */
export interface CallDeadline {
  signal: AbortSignal;
  bounded: boolean;
}

const scope = new AsyncLocalStorage<CallDeadline>();

/** The deadline of a call from its signal and request headers (a timeout header present: the caller set one). */
export function callDeadlineOf(signal: AbortSignal, header: Headers): CallDeadline {
  return { signal, bounded: header.has("grpc-timeout") || header.has("connect-timeout-ms") };
}

export function runWithDeadline<T>(deadline: CallDeadline, work: () => T): T {
  return scope.run(deadline, work);
}

/**
 * True when the call's deadline passed: its signal was aborted with deadline_exceeded, or, for a call with a
 * deadline, aborted at all (a gRPC client cancels its stream when its own timer fires, which may come first).
 */
function deadlinePassed(deadline: CallDeadline | undefined = scope.getStore()): boolean {
  if (deadline?.signal.aborted !== true) return false;
  const reason: unknown = deadline.signal.reason;
  return deadline.bounded || (reason instanceof ConnectError && reason.code === Code.DeadlineExceeded);
}

function deadlineError(): AppError {
  return new AppError("request_timeout", "The call's deadline passed before it could run; nothing was changed.");
}

/** Throws request_timeout (DEADLINE_EXCEEDED) when the running call's deadline has passed. */
export function throwIfDeadlinePassed(deadline?: CallDeadline): void {
  if (deadlinePassed(deadline ?? scope.getStore())) throw deadlineError();
}

/**
 * Waits for `pending` (a pooled connection, a place in line) unless the running call's deadline passes first:
 * then rejects with request_timeout at once, and whatever `pending` brings later goes to `giveBack`.
 */
export async function beforeDeadline<T>(pending: Promise<T>, giveBack: (value: T) => void): Promise<T> {
  const deadline = scope.getStore();
  if (deadline === undefined) return pending;
  if (deadlinePassed(deadline)) {
    void pending.then(giveBack, () => undefined);
    throw deadlineError();
  }
  const { signal } = deadline;
  let onAbort: (() => void) | undefined;
  let late = false;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      if (!deadlinePassed(deadline)) return;
      late = true;
      reject(deadlineError());
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([pending, aborted]);
  } catch (err) {
    if (late) void pending.then(giveBack, () => undefined);
    throw err;
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}
