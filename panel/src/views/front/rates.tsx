// Rates: the property's rate plans, their board and the room types they cover (read-only).
import { type Signed } from "../../api.ts";
import { lookup, useI18n } from "../../i18n.ts";
import { BoardType } from "../../../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ErrorBox, PageTitle, useLoad } from "../common.tsx";
import { propertyCode } from "./shared.tsx";

export function Rates({ signed }: { signed: Signed }) {
  const { t, lang } = useI18n();
  const code = propertyCode(signed);
  const data = useLoad(async () => {
    const [types, plans] = await Promise.all([
      signed.inventory.listRoomTypes({ propertyCode: code, limit: 500 }),
      signed.inventory.listRatePlans({ propertyCode: code, limit: 500 }),
    ]);
    return { types: types.roomTypes, plans: plans.ratePlans };
  }, []);
  const typeCode = (id: string) => data.data?.types.find((x) => x.id === id)?.code ?? id;
  return (
    <section>
      <PageTitle>{t("ratesTitle")}</PageTitle>
      <p class="small">{t("ratesNote")}</p>
      <ErrorBox problem={data.problem} />
      {data.loading && <p>{t("loading")}</p>}
      {data.data && data.data.plans.length === 0 && <p>{t("ratesNone")}</p>}
      {data.data && data.data.plans.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={t("ratesTitle")}>
          <table id="rate-plans">
            <thead>
              <tr>
                <th scope="col">{t("colRatePlan")}</th>
                <th scope="col">{t("colBoard")}</th>
                <th scope="col">{t("colRoomTypes")}</th>
                <th scope="col">{t("colPolicy")}</th>
              </tr>
            </thead>
            <tbody>
              {data.data.plans.map((p) => (
                <tr key={p.id}>
                  <td>
                    <strong>{p.code}</strong> {p.name}
                  </td>
                  <td>{lookup(lang, `board_${BoardType[p.boardType]}`) ?? BoardType[p.boardType]}</td>
                  <td>{p.roomTypeIds.map(typeCode).join(", ")}</td>
                  <td>
                    {p.cancellationPolicy === undefined
                      ? t("policyFree")
                      : t("policyUntil", { h: p.cancellationPolicy.freeUntilHours })}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
