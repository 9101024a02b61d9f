/**
 * `grpc-message` as the gRPC spec (PROTOCOL-HTTP2, "Status-Message") writes it: the UTF-8 bytes of the message,
 * percent-encoding only bytes outside 0x20-0x7E and "%" itself. connect-es uses encodeURIComponent, which also
 * encodes ":", "/", spaces and the like; grpc-js decodes with decodeURI and then shows "Authentication
 * required%3A ..." to its users.
 */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Re-encodes a grpc-message connect-es wrote (encodeURIComponent) the spec's way. */
export function respecGrpcMessage(encoded: string): string {
  try {
    return encodeGrpcMessage(decodeURIComponent(encoded));
  } catch {
    return encoded;
  }
}
