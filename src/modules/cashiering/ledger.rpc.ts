import type { ServiceImpl } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { FolioService as FolioRpc } from "../../../gen/hotelops/folio/v1/folio_pb.js";
import type { AccountRow, AllocationRow, ItemRow } from "../city-ledger/index.ts";
import { chargeOut, folioOut, paymentOut, scope, type FolioRpcServices } from "./folio.rpc.ts";
import { keyedOf } from "../../server/context.ts";

type Impl = ServiceImpl<typeof FolioRpc>;

const accountOut = (a: AccountRow) => ({ ...a, createdAt: timestampFromDate(a.createdAt) });

const itemOut = (i: ItemRow) => ({
  id: i.id,
  kind: i.kind,
  ...(i.folioId !== null ? { folioId: i.folioId } : {}),
  amountMinor: i.amountMinor,
  openMinor: i.openMinor,
  businessDate: i.businessDate,
  methodCode: i.methodCode,
  reference: i.reference,
  postedAt: timestampFromDate(i.postedAt),
});

const allocationOut = (a: AllocationRow) => ({ ...a });

/** CreateFolio, ListFolios, SetFolioRoutingRule and TransferCharge: a reservation's several folios. */
export function windowHandlers(
  s: FolioRpcServices,
): Pick<Impl, "createFolio" | "listFolios" | "setFolioRoutingRule" | "transferCharge"> {
  return {
    async createFolio(req, ctx) {
      const { propertyId } = scope(ctx);
      const folio = await s.windows.createFolio(
        propertyId,
        { reservationId: req.reservationId, name: req.name },
        keyedOf(ctx),
      );
      return { folio: folioOut(folio) };
    },
    async listFolios(req, ctx) {
      const { propertyId } = scope(ctx);
      const { folios, rules } = await s.windows.listFolios(propertyId, req.reservationId);
      return {
        folios: folios.map(folioOut),
        routingRules: rules.map((r) => ({ chargeCode: r.chargeCode, window: r.windowNo })),
      };
    },
    async setFolioRoutingRule(req, ctx) {
      const { propertyId } = scope(ctx);
      const rules = await s.windows.setRoutingRule(
        propertyId,
        {
          reservationId: req.reservationId,
          chargeCode: req.chargeCode,
          folioId: req.folioId,
        },
        keyedOf(ctx),
      );
      return { routingRules: rules.map((r) => ({ chargeCode: r.chargeCode, window: r.windowNo })) };
    },
    async transferCharge(req, ctx) {
      const { propertyId } = scope(ctx);
      const t = await s.windows.transferCharge(
        propertyId,
        { chargeId: req.chargeId, toFolioId: req.toFolioId },
        keyedOf(ctx),
      );
      return { charge: chargeOut(t.charge), fromFolio: folioOut(t.from), toFolio: folioOut(t.to) };
    },
  };
}

/** The city ledger: accounts, settling a folio to one, payments, statements and the ageing report. */
export function ledgerHandlers(
  s: FolioRpcServices,
): Pick<
  Impl,
  | "createLedgerAccount"
  | "updateLedgerAccount"
  | "listLedgerAccounts"
  | "settleFolioToAccount"
  | "postAccountPayment"
  | "getAccountStatement"
  | "getAgeingReport"
> {
  return {
    async createLedgerAccount(req, ctx) {
      const { propertyId } = scope(ctx);
      const account = await s.ledger.createAccount(
        propertyId,
        {
          code: req.code,
          name: req.name,
          kind: req.kind,
          creditLimitMinor: req.creditLimitMinor,
        },
        keyedOf(ctx),
      );
      return { account: accountOut(account) };
    },
    async updateLedgerAccount(req, ctx) {
      const { propertyId } = scope(ctx);
      const account = await s.ledger.updateAccount(
        propertyId,
        {
          accountId: req.accountId,
          name: req.name,
          creditLimitMinor: req.creditLimitMinor,
        },
        keyedOf(ctx),
      );
      return { account: accountOut(account) };
    },
    async listLedgerAccounts(req, ctx) {
      const { propertyId } = scope(ctx);
      return { accounts: (await s.ledger.listAccounts(propertyId)).map(accountOut) };
    },
    async settleFolioToAccount(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const r = await s.ledger.settleFolio(
        propertyId,
        actor,
        { folioId: req.folioId, accountId: req.accountId },
        keyedOf(ctx),
      );
      return { account: accountOut(r.account), item: itemOut(r.item), payment: paymentOut(r.payment) };
    },
    async postAccountPayment(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const r = await s.ledger.postPayment(
        propertyId,
        actor,
        {
          accountId: req.accountId,
          amountMinor: req.amountMinor,
          methodCode: req.methodCode,
          reference: req.reference,
          allocations: req.allocations.map((a) => ({ itemId: a.itemId, amountMinor: a.amountMinor })),
        },
        keyedOf(ctx),
      );
      return { account: accountOut(r.account), item: itemOut(r.item), allocations: r.allocations.map(allocationOut) };
    },
    async getAccountStatement(req, ctx) {
      const { propertyId } = scope(ctx);
      const r = await s.ledger.statement(propertyId, req.accountId);
      return {
        account: accountOut(r.account),
        items: r.items.map(itemOut),
        allocations: r.allocations.map(allocationOut),
      };
    },
    async getAgeingReport(req, ctx) {
      const { propertyId } = scope(ctx);
      const r = await s.ledger.ageing(propertyId);
      return {
        businessDate: r.businessDate,
        accounts: r.accounts.map((l) => ({
          account: accountOut(l.account),
          currentMinor: l.currentMinor,
          days30Minor: l.days30Minor,
          days60Minor: l.days60Minor,
          days90Minor: l.days90Minor,
          unallocatedMinor: l.unallocatedMinor,
          balanceMinor: l.balanceMinor,
        })),
      };
    },
  };
}
