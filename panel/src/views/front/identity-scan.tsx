// The identity scan at check-in (MobileService.ScanIdentityDocument): the photos are read first and the fields shown
// with their checks; only after the desk compared them with the document does a second call save the person as the
// room line's guest (save_to_room_line with confirmed). Nothing is kept in the browser beyond the page.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { type RoomLine, type Signed } from "../../api.ts";
import { useI18n } from "../../i18n.ts";
import { ErrorBox, useAction } from "../common.tsx";

type Scan = Awaited<ReturnType<Signed["mobile"]["scanIdentityDocument"]>>;

async function images(files: FileList | null) {
  return Promise.all(
    [...(files ?? [])].map(async (f) => ({
      content: new Uint8Array(await f.arrayBuffer()),
      contentType: f.type,
      filename: f.name,
    })),
  );
}

export function IdentityScan(props: { signed: Signed; line: RoomLine; index: number; onSaved: (t: string) => void }) {
  const { t } = useI18n();
  const [documentType, setDocumentType] = useState("PASSPORT");
  const [files, setFiles] = useState<FileList | null>(null);
  const [scan, setScan] = useState<Scan | undefined>();
  const { busy, problem, run } = useAction();
  const id = (s: string) => `${s}-${props.index}`;
  async function send(save: boolean) {
    await run(async () => {
      const out = await props.signed.mobile.scanIdentityDocument({
        documentType,
        images: await images(files),
        ...(save ? { saveToRoomLine: props.line.id, confirmed: true } : {}),
      });
      if (save) {
        setScan(undefined);
        const g = out.guest;
        props.onSaved(t("scanSaved", { name: `${g?.givenName ?? ""} ${g?.familyName ?? ""}`.trim() }));
      } else setScan(out);
    });
  }
  const fields = scan
    ? ([
        ["scanSurname", scan.surname],
        ["scanGiven", scan.givenNames],
        ["documentNumber", scan.documentNumber],
        ["nationality", scan.nationality],
        ["scanBirth", scan.birthDate],
        ["scanExpiry", scan.expiryDate],
      ] as const)
    : [];
  return (
    <details>
      <summary>{t("scanTitle")}</summary>
      <form
        class="stack"
        aria-label={t("scanTitle")}
        onSubmit={(e) => {
          e.preventDefault();
          void send(false);
        }}
      >
        <label for={id("scan-type")}>{t("documentType")}</label>
        <select id={id("scan-type")} value={documentType} onChange={(e) => setDocumentType(e.currentTarget.value)}>
          <option value="PASSPORT">{t("doc_PASSPORT")}</option>
          <option value="TC_KIMLIK">{t("doc_TC_KIMLIK")}</option>
        </select>
        <label for={id("scan-files")}>{t("scanPhotos")}</label>
        <input
          id={id("scan-files")}
          type="file"
          accept="image/jpeg,image/png,image/webp"
          multiple
          onChange={(e) => setFiles(e.currentTarget.files)}
        />
        <button type="submit" id={id("scan-read")} disabled={busy}>
          {t("scanRead")}
        </button>
      </form>
      {scan && (
        <div id={id("scan-result")}>
          <p class={scan.valid ? "" : "warning"}>{scan.valid ? t("scanValid") : t("scanInvalid")}</p>
          <dl class="facts">
            {fields.map(([k, f]) => (
              <Fragment key={k}>
                <dt>{t(k)}</dt>
                <dd>
                  {f?.value ?? ""} {f !== undefined && !f.valid && <span class="warning">({t("scanFieldBad")})</span>}
                </dd>
              </Fragment>
            ))}
          </dl>
          {scan.problems.length > 0 && (
            <ul>
              {scan.problems.map((p) => (
                <li key={p.field}>
                  <code>{p.field}</code>: {p.reason}
                </li>
              ))}
            </ul>
          )}
          {scan.valid && (
            <button type="button" class="primary" id={id("scan-save")} disabled={busy} onClick={() => void send(true)}>
              {t("scanConfirmSave")}
            </button>
          )}
        </div>
      )}
      <ErrorBox problem={problem} />
    </details>
  );
}
