import { describe, expect, it } from "vitest";
import { encodeGrpcMessage, respecGrpcMessage } from "./grpc-message.ts";

describe("grpc-message encoding (gRPC spec: percent-encode bytes outside 0x20-0x7E, and %)", () => {
  it("keeps printable ASCII, encodes %, control characters and UTF-8 bytes", () => {
    expect(encodeGrpcMessage("Authentication required: send <token>/x?y=1")).toBe(
      "Authentication required: send <token>/x?y=1",
    );
    expect(encodeGrpcMessage("100% done\nnext")).toBe("100%25 done%0Anext");
    expect(encodeGrpcMessage("José ü €")).toBe("Jos%C3%A9 %C3%BC %E2%82%AC");
    for (const s of ["José: 100%", "tab\there", "\u{1F600}"]) expect(decodeURIComponent(encodeGrpcMessage(s))).toBe(s);
  });

  it("re-encodes what connect-es wrote with encodeURIComponent", () => {
    expect(respecGrpcMessage(encodeURIComponent("a: b/c 100% é"))).toBe("a: b/c 100%25 %C3%A9");
  });
});
