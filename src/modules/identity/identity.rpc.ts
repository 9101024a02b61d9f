import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { MobileService, type ScannedFieldSchema } from "../../../gen/hotelops/mobile/v1/mobile_pb.js";
import type { IdentityScanService } from "./identity.service.ts";
import type { ReadField } from "./mrz.ts";

const scanned = (f: ReadField): MessageInitShape<typeof ScannedFieldSchema> => ({
  ...(f.value === null ? {} : { value: f.value }),
  valid: f.valid,
  corrected: f.corrected === true,
});

/**
 * This module's part of MobileService. Other mobile RPCs live in other modules: whoever registers
 * MobileService spreads every module's part into one implementation object (`{...identityMobileRpc(s), ...}`).
 */
export function identityMobileRpc(
  service: IdentityScanService,
): Pick<ServiceImpl<typeof MobileService>, "scanIdentityDocument"> {
  return {
    async scanIdentityDocument(req) {
      const r = await service.scan({
        documentType: req.documentType,
        images: req.images.map((i) => ({ content: i.content, contentType: i.contentType, filename: i.filename })),
      });
      return {
        documentType: r.documentType,
        mrzFormat: r.format,
        valid: r.valid,
        documentNumber: scanned(r.documentNumber),
        surname: scanned(r.surname),
        givenNames: scanned(r.givenNames),
        nationality: scanned(r.nationality),
        issuingState: scanned(r.issuingState),
        birthDate: scanned(r.birthDate),
        sex: scanned(r.sex),
        expiryDate: scanned(r.expiryDate),
        ...(r.tcIdentityNumber === null ? {} : { tcIdentityNumber: scanned(r.tcIdentityNumber) }),
        expired: r.expired,
        problems: r.problems,
      };
    },
  };
}
