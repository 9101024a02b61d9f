/** A field problem the API reports (`details` of the error body). */
export interface ErrorDetail {
  field: string;
  reason: string;
}

export interface HotelOpsErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | undefined;
  details?: ErrorDetail[] | undefined;
}

/** An error answer of the REST API: `{"error":{code, message, requestId, details}}` or an OAuth error body. */
export class HotelOpsError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[];

  constructor(init: HotelOpsErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details ?? [];
  }
}

/** Reads an error response of either body style. */
export async function errorFromResponse(res: Response): Promise<HotelOpsError> {
  const requestId = res.headers.get("x-request-id") ?? undefined;
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  const b = body as { error?: unknown; error_description?: unknown } | undefined;
  if (b !== undefined && typeof b.error === "object" && b.error !== null) {
    const e = b.error as { code?: unknown; message?: unknown; requestId?: unknown; details?: unknown };
    return new HotelOpsError({
      status: res.status,
      code: typeof e.code === "string" ? e.code : "unknown",
      message: typeof e.message === "string" ? e.message : `HTTP ${res.status}`,
      requestId: typeof e.requestId === "string" ? e.requestId : requestId,
      details: Array.isArray(e.details) ? (e.details as ErrorDetail[]) : [],
    });
  }
  if (b !== undefined && typeof b.error === "string") {
    return new HotelOpsError({
      status: res.status,
      code: b.error,
      message: typeof b.error_description === "string" ? b.error_description : b.error,
      requestId,
    });
  }
  return new HotelOpsError({ status: res.status, code: "http_error", message: `HTTP ${res.status}`, requestId });
}
