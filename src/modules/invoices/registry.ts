import { AppError } from "../../errors.ts";
import type { Buyer, BuyerInput } from "./buyer.ts";
import { IntegratorTransportError, type EFaturaRegistry } from "./integrator.ts";

/**
 * The buyer's e-Fatura flag from GİB's registry, asked through the integrator, when the draft's company buyer asks
 * for it (`lookUpEFatura`) and the operator has not set the flag: an operator's `eFatura: true` wins and is not
 * looked up. The answer is the draft's flag, marked `eFaturaSource: "registry"` (the draft's audit entry shows it).
 * No integrator, or no usable answer: 503 unavailable, and no draft (a registered buyer must not get an e-Arşiv).
 */
export async function lookUpEFatura(
  registry: EFaturaRegistry | undefined,
  buyer: Buyer,
  input: BuyerInput | undefined,
): Promise<Buyer> {
  if (buyer.kind !== "COMPANY" || input?.kind !== "COMPANY" || input.lookUpEFatura !== true || buyer.eFatura)
    return buyer;
  if (registry === undefined)
    throw new AppError("unavailable", "No integrator is configured to look up the e-Fatura registry.");
  try {
    const eFatura = await registry.isEFaturaUser(buyer.vkn);
    return { ...buyer, eFatura, eFaturaSource: "registry" };
  } catch (err) {
    if (!(err instanceof IntegratorTransportError)) throw err;
    throw new AppError("unavailable", "The e-Fatura registry did not answer; retry shortly.");
  }
}
