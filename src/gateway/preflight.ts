import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { rule } from "../../gen/hotelops/auth/v1/rule_pb.js";
import { AppError } from "../errors.ts";

/**
 * Refuses a request to an RPC that needs a caller when it carries no Authorization at all, before its body is
 * read: an anonymous client cannot hold streams or buffers open with bodies that never finish. The token itself
 * is verified by the auth interceptor as for every face; this only spares reading what would be refused anyway.
 */
export function missingCredentials(method: DescMethod, authorization: string | undefined): AppError | undefined {
  if (authorization !== undefined && authorization !== "") return undefined;
  if (isPublic(method)) return undefined;
  return new AppError("unauthorized", "Authentication required: send Authorization: Bearer <access token>.", {
    headers: { "www-authenticate": "Bearer" },
  });
}

/** Read once per method: getOption builds the option message anew on every call. */
const publicMethods = new Map<DescMethod, boolean>();

function isPublic(method: DescMethod): boolean {
  let open = publicMethods.get(method);
  if (open === undefined) {
    open = !method.parent.typeName.startsWith("hotelops.") || getOption(method, rule).public;
    publicMethods.set(method, open);
  }
  return open;
}
