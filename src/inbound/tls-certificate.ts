import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { makePrivateDir } from '../private-dir.js';

export const TLS_CERT_FILE = 'tls-cert.pem';
export const TLS_KEY_FILE = 'tls-key.pem';
/** A self-signed certificate is no proof of anything; ten years spares operators a surprise expiry. */
const SELF_SIGNED_DAYS = 3650;

export interface TlsCertificate {
  cert: string;
  key: string;
  /** True on the start that made the self-signed certificate. */
  created: boolean;
}

/**
 * The certificate STARTTLS offers: MAILER_TLS_CERT/MAILER_TLS_KEY when set; else a self-signed one for
 * `hostname`, made on first start into the data dir (key readable by its owner only) and kept, so clients
 * that pin it keep working across restarts. Throws when the configured files cannot be read or do not
 * belong together, so a misconfiguration stops the start instead of failing every handshake.
 */
export async function loadTlsCertificate(options: {
  certFile: string | undefined;
  keyFile: string | undefined;
  dataDir: string;
  hostname: string;
}): Promise<TlsCertificate> {
  if (options.certFile !== undefined && options.keyFile !== undefined) {
    const [cert, key] = await Promise.all([
      fs.readFile(options.certFile, 'utf8'),
      fs.readFile(options.keyFile, 'utf8'),
    ]);
    assertPair(cert, key, `${options.certFile} and ${options.keyFile}`);
    return { cert, key, created: false };
  }
  const certFile = path.join(options.dataDir, TLS_CERT_FILE);
  const keyFile = path.join(options.dataDir, TLS_KEY_FILE);
  const kept = await readPair(certFile, keyFile);
  if (kept) return { ...kept, created: false };
  const made = await makeSelfSigned(options.hostname);
  await makePrivateDir(options.dataDir);
  try {
    // The key first and exclusively: a process that loses the race reads the winner's pair.
    await fs.writeFile(keyFile, made.key, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { ...(await waitForPair(certFile, keyFile)), created: false };
  }
  await fs.writeFile(certFile, made.cert, { mode: 0o644 });
  return { ...made, created: true };
}

async function makeSelfSigned(hostname: string): Promise<{ cert: string; key: string }> {
  const notAfterDate = new Date(Date.now() + SELF_SIGNED_DAYS * 86_400_000);
  const pems = await selfsigned.generate([{ name: 'commonName', value: hostname }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: hostname },
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

function assertPair(cert: string, key: string, source: string): void {
  let matches: boolean;
  try {
    matches = new crypto.X509Certificate(cert).checkPrivateKey(crypto.createPrivateKey(key));
  } catch (err) {
    throw new Error(`${source}: not a PEM certificate and private key (${(err as Error).message})`, { cause: err });
  }
  if (!matches) throw new Error(`${source}: the private key does not belong to the certificate`);
}

async function readPair(certFile: string, keyFile: string): Promise<{ cert: string; key: string } | undefined> {
  try {
    const [cert, key] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
    if (cert.trim() === '' || key.trim() === '') return undefined;
    return { cert, key };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Another process is writing the pair: wait briefly for its certificate. */
async function waitForPair(certFile: string, keyFile: string): Promise<{ cert: string; key: string }> {
  for (let i = 0; i < 50; i++) {
    const pair = await readPair(certFile, keyFile);
    if (pair) return pair;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${keyFile} exists without ${certFile}: remove the key to have a new self-signed certificate made`);
}
