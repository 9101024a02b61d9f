import { AsyncLocalStorage } from "node:async_hooks";

/** Who makes a change: a staff user, an internal API client, a channel/partner client, or the system (jobs, CLI). */
type ActorKind = "user" | "client" | "partner" | "system";

/** Through which face a change arrived. */
type ChangeFace = "rest" | "connect" | "grpc" | "grpc-web" | "job" | "cli";

/** The author of the changes made while serving one call, one job or one CLI command (what the audit trail records). */
export interface ChangeAuthor {
  kind: ActorKind;
  /** The user id, the client id, or what the system ran (a queue name, `ops-cli`). */
  id: string;
  face: ChangeFace;
  /** The request id of the call (`X-Request-Id`), the job id, or the partner message id. */
  requestId: string;
}

/**
 * The author of a piece of work, set once where the work enters (the auth interceptor for calls, the job worker,
 * the ops CLI) and read where a change is recorded. It is a fact about the call, like the request id of the log
 * context, never a switch of behaviour: no code decides anything from it.
 */
const scope = new AsyncLocalStorage<ChangeAuthor>();

export function runAs<T>(author: ChangeAuthor, work: () => T): T {
  return scope.run(author, work);
}

/** Work that is not a call, a job or a command (a test calling a service directly) is the system's. */
const unknownAuthor: ChangeAuthor = { kind: "system", id: "internal", face: "job", requestId: "" };

export function currentAuthor(): ChangeAuthor {
  return scope.getStore() ?? unknownAuthor;
}
