import type { ReportProof, ReportTokens } from './report-token.js';

/**
 * The VERP return path (CONTRACT.md, "Delivery, authentication and reports"): the envelope sender of each
 * recipient's copy of an email is `b-<that recipient's report token>@<return-path domain>`, so a bounce sent
 * back to it names the email and the recipient by the address it arrives at, even when it quotes nothing of
 * the original, and a recipient can report on no copy but its own. The inbound listener accepts such
 * an address at RCPT TO only when its token is one the service signed.
 */
export const RETURN_PATH_PREFIX = 'b-';
/** RFC 5321's limit on a local part; a token always fits (report-token.ts). */
const MAX_LOCAL_PART_CHARS = 64;

/** The return-path address of the `recipient`th recipient's copy of an email at `domain`. */
export function makeReturnPath(tokens: ReportTokens, emailId: string, recipient: number, domain: string): string {
  return returnPathAddress(tokens.signRecipient(emailId, recipient), domain);
}

/** The return-path address carrying an email's report token (made once per message: see the send path). */
export function returnPathAddress(token: string, domain: string): string {
  const local = `${RETURN_PATH_PREFIX}${token}`;
  if (local.length > MAX_LOCAL_PART_CHARS)
    throw new Error(`the return path of token ${token} would exceed ${MAX_LOCAL_PART_CHARS} characters`);
  if (domain === '' || domain.includes('@')) throw new Error(`not a domain: ${domain}`);
  return `${local}@${domain}`;
}

/** True for an address shaped like a return path (`b-...@...`), whether or not its token is valid. */
export function isReturnPath(address: string): boolean {
  const at = address.lastIndexOf('@');
  return (
    at > RETURN_PATH_PREFIX.length && address.slice(0, RETURN_PATH_PREFIX.length).toLowerCase() === RETURN_PATH_PREFIX
  );
}

/**
 * What a return-path address proves (the email, and the recipient whose copy it was), at any domain (the
 * token is the proof; each sender domain has its own return-path domain), or undefined when it is no return
 * path or its token is not the service's.
 */
export function parseReturnPath(tokens: ReportTokens, address: string): ReportProof | undefined {
  if (!isReturnPath(address)) return undefined;
  const local = address.slice(0, address.lastIndexOf('@'));
  if (local.length > MAX_LOCAL_PART_CHARS) return undefined;
  return tokens.verify(local.slice(RETURN_PATH_PREFIX.length));
}
