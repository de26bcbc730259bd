/**
 * The VERP envelope sender the service gives the `recipient`th recipient's copy of an email (return-path.ts):
 * `b-<email id>.<recipient>-<mac>@rp.<domain>`.
 */
export function returnPathPattern(emailId: string | RegExp, senderDomain: string, recipient = 0): RegExp {
  const id = typeof emailId === 'string' ? emailId : emailId.source;
  return new RegExp(`^b-${id}\\.${recipient}-[a-z2-7]{24}@rp\\.${senderDomain.replace(/\./g, '\\.')}$`);
}
