import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { MobileService, type ScannedFieldSchema } from "../../../gen/hotelops/mobile/v1/mobile_pb.js";
import { requireStaff } from "../auth/index.ts";
import { guestOut, type GuestService } from "../guests/index.ts";
import type { IdentityScanService } from "./identity.service.ts";
import type { ReadField } from "./mrz.ts";
import { saveRequest, scannedPerson } from "./save.ts";

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
  guests: GuestService,
): Pick<ServiceImpl<typeof MobileService>, "scanIdentityDocument"> {
  return {
    async scanIdentityDocument(req, ctx) {
      // checked before the photos are read: a save needs the staff's confirmation
      const lineId = saveRequest(req.saveToRoomLine, req.confirmed);
      const r = await service.scan({
        documentType: req.documentType,
        images: req.images.map((i) => ({ content: i.content, contentType: i.contentType, filename: i.filename })),
      });
      let saved: Awaited<ReturnType<GuestService["saveScanned"]>> | undefined;
      if (lineId !== undefined) {
        const scope = await guests.scopeOf(requireStaff(ctx.values).activePropertyId);
        saved = await guests.saveScanned(scope, lineId, scannedPerson(r.documentType, r));
      }
      return {
        ...(saved === undefined ? {} : { guest: guestOut(saved.guest), guestCreated: saved.created }),
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
