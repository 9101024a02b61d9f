import { createContext } from "preact";
import { useContext } from "preact/hooks";

export type Lang = "tr" | "en";

const en = {
  appTitle: "HotelOps Panel",
  skip: "Skip to content",
  navIntegrations: "Integrations",
  navApiAccess: "API access",
  navWebhooks: "Webhook addresses",
  navNotifications: "Notifications",
  bell: "Notifications, {n} unread",
  language: "Language",
  property: "Property",
  signOut: "Sign out",
  signedInAs: "Signed in as {email}",
  loading: "Loading…",
  cancel: "Cancel",
  confirm: "Confirm",
  never: "Never",
  none: "None",
  msValue: "{n} ms",

  signInTitle: "Sign in to the panel",
  hotelCode: "Hotel code",
  hotelCodeHelp: "Your hotel group or property code, e.g. DEMO-IST.",
  email: "E-mail",
  password: "Password",
  signIn: "Sign in",
  codeTitle: "Enter the e-mail code",
  codeSent: "We sent a 6-digit code to {email}. It is valid for 10 minutes.",
  code: "Code",
  verify: "Verify",
  startAgain: "Start again",
  sessionEnded: "Your session has ended. Please sign in again.",
  signedOut: "You are signed out.",

  noAccessTitle: "Integrations are not available to you",
  noAccessBody:
    "Only users with the integrations.manage permission (the property manager) in {property} can see API access and webhook addresses. Ask your property manager, or switch to a property where you manage integrations.",

  apiTitle: "API access",
  apiStatus: "API status",
  status_operational: "Operational",
  status_degraded: "Degraded",
  status_maintenance: "Maintenance",
  versionBeta: "Version {v} beta",
  partnerOn: "Partner API switched on",
  partnerOff: "Partner API switched off platform-wide: connectivity calls answer 503 and no webhooks are sent.",
  clientsTitle: "Partner clients that reach this property",
  clientsNote: "Read-only: service operators create and approve clients.",
  clientsNone: "No partner client reaches this property yet.",
  colProvider: "Provider",
  colName: "Name",
  colScopes: "Scopes",
  colEnvironment: "Environment",
  colCreated: "Created",
  colLastToken: "Last token issued",
  envLive: "Approved (live)",
  envTest: "Sandbox (test)",
  docsTitle: "Documentation for partners",
  docsBody: "Partners find the API reference and the OpenAPI document here:",
  docsReference: "API reference",
  docsOpenapi: "OpenAPI document",

  webhooksTitle: "Webhook addresses",
  addAddress: "Add address",
  limitUsed: "{n} of {max} addresses used; a property can have at most {max}.",
  limitReached: "The limit of {max} addresses is reached: delete one to add another.",
  webhooksNone: "No webhook address yet.",
  colUrl: "Address",
  colEvents: "Events",
  colStatus: "Status",
  colLastSuccess: "Last success",
  colFailures: "Failures since",
  status_OPEN: "Open",
  status_CLOSED: "Closed",
  status_DISABLED: "Disabled",

  createTitle: "New webhook address",
  urlLabel: "HTTPS address",
  urlHelp: "https only, no user name or #fragment, port 443 or 1024 and above; the host must resolve to public addresses.",
  descriptionLabel: "Description (optional)",
  eventsLegend: "Events to send",
  eventsHelp: "webhook.test is always sent when you press Test connection.",
  createSubmit: "Create address",
  needEvent: "Choose at least one event.",
  urlHttps: "The address must start with https://",
  urlInvalid: "This is not a valid address.",
  urlUserinfo: "The address must not contain a user name or password.",
  urlFragment: "The address must not contain a #fragment.",
  urlPort: "Use port 443 or a port from 1024 up.",

  secretTitle: "Signing secret",
  secretOnce: "Copy it now: you will not see this secret again.",
  secretCopy: "Copy",
  secretCopied: "Copied to the clipboard.",
  secretCopyFailed: "The browser refused to copy: select the text and copy it yourself.",
  secretDone: "I have stored the secret",
  secretOverlap: "The previous secret keeps signing a second v1 value for 24 hours (until {at}), so your receiver can switch without losing events.",

  detailTitle: "Webhook address",
  backToList: "All webhook addresses",
  notFound: "Webhook address not found.",
  detailDescription: "Description",
  detailCreated: "Created",
  detailClosed: "This address was closed automatically on {at}: {reason}. Fix the receiver, test the connection, then re-enable it.",
  detailDisabled: "This address is disabled: nothing is sent to it until you re-enable it.",
  testConnection: "Test connection",
  rotateSecret: "Rotate secret",
  disable: "Disable",
  enable: "Re-enable",
  delete: "Delete",
  confirmRotate: "Rotate the signing secret? The new secret is shown once; the old one also signs for 24 hours.",
  confirmDisable: "Disable this address? Pending deliveries stop and nothing is queued while it is disabled.",
  confirmDelete: "Delete this address with its delivery history? This cannot be undone.",
  testOk: "Test answer: HTTP {status} in {ms} ms.",
  testFailed: "Test failed after {ms} ms: {error}",
  enabledMsg: "The address is open again.",
  disabledMsg: "The address is disabled.",
  deletedMsg: "The address was deleted.",

  historyTitle: "Delivery history (last 30 days)",
  filterStatus: "Delivery status",
  filterEvent: "Event type",
  all: "All",
  dstatus_PENDING: "Retrying",
  dstatus_SUCCEEDED: "Delivered",
  dstatus_FAILED: "Failed",
  dstatus_CANCELLED: "Cancelled",
  colTime: "Time",
  colEvent: "Event",
  colAttempt: "Attempt",
  colHttp: "HTTP",
  colDuration: "Duration",
  colError: "Error",
  colDelivery: "Delivery",
  historyNone: "No delivery matches in the last 30 days.",
  older: "Show older",
  refresh: "Refresh",
  resend: "Resend",
  resendLabel: "Resend {event} (delivery {id})",
  resendUnderway: "Sent again as a new delivery; its attempt is under way.",
  resendOk: "Resent: HTTP {status} in {ms} ms.",
  resendFailed: "Resent, and the attempt failed: {error}",

  notificationsTitle: "Notifications",
  notificationsNone: "No notifications.",
  markRead: "Mark read",
  unread: "Unread",
  read: "Read",
  openAddress: "Open the address",
  kind_webhook_endpoint_closed: "Webhook address closed",

  requestId: "Request id (quote it to support): {id}",
  retryIn: "Too many requests: try again in {s} seconds.",
  networkError: "The server cannot be reached. Check the connection and try again.",
  ev_reservation_created: "A new reservation is saved (panel, mobile app, channel or API).",
  ev_reservation_updated: "Dates, guest counts, status or other reservation fields change.",
  ev_reservation_cancelled: "A reservation moves to cancelled status.",
  ev_guest_checked_in: "Check-in is completed for a room line.",
  ev_guest_checked_out: "Check-out is completed for a room line.",
  ev_folio_payment_posted: "A payment or a payment reversal is posted to the folio.",
  ev_invoice_issued: "A draft invoice is finalized or sent as an e-document.",
  ev_availability_changed: "A reservation or room block may affect availability.",
};

export type Key = keyof typeof en;

const tr: Record<Key, string> = {
  appTitle: "HotelOps Panel",
  skip: "İçeriğe geç",
  navIntegrations: "Entegrasyonlar",
  navApiAccess: "API erişimi",
  navWebhooks: "Webhook adresleri",
  navNotifications: "Bildirimler",
  bell: "Bildirimler, {n} okunmamış",
  language: "Dil",
  property: "Tesis",
  signOut: "Çıkış yap",
  signedInAs: "{email} olarak giriş yapıldı",
  loading: "Yükleniyor…",
  cancel: "Vazgeç",
  confirm: "Onayla",
  never: "Hiç",
  none: "Yok",
  msValue: "{n} ms",

  signInTitle: "Panele giriş",
  hotelCode: "Otel kodu",
  hotelCodeHelp: "Otel grubu ya da tesis kodunuz, örneğin DEMO-IST.",
  email: "E-posta",
  password: "Parola",
  signIn: "Giriş yap",
  codeTitle: "E-posta kodunu girin",
  codeSent: "{email} adresine 6 haneli bir kod gönderdik. Kod 10 dakika geçerlidir.",
  code: "Kod",
  verify: "Doğrula",
  startAgain: "Baştan başla",
  sessionEnded: "Oturumunuz sona erdi. Lütfen yeniden giriş yapın.",
  signedOut: "Çıkış yaptınız.",

  noAccessTitle: "Entegrasyonlar sizin için kullanılamıyor",
  noAccessBody:
    "{property} tesisinde API erişimini ve webhook adreslerini yalnızca integrations.manage yetkisine sahip kullanıcılar (tesis yöneticisi) görebilir. Tesis yöneticinize başvurun ya da entegrasyonları yönettiğiniz bir tesise geçin.",

  apiTitle: "API erişimi",
  apiStatus: "API durumu",
  status_operational: "Çalışıyor",
  status_degraded: "Kısıtlı çalışıyor",
  status_maintenance: "Bakımda",
  versionBeta: "Sürüm {v} beta",
  partnerOn: "İş ortağı API'si açık",
  partnerOff: "İş ortağı API'si platform genelinde kapalı: bağlantı çağrıları 503 döner ve webhook gönderilmez.",
  clientsTitle: "Bu tesise erişen iş ortağı istemcileri",
  clientsNote: "Salt okunur: istemcileri hizmet operatörleri oluşturur ve onaylar.",
  clientsNone: "Bu tesise henüz erişen bir iş ortağı istemcisi yok.",
  colProvider: "Sağlayıcı",
  colName: "Ad",
  colScopes: "Kapsamlar",
  colEnvironment: "Ortam",
  colCreated: "Oluşturulma",
  colLastToken: "Son token verilişi",
  envLive: "Onaylı (canlı)",
  envTest: "Sandbox (test)",
  docsTitle: "İş ortakları için dokümantasyon",
  docsBody: "İş ortakları API başvurusunu ve OpenAPI belgesini burada bulur:",
  docsReference: "API başvurusu",
  docsOpenapi: "OpenAPI belgesi",

  webhooksTitle: "Webhook adresleri",
  addAddress: "Adres ekle",
  limitUsed: "{max} adresten {n} tanesi kullanılıyor; bir tesiste en fazla {max} adres olabilir.",
  limitReached: "{max} adres sınırına ulaşıldı: yenisini eklemek için birini silin.",
  webhooksNone: "Henüz webhook adresi yok.",
  colUrl: "Adres",
  colEvents: "Olaylar",
  colStatus: "Durum",
  colLastSuccess: "Son başarılı teslim",
  colFailures: "Son başarıdan beri hata",
  status_OPEN: "Açık",
  status_CLOSED: "Kapatıldı",
  status_DISABLED: "Devre dışı",

  createTitle: "Yeni webhook adresi",
  urlLabel: "HTTPS adresi",
  urlHelp: "Yalnızca https; kullanıcı adı ya da #parça olmadan, port 443 veya 1024 ve üzeri; alan adı herkese açık adreslere çözülmeli.",
  descriptionLabel: "Açıklama (isteğe bağlı)",
  eventsLegend: "Gönderilecek olaylar",
  eventsHelp: "Bağlantıyı test et düğmesine bastığınızda webhook.test her zaman gönderilir.",
  createSubmit: "Adresi oluştur",
  needEvent: "En az bir olay seçin.",
  urlHttps: "Adres https:// ile başlamalı.",
  urlInvalid: "Bu geçerli bir adres değil.",
  urlUserinfo: "Adreste kullanıcı adı ya da parola olmamalı.",
  urlFragment: "Adreste #parça olmamalı.",
  urlPort: "443 portunu ya da 1024 ve üzeri bir portu kullanın.",

  secretTitle: "İmzalama anahtarı",
  secretOnce: "Şimdi kopyalayın: bu anahtarı bir daha göremeyeceksiniz.",
  secretCopy: "Kopyala",
  secretCopied: "Panoya kopyalandı.",
  secretCopyFailed: "Tarayıcı kopyalamaya izin vermedi: metni seçip kendiniz kopyalayın.",
  secretDone: "Anahtarı sakladım",
  secretOverlap: "Önceki anahtar 24 saat boyunca ({at} tarihine kadar) ikinci bir v1 değeri imzalamaya devam eder; alıcınız olay kaybetmeden geçiş yapabilir.",

  detailTitle: "Webhook adresi",
  backToList: "Tüm webhook adresleri",
  notFound: "Webhook adresi bulunamadı.",
  detailDescription: "Açıklama",
  detailCreated: "Oluşturulma",
  detailClosed: "Bu adres {at} tarihinde otomatik olarak kapatıldı: {reason}. Alıcıyı düzeltin, bağlantıyı test edin ve yeniden etkinleştirin.",
  detailDisabled: "Bu adres devre dışı: yeniden etkinleştirene kadar hiçbir şey gönderilmez.",
  testConnection: "Bağlantıyı test et",
  rotateSecret: "Anahtarı yenile",
  disable: "Devre dışı bırak",
  enable: "Yeniden etkinleştir",
  delete: "Sil",
  confirmRotate: "İmzalama anahtarı yenilensin mi? Yeni anahtar bir kez gösterilir; eskisi 24 saat daha imzalar.",
  confirmDisable: "Bu adres devre dışı bırakılsın mı? Bekleyen teslimler durur ve devre dışıyken kuyruğa bir şey eklenmez.",
  confirmDelete: "Bu adres teslim geçmişiyle birlikte silinsin mi? Bu işlem geri alınamaz.",
  testOk: "Test yanıtı: {ms} ms içinde HTTP {status}.",
  testFailed: "Test {ms} ms sonra başarısız oldu: {error}",
  enabledMsg: "Adres yeniden açık.",
  disabledMsg: "Adres devre dışı bırakıldı.",
  deletedMsg: "Adres silindi.",

  historyTitle: "Teslim geçmişi (son 30 gün)",
  filterStatus: "Teslim durumu",
  filterEvent: "Olay türü",
  all: "Tümü",
  dstatus_PENDING: "Yeniden denenecek",
  dstatus_SUCCEEDED: "Teslim edildi",
  dstatus_FAILED: "Başarısız",
  dstatus_CANCELLED: "İptal edildi",
  colTime: "Zaman",
  colEvent: "Olay",
  colAttempt: "Deneme",
  colHttp: "HTTP",
  colDuration: "Süre",
  colError: "Hata",
  colDelivery: "Teslim",
  historyNone: "Son 30 günde eşleşen teslim yok.",
  older: "Daha eskileri göster",
  refresh: "Yenile",
  resend: "Yeniden gönder",
  resendLabel: "{event} olayını yeniden gönder (teslim {id})",
  resendUnderway: "Yeni bir teslim olarak yeniden gönderildi; denemesi sürüyor.",
  resendOk: "Yeniden gönderildi: {ms} ms içinde HTTP {status}.",
  resendFailed: "Yeniden gönderildi, deneme başarısız oldu: {error}",

  notificationsTitle: "Bildirimler",
  notificationsNone: "Bildirim yok.",
  markRead: "Okundu olarak işaretle",
  unread: "Okunmamış",
  read: "Okundu",
  openAddress: "Adresi aç",
  kind_webhook_endpoint_closed: "Webhook adresi kapatıldı",

  requestId: "İstek kimliği (destekle paylaşın): {id}",
  retryIn: "Çok fazla istek: {s} saniye sonra yeniden deneyin.",
  networkError: "Sunucuya ulaşılamıyor. Bağlantıyı kontrol edip yeniden deneyin.",
  ev_reservation_created: "Yeni bir rezervasyon kaydedilir (panel, mobil uygulama, kanal ya da API).",
  ev_reservation_updated: "Tarihler, kişi sayıları, durum ya da diğer rezervasyon alanları değişir.",
  ev_reservation_cancelled: "Bir rezervasyon iptal durumuna geçer.",
  ev_guest_checked_in: "Bir oda satırı için giriş (check-in) tamamlanır.",
  ev_guest_checked_out: "Bir oda satırı için çıkış (check-out) tamamlanır.",
  ev_folio_payment_posted: "Folyoya bir ödeme ya da ödeme iptali işlenir.",
  ev_invoice_issued: "Taslak fatura kesinleşir ya da e-belge olarak gönderilir.",
  ev_availability_changed: "Bir rezervasyon ya da oda bloğu müsaitliği etkileyebilir.",
};

const dictionaries: Record<Lang, Record<Key, string>> = { en, tr };

export type T = (key: Key, params?: Record<string, string | number>) => string;

export function translator(lang: Lang): T {
  const dict = dictionaries[lang];
  return (key, params) => {
    let text = dict[key];
    if (params) for (const [k, v] of Object.entries(params)) text = text.replaceAll(`{${k}}`, String(v));
    return text;
  };
}

/** A key built from data (an event type, a status): the text when the dictionary has it, else undefined. */
export function lookup(lang: Lang, key: string): string | undefined {
  return (dictionaries[lang] as Record<string, string>)[key];
}

export function initialLang(): Lang {
  const saved = localStorage.getItem("hotelops.panel.lang");
  if (saved === "tr" || saved === "en") return saved;
  return navigator.language.toLowerCase().startsWith("en") ? "en" : "tr";
}

export function saveLang(lang: Lang): void {
  localStorage.setItem("hotelops.panel.lang", lang);
  document.documentElement.lang = lang;
}

/** Dates as people of the language read them (Turkish: 23.11.2026 14:05:09), in the browser's time zone. */
export function formatDate(lang: Lang, d: Date | undefined): string {
  if (d === undefined) return "";
  return new Intl.DateTimeFormat(lang === "tr" ? "tr-TR" : "en-GB", { dateStyle: "medium", timeStyle: "medium" }).format(d);
}

export interface I18n {
  lang: Lang;
  t: T;
}

export const I18nContext = createContext<I18n>({ lang: "tr", t: translator("tr") });
export const useI18n = (): I18n => useContext(I18nContext);
