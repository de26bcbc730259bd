import crypto from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPair = promisify(crypto.generateKeyPair);

/** RSA-2048: what receivers expect (RFC 8301 wants at least 1024, most now ask for 2048). */
export const DKIM_RSA_BITS = 2048;

export interface DkimKeyPair {
  /** base64 of the SubjectPublicKeyInfo DER: the record's p=. */
  publicKey: string;
  /** PKCS#8 PEM, what nodemailer's DKIM signer takes. */
  privateKeyPem: string;
}

/** A new RSA key pair, made off the event loop (crypto's thread pool): a 2048-bit key takes 50-500 ms. */
export async function generateDkimKeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generateKeyPair('rsa', {
    modulusLength: DKIM_RSA_BITS,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}
