/** The VERP envelope sender the service gives an email (return-path.ts): `b-<email id>-<mac>@rp.<domain>`. */
export function returnPathPattern(emailId: string | RegExp, senderDomain: string): RegExp {
  const id = typeof emailId === 'string' ? emailId : emailId.source;
  return new RegExp(`^b-${id}-[a-z2-7]{24}@rp\\.${senderDomain.replace(/\./g, '\\.')}$`);
}
