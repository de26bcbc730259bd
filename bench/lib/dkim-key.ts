import { generateKeyPairSync } from 'node:crypto';

/** A DKIM signing key as nodemailer takes it (`d=` domainName, `s=` keySelector, a PEM private key). */
export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

/** What DKIM signing costs per message (bench/children/mail-sender.ts, `signCost`). */
export interface SignCost {
  messages: number;
  /** CPU ms per message built without and with DKIM, and their difference: the signing alone. */
  unsignedCpuMs: number;
  signedCpuMs: number;
  signCpuMs: number;
  unsignedWallMs: number;
  signedWallMs: number;
  /** Message size without and with the DKIM-Signature header. */
  unsignedBytes: number;
  signedBytes: number;
}

/**
 * An RSA-2048 key made for this run (the service's default key size, CONTRACT.md "Delivery, authentication
 * and reports"): the raw nodemailer baselines sign with it as the service signs with a domain's own key.
 */
export function benchDkimKey(domainName: string, keySelector = 'bench'): DkimKey {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { domainName, keySelector, privateKey };
}
